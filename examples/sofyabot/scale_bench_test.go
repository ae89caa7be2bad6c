package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/sofya"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/internal/cputime"
	"github.com/goodbot-go/goodbot/internal/manyhosts"
	"github.com/goodbot-go/goodbot/politeness"
)

// BenchmarkSofyaManyHosts runs sofyabot's crawl (sofya.Run, through
// botkit.Crawl, its state file and defaults) on a loopback web of 500 and
// 2,000 hosts (internal/manyhosts, a child process) with its politeness
// profile scaled by 0.1 (the test-only knob botkit.Env.Scale): a 100 ms
// floor plus up to 50 ms of jitter, Crawl-delay: 1 on every tenth host,
// 10 ms latency, two links a page. In the same round, as the baseline, the
// library crawls the same web the same way without a bot around it: a
// crawl.Crawler with a fetch.Fetcher, both with their defaults but the same
// 100 ms floor and 50 ms jitter, following links, no state file, no output.
// Each reports the pages per second of a measured window against the
// ceiling Σ 1/(max(100 ms, Crawl-delay) + 25 ms (the mean jitter) +
// latency), its CPU time and heap bytes allocated per request (this
// process: the web is another; web-cpu-µs/req and lib-web-cpu-µs/req are
// the web's own, serving sofyabot and the library, its fixed cost spread
// over fewer requests at a lower rate), and the web's count of violations
// (it fails on any):
//
//	go test ./examples/sofyabot -run '^$' -bench SofyaManyHosts -benchtime 1x -count 3
//
// %ceiling and pages/s are sofyabot's; sofya/lib is sofyabot's share of
// the ceiling over the library's. SOFYA_ARGS, if set, adds flags to
// sofyabot's command line (for example SOFYA_ARGS="-parallel 1024").
// With GOODBOT_SOFYA_CPUPROFILE set to a directory, the measured window of
// each crawl is CPU-profiled there (BenchmarkSofyaManyHosts_hosts2000-l0.prof
// is the library's first round at 2,000 hosts, ...-s0.prof sofyabot's), and
// its allocations are profiled by profileWindow.
func BenchmarkSofyaManyHosts(b *testing.B) {
	for _, hosts := range []int{500, 2000} {
		b.Run(fmt.Sprintf("hosts=%d", hosts), func(b *testing.B) { benchSofya(b, hosts) })
	}
}

const (
	benchScale  = 0.1
	benchWarm   = 3 * time.Second
	benchWindow = 6 * time.Second
)

