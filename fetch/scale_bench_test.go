package fetch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/internal/cputime"
	"github.com/goodbot-go/goodbot/internal/manyhosts"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
)

// BenchmarkScale crawls a local web of many hosts for a fixed time with
// three crawlers, in the same run: the library (a Fetcher with its defaults
// and a 100 ms MinDelay), a hand-written loop (plain net/http, one goroutine
// per host, an unbounded idle pool), and the library over the idle pool its
// base transport had before (a global cap of 100: "capped"); it compares
// them with each other and with the politeness ceiling
// Σ 1/(max(delay, Crawl-delay) + latency):
//
//	go test -run '^$' -bench Scale -benchtime 1x -count 2 ./fetch
//
// The web (internal/manyhosts) and each crawl run in processes of their own
// (this test binary, re-run: see BenchmarkCrawlerProcess), so the CPU time,
// heap and peak RSS measured are each crawler's alone. Each host answers
// after 10 ms with a 3 KB page; every tenth host asks for Crawl-delay: 1; a
// tenth of the URLs are disallowed. The web counts violations as requests
// arrive (two requests to a host at once, a gap below the host's delay, a
// page before robots.txt, a disallowed path): the library must have none.
//
// Each crawl is a fresh process measured over a 2 s window after 1.5 s of
// warm-up. The library and the loop are crawled twice per round,
// interleaved as library, loop, capped, loop, library, so that a load that
// rises or falls through the round weighs on both alike. Their
// measures are the two crawls together: pages, requests, CPU time, bytes
// allocated and window lengths summed (CPU per request is the summed CPU
// over the summed requests), peak RSS and peak heap the larger of the two;
// violations are counted over both crawls.
//
// With GOODBOT_SCALE_CPUPROFILE set to a directory, each crawler process
// writes the CPU profile of its window (not of its warm-up) there, as
// NAME-HOSTS-*.prof.
func BenchmarkScale(b *testing.B) {
	for _, hosts := range []int{500, 2000} {
		b.Run(fmt.Sprintf("hosts=%d", hosts), func(b *testing.B) {
			web := manyhosts.Start(b, scaleWeb)
			for b.Loop() {
				lib := crawlIn(b, web, "library", hosts)
				loop := crawlIn(b, web, "loop", hosts)
				capped := crawlIn(b, web, "capped", hosts)
				loop = loop.and(crawlIn(b, web, "loop", hosts))
				lib = lib.and(crawlIn(b, web, "library", hosts))
				ceiling := web.Ceiling(hosts)
				b.ReportMetric(100*lib.rate()/ceiling, "lib-%ceiling")
				b.ReportMetric(100*loop.rate()/ceiling, "loop-%ceiling")
				b.ReportMetric(lib.rate()/loop.rate(), "lib/loop-rate")
				b.ReportMetric(lib.cpuPerReq()/loop.cpuPerReq(), "lib/loop-cpu")
				b.ReportMetric(float64(lib.MaxRSS)/float64(loop.MaxRSS), "lib/loop-rss")
				b.ReportMetric(float64(lib.PeakHeap)/float64(loop.PeakHeap), "lib/loop-heap")
				b.ReportMetric(lib.allocPerReq()/loop.allocPerReq(), "lib/loop-alloc")
				b.ReportMetric(lib.allocPerReq(), "lib-alloc-B/req")
				b.ReportMetric(loop.allocPerReq(), "loop-alloc-B/req")
				b.ReportMetric(lib.cpuPerReq()/1e3, "lib-cpu-µs/req")
				b.ReportMetric(loop.cpuPerReq()/1e3, "loop-cpu-µs/req")
				b.ReportMetric(float64(lib.MaxRSS)/(1<<20), "lib-rss-MiB")
				b.ReportMetric(float64(loop.MaxRSS)/(1<<20), "loop-rss-MiB")
				b.ReportMetric(float64(lib.PeakHeap)/(1<<20), "lib-heap-MiB")
				b.ReportMetric(float64(loop.PeakHeap)/(1<<20), "loop-heap-MiB")
				b.ReportMetric(lib.connsPerReq(), "lib-conns/req")
				b.ReportMetric(loop.connsPerReq(), "loop-conns/req")
				b.ReportMetric(capped.connsPerReq(), "capped-conns/req")
				b.ReportMetric(100*capped.rate()/ceiling, "capped-%ceiling")
				b.ReportMetric(capped.cpuPerReq()/loop.cpuPerReq(), "capped/loop-cpu")
				b.ReportMetric(float64(lib.Stats.Violations()), "lib-violations")
				b.ReportMetric(float64(loop.Stats.Violations()), "loop-violations")
				if lib.Stats.Pages == 0 || loop.Stats.Pages == 0 {
					b.Fatalf("no pages fetched (library %d, loop %d)", lib.Stats.Pages, loop.Stats.Pages)
				}
				if v := lib.Stats.Violations(); v != 0 {
					b.Errorf("library: %d politeness violations: %+v", v, lib.Stats)
				}
			}
		})
	}
}

