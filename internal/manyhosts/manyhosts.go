// Package manyhosts is a loopback web of thousands of hosts for the
// module's benchmarks, served by a child process so that the CPU time and
// memory a benchmark measures are its crawler's alone.
//
// Every host name of the form <prefix><N>.test (N a decimal number, the
// prefix any text not ending in a digit, such as "a") is a site: its
// robots.txt disallows /private and, on every CrawlDelayEvery-th host (N a
// multiple of it), asks for a Crawl-delay; its pages /p/<i> (and / for page 0) answer after Latency
// with an HTML page of PageSize bytes, optionally linking to the next pages
// and to one disallowed page. One prefix per crawler keeps the crawlers'
// hosts, pacing and counts apart in one web.
//
// As requests arrive the web counts, per prefix, pages, robots.txt
// requests, connections, and politeness violations by kind: two requests
// to one host at once (Overlaps), a gap below the host's delay measured
// from the end of one answer to the start of the next (ShortGaps), a page
// before robots.txt (BeforeRobots), a disallowed path (Denied). It also
// counts pages asked for again (Repeats), which is no violation.
//
// The child is the test binary itself, re-run: the test binary's TestMain
// must call [Main] first. Usage:
//
//	func TestMain(m *testing.M) {
//		manyhosts.Main() // serves the web when this process is one; else returns
//		os.Exit(m.Run())
//	}
//
//	func BenchmarkCrawl(b *testing.B) {
//		web := manyhosts.Start(b, manyhosts.Config{Delay: 100 * time.Millisecond})
//		tr := &http.Transport{DialContext: web.DialContext}
//		... crawl web.URL("a", h, i) for h in [0, n) ...
//		s := web.Stats(b, "a") // pages, violations
//		rate := float64(s.Pages) / elapsed.Seconds() / web.Ceiling(n)
//	}
//
// The package is internal: it is a measuring instrument of this module's
// benchmarks (the re-run test binary, the fixed host-name scheme and the
// counters are conventions between them), not an API for bot authors, who
// have fetch/fetchtest.
package manyhosts

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// env carries the Config (JSON) to the web process.
const env = "GOODBOT_MANYHOSTS_WEB"

// Config is the shape of a web. The zero Config is a web of 100 ms delays,
// 10 ms latency, 3 KB pages without links, Crawl-delay: 1 on every tenth
// host and endless pages.
type Config struct {
	// Delay is the least gap the web accepts between two requests to a
	// host (end of one answer to start of the next): the bot's delay.
	// Zero means 100 ms.
	Delay time.Duration
	// Latency is how long each answer takes (the handler sleeps before
	// writing). Zero means 10 ms; negative means none.
	Latency time.Duration
	// PageSize is the size in bytes of each HTML page. Zero means 3 KB.
	PageSize int
	// CrawlDelay is the Crawl-delay asked by every CrawlDelayEvery-th host
	// (whole seconds: robots.txt says it in seconds). Zero means 1 s;
	// negative means no host asks for one.
	CrawlDelay time.Duration
	// CrawlDelayEvery: hosts whose number is a multiple of it ask for
	// CrawlDelay. Zero means 10.
	CrawlDelayEvery int
	// Links is the number of links of each page: page i links to pages
	// i+1 ... i+Links of its host and, when Links > 0, to the disallowed
	// /private/i. Zero means no links (a crawler that makes its own URLs,
	// see [Web.URL]).
	Links int
	// PagesPerHost, when positive, is the number of pages of each host
	// (/p/0 to /p/<PagesPerHost-1>); other pages answer 404 and links stop
	// at the last page. Zero means every /p/<i> exists.
	PagesPerHost int
}

func (c Config) withDefaults() Config {
	if c.Delay == 0 {
		c.Delay = 100 * time.Millisecond
	}
	if c.Latency == 0 {
		c.Latency = 10 * time.Millisecond
	}
	c.Latency = max(c.Latency, 0)
	if c.PageSize == 0 {
		c.PageSize = 3 << 10
	}
	if c.CrawlDelay == 0 {
		c.CrawlDelay = time.Second
	}
	c.CrawlDelay = max(c.CrawlDelay, 0).Truncate(time.Second)
	if c.CrawlDelayEvery == 0 {
		c.CrawlDelayEvery = 10
	}
	return c
}

// crawlDelay returns the Crawl-delay host n asks for, if any.
func (c Config) crawlDelay(n int) (time.Duration, bool) {
	if c.CrawlDelay <= 0 || c.CrawlDelayEvery <= 0 || n%c.CrawlDelayEvery != 0 {
		return 0, false
	}
	return c.CrawlDelay, true
}

