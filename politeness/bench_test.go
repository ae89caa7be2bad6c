package politeness_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/internal/coldcache"
	"github.com/goodbot-go/goodbot/politeness"
)

// eofBody is an empty response body; it does not allocate.
type eofBody struct{}

func (eofBody) Read([]byte) (int, error) { return 0, io.EOF }
func (eofBody) Close() error             { return nil }

// bareRT is the in-memory baseline: one allocation (the Response) per call.
type bareRT struct{}

func (bareRT) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Body: eofBody{}, Request: req}, nil
}

func roundTripOnce(b *testing.B, rt http.RoundTripper, req *http.Request) {
	resp, err := rt.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
}

// BenchmarkOverhead compares one request through the bare in-memory
// RoundTripper with the same request through a Transport with zero delay.
// The overhead is the difference of the two ns/op and allocs/op.
func BenchmarkOverhead(b *testing.B) {
	req, _ := http.NewRequest(http.MethodGet, "https://example.com/page", nil)
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			roundTripOnce(b, bareRT{}, req)
		}
	})
	b.Run("politeness", func(b *testing.B) {
		tr := &politeness.Transport{Base: bareRT{}, Policy: politeness.Policy{MinDelay: -1}}
		b.ReportAllocs()
		for b.Loop() {
			roundTripOnce(b, tr, req)
		}
	})
	// The machine is shared and noisy: alternate batches of bare and paced
	// requests so both see the same load, and report the difference.
	b.Run("interleaved", func(b *testing.B) {
		tr := &politeness.Transport{Base: bareRT{}, Policy: politeness.Policy{MinDelay: -1}}
		const batch = 256
		var bare, paced time.Duration
		n := 0
		for b.Loop() {
			t0 := time.Now()
			for range batch {
				roundTripOnce(b, bareRT{}, req)
			}
			t1 := time.Now()
			for range batch {
				roundTripOnce(b, tr, req)
			}
			bare, paced, n = bare+t1.Sub(t0), paced+time.Since(t1), n+batch
		}
		b.ReportMetric(float64(bare.Nanoseconds())/float64(n), "bare-ns/req")
		b.ReportMetric(float64(paced.Nanoseconds())/float64(n), "paced-ns/req")
		b.ReportMetric(float64((paced-bare).Nanoseconds())/float64(n), "overhead-ns/req")
	})
	b.Run("politeness-parallel-64hosts", func(b *testing.B) {
		tr := &politeness.Transport{Base: bareRT{}, Policy: politeness.Policy{MinDelay: -1}}
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			r, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("https://h%d.example/", next.Add(1)%64), nil)
			for pb.Next() {
				roundTripOnce(b, tr, r)
			}
		})
	})
}

// BenchmarkOverheadColdHosts is a Fetcher's use of the Transport (Wait,
// then RoundTrip) over 2,000 hosts in turn, with zero delay and 512 scattered
// writes over 32 MiB between requests, as a crawl's other work does to the
// CPU's caches between two requests to one host; pol-ns/op is the time in
// the two calls alone:
//
//	go test -run '^$' -bench OverheadColdHosts -benchtime 200000x -count 5 ./politeness
func BenchmarkOverheadColdHosts(b *testing.B) {
	const hosts = 2000
	tr := &politeness.Transport{Base: bareRT{}, Policy: politeness.Policy{MinDelay: -1}}
	reqs := make([]*http.Request, hosts)
	for i := range reqs {
		reqs[i], _ = http.NewRequest(http.MethodGet, fmt.Sprintf("http://h%d.example:8080/p", i), nil)
		roundTripOnce(b, tr, reqs[i])
	}
	ctx := context.Background()
	spent := coldcache.EachHost(b, hosts, func(h int) {
		if err := tr.Wait(ctx, reqs[h].URL); err != nil {
			b.Fatal(err)
		}
		roundTripOnce(b, tr, reqs[h])
	})
	b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "pol-ns/op")
}

// timedRT measures each request's latency below the Transport: from the
// call to Base to the end of the body.
type timedRT struct {
	base  http.RoundTripper
	nanos atomic.Int64
	count atomic.Int64

	mu        sync.Mutex           // guards notBefore, late, lateCount
	notBefore map[string]time.Time // by host key, from wait events
	late      time.Duration        // sum of request start minus NotBefore
	lateCount int
}

// observe notes the NotBefore of each wait (a Transport.Observe hook).
func (t *timedRT) observe(e politeness.Event) {
	if e.Kind != politeness.EventWait {
		return
	}
	t.mu.Lock()
	if t.notBefore == nil {
		t.notBefore = map[string]time.Time{}
	}
	t.notBefore[e.Host] = e.Until
	t.mu.Unlock()
}

func (t *timedRT) RoundTrip(req *http.Request) (*http.Response, error) {
	t0 := time.Now()
	t.mu.Lock()
	if nb, ok := t.notBefore[politeness.HostKey(req.URL)]; ok && t0.After(nb) {
		t.late += t0.Sub(nb)
		t.lateCount++
	}
	t.mu.Unlock()
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &timedBody{ReadCloser: resp.Body, t: t, t0: t0}
	return resp, nil
}

type timedBody struct {
	io.ReadCloser
	t    *timedRT
	t0   time.Time
	done bool
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.end()
	}
	return n, err
}

func (b *timedBody) Close() error { b.end(); return b.ReadCloser.Close() }

func (b *timedBody) end() {
	if !b.done {
		b.done = true
		b.t.nanos.Add(int64(time.Since(b.t0)))
		b.t.count.Add(1)
	}
}