const (
	scaleDelay  = 100 * time.Millisecond
	scaleWarm   = 1500 * time.Millisecond
	scaleWindow = 2 * time.Second
	scaleUA     = "ScaleBot/1.0 (+https://bench.example/bot)"
)

// scaleWeb is the web of BenchmarkScale: 100 ms delay, 10 ms latency, 3 KB
// pages, Crawl-delay: 1 on every tenth host.
var scaleWeb = manyhosts.Config{Delay: scaleDelay, Latency: 10 * time.Millisecond, PageSize: 3 << 10,
	CrawlDelay: time.Second, CrawlDelayEvery: 10}

// scaleCrawlers are the crawlers of BenchmarkScale by name, each with the
// host-name prefix of its hosts.
var scaleCrawlers = map[string]struct {
	prefix string
	crawl  crawler
}{
	"library": {"l", crawlLibrary(nil)},
	"loop":    {"o", crawlLoop},
	"capped":  {"c", crawlLibrary(capIdle)},
}

// scaleRun is one crawler's measures over its window (over the windows of
// several crawls, see and).
type scaleRun struct {
	Stats    manyhosts.Stats // pages and robots.txt in the window, violations over the whole crawl
	All      manyhosts.Stats // the whole crawl
	Window   time.Duration
	CPU      time.Duration
	Alloc    uint64 // bytes allocated in the window
	PeakHeap uint64 // largest live heap sampled
	MaxRSS   int64  // the crawler process's peak resident set, bytes
}

// and returns the measures of r's crawl and o's taken together: counts,
// windows, CPU time and bytes allocated summed, peaks the larger.
func (r scaleRun) and(o scaleRun) scaleRun {
	sum := func(a, b manyhosts.Stats) manyhosts.Stats { return a.Sub(manyhosts.Stats{}.Sub(b)) } // a - (0 - b)
	r.Stats, r.All = sum(r.Stats, o.Stats), sum(r.All, o.All)
	r.Window += o.Window
	r.CPU += o.CPU
	r.Alloc += o.Alloc
	r.PeakHeap, r.MaxRSS = max(r.PeakHeap, o.PeakHeap), max(r.MaxRSS, o.MaxRSS)
	return r
}

func (r scaleRun) rate() float64 { return float64(r.Stats.Pages) / r.Window.Seconds() }
func (r scaleRun) cpuPerReq() float64 {
	return float64(r.CPU) / float64(r.Stats.Requests())
}
func (r scaleRun) allocPerReq() float64 {
	return float64(r.Alloc) / float64(r.Stats.Requests())
}
func (r scaleRun) connsPerReq() float64 {
	return float64(r.All.Conns) / float64(r.All.Requests())
}

// crawler crawls the web's hosts 0 to hosts-1 until ctx ends.
type crawler func(ctx context.Context, b *testing.B, web *manyhosts.Web, hosts int)

// scaleChildEnv tells a process of this test binary, in JSON
// (scaleChild), to be one crawler of BenchmarkScale.
const scaleChildEnv = "GOODBOT_SCALE_CRAWLER"

type scaleChild struct {
	Crawler string // a key of scaleCrawlers
	Hosts   int
	Addr    string // the web's
	Web     manyhosts.Config
	Profile string // if set, the file of the window's CPU profile
}

const scaleResultTag = "scale-result: "

// scaleProfileEnv names a directory for the crawler processes' CPU
// profiles (see BenchmarkScale).
const scaleProfileEnv = "GOODBOT_SCALE_CPUPROFILE"

