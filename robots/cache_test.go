package robots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeWeb is an in-memory RoundTripper (synctest bubbles cannot use sockets).
type fakeWeb struct {
	mu      sync.Mutex
	calls   []*http.Request
	handler func(req *http.Request) (*http.Response, error)
}

func (f *fakeWeb) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.calls = append(f.calls, req)
	h := f.handler
	f.mu.Unlock()
	return h(req)
}

func (f *fakeWeb) set(h func(req *http.Request) (*http.Response, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handler = h
}

func (f *fakeWeb) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// serve answers every request with status and body.
func serve(status int, body string) func(*http.Request) (*http.Response, error) {
	return func(req *http.Request) (*http.Response, error) { return response(req, status, body), nil }
}

func response(req *http.Request, status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{}, Request: req,
		Body: io.NopCloser(strings.NewReader(body))}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

var bothy = Agent{Token: "BothyBot", Former: []string{"CleatBot"}}

// B11, H9, S10, D9: a copy is used for TTL, then fetched again, and changes
// take effect.
func TestCache_B11_H9_TTLRefresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web := &fakeWeb{}
		web.set(serve(200, "User-agent: *\nDisallow: /old\n"))
		c := &Cache{Transport: web, TTL: time.Hour}
		ctx := context.Background()
		u := mustURL(t, "https://example.com/old")
		if err := c.Check(ctx, bothy, u); !errors.Is(err, ErrDisallowed) {
			t.Fatalf("Check = %v", err)
		}
		if got := web.calls[0].URL.String(); got != "https://example.com/robots.txt" {
			t.Errorf("fetched %s", got)
		}
		web.set(serve(200, "User-agent: *\nDisallow: /new\n"))
		time.Sleep(59 * time.Minute)
		if err := c.Check(ctx, bothy, u); err == nil || web.count() != 1 {
			t.Fatalf("within TTL: err=%v fetches=%d", err, web.count())
		}
		time.Sleep(2 * time.Minute)
		if err := c.Check(ctx, bothy, u); err != nil || web.count() != 2 {
			t.Fatalf("after TTL: err=%v fetches=%d", err, web.count())
		}
		if err := c.Check(ctx, bothy, mustURL(t, "https://example.com/new")); err == nil {
			t.Fatal("new rule not applied")
		}
	})
}

// The zero TTL is 24 hours (D9, S10, B11).
func TestCache_D9_DefaultTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web := &fakeWeb{}
		web.set(serve(200, ""))
		c := &Cache{Transport: web}
		u := mustURL(t, "http://example.com/")
		c.Get(context.Background(), u)
		time.Sleep(24*time.Hour - time.Second)
		c.Get(context.Background(), u)
		if web.count() != 1 {
			t.Fatalf("fetches before 24h: %d", web.count())
		}
		time.Sleep(2 * time.Second)
		c.Get(context.Background(), u)
		if web.count() != 2 {
			t.Fatalf("fetches after 24h: %d", web.count())
		}
	})
}

// H5, D8: a server error closes the site until robots.txt is readable again;
// while closed, robots.txt is retried at most once per RetryInterval.
func TestCache_H5_ServerErrorClosesSite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web := &fakeWeb{}
		web.set(serve(503, "busy"))
		c := &Cache{Transport: web, TTL: time.Hour, RetryInterval: time.Minute}
		ctx := context.Background()
		u := mustURL(t, "https://example.com/page")
		err := c.Check(ctx, bothy, u)
		var de *DisallowedError
		if !errors.As(err, &de) || !de.Unreachable || !errors.Is(err, ErrUnreachable) || !errors.Is(err, ErrDisallowed) {
			t.Fatalf("Check = %#v", err)
		}
		var se *StatusError
		if !errors.As(err, &se) || se.Status != 503 {
			t.Errorf("cause = %v", de.Err)
		}
		if err := c.Check(ctx, bothy, mustURL(t, "https://example.com/robots.txt")); err != nil {
			t.Errorf("robots.txt itself: %v", err)
		}
		for range 100 {
			c.Check(ctx, bothy, u)
			time.Sleep(100 * time.Millisecond)
		}
		// 10 s later: no retry yet.
		if web.count() != 1 {
			t.Fatalf("retried within RetryInterval: %d fetches", web.count())
		}
		time.Sleep(time.Minute)
		if err := c.Check(ctx, bothy, u); !errors.Is(err, ErrUnreachable) || web.count() != 2 {
			t.Fatalf("after a minute, still 503: err=%v fetches=%d", err, web.count())
		}
		web.set(serve(200, "User-agent: *\nDisallow: /private\n"))
		if err := c.Check(ctx, bothy, u); err == nil {
			t.Fatal("reopened before RetryInterval")
		}
		time.Sleep(time.Minute)
		if err := c.Check(ctx, bothy, u); err != nil {
			t.Fatalf("readable again but still closed: %v", err)
		}
	})
}

