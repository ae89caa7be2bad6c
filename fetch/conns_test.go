package fetch_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/politeness"
)

// countConns counts the connections srv accepts.
func countConns(srv *httptest.Server) *atomic.Int64 {
	var n atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	return &n
}

// slack is how many connections above one per host the tests tolerate
// among n hosts: under the race detector, about one run in ten opens one
// more (net/http replacing a connection it found unusable). A capped idle
// pool opens far more: 250 for 150 hosts, 161 to 183 for 120.
func slack(n int64) int64 { return n / 50 }

var pageHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html")
	fmt.Fprintf(w, "<html><body>%s</body></html>", r.URL.Path)
})

// The default base transport keeps one idle connection per host for every
// host of a crawl: 150 hosts (more than net/http's default global idle cap
// of 100) visited round-robin three times open one connection each, not
// one per request.
func TestBaseTransport_OneConnectionPerHost(t *testing.T) {
	srv := httptest.NewUnstartedServer(pageHandler)
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	const hosts, rounds = 150, 3
	lookup := map[string]string{}
	for i := range hosts {
		lookup[fmt.Sprintf("h%d.test", i)] = "127.0.0.1"
	}
	bot := fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: time.Millisecond}, AllowInternal: loopbackOnly}
	tr := fetch.BaseTransportWithLookup(bot, lookup)
	defer tr.CloseIdleConnections()
	bot.Transport = tr
	f := mustFetcher(t, bot)

	var requests int
	for r := range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, hosts)
		for i := range hosts {
			wg.Go(func() {
				u := fmt.Sprintf("http://h%d.test:%s/p%d", i, port, r)
				if p, err := f.Get(context.Background(), u); err != nil || p.Outcome != fetch.OK {
					errs <- fmt.Errorf("Get(%s): %v", u, err)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		requests += hosts
	}
	requests += hosts // robots.txt
	if requests != 600 {
		t.Fatalf("made %d requests, want 600", requests)
	}
	if got := conns.Load(); got < hosts || got > hosts+slack(hosts) {
		t.Errorf("%d requests to %d hosts opened %d connections, want %d (one per host)", requests, hosts, got, hosts)
	}
}

// The default base transport keeps a host's connection idle for longer than
// the longest gap pacing can put between two of its requests.
func TestBaseTransport_IdleTimeoutCoversLongestGap(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    politeness.Policy
		min  time.Duration
	}{
		{"defaults: 60 s Crawl-delay slowed down 8 times", politeness.Policy{}, 8 * time.Minute},
		{"20 min Crawl-delay cap", politeness.Policy{MaxCrawlDelay: 20 * time.Minute}, 160 * time.Minute},
		{"no delay", politeness.Policy{MinDelay: -1, MaxCrawlDelay: time.Second, MaxSlowdown: -1}, time.Second},
		{"saturated", politeness.Policy{MaxCrawlDelay: 1 << 62, MaxSlowdown: 16}, 1 << 62},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := fetch.BaseTransportWithLookup(fetch.Bot{UserAgent: testUA, Politeness: tt.p}, nil)
			if tr.IdleConnTimeout < tt.min {
				t.Errorf("IdleConnTimeout = %v, want at least %v", tr.IdleConnTimeout, tt.min)
			}
			if tr.MaxIdleConns != 0 || tr.MaxIdleConnsPerHost != 1 || tr.MaxConnsPerHost != 1 {
				t.Errorf("MaxIdleConns %d, MaxIdleConnsPerHost %d, MaxConnsPerHost %d; want 0 (no cap), 1, 1",
					tr.MaxIdleConns, tr.MaxIdleConnsPerHost, tr.MaxConnsPerHost)
			}
		})
	}
}

