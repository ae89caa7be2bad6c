package redisgate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/politeness/redisgate/redistest"
	"github.com/redis/go-redis/v9"
)

// The fleet tests run real worker processes: the test binary re-executed with
// workerEnv set to a JSON workerConfig. Each worker crawls its share of the
// URLs of a recording test web through politeness.Transport and one shared
// Redis gate, and prints one JSON line per URL.

const workerEnv = "GOODBOT_REDISGATE_WORKER"

type workerConfig struct {
	ID       int
	Redis    string
	Prefix   string
	Web      string // test web address; every virtual host is dialled there
	Hosts    []string
	Pages    int
	Part     int // this worker fetches the pages p with p % Parts == Part
	Parts    int
	Delay    time.Duration
	TTL      time.Duration
	Fence    time.Duration
	Retry    time.Duration // > 0: retry a URL after a gate error, for up to this long
	MaxWait  time.Duration
	HostPool int // concurrent hosts per worker (0: all)
}

type workerResult struct {
	URL         string `json:"url"`
	OK          bool   `json:"ok"`
	Err         string `json:"err,omitempty"`
	Unavailable bool   `json:"unavailable,omitempty"` // a gate error matching ErrUnavailable
	Tries       int    `json:"tries"`
}

func workerMain() int {
	var cfg workerConfig
	if err := json.Unmarshal([]byte(os.Getenv(workerEnv)), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "worker: bad config:", err)
		return 2
	}
	rdb := redis.NewClient(&redis.Options{Addr: cfg.Redis, MaxRetries: -1, DialerRetries: 1, DialTimeout: 300 * time.Millisecond})
	defer rdb.Close()
	gate := New(rdb, &Options{Prefix: cfg.Prefix, LeaseTTL: cfg.TTL, Fence: cfg.Fence, MaxWait: cfg.MaxWait})
	defer gate.Close()
	base := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, cfg.Web)
		},
		MaxIdleConnsPerHost: 4,
	}
	client := &http.Client{Transport: &politeness.Transport{
		Base:   base,
		Gate:   gate,
		Policy: politeness.Policy{MinDelay: cfg.Delay, BreakerThreshold: -1},
	}}
	defer client.CloseIdleConnections()

	var out sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	report := func(r workerResult) {
		out.Lock()
		defer out.Unlock()
		b, _ := json.Marshal(r)
		w.Write(append(b, '\n'))
		w.Flush() // a killed worker keeps what it reported
	}
	fetch := func(u string) workerResult {
		start := time.Now()
		for tries := 1; ; tries++ {
			req, _ := http.NewRequest("GET", u, nil)
			req.Header.Set("X-Worker", strconv.Itoa(cfg.ID))
			req.Header.Set("X-Worker-Pid", strconv.Itoa(os.Getpid()))
			resp, err := client.Do(req)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err == nil {
					return workerResult{URL: u, OK: true, Tries: tries}
				}
			}
			r := workerResult{URL: u, Err: err.Error(), Unavailable: errors.Is(err, ErrUnavailable), Tries: tries}
			if cfg.Retry <= 0 || time.Since(start) > cfg.Retry {
				return r
			}
			report(r) // each failed try is reported, then retried
			time.Sleep(50 * time.Millisecond)
		}
	}
	hosts := slices.Clone(cfg.Hosts)
	rand.Shuffle(len(hosts), func(i, j int) { hosts[i], hosts[j] = hosts[j], hosts[i] })
	pool := cfg.HostPool
	if pool <= 0 {
		pool = len(hosts)
	}
	sem := make(chan struct{}, pool)
	var wg sync.WaitGroup
	for _, h := range hosts {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			for p := range cfg.Pages {
				if p%cfg.Parts == cfg.Part {
					report(fetch(fmt.Sprintf("http://%s/p%d", h, p)))
				}
			}
		})
	}
	wg.Wait()
	return 0
}

// testWeb is a loopback web of virtual hosts (by Host header) that records
// every request with its start and end.
type testWeb struct {
	srv  *httptest.Server
	opts webOptions
	hung chan webRecord // receives the hanging request

	mu       sync.Mutex // guards the rest
	recs     []webRecord
	inflight map[string]int
	overlaps []string
	hungOnce bool
	slowOnce bool
}

type webOptions struct {
	service  time.Duration // time each answer takes
	hangPath string        // a request for host+path hangs until its client goes away (once)
	onReq    func(n int)   // called with the number of requests so far
	slowPath string        // the first request for host+path takes slowFor
	slowFor  time.Duration
}

type webRecord struct {
	Host, Path string
	Worker     string
	Pid        int
	Start, End time.Time
	Hung       bool
}

func newTestWeb(t testing.TB, opts webOptions) *testWeb {
	w := &testWeb{opts: opts, inflight: make(map[string]int), hung: make(chan webRecord, 1)}
	w.srv = httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(w.srv.Close)
	return w
}