// H5: a good copy whose refresh answers 5xx closes the site too.
func TestCache_H5_ErrorAfterGoodCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web := &fakeWeb{}
		web.set(serve(200, "User-agent: *\nAllow: /\n"))
		c := &Cache{Transport: web, TTL: time.Hour}
		u := mustURL(t, "https://example.com/page")
		if err := c.Check(context.Background(), bothy, u); err != nil {
			t.Fatal(err)
		}
		web.set(serve(500, ""))
		time.Sleep(time.Hour + time.Second)
		if err := c.Check(context.Background(), bothy, u); !errors.Is(err, ErrUnreachable) {
			t.Fatalf("Check = %v", err)
		}
	})
}

// D8, C2: 404 opens the site; 429 and network errors close it.
func TestCache_D8_Outcomes(t *testing.T) {
	cases := []struct {
		name    string
		handler func(*http.Request) (*http.Response, error)
		allowed bool
	}{
		{"404", serve(404, "not here"), true},
		{"410", serve(410, ""), true},
		{"401", serve(401, ""), true},
		{"429", serve(429, ""), false},
		{"500", serve(500, ""), false},
		{"network error", func(*http.Request) (*http.Response, error) { return nil, errors.New("connection refused") }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				web := &fakeWeb{}
				web.set(tc.handler)
				c := &Cache{Transport: web}
				err := c.Check(context.Background(), bothy, mustURL(t, "https://example.com/x"))
				if (err == nil) != tc.allowed {
					t.Fatalf("Check = %v", err)
				}
				if !tc.allowed && !errors.Is(err, ErrUnreachable) {
					t.Fatalf("not unreachable: %v", err)
				}
			})
		})
	}
}

// D8: a timeout closes the site; the wait is bounded by Timeout.
func TestCache_D8_TimeoutCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web := &fakeWeb{}
		web.set(func(req *http.Request) (*http.Response, error) {
			<-req.Context().Done() // a server that never answers
			return nil, req.Context().Err()
		})
		c := &Cache{Transport: web, Timeout: 10 * time.Second}
		start := time.Now()
		err := c.Check(context.Background(), bothy, mustURL(t, "https://slow.example/x"))
		if !errors.Is(err, ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Check = %v", err)
		}
		if el := time.Since(start); el != 10*time.Second {
			t.Errorf("took %v, want the 10s timeout", el)
		}
	})
}

// C2: redirects are followed, each hop through the Transport, up to five;
// more, or a loop, means "unavailable" (RFC 9309 §2.3.1.2).
func TestCache_C2_Redirects(t *testing.T) {
	chain := func(n int) func(*http.Request) (*http.Response, error) {
		return func(req *http.Request) (*http.Response, error) {
			var hop int
			fmt.Sscanf(req.URL.Query().Get("hop"), "%d", &hop)
			if req.URL.Path == "/robots.txt" && hop < n {
				r := response(req, 301+hop%3, "")
				r.Header.Set("Location", fmt.Sprintf("https://other%d.example/robots.txt?hop=%d", hop, hop+1))
				return r, nil
			}
			return response(req, 200, "User-agent: *\nDisallow: /\n"), nil
		}
	}
	for _, tc := range []struct {
		name    string
		handler func(*http.Request) (*http.Response, error)
		fetches int
		allowed bool
	}{
		{"no redirect", chain(0), 1, false},
		{"five redirects", chain(5), 6, false},
		{"six redirects", chain(6), 6, true},
		{"loop", func(req *http.Request) (*http.Response, error) {
			r := response(req, 302, "")
			r.Header.Set("Location", "/robots.txt")
			return r, nil
		}, 6, true},
		{"no location", serve(302, ""), 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				web := &fakeWeb{}
				web.set(tc.handler)
				c := &Cache{Transport: web}
				err := c.Check(context.Background(), bothy, mustURL(t, "https://example.com/x"))
				if (err == nil) != tc.allowed || web.count() != tc.fetches {
					t.Fatalf("Check = %v after %d fetches", err, web.count())
				}
			})
		})
	}
}

