package manyhosts_test

import (
	"context"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/internal/manyhosts"
)

func TestMain(m *testing.M) {
	manyhosts.Main()
	os.Exit(m.Run())
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestWeb_CountsEachViolationKind breaks every rule once, on hosts of its
// own prefix, and reads each count back; a polite prefix reads none.
func TestWeb_CountsEachViolationKind(t *testing.T) {
	web := manyhosts.Start(t, manyhosts.Config{Delay: 300 * time.Millisecond, Latency: 50 * time.Millisecond})
	tr := &http.Transport{DialContext: web.DialContext, MaxIdleConnsPerHost: 10}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}

	// Polite: robots.txt, wait, a page, wait, another page.
	if code, body := get(t, c, web.RobotsURL("good", 1)); code != 200 || !strings.Contains(body, "Disallow: /private") || strings.Contains(body, "Crawl-delay") {
		t.Fatalf("robots.txt of host 1: %d %q", code, body)
	}
	time.Sleep(310 * time.Millisecond)
	get(t, c, web.URL("good", 1, 0))
	time.Sleep(310 * time.Millisecond)
	get(t, c, web.URL("good", 1, 1))
	good := web.Stats(t, "good")
	if good.Pages != 2 || good.Robots != 1 || good.Conns < 1 {
		t.Fatalf("polite prefix: %+v, want 2 pages, 1 robots.txt, at least 1 connection", good)
	}
	if good.Violations() != 0 || good.Repeats != 0 {
		t.Fatalf("polite prefix: %+v, want no violation and no repeat", good)
	}

	// Rude, one kind each on its own host.
	get(t, c, web.URL("bad", 1, 0)) // before robots.txt
	get(t, c, web.RobotsURL("bad", 2))
	get(t, c, web.URL("bad", 2, 0)) // at once: a short gap
	get(t, c, web.RobotsURL("bad", 3))
	time.Sleep(310 * time.Millisecond)
	get(t, c, web.URL("bad", 3, 9)) // /private/9
	time.Sleep(310 * time.Millisecond)
	get(t, c, web.URL("bad", 3, 0))
	time.Sleep(310 * time.Millisecond)
	get(t, c, web.URL("bad", 3, 0)) // again: a repeat
	get(t, c, web.RobotsURL("bad", 4))
	time.Sleep(310 * time.Millisecond)
	var wg sync.WaitGroup
	for range 2 { // two at once: an overlap (and a short gap for the second)
		wg.Go(func() {
			resp, err := c.Get(web.URL("bad", 4, 1))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()

	bad := web.Stats(t, "bad")
	want := manyhosts.Stats{Pages: 7, Robots: 3, Overlaps: 1, BeforeRobots: 1, Denied: 1, Repeats: 2}
	if bad.Pages != want.Pages || bad.Robots != want.Robots || bad.Overlaps != 1 || bad.BeforeRobots != 1 ||
		bad.Denied != 1 || bad.Repeats != 2 {
		t.Fatalf("rude prefix: %+v, want %+v (and 1 short gap, or 2 when the overlap's order let both see it)", bad, want)
	}
	if bad.ShortGaps < 1 || bad.ShortGaps > 2 {
		t.Fatalf("rude prefix: %d short gaps, want 1 or 2", bad.ShortGaps)
	}
	if bad.Violations() < 4 {
		t.Fatalf("Violations() = %d, want at least 4", bad.Violations())
	}
	again := web.Stats(t, "good")
	if again.CPU <= good.CPU {
		t.Errorf("the web's CPU time did not grow while it served the rude prefix: %v, was %v", again.CPU, good.CPU)
	}
	if again.CPU = good.CPU; again != good {
		t.Fatalf("one prefix's requests changed another's counts: %+v, was %+v", again, good)
	}
}

// TestWeb_Pages: the page size, the links, the last page, Crawl-delay on
// every tenth host.
func TestWeb_Pages(t *testing.T) {
	web := manyhosts.Start(t, manyhosts.Config{PageSize: 5000, Links: 3, PagesPerHost: 5, Latency: -1})
	tr := &http.Transport{DialContext: web.DialContext}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	base := "http://" + manyhosts.Host("x", 20) + ":" + web.Port()
	tests := []struct {
		path   string
		status int
		links  []string
		size   int
	}{
		{"/", 200, []string{"/p/1", "/p/2", "/p/3", "/private/0"}, 5000},
		{"/p/0", 200, []string{"/p/1", "/p/2", "/p/3", "/private/0"}, 5000},
		{"/p/3", 200, []string{"/p/4", "/private/3"}, 5000},
		{"/p/4", 200, []string{"/private/4"}, 5000},
		{"/p/5", 404, nil, -1},
		{"/p/x", 404, nil, -1},
		{"/other", 404, nil, -1},
	}
	for _, tc := range tests {
		code, body := get(t, c, base+tc.path)
		if code != tc.status {
			t.Errorf("%s: status %d, want %d", tc.path, code, tc.status)
			continue
		}
		if tc.size >= 0 && len(body) != tc.size {
			t.Errorf("%s: %d bytes, want %d", tc.path, len(body), tc.size)
		}
		if got := strings.Count(body, "<a href="); tc.links != nil && got != len(tc.links) {
			t.Errorf("%s: %d links, want %d", tc.path, got, len(tc.links))
		}
		for _, l := range tc.links {
			if !strings.Contains(body, `href="`+l+`"`) {
				t.Errorf("%s: no link to %s", tc.path, l)
			}
		}
	}
	for _, h := range []struct {
		n    int
		want string
	}{{0, "Crawl-delay: 1\n"}, {20, "Crawl-delay: 1\n"}, {7, ""}, {21, ""}} {
		_, body := get(t, c, web.RobotsURL("y", h.n))
		if got := strings.Contains(body, "Crawl-delay"); got != (h.want != "") || !strings.Contains(body, h.want) {
			t.Errorf("robots.txt of host %d: %q, want Crawl-delay %v", h.n, body, h.want != "")
		}
	}
}

// TestConfig_Ceiling compares with the ceiling worked out by hand.
func TestConfig_Ceiling(t *testing.T) {
	tests := []struct {
		cfg   manyhosts.Config
		hosts int
		want  float64
	}{
		// Host 0 asks Crawl-delay 1 s: 1/1.01 + 9/0.11.
		{manyhosts.Config{}, 10, 1/1.01 + 9/0.11},
		{manyhosts.Config{}, 500, 50/1.01 + 450/0.11},
		{manyhosts.Config{CrawlDelay: -1, Latency: -1, Delay: time.Second}, 7, 7},
		{manyhosts.Config{Delay: 2 * time.Second, Latency: -1}, 10, 10 / 2.0},
	}
	for _, tc := range tests {
		if got := tc.cfg.Ceiling(tc.hosts); math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("%+v at %d hosts: ceiling %v, want %v", tc.cfg, tc.hosts, got, tc.want)
		}
	}
	if got := (manyhosts.Config{}).HostDelay(30); got != time.Second {
		t.Errorf("HostDelay(30) = %v, want 1s", got)
	}
	if got := (manyhosts.Config{}).HostDelay(31); got != 100*time.Millisecond {
		t.Errorf("HostDelay(31) = %v, want 100ms", got)
	}
}

func TestWeb_LookupAndDialTo(t *testing.T) {
	web := manyhosts.Start(t, manyhosts.Config{Latency: -1})
	m := web.Lookup("z", 3)
	if len(m) != 3 || m["z0.test"] != "127.0.0.1" || m["z2.test"] != "127.0.0.1" {
		t.Fatalf("Lookup = %v", m)
	}
	tr := &http.Transport{DialContext: manyhosts.DialTo(web.Addr())}
	defer tr.CloseIdleConnections()
	code, _ := get(t, &http.Client{Transport: tr}, web.RobotsURL("z", 2))
	if code != 200 || web.Stats(t, "z").Robots != 1 {
		t.Fatalf("through DialTo: status %d, stats %+v", code, web.Stats(t, "z"))
	}
	other := manyhosts.Connect(t, web.Addr(), web.Config())
	if s := other.Stats(t, "z"); s.Robots != 1 || other.Port() != web.Port() || other.Config() != web.Config() {
		t.Fatalf("through Connect: stats %+v, port %s, config %+v", s, other.Port(), other.Config())
	}
	conn, err := manyhosts.DialTo(web.Addr())(context.Background(), "tcp", "elsewhere:1")
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
}