func (w *testWeb) serve(rw http.ResponseWriter, r *http.Request) {
	rec := webRecord{Host: r.Host, Path: r.URL.Path, Worker: r.Header.Get("X-Worker"), Start: time.Now()}
	rec.Pid, _ = strconv.Atoi(r.Header.Get("X-Worker-Pid"))
	w.mu.Lock()
	w.inflight[r.Host]++
	if n := w.inflight[r.Host]; n > 1 {
		w.overlaps = append(w.overlaps, fmt.Sprintf("%s: %d requests at once at %s", r.Host, n, rec.Start.Format(time.StampMicro)))
	}
	hang := !w.hungOnce && r.Host+r.URL.Path == w.opts.hangPath
	if hang {
		w.hungOnce = true
	}
	service := w.opts.service
	if !w.slowOnce && r.Host+r.URL.Path == w.opts.slowPath {
		w.slowOnce = true
		service = w.opts.slowFor
	}
	w.mu.Unlock()
	if hang {
		rec.Hung = true
		w.hung <- rec
		<-r.Context().Done() // until the worker dies
	} else {
		time.Sleep(service) // the server's work
		rw.Header().Set("Content-Type", "text/html")
		io.WriteString(rw, "<p>ok</p>")
	}
	rec.End = time.Now()
	w.mu.Lock()
	w.inflight[r.Host]--
	w.recs = append(w.recs, rec)
	n := len(w.recs)
	w.mu.Unlock()
	if w.opts.onReq != nil {
		w.opts.onReq(n)
	}
}

// check fails t on any overlap on a host or any gap below delay between the
// end of one request and the start of the next on that host (C3).
func (w *testWeb) check(t testing.TB, delay time.Duration) map[string][]webRecord {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range w.overlaps {
		t.Errorf("overlap: %s", o)
	}
	byHost := make(map[string][]webRecord)
	for _, r := range w.recs {
		byHost[r.Host] = append(byHost[r.Host], r)
	}
	minGap := time.Duration(1 << 62)
	for h, rs := range byHost {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Start.Before(rs[j].Start) })
		for i := 1; i < len(rs); i++ {
			gap := rs[i].Start.Sub(rs[i-1].End)
			minGap = min(minGap, gap)
			if gap < delay {
				t.Errorf("%s: gap %v < delay %v between %s (worker %s) and %s (worker %s)",
					h, gap, delay, rs[i-1].Path, rs[i-1].Worker, rs[i].Path, rs[i].Worker)
			}
		}
	}
	t.Logf("%d requests on %d hosts, smallest gap %v (delay %v)", len(w.recs), len(byHost), minGap, delay)
	return byHost
}

func (w *testWeb) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.recs)
}

// worker is one running worker process.
type worker struct {
	cmd *exec.Cmd
	out bytes.Buffer
}

func startWorker(t testing.TB, cfg workerConfig) *worker {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(cfg)
	w := &worker{cmd: exec.Command(exe, "-test.run=^$")}
	w.cmd.Env = append(os.Environ(), workerEnv+"="+string(b))
	w.cmd.Stdout = &w.out
	w.cmd.Stderr = os.Stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if w.cmd.ProcessState == nil {
			_ = w.cmd.Process.Kill()
			_ = w.cmd.Wait()
		}
	})
	return w
}

// wait waits for the worker and returns its results.
func (w *worker) wait(t testing.TB) []workerResult {
	t.Helper()
	err := w.cmd.Wait()
	var res []workerResult
	for line := range strings.Lines(w.out.String()) {
		var r workerResult
		if json.Unmarshal([]byte(line), &r) == nil {
			res = append(res, r)
		}
	}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || !ee.Exited() && ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("worker: %v", err)
		}
	}
	return res
}

func fleetHosts(n int) []string {
	hosts := make([]string, n)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("h%03d.fleet.test", i)
	}
	return hosts
}

// runFleet starts n workers sharing all pages of all hosts (each worker
// fetches every page unless split) and returns them.
func runFleet(t testing.TB, n int, base workerConfig, split bool) []*worker {
	ws := make([]*worker, n)
	for i := range ws {
		cfg := base
		cfg.ID = i + 1
		cfg.Part, cfg.Parts = 0, 1
		if split {
			cfg.Part, cfg.Parts = i, n
		}
		ws[i] = startWorker(t, cfg)
	}
	return ws
}

// Three worker processes crawl the same 20 hosts through one Redis: no
// overlap on any host and no gap below the delay (C3, B5, D10, S11).
func TestFleet_C3_D10_ThreeProcesses20Hosts(t *testing.T) {
	addr := needRedis(t)
	const delay = 100 * time.Millisecond
	web := newTestWeb(t, webOptions{service: 5 * time.Millisecond})
	cfg := workerConfig{Redis: addr, Prefix: testPrefix(), Web: web.srv.Listener.Addr().String(),
		Hosts: fleetHosts(20), Pages: 3, Delay: delay, TTL: 3 * time.Second, Fence: 100 * time.Millisecond,
		MaxWait: 500 * time.Millisecond}
	start := time.Now()
	ws := runFleet(t, 3, cfg, false)
	for i, w := range ws {
		for _, r := range w.wait(t) {
			if !r.OK {
				t.Errorf("worker %d: %s: %s", i+1, r.URL, r.Err)
			}
		}
	}
	byHost := web.check(t, delay)
	if got, want := web.count(), 3*20*3; got != want {
		t.Errorf("%d requests, want %d", got, want)
	}
	workers := make(map[string]bool)
	for _, rs := range byHost {
		for _, r := range rs {
			workers[r.Worker] = true
		}
	}
	if len(workers) != 3 {
		t.Errorf("requests came from %d workers, want 3", len(workers))
	}
	t.Logf("fleet of 3 done in %v", time.Since(start))
}

