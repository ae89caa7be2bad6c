package botkit

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/internal/syncbuf"
)

// testBot is a minimal well-formed bot profile for the loopback web.
func testBot() fetch.Bot {
	return fetch.Bot{UserAgent: "KitTestBot/1.0 (+https://example.com/bot)", Token: "KitTestBot"}
}

// testSession is a session over env with no state file (memory stores).
func testSession(t testing.TB, env Env) (*Session, *syncbuf.Buffer) {
	t.Helper()
	var logs syncbuf.Buffer
	s := &Session{Env: env, Log: Logger(&logs, false), Out: &Output{JSON: true, Stdout: env.Stdout, Stderr: env.Stderr}}
	var err error
	if s.stores, err = openStores(nil, false); err != nil {
		t.Fatal(err)
	}
	return s, &logs
}

// crawlSession is a session over w with no state file and a Fetcher of
// testBot's, closed when the test ends: its output and log buffers.
func crawlSession(t testing.TB, w *fetchtest.Web) (s *Session, f *fetch.Fetcher, stdout, stderr, logs *syncbuf.Buffer) {
	t.Helper()
	stdout, stderr = new(syncbuf.Buffer), new(syncbuf.Buffer)
	s, logs = testSession(t, Env{Stdout: stdout, Stderr: stderr, Transport: w.RoundTripper()})
	bot := testBot()
	if err := s.Apply(&bot); err != nil {
		t.Fatal(err)
	}
	f, err := fetch.NewFetcher(bot)
	if err != nil {
		t.Fatal(err)
	}
	s.fetcher = f
	t.Cleanup(func() { s.Close() })
	return s, f, stdout, stderr, logs
}

// webFetcher is a Fetcher of testBot's over w, its idle connections
// closed when the test ends.
func webFetcher(t testing.TB, w *fetchtest.Web) *fetch.Fetcher {
	t.Helper()
	bot := testBot()
	bot.Transport = w.RoundTripper()
	f, err := fetch.NewFetcher(bot)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.CloseIdleConnections)
	return f
}

// crawlWeb is a site whose home page links to /a, /b and /c.
func crawlWeb(c http.Handler) *fetchtest.Web {
	w := fetchtest.New()
	w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n")).
		Handle("/", fetchtest.HTML(`<a href="/a">a</a> <a href="/b">b</a> <a href="/c">c</a>`)).
		Handle("/a", fetchtest.HTML("a")).
		Handle("/b", fetchtest.HTML("b")).
		Handle("/c", c)
	return w
}

// Crawl.Run fetches the seed and (with FollowLinks) the pages it links to,
// prints one result per URL, counts each outcome, and makes the run end with
// ExitPartial exactly when a URL's last fetch left work undone (a
// rate-limited first try that a retry answers is not a failure).
func TestCrawlRun_CountsAndFailures(t *testing.T) {
	cases := []struct {
		name       string
		c          http.Handler
		follow     bool
		wantCounts map[string]int
		wantFetch  []string // paths asked for besides robots.txt
		wantExit   int
		wantLog    string
	}{
		{"all ok", fetchtest.HTML("c"), true, map[string]int{"ok": 4}, []string{"/", "/a", "/b", "/c"}, ExitOK, ""},
		{"no links followed", fetchtest.HTML("c"), false, map[string]int{"ok": 1}, []string{"/"}, ExitOK, ""},
		{"not found is an answer", fetchtest.Status(404), true, map[string]int{"ok": 4}, []string{"/", "/a", "/b", "/c"}, ExitOK, ""},
		{"connection reset", fetchtest.Reset(), true, map[string]int{"ok": 3, "unreachable": 1}, []string{"/", "/a", "/b", "/c"}, ExitPartial, "some pages were not fetched"},
		{"rate limited then answered", fetchtest.Sequence(fetchtest.RetryAfter(429, "1"), fetchtest.HTML("c")), true,
			map[string]int{"ok": 4, "rate_limited": 1}, []string{"/", "/a", "/b", "/c"}, ExitOK, ""},
		{"rate limited twice", fetchtest.RetryAfter(429, "1"), true,
			map[string]int{"ok": 3, "rate_limited": 2}, []string{"/", "/a", "/b", "/c"}, ExitPartial, "some pages were not fetched"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := crawlWeb(tc.c)
			synctest.Test(t, func(t *testing.T) {
				s, f, stdout, _, logs := crawlSession(t, w)
				front := &crawl.Frontier{}
				front.Add(mustURL(t, "http://a.test/"), 0, "seed")
				var mu sync.Mutex
				var seen []string
				c := &Crawl{Fetcher: f, Frontier: front, FollowLinks: tc.follow,
					OnPage: func(it crawl.Item, p *fetch.Page, r Result) {
						mu.Lock()
						seen = append(seen, r.URL)
						mu.Unlock()
					}}
				counts := c.Run(context.Background(), s)
				var got []string
				for _, r := range w.RequestsTo("a.test") {
					if r.Path != "/robots.txt" && !contains(got, r.Path) {
						got = append(got, r.Path)
					}
				}
				if strings.Join(sorted(got), " ") != strings.Join(tc.wantFetch, " ") {
					t.Fatalf("fetched %v, want %v", got, tc.wantFetch)
				}
				if len(counts) != len(tc.wantCounts) {
					t.Errorf("counts %v, want %v", counts, tc.wantCounts)
				}
				for k, v := range tc.wantCounts {
					if counts[k] != v {
						t.Errorf("counts %v, want %v", counts, tc.wantCounts)
					}
				}
				results := ParseResults(stdout.String())
				n := 0
				for _, v := range tc.wantCounts {
					n += v
				}
				if len(results) != n || len(seen) != n {
					t.Errorf("%d results printed and %d seen by OnPage, want %d:\n%s", len(results), len(seen), n, stdout.String())
				}
				if got := s.Exit(context.Background(), ExitOK); got != tc.wantExit {
					t.Errorf("Exit = %d, want %d; log:\n%s", got, tc.wantExit, logs.String())
				}
				if !strings.Contains(logs.String(), tc.wantLog) {
					t.Errorf("log lacks %q:\n%s", tc.wantLog, logs.String())
				}
			})
		})
	}
}

