package botkit

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// Progress prints a status line on stderr every Every while work goes on:
// pages done, queued, hosts paused, the rate, and which hosts the bot is
// waiting on and why. The zero value prints nothing until Start.
type Progress struct {
	W      io.Writer
	Every  time.Duration             // 0 = 5 s
	Counts func() (done, queued int) // current counters; change it with SetCounts once in use
	Paused func() int                // hosts paused now (nil: not shown)

	mu    sync.Mutex           // guards Counts once in use, wait, until, start
	wait  map[string]string    // host -> why the bot is waiting on it
	until map[string]time.Time // host -> end of that wait
	start time.Time            // first Start, for the rate
}

// counts returns the counters and the rate in pages per second since the
// first Start (0 before it).
func (p *Progress) counts(now time.Time) (done, queued int, rate float64) {
	p.mu.Lock()
	count, start := p.Counts, p.start
	p.mu.Unlock()
	if count != nil {
		done, queued = count()
	}
	if el := now.Sub(start); !start.IsZero() && el > 0 {
		rate = float64(done) / el.Seconds()
	}
	return done, queued, rate
}

// SetCounts sets Counts; safe while the status page or the progress line
// reads it.
func (p *Progress) SetCounts(fn func() (done, queued int)) {
	p.mu.Lock()
	p.Counts = fn
	p.mu.Unlock()
}

// Observe records a pacing event (a wait or pause on a host) and passes it on
// to next (which may be nil).
func (p *Progress) Observe(next func(Event)) func(Event) {
	return func(e Event) {
		p.mu.Lock()
		if p.wait == nil {
			p.wait, p.until = map[string]string{}, map[string]time.Time{}
		}
		if e.Dur > 0 {
			p.wait[e.Host] = e.Reason
			p.until[e.Host] = e.Time.Add(e.Dur)
		}
		p.mu.Unlock()
		if next != nil {
			next(e)
		}
	}
}

// Start begins printing; the returned func stops it and waits for the
// printer to end.
func (p *Progress) Start(ctx context.Context) (stop func()) {
	p.mu.Lock()
	if p.start.IsZero() {
		p.start = time.Now()
	}
	p.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	every := p.Every
	if every <= 0 {
		every = 5 * time.Second
	}
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				p.print(now)
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (p *Progress) print(now time.Time) {
	if p.W == nil {
		return
	}
	done, queued, rate := p.counts(now)
	p.mu.Lock()
	var waits []string
	for h, why := range p.wait {
		if until := p.until[h]; until.After(now) {
			waits = append(waits, fmt.Sprintf("%s for %s (%s)", h, roundWait(until.Sub(now)), why))
		}
	}
	p.mu.Unlock()
	sort.Strings(waits)
	line := fmt.Sprintf("progress: %d done, %d queued", done, queued)
	if p.Paused != nil {
		n, s := p.Paused(), "s"
		if n == 1 {
			s = ""
		}
		line += fmt.Sprintf(", %d host%s paused", n, s)
	}
	line += fmt.Sprintf(", %.2f pages/s", rate)
	if len(waits) > 0 {
		line += "; waiting on " + strings.Join(waits, ", ")
	}
	fmt.Fprintln(p.W, line)
}

func roundWait(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
