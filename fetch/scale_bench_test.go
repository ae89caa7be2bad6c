package fetch_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
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
// The web runs in a child process (this test binary, re-run), so the CPU
// time and heap measured here are the crawler's alone. Each host answers
// after 10 ms with a 3 KB page; every tenth host asks for Crawl-delay: 1; a
// tenth of the URLs are disallowed. The web counts violations as requests
// arrive (two requests to a host at once, a gap below the host's delay, a
// page before robots.txt, a disallowed path): the library must have none.
func BenchmarkScale(b *testing.B) {
	for _, hosts := range []int{500, 2000} {
		b.Run(fmt.Sprintf("hosts=%d", hosts), func(b *testing.B) {
			web := startScaleWeb(b)
			for b.Loop() {
				lib := web.crawl(b, "l", hosts, crawlLibrary(nil))
				loop := web.crawl(b, "o", hosts, crawlLoop)
				capped := web.crawl(b, "c", hosts, crawlLibrary(capIdle))
				ceiling := scaleCeiling(hosts)
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
				b.ReportMetric(float64(lib.stats.violations()), "lib-violations")
				b.ReportMetric(float64(loop.stats.violations()), "loop-violations")
				if lib.stats.Pages == 0 || loop.stats.Pages == 0 {
					b.Fatalf("no pages fetched (library %d, loop %d)", lib.stats.Pages, loop.stats.Pages)
				}
				if v := lib.stats.violations(); v != 0 {
					b.Errorf("library: %d politeness violations: %+v", v, lib.stats)
				}
			}
		})
	}
}

const (
	scaleWebEnv     = "GOODBOT_SCALE_WEB"
	scaleDelay      = 100 * time.Millisecond
	scaleLatency    = 10 * time.Millisecond
	scaleCrawlDelay = time.Second // on every tenth host
	scaleWarm       = 1500 * time.Millisecond
	scaleWindow     = 4 * time.Second
	scaleUA         = "ScaleBot/1.0 (+https://bench.example/bot)"
)

// scaleHostDelay is the delay host i asks for (at least the bot's).
func scaleHostDelay(i int) time.Duration {
	if i%10 == 0 {
		return scaleCrawlDelay
	}
	return scaleDelay
}

func scaleCeiling(hosts int) float64 {
	var c float64
	for i := range hosts {
		c += 1 / (scaleHostDelay(i) + scaleLatency).Seconds()
	}
	return c
}

// scaleStats are a web's counters for one crawler (by host-name prefix).
type scaleStats struct {
	Pages, Robots                             int64
	Overlaps, ShortGaps, BeforeRobots, Denied int64
	Conns                                     int64 // all crawlers'
}

func (s scaleStats) violations() int64 {
	return s.Overlaps + s.ShortGaps + s.BeforeRobots + s.Denied
}

func (s scaleStats) sub(o scaleStats) scaleStats {
	return scaleStats{s.Pages - o.Pages, s.Robots - o.Robots, s.Overlaps - o.Overlaps, s.ShortGaps - o.ShortGaps,
		s.BeforeRobots - o.BeforeRobots, s.Denied - o.Denied, s.Conns - o.Conns}
}

// serveScaleWeb is the web's process: it serves every host name on one
// loopback port, prints the port, and exits when its stdin closes.
func serveScaleWeb() {
	type host struct {
		mu       sync.Mutex
		busy     bool
		robots   bool
		lastEnd  time.Time
		minDelay time.Duration
	}
	var (
		hosts  sync.Map // name -> *host
		mu     sync.Mutex
		counts = map[string]*scaleStats{}
		conns  atomic.Int64
	)
	statsOf := func(prefix string) *scaleStats {
		if counts[prefix] == nil {
			counts[prefix] = &scaleStats{}
		}
		return counts[prefix]
	}
	page := []byte("<!doctype html><title>page</title><p>" + strings.Repeat("a small page of text ", 150) + "</p>")
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, _, _ := strings.Cut(r.Host, ":")
		if name == "ctl.test" {
			mu.Lock()
			s := *statsOf(r.URL.Query().Get("prefix"))
			mu.Unlock()
			s.Conns = conns.Load()
			_ = json.NewEncoder(w).Encode(s)
			return
		}
		var idx int
		fmt.Sscanf(name[1:], "%d.test", &idx)
		v, _ := hosts.LoadOrStore(name, &host{minDelay: scaleHostDelay(idx)})
		h := v.(*host)
		isRobots := r.URL.Path == "/robots.txt"
		start := time.Now()
		h.mu.Lock()
		overlap := h.busy
		short := !h.lastEnd.IsZero() && start.Sub(h.lastEnd) < h.minDelay
		early := !isRobots && !h.robots
		h.busy = true
		h.mu.Unlock()

		mu.Lock()
		s := statsOf(name[:1])
		if isRobots {
			s.Robots++
		} else {
			s.Pages++
		}
		s.Overlaps += b2i(overlap)
		s.ShortGaps += b2i(short)
		s.BeforeRobots += b2i(early)
		s.Denied += b2i(strings.HasPrefix(r.URL.Path, "/private"))
		mu.Unlock()

		time.Sleep(scaleLatency)
		if isRobots {
			w.Header().Set("Content-Type", "text/plain")
			body := "User-agent: *\nDisallow: /private\n"
			if h.minDelay == scaleCrawlDelay {
				body += fmt.Sprintf("Crawl-delay: %d\n", int(scaleCrawlDelay/time.Second))
			}
			_, _ = io.WriteString(w, body)
		} else {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(page)
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		h.mu.Lock()
		h.busy = false
		h.robots = h.robots || isRobots
		h.lastEnd = time.Now()
		h.mu.Unlock()
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	srv := &http.Server{Handler: handler, ConnState: func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	_ = srv.Serve(ln)
	os.Exit(0)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// scaleWeb is the parent's handle on the web process.
type scaleWeb struct {
	port string
	ctl  *http.Client
}

func startScaleWeb(b *testing.B) *scaleWeb {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), scaleWebEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	port, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("scale web did not start: %v", err)
	}
	tr := &http.Transport{DialContext: scaleDial(strings.TrimSpace(port))}
	b.Cleanup(tr.CloseIdleConnections)
	return &scaleWeb{port: strings.TrimSpace(port), ctl: &http.Client{Transport: tr}}
}

// scaleDial dials the web's port whatever the host name.
func scaleDial(port string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, "127.0.0.1:"+port)
	}
}