func benchSofya(b *testing.B, hosts int) {
	floor, jitter := time.Duration(benchScale*float64(time.Second)), time.Duration(benchScale*float64(500*time.Millisecond))
	web := manyhosts.Start(b, manyhosts.Config{Delay: floor, Latency: 10 * time.Millisecond, Links: 2})
	cfg := web.Config()
	var ceiling float64
	for n := range hosts {
		ceiling += 1 / (cfg.HostDelay(n) + jitter/2 + cfg.Latency).Seconds()
	}
	for i := 0; b.Loop(); i++ {
		lib := measure(b, web, fmt.Sprintf("l%d-", i), func(ctx context.Context, tr *http.Transport, prefix string) {
			f, err := fetch.NewFetcher(fetch.Bot{UserAgent: "ScaleBot/1.0 (+https://example.org/bot)", Transport: tr,
				Politeness:    politeness.Policy{MinDelay: floor, Jitter: jitter},
				AllowInternal: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
			if err != nil {
				b.Fatal(err)
			}
			front := &crawl.Frontier{}
			for h := range hosts {
				u, _ := url.Parse(web.Root(prefix, h))
				front.Add(u, 0, "seed")
			}
			c := &crawl.Crawler{Frontier: front, Fetcher: f, FollowLinks: true}
			_ = c.Run(ctx)
		})
		sofy := measure(b, web, fmt.Sprintf("s%d-", i), func(ctx context.Context, tr *http.Transport, prefix string) {
			env := botkit.Env{Stdout: io.Discard, Stderr: io.Discard, Transport: tr, Scale: benchScale}
			args := strings.Fields(os.Getenv("SOFYA_ARGS"))
			for h := range hosts {
				args = append(args, web.Root(prefix, h))
			}
			sofya.Run(ctx, bottest.Args(b, nil, "", args...), env)
		})
		b.ReportMetric(sofy.rate, "pages/s")
		b.ReportMetric(100*sofy.rate/ceiling, "%ceiling")
		b.ReportMetric(100*lib.rate/ceiling, "lib-%ceiling")
		b.ReportMetric(sofy.rate/lib.rate, "sofya/lib")
		b.ReportMetric(sofy.cpu, "cpu-µs/req")
		b.ReportMetric(lib.cpu, "lib-cpu-µs/req")
		b.ReportMetric(sofy.webCPU, "web-cpu-µs/req")
		b.ReportMetric(lib.webCPU, "lib-web-cpu-µs/req")
		b.ReportMetric(sofy.alloc, "alloc-B/req")
		b.ReportMetric(lib.alloc, "lib-alloc-B/req")
		b.ReportMetric(float64(sofy.violations), "violations")
		if sofy.violations+lib.violations != 0 {
			b.Errorf("politeness violations: sofyabot %d, library %d", sofy.violations, lib.violations)
		}
	}
	b.ReportMetric(ceiling, "ceiling-pages/s")
}

// run is what measure measures: a crawl of the hosts named prefix+"N.test"
// through tr, until ctx ends.
type run func(ctx context.Context, tr *http.Transport, prefix string)

// measured is one crawl's window: pages per second, CPU microseconds per
// request (page or robots.txt) and violations over the whole crawl.
type measured struct {
	rate, cpu, webCPU, alloc float64
	violations               int64
}

// measure runs crawl for benchWarm + benchWindow and measures the window.
func measure(b *testing.B, web *manyhosts.Web, prefix string, crawl run) measured {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost, tr.MaxIdleConns = 1, 1, 0
	tr.IdleConnTimeout = 2 * time.Minute
	tr.DialContext = web.DialContext
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); crawl(ctx, tr, prefix) }()
	time.Sleep(benchWarm)
	stopProfile := profileWindow(b, prefix)
	before, cpu0, alloc0, start := web.Stats(b, prefix), cputime.Self(), allocated(), time.Now()
	time.Sleep(benchWindow)
	after, cpu1, alloc1, end := web.Stats(b, prefix), cputime.Self(), allocated(), time.Now()
	stopProfile()
	cancel()
	<-done
	tr.CloseIdleConnections()
	got := after.Sub(before)
	if got.Pages == 0 {
		b.Fatalf("%s: no pages fetched in the window", prefix)
	}
	return measured{rate: float64(got.Pages) / end.Sub(start).Seconds(),
		cpu:        float64((cpu1 - cpu0).Microseconds()) / float64(got.Requests()),
		alloc:      float64(alloc1-alloc0) / float64(got.Requests()),
		webCPU:     float64(got.CPU.Microseconds()) / float64(got.Requests()),
		violations: after.Violations()}
}

// profileEnv names the directory of the windows' profiles.
const profileEnv = "GOODBOT_SOFYA_CPUPROFILE"

// profileWindow starts a CPU profile of the window of the crawl named
// prefix, if profileEnv asks for one, and returns what stops it. It also
// writes the heap profile at the window's start and end (…-a.heap and
// …-b.heap): "go tool pprof -sample_index alloc_space -diff_base A B" is
// what the window allocated, by caller.
func profileWindow(tb testing.TB, prefix string) (stop func()) {
	dir := os.Getenv(profileEnv)
	if dir == "" {
		return func() {}
	}
	name := filepath.Join(dir, strings.NewReplacer("/", "_", "=", "").Replace(tb.Name())+"-"+strings.TrimSuffix(prefix, "-"))
	heap := func(suffix string) {
		f, err := os.Create(name + suffix)
		if err != nil {
			tb.Fatal(err)
		}
		if err := errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close()); err != nil {
			tb.Error(err)
		}
	}
	heap("-a.heap")
	stopCPU := manyhosts.ProfileCPU(tb, name+".prof")
	return func() {
		stopCPU()
		heap("-b.heap")
	}
}

// allocated is the number of bytes this process allocated on the heap so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestProfileWindow checks the benchmark's profiles: with profileEnv set,
// the window's CPU profile and its two heap profiles are written (gzipped
// pprof files) once stop returns; without it nothing is.
func TestProfileWindow(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(profileEnv, "")
	profileWindow(t, "s0-")()
	if got, _ := os.ReadDir(dir); len(got) != 0 {
		t.Fatalf("without %s: %d files written", profileEnv, len(got))
	}
	t.Setenv(profileEnv, dir)
	stop := profileWindow(t, "s0-")
	stop()
	for _, suffix := range []string{".prof", "-a.heap", "-b.heap"} {
		raw, err := os.ReadFile(filepath.Join(dir, "TestProfileWindow-s0"+suffix))
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
			t.Errorf("%s: %d bytes, not a gzipped profile", suffix, len(raw))
		}
	}
}