// HostDelay is the least gap host n accepts: max(Delay, its Crawl-delay).
func (c Config) HostDelay(n int) time.Duration {
	c = c.withDefaults()
	cd, _ := c.crawlDelay(n)
	return max(c.Delay, cd)
}

// Ceiling is the politeness ceiling of hosts 0 to hosts-1, in pages per
// second: Σ 1/(HostDelay + Latency), what a crawler that waits exactly the
// delay after each answer reaches.
func (c Config) Ceiling(hosts int) float64 {
	c = c.withDefaults()
	var sum float64
	for n := range hosts {
		sum += 1 / (c.HostDelay(n) + c.Latency).Seconds()
	}
	return sum
}

// Stats are the web's counts for one prefix, from its start.
type Stats struct {
	Pages  int64 // page requests (robots.txt excluded), whatever the answer
	Robots int64 // robots.txt requests
	Conns  int64 // connections whose first request was for the prefix
	// Violations by kind.
	Overlaps     int64 // a request to a host while another was in flight
	ShortGaps    int64 // a request sooner than the host's delay after the last answer ended
	BeforeRobots int64 // a page before the host's robots.txt was served
	Denied       int64 // a request for a disallowed path
	// Repeats counts page requests for a path of a host already asked for
	// (not a violation: a refetch; a crawl that fetches each page once
	// has none).
	Repeats int64
	// CPU is the web process's CPU time (user and system) when the
	// counts were taken, for all prefixes: between two snapshots, what
	// serving cost the web.
	CPU time.Duration
}

// Violations is the sum of the politeness violations.
func (s Stats) Violations() int64 { return s.Overlaps + s.ShortGaps + s.BeforeRobots + s.Denied }

// Requests is Pages + Robots.
func (s Stats) Requests() int64 { return s.Pages + s.Robots }

// Sub returns s - o, field by field: the counts between two snapshots.
func (s Stats) Sub(o Stats) Stats {
	return Stats{
		Pages: s.Pages - o.Pages, Robots: s.Robots - o.Robots, Conns: s.Conns - o.Conns,
		Overlaps: s.Overlaps - o.Overlaps, ShortGaps: s.ShortGaps - o.ShortGaps,
		BeforeRobots: s.BeforeRobots - o.BeforeRobots, Denied: s.Denied - o.Denied,
		Repeats: s.Repeats - o.Repeats, CPU: s.CPU - o.CPU,
	}
}

// Host returns the name of host n of prefix: prefix+"<n>.test".
func Host(prefix string, n int) string { return prefix + strconv.Itoa(n) + ".test" }

// Web is a running web, from [Start]. Its methods are safe for concurrent
// use.
type Web struct {
	cfg  Config
	addr string // 127.0.0.1:port
	ctl  *http.Client
	dial net.Dialer
}

// Start starts a web process shaped by cfg and stops it when tb's test
// ends. The test binary's TestMain must call [Main] first; Start fails tb
// when the web does not come up.
func Start(tb testing.TB, cfg Config) *Web {
	tb.Helper()
	cfg = cfg.withDefaults()
	js, err := json.Marshal(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), env+"="+string(js))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	port := strings.TrimSpace(line)
	if _, perr := strconv.Atoi(port); err != nil || perr != nil {
		tb.Fatalf("manyhosts: the web process did not start (does TestMain call manyhosts.Main first?): %q, %v", line, err)
	}
	return Connect(tb, "127.0.0.1:"+port, cfg)
}

// Connect returns a handle on a web already running at addr (a
// [Web.Addr]) with Config cfg (its [Web.Config]): for a crawler in
// another process than the one that called [Start]. Its connections are
// closed when tb's test ends; the web keeps running.
func Connect(tb testing.TB, addr string, cfg Config) *Web {
	w := &Web{cfg: cfg.withDefaults(), addr: addr}
	tr := &http.Transport{DialContext: w.DialContext}
	tb.Cleanup(tr.CloseIdleConnections)
	w.ctl = &http.Client{Transport: tr}
	return w
}

// Config returns the web's Config, defaults filled in.
func (w *Web) Config() Config { return w.cfg }

// Addr returns the web's loopback address, "127.0.0.1:port": every host
// name is served there. Another process reaches the web with [DialTo].
func (w *Web) Addr() string { return w.addr }

// Port returns the port of [Web.Addr]; URLs carry it.
func (w *Web) Port() string { _, p, _ := net.SplitHostPort(w.addr); return p }