func (w *scaleWeb) stats(b *testing.B, prefix string) scaleStats {
	resp, err := w.ctl.Get("http://ctl.test/stats?prefix=" + prefix)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var s scaleStats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		b.Fatal(err)
	}
	return s
}

// scaleRun is one crawler's measures over the window.
type scaleRun struct {
	stats    scaleStats // pages and robots.txt in the window, violations over the whole crawl
	all      scaleStats // the whole crawl
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

// crawler crawls urls(host) for every host until ctx ends.
type crawler func(ctx context.Context, b *testing.B, port string, hosts int)

// crawl runs c on hosts named prefix+"N.test" for scaleWarm+scaleWindow and
// measures the window (pages, robots.txt requests, CPU) after the warm-up;
// connections and violations are counted over the whole crawl.
func (w *scaleWeb) crawl(b *testing.B, prefix string, hosts int, c crawler) scaleRun {
	runtime.GC()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var peak atomic.Uint64
	wg.Go(func() { samplePeakHeap(ctx, &peak) })
	base := w.stats(b, prefix)
	wg.Go(func() { c(ctx, b, w.port, hosts) })
	time.Sleep(scaleWarm)
	warm := w.stats(b, prefix)
	alloc0, cpu0, t0 := allocated(), cpuTime(), time.Now()
	time.Sleep(scaleWindow)
	end := w.stats(b, prefix)
	alloc, cpu, window := allocated()-alloc0, cpuTime()-cpu0, time.Since(t0)
	cancel()
	wg.Wait()
	all := end.sub(base)
	win := end.sub(warm)
	return scaleRun{stats: scaleStats{Pages: win.Pages, Robots: win.Robots, Overlaps: all.Overlaps,
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

// scaleURL is the i-th URL of host h; every tenth is disallowed.
func scaleURL(prefix string, h int, port string, i int) string {
	if i%10 == 9 {
		return fmt.Sprintf("http://%s%d.test:%s/private/%d", prefix, h, port, i)
	}
	return fmt.Sprintf("http://%s%d.test:%s/p/%d", prefix, h, port, i)
}

// crawlLibrary is a Fetcher with its defaults (its base transport, with
// host names resolved to the web's address), one goroutine per host;
// change, when not nil, alters the base transport.
func crawlLibrary(change func(*http.Transport)) crawler {
	return func(ctx context.Context, b *testing.B, port string, hosts int) {
		prefix := "l"
		if change != nil {
			prefix = "c"
		}
		lookup := make(map[string]string, hosts)
		for h := range hosts {
			lookup[fmt.Sprintf("%s%d.test", prefix, h)] = "127.0.0.1"
		}
		bot := fetch.Bot{UserAgent: scaleUA, Politeness: politeness.Policy{MinDelay: scaleDelay}, AllowInternal: loopbackOnly}
		tr := fetch.BaseTransportWithLookup(bot, lookup)
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
					_, _ = f.Get(ctx, scaleURL(prefix, h, port, i))
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
func crawlLoop(ctx context.Context, b *testing.B, port string, hosts int) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost, tr.IdleConnTimeout = 0, 1, 0
	tr.DialContext = scaleDial(port)
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
			body, status, ok := get(fmt.Sprintf("http://o%d.test:%s/robots.txt", h, port))
			if !ok {
				return
			}
			rules := robots.FromResponse(status, body, nil)
			delay := scaleDelay
			if cd, ok := rules.CrawlDelay(agent); ok {
				delay = max(delay, cd)
			}
			for i := 0; sleep(delay); i++ {
				u := scaleURL("o", h, port, i)
				for !rules.Allowed(agent, u[strings.Index(u, "/p"):]) {
					i++
					u = scaleURL("o", h, port, i)
				}
				get(u)
			}
		})
	}
	wg.Wait()
}