// BenchmarkThroughput200Hosts drives 200 loopback hosts with a 20 ms delay
// for about two seconds (run it with -benchtime=1x) and reports achieved
// requests/s against the theoretical hosts/(delay+latency), latency being
// the mean request time below the Transport measured in the same run, and
// the invariant violations the checker found (overlap, gap below delay).
func BenchmarkThroughput200Hosts(b *testing.B) { benchThroughput(b, 200) }

// BenchmarkThroughput50Hosts is the same with a quarter of the load, to tell
// the Transport's own losses from CPU saturation of a small machine.
func BenchmarkThroughput50Hosts(b *testing.B) { benchThroughput(b, 50) }

func benchThroughput(b *testing.B, hosts int) {
	const (
		delay    = 20 * time.Millisecond
		duration = 2 * time.Second
	)
	for b.Loop() {
		sites := make([]*site, hosts)
		for i := range sites {
			s := &site{}
			s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s.mu.Lock()
				if s.busy {
					s.overlaps++
				}
				s.busy = true
				n := len(s.recs)
				s.recs = append(s.recs, rec{host: s.URL, start: time.Now()})
				s.mu.Unlock()
				io.WriteString(w, "ok")
				s.mu.Lock()
				s.busy = false
				s.recs[n].end, s.recs[n].status = time.Now(), 200
				s.mu.Unlock()
			}))
			sites[i] = s
		}
		base := &http.Transport{MaxIdleConnsPerHost: 2}
		timed := &timedRT{base: base}
		c := &http.Client{Transport: &politeness.Transport{Base: timed, Observe: timed.observe,
			Policy: politeness.Policy{MinDelay: delay}}}
		ctx, cancel := context.WithTimeout(context.Background(), duration)
		var wg sync.WaitGroup
		start := time.Now()
		for _, s := range sites {
			for range 2 { // two callers per host: the next turn is always claimed
				wg.Go(func() {
					for ctx.Err() == nil {
						req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
						resp, err := c.Do(req)
						if err != nil {
							continue
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				})
			}
		}
		wg.Wait()
		elapsed := time.Since(start)
		cancel()
		bad, gapCount := 0, 0
		var gapSum time.Duration
		for _, s := range sites {
			recs := s.records()
			bad += len(violations(recs, constGap(delay))) + s.overlaps
			for i := 1; i < len(recs); i++ {
				if !recs[i-1].end.IsZero() {
					gapSum += recs[i].start.Sub(recs[i-1].end)
					gapCount++
				}
			}
		}
		base.CloseIdleConnections()
		for _, s := range sites {
			s.Close()
		}
		n := timed.count.Load()
		latency := time.Duration(timed.nanos.Load() / max(n, 1))
		achieved := float64(n) / elapsed.Seconds()
		theory := float64(hosts) / (delay + latency).Seconds()
		b.ReportMetric(achieved, "req/s")
		b.ReportMetric(theory, "theory-req/s")
		b.ReportMetric(float64(latency.Microseconds()), "latency-µs")
		b.ReportMetric(100*achieved/theory, "efficiency-%")
		// Baseline for lateness in the same run: as many goroutines doing
		// nothing but sleeping for the delay on a timer. The Go runtime and a
		// busy machine wake timers late; no pacer can start earlier.
		timerLate := timerLateness(hosts, delay)
		b.ReportMetric(float64(timerLate.Microseconds()), "timer-only-late-µs")
		b.ReportMetric(100*achieved/(float64(hosts)/(delay+latency+timerLate).Seconds()), "efficiency-vs-timers-%")
		b.ReportMetric(float64(bad), "violations")
		// Server-side gap beyond the delay: timer and scheduling lateness
		// plus the network on both sides.
		b.ReportMetric(float64((gapSum/time.Duration(max(gapCount, 1)) - delay).Microseconds()), "gap-over-delay-µs")
		// Lateness: a request's start after its host's NotBefore (timer and
		// scheduler delay on this machine).
		b.ReportMetric(float64((timed.late / time.Duration(max(timed.lateCount, 1))).Microseconds()), "late-µs")
	}
}

// timerLateness returns the mean lateness of n goroutines each waiting on a
// timer for d, twenty times.
func timerLateness(n int, d time.Duration) time.Duration {
	var sum, count atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for range 20 {
				t0 := time.Now()
				<-time.After(d)
				sum.Add(int64(time.Since(t0) - d))
				count.Add(1)
			}
		})
	}
	wg.Wait()
	return time.Duration(sum.Load() / count.Load())
}

// BenchmarkMemoryPerHost touches one million hosts once through a Transport
// (zero delay, in-memory RoundTripper) and reports the heap held per tracked
// host, then the heap per host left after the idle time and a sweep.
func BenchmarkMemoryPerHost(b *testing.B) {
	const hosts = 1_000_000
	for b.Loop() {
		gate := politeness.NewMemoryGate()
		tr := &politeness.Transport{Base: bareRT{}, Gate: gate,
			Policy: politeness.Policy{MinDelay: -1, IdleTime: time.Millisecond}}
		before := heap()
		req, _ := http.NewRequest(http.MethodGet, "https://example.com/", nil)
		for i := range hosts {
			req.URL.Host = fmt.Sprintf("h%07d.example", i)
			roundTripOnce(b, tr, req)
		}
		held := heap()
		if n := gate.Len(); n != hosts {
			b.Fatalf("gate tracks %d hosts, want %d", n, hosts)
		}
		time.Sleep(5 * time.Millisecond) // let the 1 ms idle time pass; not a proof of a wait
		gate.Sweep()
		after := heap()
		if n := gate.Len(); n != 0 {
			b.Fatalf("gate still tracks %d hosts after the idle time", n)
		}
		b.ReportMetric(float64(held-before)/hosts, "B/host")
		b.ReportMetric(float64(after-before)/hosts, "B/host-after-idle")
		runtime.KeepAlive(tr)
	}
}

func heap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
