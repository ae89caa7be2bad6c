package fetch_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/internal/manyhosts"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
)

// BenchmarkScale crawls a local web of many hosts for a fixed time, first
// with the library (a Fetcher with its defaults and a 100 ms MinDelay), then
// with a hand-written loop (plain net/http, one goroutine per host, an
// unbounded idle pool), then with the library over the idle pool its base
// transport had before (a global cap of 100: "capped"), in the same run, and
// compares them with the politeness ceiling
// Σ 1/(max(delay, Crawl-delay) + latency):
//
//	go test -run '^$' -bench Scale -benchtime 1x -count 3 ./fetch
//
// The web (internal/manyhosts) runs in a child process (this test binary,
// re-run), so the CPU time and heap measured here are the crawler's alone. Each host answers
// after 10 ms with a 3 KB page; every tenth host asks for Crawl-delay: 1; a
// tenth of the URLs are disallowed. The web counts violations as requests
// arrive (two requests to a host at once, a gap below the host's delay, a
// page before robots.txt, a disallowed path): the library must have none.
func BenchmarkScale(b *testing.B) {
	for _, hosts := range []int{500, 2000} {
		b.Run(fmt.Sprintf("hosts=%d", hosts), func(b *testing.B) {
			web := manyhosts.Start(b, scaleWeb)
			for b.Loop() {
				lib := crawl(b, web, "l", hosts, crawlLibrary(nil))
				loop := crawl(b, web, "o", hosts, crawlLoop)
				capped := crawl(b, web, "c", hosts, crawlLibrary(capIdle))
				ceiling := web.Ceiling(hosts)
				b.ReportMetric(100*lib.rate()/ceiling, "lib-%ceiling")
				b.ReportMetric(100*loop.rate()/ceiling, "loop-%ceiling")
				b.ReportMetric(lib.rate()/loop.rate(), "lib/loop-rate")
				b.ReportMetric(lib.cpuPerReq()/loop.cpuPerReq(), "lib/loop-cpu")
				b.ReportMetric(float64(lib.peakHeap)/float64(loop.peakHeap), "lib/loop-heap")
				b.ReportMetric(lib.allocPerReq()/loop.allocPerReq(), "lib/loop-alloc")
				b.ReportMetric(lib.allocPerReq(), "lib-alloc-B/req")
				b.ReportMetric(loop.allocPerReq(), "loop-alloc-B/req")
				b.ReportMetric(lib.cpuPerReq()/1e3, "lib-cpu-µs/req")
				b.ReportMetric(loop.cpuPerReq()/1e3, "loop-cpu-µs/req")
				b.ReportMetric(float64(lib.peakHeap)/(1<<20), "lib-heap-MiB")
				b.ReportMetric(float64(loop.peakHeap)/(1<<20), "loop-heap-MiB")
				b.ReportMetric(lib.connsPerReq(), "lib-conns/req")
				b.ReportMetric(loop.connsPerReq(), "loop-conns/req")
				b.ReportMetric(capped.connsPerReq(), "capped-conns/req")
				b.ReportMetric(100*capped.rate()/ceiling, "capped-%ceiling")
				b.ReportMetric(capped.cpuPerReq()/loop.cpuPerReq(), "capped/loop-cpu")
				b.ReportMetric(float64(lib.stats.Violations()), "lib-violations")
				b.ReportMetric(float64(loop.stats.Violations()), "loop-violations")
				if lib.stats.Pages == 0 || loop.stats.Pages == 0 {
					b.Fatalf("no pages fetched (library %d, loop %d)", lib.stats.Pages, loop.stats.Pages)
				}
				if v := lib.stats.Violations(); v != 0 {
					b.Errorf("library: %d politeness violations: %+v", v, lib.stats)
				}
			}
		})
	}
}

const (
	scaleDelay  = 100 * time.Millisecond
	scaleWarm   = 1500 * time.Millisecond
	scaleWindow = 4 * time.Second
	scaleUA     = "ScaleBot/1.0 (+https://bench.example/bot)"
)

// scaleWeb is the web of BenchmarkScale: 100 ms delay, 10 ms latency, 3 KB
// pages, Crawl-delay: 1 on every tenth host.
var scaleWeb = manyhosts.Config{Delay: scaleDelay, Latency: 10 * time.Millisecond, PageSize: 3 << 10,
	CrawlDelay: time.Second, CrawlDelayEvery: 10}

// scaleRun is one crawler's measures over the window.
type scaleRun struct {
	stats    manyhosts.Stats // pages and robots.txt in the window, violations over the whole crawl
	all      manyhosts.Stats // the whole crawl
	window   time.Duration
	cpu      time.Duration
	alloc    uint64 // bytes allocated in the window
	peakHeap uint64
}