// A worker killed with SIGKILL in the middle of a request holds its host for
// at most the lease TTL; the others then carry on, keeping the promises (C3).
func TestFleet_C3_KilledWorkerReleasesAfterTTL(t *testing.T) {
	addr := needRedis(t)
	const delay, ttl = 100 * time.Millisecond, 1500 * time.Millisecond
	hosts := fleetHosts(20)
	web := newTestWeb(t, webOptions{service: 5 * time.Millisecond, hangPath: hosts[0] + "/p1"})
	cfg := workerConfig{Redis: addr, Prefix: testPrefix(), Web: web.srv.Listener.Addr().String(),
		Hosts: hosts, Pages: 3, Delay: delay, TTL: ttl, Fence: 100 * time.Millisecond,
		MaxWait: 500 * time.Millisecond}
	ws := runFleet(t, 3, cfg, false)

	var hung webRecord
	select {
	case hung = <-web.hung:
	case <-time.After(20 * time.Second):
		t.Fatal("no request reached the hanging page")
	}
	var victim *worker
	for _, w := range ws {
		if w.cmd.Process.Pid == hung.Pid {
			victim = w
		}
	}
	if victim == nil {
		t.Fatalf("hanging request from unknown pid %d", hung.Pid)
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	victim.wait(t)
	for _, w := range ws {
		if w == victim {
			continue
		}
		res := w.wait(t)
		if len(res) != 20*3 {
			t.Errorf("surviving worker reported %d URLs, want %d", len(res), 20*3)
		}
		for _, r := range res {
			if !r.OK {
				t.Errorf("surviving worker: %s: %s", r.URL, r.Err)
			}
		}
	}
	byHost := web.check(t, delay)
	var next *webRecord
	for _, r := range byHost[hosts[0]] {
		if r.Start.After(hung.Start) {
			next = &r
			break
		}
	}
	if next == nil {
		t.Fatalf("nobody fetched %s after the kill", hosts[0])
	}
	if after := next.Start.Sub(killed); after < ttl/2 || after > ttl+3*time.Second {
		t.Errorf("host resumed %v after the kill, want about the lease TTL %v", after, ttl)
	} else {
		t.Logf("host resumed %v after the SIGKILL (lease TTL %v)", after, ttl)
	}
}

// Redis restarted (killed and started again, losing everything) while three
// workers crawl: they get errors meanwhile, never a broken promise, and then
// finish (C3, C7).
func TestFleet_C3_C7_RedisRestartMidCrawl(t *testing.T) {
	srv := redistest.StartT(t)
	const delay = 100 * time.Millisecond
	const hosts, pages = 20, 6
	reached := make(chan struct{})
	var once sync.Once
	// One request is in flight across the whole outage: after the restart its
	// holder must keep the host (re-asserted lease, fence), not share it.
	web := newTestWeb(t, webOptions{service: 5 * time.Millisecond,
		slowPath: fleetHosts(1)[0] + "/p1", slowFor: 4 * time.Second,
		onReq: func(n int) {
			if n >= 3*hosts*pages/3 {
				once.Do(func() { close(reached) })
			}
		}})
	cfg := workerConfig{Redis: srv.Addr, Prefix: testPrefix(), Web: web.srv.Listener.Addr().String(),
		Hosts: fleetHosts(hosts), Pages: pages, Delay: delay, TTL: time.Second,
		// The fence must outlast a holder's reconnection: go-redis retries a
		// failed dial only once a second after many failures.
		Fence: 2500 * time.Millisecond, MaxWait: 300 * time.Millisecond, Retry: 20 * time.Second}
	ws := runFleet(t, 3, cfg, false)
	select {
	case <-reached:
	case <-time.After(20 * time.Second):
		t.Fatal("crawl did not get going")
	}
	srv.Kill() // crash: nothing saved
	down := time.Now()
	time.Sleep(500 * time.Millisecond) // the outage
	srv2, err := redistest.Start(srv.Addr)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	t.Cleanup(func() { srv2.Kill() })
	t.Logf("redis down for %v", time.Since(down))
	var failed, unavailable int
	for i, w := range ws {
		ok := make(map[string]bool)
		for _, r := range w.wait(t) {
			if r.OK {
				ok[r.URL] = true
				continue
			}
			failed++
			if r.Unavailable {
				unavailable++
			}
		}
		if len(ok) != hosts*pages {
			t.Errorf("worker %d fetched %d URLs in the end, want %d", i+1, len(ok), hosts*pages)
		}
	}
	web.check(t, delay)
	t.Logf("%d failed tries during the restart, %d of them ErrUnavailable", failed, unavailable)
	if unavailable == 0 {
		t.Error("no ErrUnavailable while Redis was down")
	}
}