// Concurrent callers for one origin share one fetch; other origins are
// separate (scheme, host, port).
func TestCache_ConcurrentCallersShareOneFetch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web := &fakeWeb{}
		web.set(func(req *http.Request) (*http.Response, error) {
			time.Sleep(2 * time.Second) // a slow server
			return response(req, 200, "User-agent: *\nDisallow: /x\n"), nil
		})
		c := &Cache{Transport: web}
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				u := mustURL(t, "https://Example.com/x")
				if i%2 == 0 {
					u = mustURL(t, "https://example.com:443/x")
				}
				if err := c.Check(context.Background(), bothy, u); !errors.Is(err, ErrDisallowed) {
					t.Errorf("Check = %v", err)
				}
			})
		}
		wg.Wait()
		if web.count() != 1 {
			t.Fatalf("%d fetches", web.count())
		}
		for _, s := range []string{"http://example.com/", "https://example.com:8443/", "https://www.example.com/"} {
			c.Get(context.Background(), mustURL(t, s))
		}
		if web.count() != 4 {
			t.Fatalf("%d fetches for 4 origins", web.count())
		}
	})
}

// A caller that gives up gets its ctx error; the shared fetch still
// completes and is cached: the caller's cancellation does not reach it,
// even through a Transport that honours the request's context.
func TestCache_CallerCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web := &fakeWeb{}
		web.set(func(req *http.Request) (*http.Response, error) {
			select {
			case <-req.Context().Done():
				return nil, req.Context().Err()
			case <-time.After(5 * time.Second):
				return response(req, 200, "User-agent: *\nDisallow: /x\n"), nil
			}
		})
		c := &Cache{Transport: web}
		u := mustURL(t, "https://example.com/")
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := c.Get(ctx, u); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Get = %v", err)
		}
		synctest.Wait()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if r, ok := c.Cached(u); !ok || r.Unreachable() || r.Allowed(bothy, "/x") {
			t.Fatalf("Cached = %v, %v; want the fetched file", r, ok)
		}
	})
}

// Cached never fetches. B12: requests go through the Transport with Header.
func TestCache_CachedAndHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web := &fakeWeb{}
		web.set(serve(200, "User-agent: *\nCrawl-delay: 3\n"))
		c := &Cache{Transport: web, Header: http.Header{"User-Agent": {"BothyBot/1.0"}}}
		u := mustURL(t, "https://example.com/a")
		if _, ok := c.Cached(u); ok || web.count() != 0 {
			t.Fatal("Cached fetched or found something")
		}
		c.Get(context.Background(), u)
		r, ok := c.Cached(u)
		if !ok {
			t.Fatal("not cached")
		}
		if d, _ := r.CrawlDelay(bothy); d != 3*time.Second {
			t.Errorf("CrawlDelay = %v", d)
		}
		if ua := web.calls[0].Header.Get("User-Agent"); ua != "BothyBot/1.0" {
			t.Errorf("User-Agent = %q", ua)
		}
	})
}