func (r scaleRun) rate() float64 { return float64(r.stats.Pages) / r.window.Seconds() }
func (r scaleRun) cpuPerReq() float64 {
	return float64(r.cpu) / float64(r.stats.Pages+r.stats.Robots)
}
func (r scaleRun) allocPerReq() float64 {
	return float64(r.alloc) / float64(r.stats.Pages+r.stats.Robots)
}
func (r scaleRun) connsPerReq() float64 {
	return float64(r.all.Conns) / float64(r.all.Pages+r.all.Robots)
}

// crawler crawls the web's hosts 0 to hosts-1 until ctx ends.
type crawler func(ctx context.Context, b *testing.B, web *manyhosts.Web, hosts int)

// crawl runs c on hosts named prefix+"N.test" for scaleWarm+scaleWindow and
// measures the window (pages, robots.txt requests, CPU) after the warm-up;
// connections and violations are counted over the whole crawl.
func crawl(b *testing.B, w *manyhosts.Web, prefix string, hosts int, c crawler) scaleRun {
	runtime.GC()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var peak atomic.Uint64
	wg.Go(func() { samplePeakHeap(ctx, &peak) })
	base := w.Stats(b, prefix)
	wg.Go(func() { c(ctx, b, w, hosts) })
	time.Sleep(scaleWarm)
	warm := w.Stats(b, prefix)
	alloc0, cpu0, t0 := allocated(), cpuTime(), time.Now()
	time.Sleep(scaleWindow)
	end := w.Stats(b, prefix)
	alloc, cpu, window := allocated()-alloc0, cpuTime()-cpu0, time.Since(t0)
	cancel()
	wg.Wait()
	all := end.Sub(base)
	win := end.Sub(warm)
	return scaleRun{stats: manyhosts.Stats{Pages: win.Pages, Robots: win.Robots, Overlaps: all.Overlaps,
		ShortGaps: all.ShortGaps, BeforeRobots: all.BeforeRobots, Denied: all.Denied},
		all: all, window: window, cpu: cpu, alloc: alloc, peakHeap: peak.Load()}
}

// allocated is the number of bytes allocated on the heap so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// samplePeakHeap keeps the largest live heap seen every 10 ms until ctx ends.
func samplePeakHeap(ctx context.Context, peak *atomic.Uint64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		metrics.Read(s)
		if v := s[0].Value.Uint64(); v > peak.Load() {
			peak.Store(v)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// crawlLibrary is a Fetcher with its defaults (its base transport, with
// host names resolved to the web's address), one goroutine per host;
// change, when not nil, alters the base transport.
func crawlLibrary(change func(*http.Transport)) crawler {
	return func(ctx context.Context, b *testing.B, web *manyhosts.Web, hosts int) {
		prefix := "l"
		if change != nil {
			prefix = "c"
		}
		bot := fetch.Bot{UserAgent: scaleUA, Politeness: politeness.Policy{MinDelay: scaleDelay}, AllowInternal: loopbackOnly}
		tr := fetch.BaseTransportWithLookup(bot, web.Lookup(prefix, hosts))
		if change != nil {
			change(tr)
		}
		defer tr.CloseIdleConnections()
		bot.Transport = tr
		f, err := fetch.NewFetcher(bot)
		if err != nil {
			b.Error(err)
			return
		}
		var wg sync.WaitGroup
		for h := range hosts {
			wg.Go(func() {
				for i := 0; ctx.Err() == nil; i++ {
					_, _ = f.Get(ctx, web.URL(prefix, h, i))
				}
			})
		}
		wg.Wait()
	}
}

// capIdle gives a base transport the idle pool it had before: net/http's
// default global cap of 100 idle connections, kept 90 s.
func capIdle(t *http.Transport) { t.MaxIdleConns, t.IdleConnTimeout = 100, 90*time.Second }

// crawlLoop is the hand-written loop: plain net/http with an unbounded idle
// pool, one goroutine per host reading robots.txt first, then one page at a
// time, sleeping max(delay, Crawl-delay) after each answer.
func crawlLoop(ctx context.Context, b *testing.B, web *manyhosts.Web, hosts int) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost, tr.IdleConnTimeout = 0, 1, 0
	tr.DialContext = web.DialContext
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	agent := robots.Agent{Token: "ScaleBot"}
	get := func(u string) ([]byte, int, bool) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, 0, false
		}
		req.Header.Set("User-Agent", scaleUA)
		resp, err := c.Do(req)
		if err != nil {
			return nil, 0, false
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return body, resp.StatusCode, err == nil
	}
	sleep := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	var wg sync.WaitGroup
	for h := range hosts {
		wg.Go(func() {
			body, status, ok := get(web.RobotsURL("o", h))
			if !ok {
				return
			}
			rules := robots.FromResponse(status, body, nil)
			delay := scaleDelay
			if cd, ok := rules.CrawlDelay(agent); ok {
				delay = max(delay, cd)
			}
			for i := 0; sleep(delay); i++ {
				for !rules.Allowed(agent, manyhosts.Path(i)) {
					i++
				}
				get(web.URL("o", h, i))
			}
		})
	}
	wg.Wait()
}
