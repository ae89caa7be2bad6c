package botkit

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/internal/syncbuf"
)

// Start prints one line every Every (5 s when 0) until stopped; the rate is
// counted from the first Start, so a progress started again after a pause
// keeps the whole run's rate; before any Start the rate is 0; a zero
// Progress (no writer) prints nothing and does not fail.
func TestProgress_PrintsEveryTickUntilStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b syncbuf.Buffer
		var done atomic.Int64
		p := &Progress{W: &b, Counts: func() (int, int) { return int(done.Load()), 1 }}
		done.Store(5)
		if d, _, rate := p.counts(time.Now().Add(time.Hour)); d != 5 || rate != 0 {
			t.Errorf("before Start: %d done at %v pages/s, want 5 at 0", d, rate)
		}
		stop := p.Start(context.Background())
		done.Store(20)
		time.Sleep(10*time.Second + time.Millisecond)
		stop()
		lines := strings.Split(strings.TrimSpace(b.String()), "\n")
		if len(lines) != 2 || lines[1] != "progress: 20 done, 1 queued, 2.00 pages/s" {
			t.Fatalf("after 10 s: %q; want 2 lines, the last at 2.00 pages/s", lines)
		}
		time.Sleep(time.Minute)
		if n := strings.Count(b.String(), "\n"); n != 2 {
			t.Errorf("%d lines after stop and a minute; want still 2", n)
		}
		stop = p.Start(context.Background())
		done.Store(60)
		time.Sleep(5*time.Second + time.Millisecond)
		stop()
		// 60 pages in the 75 s since the first Start, not the 5 s of this one.
		if got := b.String(); !strings.HasSuffix(got, "progress: 60 done, 1 queued, 0.80 pages/s\n") {
			t.Errorf("after starting again: %q; want the rate since the first Start, 0.80 pages/s", got)
		}

		var zero Progress
		stop = zero.Start(context.Background())
		time.Sleep(6 * time.Second)
		stop()
	})
}

// The line names each host the bot is waiting on, sorted, with the time
// left (to 100 ms under 10 s, to the second above) and the reason; a wait
// that has ended is not shown, and an event without a duration (a request)
// does not end a host's wait.
func TestProgress_WaitingOn(t *testing.T) {
	var b syncbuf.Buffer
	p := &Progress{W: &b}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var passed []Event
	observe := p.Observe(func(e Event) { passed = append(passed, e) })
	for _, e := range []Event{
		{Time: t0, Host: "b.test", Kind: "wait", Dur: 2 * time.Second, Reason: "Retry-After"},
		{Time: t0, Host: "a.test", Kind: "wait", Dur: 30 * time.Second, Reason: "Crawl-delay"},
		{Time: t0, Host: "a.test", Kind: "request"},
		{Time: t0, Host: "c.test", Kind: "wait", Dur: time.Second, Reason: "delay"},
	} {
		observe(e)
	}
	if len(passed) != 4 {
		t.Fatalf("%d events passed on, want 4", len(passed))
	}
	p.print(t0.Add(1230 * time.Millisecond))
	want := "progress: 0 done, 0 queued, 0.00 pages/s; waiting on a.test for 29s (Crawl-delay), b.test for 800ms (Retry-After)\n"
	if got := b.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