// crawlIn runs the named crawler in a process of its own
// (BenchmarkCrawlerProcess) and returns its measures, with the process's
// peak RSS.
func crawlIn(b *testing.B, web *manyhosts.Web, name string, hosts int) scaleRun {
	b.Helper()
	child := scaleChild{Crawler: name, Hosts: hosts, Addr: web.Addr(), Web: web.Config()}
	if dir := os.Getenv(scaleProfileEnv); dir != "" {
		f, err := os.CreateTemp(dir, fmt.Sprintf("%s-%d-*.prof", name, hosts))
		if err != nil {
			b.Fatal(err)
		}
		child.Profile = f.Name()
		f.Close()
	}
	js, err := json.Marshal(child)
	if err != nil {
		b.Fatal(err)
	}
	args := []string{"-test.run=^$", "-test.bench=^BenchmarkCrawlerProcess$", "-test.benchtime=1x"}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), scaleChildEnv+"="+string(js))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("crawler %s: %v\n%s", name, err, out)
	}
	_, line, ok := strings.Cut(string(out), scaleResultTag)
	line, _, _ = strings.Cut(line, "\n")
	var run scaleRun
	if !ok {
		b.Fatalf("crawler %s said nothing:\n%s", name, out)
	}
	if err := json.Unmarshal([]byte(line), &run); err != nil {
		b.Fatalf("crawler %s: %v", name, err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		b.Fatal("no rusage for the crawler process")
	}
	run.MaxRSS = ru.Maxrss << 10 // KiB on Linux
	return run
}

// BenchmarkCrawlerProcess is one crawler of BenchmarkScale, in a process
// of its own: it runs only when BenchmarkScale starts it, and prints its
// measures for it.
func BenchmarkCrawlerProcess(b *testing.B) {
	js := os.Getenv(scaleChildEnv)
	if js == "" {
		b.Skip("a crawler process of BenchmarkScale: runs only when BenchmarkScale starts it")
	}
	var c scaleChild
	if err := json.Unmarshal([]byte(js), &c); err != nil {
		b.Fatal(err)
	}
	k, ok := scaleCrawlers[c.Crawler]
	if !ok {
		b.Fatalf("no crawler %q", c.Crawler)
	}
	web := manyhosts.Connect(b, c.Addr, c.Web)
	for b.Loop() {
		run := crawl(b, web, k.prefix, c.Hosts, k.crawl, c.Profile)
		out, err := json.Marshal(run)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("%s%s\n", scaleResultTag, out)
	}
}

// crawl runs c on hosts named prefix+"N.test" for scaleWarm+scaleWindow and
// measures the window (pages, robots.txt requests, CPU) after the warm-up;
// connections and violations are counted over the whole crawl. If profile
// names a file, the window's CPU profile is written there.
func crawl(b *testing.B, w *manyhosts.Web, prefix string, hosts int, c crawler, profile string) scaleRun {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var peak atomic.Uint64
	wg.Go(func() { samplePeakHeap(ctx, &peak) })
	base := w.Stats(b, prefix)
	wg.Go(func() { c(ctx, b, w, hosts) })
	time.Sleep(scaleWarm)
	warm := w.Stats(b, prefix)
	stopProfile := manyhosts.ProfileCPU(b, profile)
	alloc0, cpu0, t0 := allocated(), cputime.Self(), time.Now()
	time.Sleep(scaleWindow)
	end := w.Stats(b, prefix)
	alloc, cpu, window := allocated()-alloc0, cputime.Self()-cpu0, time.Since(t0)
	stopProfile()
	cancel()
	wg.Wait()
	all := end.Sub(base)
	win := end.Sub(warm)
	return scaleRun{Stats: manyhosts.Stats{Pages: win.Pages, Robots: win.Robots, Overlaps: all.Overlaps,
		ShortGaps: all.ShortGaps, BeforeRobots: all.BeforeRobots, Denied: all.Denied},
		All: all, Window: window, CPU: cpu, Alloc: alloc, PeakHeap: peak.Load()}
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

// crawlLibrary is a Fetcher with its defaults (Transport nil: its own base
// transport, with host names resolved to the web's address), one goroutine
// per host; change, when not nil, alters the base transport.
func crawlLibrary(change func(*http.Transport)) crawler {
	return func(ctx context.Context, b *testing.B, web *manyhosts.Web, hosts int) {
		prefix := "l"
		if change != nil {
			prefix = "c"
		}
		bot := fetch.Bot{UserAgent: scaleUA, Politeness: politeness.Policy{MinDelay: scaleDelay}, AllowInternal: loopbackOnly}
		f, tr, err := fetch.NewFetcherWithLookup(bot, web.Lookup(prefix, hosts), change)
		if err != nil {
			b.Error(err)
			return
		}
		defer tr.CloseIdleConnections()
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