// Fresh never fetches and answers only with a copy Get would use as it is:
// none before the first Get, the copy within TTL, none once it is stale
// (while Cached still has it).
func TestCache_Fresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web := &fakeWeb{}
		web.set(serve(200, "User-agent: *\nDisallow: /x\n"))
		c := &Cache{Transport: web, TTL: time.Hour}
		u := mustURL(t, "https://example.com/a")
		if _, ok := c.Fresh(u); ok || web.count() != 0 {
			t.Fatal("Fresh fetched or found something before Get")
		}
		c.Get(context.Background(), u)
		if r, ok := c.Fresh(mustURL(t, "https://EXAMPLE.com:443/b")); !ok || r.Allowed(bothy, "/x") {
			t.Fatalf("Fresh after Get = %v, %v; want the copy", r, ok)
		}
		time.Sleep(time.Hour)
		if _, ok := c.Fresh(u); ok {
			t.Error("Fresh returned a stale copy")
		}
		if _, ok := c.Cached(u); !ok {
			t.Error("Cached lost the stale copy")
		}
		if web.count() != 1 {
			t.Errorf("%d fetches; want 1", web.count())
		}
	})
}

// A Held copy is current until the Cache replaces it (fetched again,
// loaded from the Store) or forgets it, and Cached then no longer returns
// it; asking about it changes nothing.
func TestCache_Held(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web := &fakeWeb{}
		web.set(serve(200, "User-agent: *\nCrawl-delay: 2\n"))
		store := &MemoryStore{}
		c := &Cache{Transport: web, Store: store, TTL: time.Hour, MaxEntries: 1}
		ctx := context.Background()
		a, b := mustURL(t, "https://a.example/x"), mustURL(t, "https://b.example/x")
		if (Held{}).Current() {
			t.Error("the zero Held is current")
		}
		held := func(u *url.URL) (*Robots, Held) {
			t.Helper()
			r, h, err := c.GetHeld(ctx, u)
			if err != nil || !h.Current() {
				t.Fatalf("GetHeld: %v, current %v", err, h.Current())
			}
			if got, ok := c.Cached(u); !ok || got != r {
				t.Fatalf("Cached gives another copy than GetHeld")
			}
			return r, h
		}
		_, ha := held(a)
		c.Get(ctx, a)
		c.Cached(a)
		c.Fresh(a)
		c.Check(ctx, bothy, a)
		if _, h := held(a); !ha.Current() || h != ha {
			t.Error("asking about a copy changed it")
		}
		_, hb := held(b) // a forgotten (MaxEntries 1)
		if ha.Current() {
			t.Error("a forgotten copy is current")
		}
		_, ha = held(a) // from the Store; b forgotten
		if hb.Current() {
			t.Error("b forgotten, still current")
		}
		time.Sleep(2 * time.Hour)
		_, ha2 := held(a) // stale: fetched again
		if ha.Current() || ha2 == ha {
			t.Error("a copy fetched again left the old one current")
		}
		if web.count() != 3 {
			t.Errorf("%d fetches, want 3", web.count())
		}
	})
}

// MaxBytes bounds the body read; the part read is parsed.
func TestCache_MaxBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		big := "User-agent: *\nDisallow: /a\n" + strings.Repeat("# filler\n", 2000) + "Disallow: /b\n"
		web := &fakeWeb{}
		web.set(serve(200, big))
		c := &Cache{Transport: web, MaxBytes: 1024}
		ctx := context.Background()
		if err := c.Check(ctx, bothy, mustURL(t, "https://example.com/a")); err == nil {
			t.Error("/a allowed")
		}
		if err := c.Check(ctx, bothy, mustURL(t, "https://example.com/b")); err != nil {
			t.Errorf("/b, past MaxBytes: %v", err)
		}
		// A rule cut in two by MaxBytes is dropped, not shortened.
		cut := "User-agent: *\nDisallow: /\nAllow: /public/page\n"
		web.set(serve(200, cut))
		c2 := &Cache{Transport: web, MaxBytes: int64(len(cut) - 5)}
		if err := c2.Check(ctx, bothy, mustURL(t, "https://example.com/public/other")); err == nil {
			t.Error("a cut Allow rule allowed more than it says")
		}
	})
}