// Fresh sends Cache-Control: no-cache with each page request (B9).
func TestCrawlRun_Fresh(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		w := crawlWeb(fetchtest.HTML("c"))
		synctest.Test(t, func(t *testing.T) {
			s, f, _, _, _ := crawlSession(t, w)
			front := &crawl.Frontier{}
			front.Add(mustURL(t, "http://a.test/"), 0, "seed")
			(&Crawl{Fetcher: f, Frontier: front, Fresh: fresh}).Run(context.Background(), s)
			reqs := w.RequestsTo("a.test", "/")
			if len(reqs) != 1 {
				t.Fatalf("fresh=%v: %d requests for /", fresh, len(reqs))
			}
			if got := strings.Contains(reqs[0].Header.Get("Cache-Control"), "no-cache"); got != fresh {
				t.Errorf("fresh=%v: Cache-Control %q", fresh, reqs[0].Header.Get("Cache-Control"))
			}
		})
	}
}

// A nofollow page's links are not followed; its result says so.
func TestCrawlRun_NoFollow(t *testing.T) {
	w := fetchtest.New()
	w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n")).
		Handle("/", fetchtest.HTML(`<meta name="robots" content="nofollow"><a href="/a">a</a>`)).
		Handle("/a", fetchtest.HTML("a"))
	synctest.Test(t, func(t *testing.T) {
		s, f, _, _, _ := crawlSession(t, w)
		front := &crawl.Frontier{}
		front.Add(mustURL(t, "http://a.test/"), 0, "seed")
		counts := (&Crawl{Fetcher: f, Frontier: front, FollowLinks: true}).Run(context.Background(), s)
		if counts["ok"] != 1 || w.Count("a.test", "/") != 1 {
			t.Fatalf("counts %v, %d fetches of /", counts, w.Count("a.test", "/"))
		}
		if n := w.Count("a.test", "/a"); n != 0 {
			t.Errorf("a nofollow page's link fetched %d times", n)
		}
	})
}

func TestSummary(t *testing.T) {
	for _, tc := range []struct {
		counts map[string]int
		want   string
	}{
		{nil, ""},
		{map[string]int{"ok": 3}, "ok=3"},
		{map[string]int{"ok": 3, "blocked": 1, "not_found": 12}, "blocked=1 not_found=12 ok=3"},
	} {
		if got := Summary(tc.counts); got != tc.want {
			t.Errorf("Summary(%v) = %q, want %q", tc.counts, got, tc.want)
		}
	}
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func sorted(list []string) []string {
	out := append([]string(nil), list...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