// A site offering HTTP/2 is spoken to over HTTP/2, on one connection.
func TestBaseTransport_HTTP2(t *testing.T) {
	var protos sync.Map
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos.Store(r.URL.Path, r.Proto)
		pageHandler(w, r)
	}))
	srv.EnableHTTP2 = true
	conns := countConns(srv)
	srv.StartTLS()
	defer srv.Close()

	bot := fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: time.Millisecond}, AllowInternal: loopbackOnly}
	tr := fetch.BaseTransportWithLookup(bot, nil)
	defer tr.CloseIdleConnections()
	tr.TLSClientConfig = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	bot.Transport = tr
	f := mustFetcher(t, bot)
	for _, path := range []string{"/a", "/b", "/c"} {
		if p, err := f.Get(context.Background(), srv.URL+path); err != nil || p.Outcome != fetch.OK {
			t.Fatalf("Get(%s): %v", path, err)
		}
	}
	for _, path := range []string{"/robots.txt", "/a", "/b", "/c"} {
		if got, _ := protos.Load(path); got != "HTTP/2.0" {
			t.Errorf("%s went over %v, want HTTP/2.0", path, got)
		}
	}
	if got := conns.Load(); got != 1 {
		t.Errorf("4 requests opened %d connections, want 1", got)
	}
}

// The clients New and Wrap build (the latter over a client without a
// Transport) have the same base: 120 sites (one port each, more than
// net/http's default global idle cap of 100) visited round-robin three
// times open one connection each.
func TestNewAndWrap_OneConnectionPerSite(t *testing.T) {
	const sites, rounds = 120, 3
	for _, tt := range []struct {
		name string
		make func(fetch.Bot) (*http.Client, error)
	}{
		{"New", fetch.New},
		{"Wrap", func(bot fetch.Bot) (*http.Client, error) { return fetch.Wrap(bot, &http.Client{}) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var conns atomic.Int64
			urls := make([]string, sites)
			for i := range urls {
				srv := httptest.NewUnstartedServer(pageHandler)
				srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
					if s == http.StateNew {
						conns.Add(1)
					}
				}
				srv.Start()
				defer srv.Close()
				urls[i] = srv.URL
			}
			c, err := tt.make(fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: time.Millisecond},
				AllowInternal: loopbackOnly})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdleConnections()
			requests := 0
			for r := range rounds {
				var wg sync.WaitGroup
				for _, u := range urls {
					wg.Go(func() {
						resp, err := c.Get(fmt.Sprintf("%s/p%d", u, r))
						if err != nil {
							t.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					})
				}
				wg.Wait()
				requests += sites
			}
			if t.Failed() || requests != sites*rounds {
				t.Fatalf("made %d requests, want %d", requests, sites*rounds)
			}
			if got := conns.Load(); got < sites || got > sites+slack(sites) {
				t.Errorf("%d requests (and robots.txt) to %d sites opened %d connections, want %d", requests, sites, got, sites)
			}
		})
	}
}

// h2Fetcher starts a TLS server offering HTTP/2 that answers robots.txt
// with a 404 and every other path with h, and returns it with a Fetcher of
// bot over the chain's own base transport, trusting the server's
// certificate. Both are closed when the test ends.
func h2Fetcher(t *testing.T, bot fetch.Bot, h http.HandlerFunc) (*httptest.Server, *fetch.Fetcher) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	f, tr, err := fetch.NewFetcherWithLookup(bot, nil, func(tr *http.Transport) {
		tr.TLSClientConfig = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return srv, f
}

// The chain's own base transport keeps the time limit over HTTP/2 too: a
// page that never comes ends as Timeout at the limit.
func TestBaseTransport_HTTP2TimeLimit(t *testing.T) {
	var hung atomic.Int32
	bot := fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1}, AllowInternal: loopbackOnly,
		Limits: fetch.Limits{Timeout: time.Second}}
	srv, f := h2Fetcher(t, bot, func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			hung.Add(1)
		}
		<-r.Context().Done()
	})
	done := make(chan *fetch.Page, 1)
	start := time.Now()
	go func() {
		p, _ := f.Get(context.Background(), srv.URL+"/hang")
		done <- p
	}()
	select {
	case p := <-done:
		if hung.Load() != 1 {
			t.Fatalf("%d HTTP/2 requests for the page, want 1", hung.Load())
		}
		if p.Outcome != fetch.Timeout {
			t.Errorf("outcome %v, want timeout", p.Outcome)
		}
		if d := time.Since(start); d < time.Second {
			t.Errorf("ended after %v, before the 1s limit", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Get still running 30s after its 1s limit")
	}
}