// B9: a restarted bot with the same Store does not refetch a fresh copy.
func TestCache_StoreSurvivesRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web := &fakeWeb{}
		web.set(serve(200, "User-agent: *\nDisallow: /x\n"))
		store := &MemoryStore{}
		u := mustURL(t, "https://example.com/x")
		first := &Cache{Transport: web, Store: store, TTL: time.Hour}
		first.Get(context.Background(), u)
		time.Sleep(30 * time.Minute)
		second := &Cache{Transport: web, Store: store, TTL: time.Hour}
		if err := second.Check(context.Background(), bothy, u); !errors.Is(err, ErrDisallowed) || web.count() != 1 {
			t.Fatalf("restart: err=%v fetches=%d", err, web.count())
		}
		time.Sleep(31 * time.Minute)
		third := &Cache{Transport: web, Store: store, TTL: time.Hour}
		third.Get(context.Background(), u)
		if web.count() != 2 {
			t.Fatalf("stale stored copy not refetched: %d", web.count())
		}
	})
}

// A closed site stays closed across a restart until RetryInterval passes.
func TestCache_H5_StoreKeepsSiteClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web := &fakeWeb{}
		web.set(func(*http.Request) (*http.Response, error) { return nil, errors.New("reset") })
		store := &MemoryStore{}
		u := mustURL(t, "https://example.com/x")
		(&Cache{Transport: web, Store: store}).Get(context.Background(), u)
		err := (&Cache{Transport: web, Store: store}).Check(context.Background(), bothy, u)
		if !errors.Is(err, ErrUnreachable) || web.count() != 1 {
			t.Fatalf("err=%v fetches=%d", err, web.count())
		}
		time.Sleep(DefaultRetryInterval)
		web.set(serve(404, ""))
		if err := (&Cache{Transport: web, Store: store}).Check(context.Background(), bothy, u); err != nil || web.count() != 2 {
			t.Fatalf("after RetryInterval: err=%v fetches=%d", err, web.count())
		}
	})
}

func TestCache_BadURL(t *testing.T) {
	c := &Cache{Transport: &fakeWeb{}}
	// No http(s) scheme, or no host: an empty authority, a port or user
	// alone.
	for _, s := range []string{"ftp://example.com/x", "/relative", "mailto:a@b",
		"http:///x", "http://:8080/x", "https://:443", "http://@/x", "HTTP://:/"} {
		if _, err := c.Get(context.Background(), mustURL(t, s)); !errors.Is(err, ErrBadURL) {
			t.Errorf("Get(%s) = %v", s, err)
		}
	}
	if _, err := c.Get(context.Background(), nil); !errors.Is(err, ErrBadURL) {
		t.Errorf("Get(nil) = %v", err)
	}
	// Through *url.Error, as http.Client wraps it.
	err := error(&url.Error{Op: "Get", URL: "https://x/", Err: &DisallowedError{URL: "https://x/", Unreachable: true}})
	var de *DisallowedError
	if !errors.Is(err, ErrDisallowed) || !errors.Is(err, ErrUnreachable) || !errors.As(err, &de) {
		t.Error("DisallowedError not found through *url.Error")
	}
}

func TestOriginOf(t *testing.T) {
	for in, want := range map[string]string{
		"https://Example.COM/x":      "https://example.com:443",
		"http://example.com:80/x":    "http://example.com:80",
		"HTTP://example.com/x":       "http://example.com:80",
		"https://u:p@example.com/x":  "https://example.com:443",
		"https://[::1]:8443/x":       "https://[::1]:8443",
		"https://[::1]/x":            "https://[::1]:443",
		"https://example.com:8443/x": "https://example.com:8443",
	} {
		o, err := originOf(mustURL(t, in))
		if err != nil || o.key != want {
			t.Errorf("originOf(%s) = %q, %v; want %q", in, o.key, err, want)
		}
	}
	for in, want := range map[string]string{
		"https://[::1]/x":          "https://[::1]/robots.txt",
		"https://[::1]:8443/x":     "https://[::1]:8443/robots.txt",
		"HTTP://Example.COM/x":     "http://example.com/robots.txt",
		"http://example.com:80/x":  "http://example.com/robots.txt",
		"http://Example.COM.:080/": "http://example.com/robots.txt",
		"http://[fe80::1%25en0]/":  "http://[fe80::1%25en0]/robots.txt",
		"https://bücher.example/":  "https://xn--bcher-kva.example/robots.txt",
	} {
		o, _ := originOf(mustURL(t, in))
		if got := o.robotsURL(); got != want {
			t.Errorf("robotsURL(%s) = %s, want %s", in, got, want)
		}
	}
}