// DialContext dials the web whatever the address asked for: the stub
// resolver of a crawler's http.Transport.
func (w *Web) DialContext(ctx context.Context, network, _ string) (net.Conn, error) {
	return w.dial.DialContext(ctx, network, w.addr)
}

// DialTo returns a DialContext that dials addr (a [Web.Addr]) whatever the
// address asked for: for a crawler in another process.
func DialTo(addr string) func(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
}

// Lookup returns a stub DNS table for hosts 0 to hosts-1 of prefix: each
// name to "127.0.0.1" (the port is in the URLs).
func (w *Web) Lookup(prefix string, hosts int) map[string]string {
	m := make(map[string]string, hosts)
	for n := range hosts {
		m[Host(prefix, n)] = "127.0.0.1"
	}
	return m
}

// Root returns the URL of host n's home page (page 0).
func (w *Web) Root(prefix string, n int) string {
	return "http://" + Host(prefix, n) + ":" + w.Port() + "/"
}

// RobotsURL returns the URL of host n's robots.txt.
func (w *Web) RobotsURL(prefix string, n int) string {
	return "http://" + Host(prefix, n) + ":" + w.Port() + "/robots.txt"
}

// URL returns the i-th URL of host n of prefix, for a crawler that makes
// its own URLs: the host's root followed by [Path](i).
func (w *Web) URL(prefix string, n, i int) string {
	return "http://" + Host(prefix, n) + ":" + w.Port() + Path(i)
}

// Path is the path of the i-th URL of a host: /p/<i>, except every tenth
// (i%10 == 9), /private/<i>, disallowed by robots.txt.
func Path(i int) string {
	if i%10 == 9 {
		return "/private/" + strconv.Itoa(i)
	}
	return "/p/" + strconv.Itoa(i)
}

// HostDelay is w.Config().HostDelay(n).
func (w *Web) HostDelay(n int) time.Duration { return w.cfg.HostDelay(n) }

// Ceiling is w.Config().Ceiling(hosts).
func (w *Web) Ceiling(hosts int) float64 { return w.cfg.Ceiling(hosts) }

// Stats returns the web's counts for prefix since the web started. Take
// two snapshots and [Stats.Sub] them to count a window.
func (w *Web) Stats(tb testing.TB, prefix string) Stats {
	tb.Helper()
	s, err := w.stats(prefix)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func (w *Web) stats(prefix string) (Stats, error) {
	resp, err := w.ctl.Get("http://" + ctlHost + "/stats?prefix=" + prefix)
	if err != nil {
		return Stats{}, fmt.Errorf("manyhosts: stats: %w", err)
	}
	defer resp.Body.Close()
	var s Stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return Stats{}, fmt.Errorf("manyhosts: stats: %w", err)
	}
	return s, nil
}

const ctlHost = "ctl.manyhosts"

// Main serves the web and exits when this process is a web started by
// [Start]; otherwise it returns at once. Call it first in TestMain.
func Main() {
	js := os.Getenv(env)
	if js == "" {
		return
	}
	var cfg Config
	if err := json.Unmarshal([]byte(js), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "manyhosts:", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "manyhosts:", err)
		os.Exit(2)
	}
	w := newServer(cfg.withDefaults())
	srv := &http.Server{Handler: w, ConnContext: w.connContext}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // the parent is gone
		os.Exit(0)
	}()
	err = srv.Serve(ln)
	fmt.Fprintln(os.Stderr, "manyhosts:", err)
	os.Exit(2)
}

// server is the web process's handler.
type server struct {
	cfg   Config
	hosts sync.Map // name -> *host

	mu     sync.Mutex
	counts map[string]*Stats // by prefix
}

type host struct {
	mu      sync.Mutex
	delay   time.Duration
	crawl   time.Duration // Crawl-delay asked, 0 if none
	busy    bool
	robots  bool
	lastEnd time.Time
	seen    map[string]struct{} // page paths asked for
}

type connKey struct{}

// conn is one connection's flag: whether it was counted yet.
type conn struct{ counted bool }

func newServer(cfg Config) *server {
	return &server{cfg: cfg, counts: map[string]*Stats{}}
}

func (s *server) connContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, new(conn))
}

// statsLocked returns prefix's counts, made on first use.
func (s *server) statsLocked(prefix string) *Stats {
	st := s.counts[prefix]
	if st == nil {
		st = new(Stats)
		s.counts[prefix] = st
	}
	return st
}

