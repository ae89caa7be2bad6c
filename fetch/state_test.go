package fetch_test

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/internal/testenv"
	"github.com/goodbot-go/goodbot/politeness"
)

// B8: a refetch sends the ETag as If-None-Match and Last-Modified as
// If-Modified-Since, so an unchanged page costs a 304; validators are not
// carried to another URL on a redirect.
func TestState_B8_ConditionalRefetch(t *testing.T) {
	w, bot := loopback(t)
	lm := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	site(w, "a.test", "").
		Handle("/page", fetchtest.Page{Body: "v1", ETag: `"v1"`, LastModified: lm}).
		Handle("/dated", fetchtest.Page{Body: "d", LastModified: lm}).
		Handle("/old", fetchtest.Redirect("/other", 0)).
		Handle("/other", fetchtest.Page{Body: "o", ETag: `"o"`})
	f := mustFetcher(t, bot)
	p := get(t, f, "http://a.test/page", fetch.OK)
	if string(p.Body) != "v1" {
		t.Fatalf("body %q", p.Body)
	}
	p = get(t, f, "http://a.test/page", fetch.NotModified)
	if !p.NotModified || p.Status != 304 {
		t.Errorf("NotModified %v status %d", p.NotModified, p.Status)
	}
	get(t, f, "http://a.test/dated", fetch.OK)
	get(t, f, "http://a.test/dated", fetch.NotModified)
	get(t, f, "http://a.test/other", fetch.OK)
	get(t, f, "http://a.test/old", fetch.OK) // validators of /old (none) only; /other answers in full

	rs := w.RequestsTo("a.test", "/page")
	if rs[0].Header.Get("If-None-Match") != "" || rs[1].Header.Get("If-None-Match") != `"v1"` ||
		rs[1].Header.Get("If-Modified-Since") != lm.Format("Mon, 02 Jan 2006 15:04:05 GMT") {
		t.Errorf("conditional headers: first %v, second %v", rs[0].Header, rs[1].Header)
	}
	if h := w.RequestsTo("a.test", "/other")[1].Header; h.Get("If-None-Match") != "" {
		t.Errorf("validators leaked to a redirect target: %v", h)
	}
}

// B9: a freshness refetch carries Cache-Control: no-cache; other requests
// do not.
func TestState_B9_FreshNoCache(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").Handle("/p", fetchtest.HTML("p"))
	f := mustFetcher(t, bot)
	get(t, f, "http://a.test/p", fetch.OK)
	getCtx(t, fetch.WithFresh(context.Background()), f, "http://a.test/p", fetch.OK)
	rs := w.RequestsTo("a.test", "/p")
	if rs[0].Header.Get("Cache-Control") != "" || rs[1].Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("Cache-Control: %q then %q", rs[0].Header.Get("Cache-Control"), rs[1].Header.Get("Cache-Control"))
	}
}

// S8: with Once, each normalised URL is fetched once; redirect targets
// count as fetched too.
func TestState_S8_FetchOnce(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").Handle("/x", fetchtest.HTML("x")).Handle("/moved", fetchtest.Redirect("/x", 0)).
		Handle("/~y", fetchtest.HTML("y"))
	bot.Once = true
	f := mustFetcher(t, bot)
	get(t, f, "http://a.test/x", fetch.OK)
	for _, u := range []string{"HTTP://A.TEST:80/./x#frag", "http://a.test/a/../x", "http://a.test./x"} {
		get(t, f, u, fetch.Duplicate)
	}
	get(t, f, "http://a.test/%7Ey", fetch.OK)
	get(t, f, "http://a.test/~y", fetch.Duplicate)
	if n := w.Count("a.test", "/x"); n != 1 {
		t.Errorf("/x fetched %d times", n)
	}
}

func TestNormalize_S8(t *testing.T) {
	tests := []struct{ in, want string }{
		{"HTTP://Example.COM:80/a/./b/../c?q=1#f", "http://example.com/a/c?q=1"},
		{"https://example.com:443", "https://example.com/"},
		{"https://example.com:8443/%7euser/%2fx?%41=%2f", "https://example.com:8443/~user/%2Fx?A=%2F"},
		{"http://example.com./?", "http://example.com/"},
		{"http://[::1]:80/x", "http://[::1]/x"},
		{"http://example.com/a/b/..", "http://example.com/a/"},
		{"http://example.com/b?z=1&a=2", "http://example.com/b?z=1&a=2"},
	}
	for _, tt := range tests {
		got, err := fetch.Normalize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"ftp://x/", "/relative", "http://user:pw@x/", "http://%zz/", "HTTP://."} {
		if _, err := fetch.Normalize(bad); err == nil {
			t.Errorf("Normalize(%q): no error", bad)
		}
	}
}

// D3: Get fetches exactly the URL given (after robots.txt): no link
// following, no sitemap, no guessing.
func TestState_D3_ExactURLOnly(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "Sitemap: http://a.test/sitemap.xml\n").
		Handle("/listing", fetchtest.HTML(`<a href="/other">other</a><a href="http://b.test/">b</a>`))
	get(t, mustFetcher(t, bot), "http://a.test/listing", fetch.OK)
	var got []string
	for _, r := range w.Requests() {
		got = append(got, r.URL())
	}
	if strings.Join(got, " ") != "a.test/robots.txt a.test/listing" {
		t.Errorf("requests %v", got)
	}
}

// S2: outgoing connections are bound to the configured source address.
func TestState_S2_LocalAddr(t *testing.T) {
	src := netip.MustParseAddr("127.0.0.2")
	if ln, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		testenv.Missing(t, "cannot bind %v here: %v", src, err)
	} else {
		ln.Close()
	}
	w := fetchtest.New()
	addr := w.Start()
	defer w.Close()
	site(w, "127.0.0.1", "")
	f := mustFetcher(t, fetch.Bot{UserAgent: testUA, LocalAddr: src, Politeness: politeness.Policy{MinDelay: -1},
		AllowInternal: loopbackOnly})
	defer f.CloseIdleConnections()
	get(t, f, "http://"+addr+"/", fetch.OK)
	for _, r := range w.Requests() {
		if host, _, _ := net.SplitHostPort(r.RemoteAddr); host != src.String() {
			t.Errorf("%s came from %s, want %v", r.URL(), r.RemoteAddr, src)
		}
	}
	if len(w.Requests()) != 2 {
		t.Errorf("%d requests", len(w.Requests()))
	}
}

// S8: concurrent Adds of one URL report "new" to exactly one caller.
func TestMemorySet_S8_AddOnce(t *testing.T) {
	var s fetch.MemorySet
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if ok, _ := s.Add(context.Background(), "http://a.test/"); ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d winners", wins.Load())
	}
	if ok, _ := s.Has(context.Background(), "http://a.test/"); !ok {
		t.Error("Has after Add")
	}
}