// parseHost splits "<prefix><n>.test[:port]" into prefix and n.
func parseHost(h string) (prefix string, n int, ok bool) {
	name, _, _ := strings.Cut(h, ":")
	name, ok = strings.CutSuffix(name, ".test")
	if !ok {
		return "", 0, false
	}
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(name[i:])
	if err != nil || i == 0 {
		return "", 0, false
	}
	return name[:i], n, true
}

func (s *server) host(name string, n int) *host {
	if v, ok := s.hosts.Load(name); ok {
		return v.(*host)
	}
	cd, _ := s.cfg.crawlDelay(n)
	v, _ := s.hosts.LoadOrStore(name, &host{delay: s.cfg.HostDelay(n), crawl: cd, seen: map[string]struct{}{}})
	return v.(*host)
}

var errNotFound = errors.New("not found")

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Host == ctlHost {
		s.mu.Lock()
		st := *s.statsLocked(r.URL.Query().Get("prefix"))
		s.mu.Unlock()
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
			st.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
		_ = json.NewEncoder(w).Encode(st)
		return
	}
	prefix, n, ok := parseHost(r.Host)
	if !ok {
		http.Error(w, "manyhosts: no such host", http.StatusNotFound)
		return
	}
	name, _, _ := strings.Cut(r.Host, ":")
	h := s.host(name, n)
	isRobots := r.URL.Path == "/robots.txt"

	start := time.Now()
	h.mu.Lock()
	overlap := h.busy
	short := !h.lastEnd.IsZero() && start.Sub(h.lastEnd) < h.delay
	early := !isRobots && !h.robots
	repeat := false
	if !isRobots {
		_, repeat = h.seen[r.URL.Path]
		h.seen[r.URL.Path] = struct{}{}
	}
	h.busy = true
	h.mu.Unlock()

	s.mu.Lock()
	st := s.statsLocked(prefix)
	if c, _ := r.Context().Value(connKey{}).(*conn); c != nil && !c.counted {
		c.counted = true
		st.Conns++
	}
	if isRobots {
		st.Robots++
	} else {
		st.Pages++
	}
	st.Overlaps += b2i(overlap)
	st.ShortGaps += b2i(short)
	st.BeforeRobots += b2i(early)
	st.Denied += b2i(strings.HasPrefix(r.URL.Path, "/private"))
	st.Repeats += b2i(repeat)
	s.mu.Unlock()

	time.Sleep(s.cfg.Latency)
	if isRobots {
		w.Header().Set("Content-Type", "text/plain")
		body := "User-agent: *\nDisallow: /private\n"
		if h.crawl > 0 {
			body += "Crawl-delay: " + strconv.Itoa(int(h.crawl/time.Second)) + "\n"
		}
		_, _ = io.WriteString(w, body)
	} else if page, err := s.page(r.URL.Path); err != nil {
		http.Error(w, "manyhosts: no such page", http.StatusNotFound)
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
}

// page returns the HTML page at path: "/" (page 0) or /p/<i>.
func (s *server) page(path string) ([]byte, error) {
	i := 0
	if path != "/" {
		num, ok := strings.CutPrefix(path, "/p/")
		if !ok {
			return nil, errNotFound
		}
		var err error
		if i, err = strconv.Atoi(num); err != nil || i < 0 {
			return nil, errNotFound
		}
	}
	last := s.cfg.PagesPerHost - 1
	if s.cfg.PagesPerHost > 0 && i > last {
		return nil, errNotFound
	}
	b := make([]byte, 0, s.cfg.PageSize+64)
	b = append(b, "<!doctype html><title>page "...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, "</title>\n"...)
	if s.cfg.Links > 0 {
		for j := i + 1; j <= i+s.cfg.Links && (s.cfg.PagesPerHost <= 0 || j <= last); j++ {
			b = append(b, `<a href="/p/`...)
			b = strconv.AppendInt(b, int64(j), 10)
			b = append(b, "\">next</a>\n"...)
		}
		b = append(b, `<a href="/private/`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "\">private</a>\n"...)
	}
	b = append(b, "<p>"...)
	const filler = "a small page of text "
	for len(b) < s.cfg.PageSize-len("</p>") {
		b = append(b, filler[:min(len(filler), s.cfg.PageSize-len("</p>")-len(b))]...)
	}
	return append(b, "</p>"...), nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// ProfileCPU starts a CPU profile of this process written to the file name
// and returns what stops it; with name empty it does nothing. The
// benchmarks on this web profile their measured windows with it.
func ProfileCPU(tb testing.TB, name string) (stop func()) {
	if name == "" {
		return func() {}
	}
	f, err := os.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		tb.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			tb.Error(err)
		}
	}
}
