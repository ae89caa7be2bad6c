package robots

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A file longer than MaxParseBytes loses its cut last line whatever its line
// ends are (LF, CRLF or CR alone), so that "Allow: /public/page" cannot turn
// into the broader "Allow: /pub".
func TestParse_CutLineDroppedForEveryLineEnd(t *testing.T) {
	for _, tc := range []struct{ name, eol string }{
		{"LF", "\n"}, {"CRLF", "\r\n"}, {"CR", "\r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head := "User-agent: *" + tc.eol + "Disallow: /" + tc.eol
			tail := "Allow: /public/page" + tc.eol
			cut := len("Allow: /pub")
			pad := MaxParseBytes - len(head) - cut - len(tc.eol) - 1
			body := head + "#" + strings.Repeat("x", pad) + tc.eol + tail
			if !strings.HasSuffix(body[:MaxParseBytes], tc.eol+"Allow: /pub") {
				t.Fatal("test body misbuilt")
			}
			r := Parse([]byte(body))
			if !r.Truncated() {
				t.Fatal("not truncated")
			}
			if r.Allowed(Agent{Token: "AnyBot"}, "/public/other") {
				t.Error("/public/other allowed: the cut line was read as Allow: /pub")
			}
		})
	}
}

// A cut that leaves only a leading line end keeps nothing of the cut line.
func TestParse_CutAfterLeadingLineEnd(t *testing.T) {
	body := "\nSitemap: https://example.com/" + strings.Repeat("s", MaxParseBytes)
	r := Parse([]byte(body))
	if got := r.Sitemaps(); len(got) != 0 || !r.Truncated() {
		t.Errorf("Sitemaps = %.40q…, Truncated = %v; want none, true", got, r.Truncated())
	}
}

// Product tokens match case-insensitively (RFC 9309 §2.2.1) whatever their
// length.
func TestAllowed_LongTokenCaseInsensitive(t *testing.T) {
	for _, n := range []int{60, 64, 65, 200} {
		tok := strings.Repeat("Ab", n)
		for _, file := range []string{strings.ToLower(tok), strings.ToUpper(tok)} {
			r := Parse([]byte("User-agent: " + file + "\nDisallow: /\n"))
			if r.Allowed(Agent{Token: tok}, "/x") {
				t.Errorf("%d-byte token: its group was not found", len(tok))
			}
			if r.Allowed(Agent{Token: "OtherBot", Former: []string{tok}}, "/x") {
				t.Errorf("%d-byte former name: its group was not found", len(tok))
			}
		}
	}
}

// Every 2xx is a success (RFC 9309 §2.3.1.1): the body is the file. A body
// the Cache cuts at MaxBytes loses its partial last line, as in Parse.
func TestCache_SuccessBodiesAndMaxBytesCut(t *testing.T) {
	const file = "User-agent: *\nDisallow: /\nAllow: /public/page\n"
	for _, tc := range []struct {
		name     string
		status   int
		maxBytes int64
		path     string
		allowed  bool
	}{
		{"200", 200, 0, "/x", false},
		{"203", 203, 0, "/x", false},
		{"299", 299, 0, "/x", false},
		{"299 allow rule", 299, 0, "/public/page", true},
		{"cut inside the allow line", 200, int64(len("User-agent: *\nDisallow: /\nAllow: /pub")), "/public/other", false},
		{"cut inside the allow line, /pubx", 200, int64(len("User-agent: *\nDisallow: /\nAllow: /pub")), "/pubx", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				web := &fakeWeb{}
				web.set(serve(tc.status, file))
				c := &Cache{Transport: web, MaxBytes: tc.maxBytes}
				err := c.Check(context.Background(), bothy, mustURL(t, "https://example.com"+tc.path))
				if (err == nil) != tc.allowed {
					t.Fatalf("Check(%s) = %v, want allowed %v", tc.path, err, tc.allowed)
				}
			})
		})
	}
}

// Every redirect status of RFC 9110 §15.4 is followed (RFC 9309 §2.3.1.2).
func TestCache_EveryRedirectStatusIsFollowed(t *testing.T) {
	for _, status := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				web := &fakeWeb{}
				web.set(func(req *http.Request) (*http.Response, error) {
					if req.URL.Host == "example.com" {
						r := response(req, status, "")
						r.Header.Set("Location", "https://www.example.com/robots.txt")
						return r, nil
					}
					return response(req, 200, "User-agent: *\nDisallow: /\n"), nil
				})
				c := &Cache{Transport: web}
				err := c.Check(context.Background(), bothy, mustURL(t, "https://example.com/x"))
				if !errors.Is(err, ErrDisallowed) || web.count() != 2 {
					t.Fatalf("Check = %v after %d fetches, want disallowed after 2", err, web.count())
				}
			})
		})
	}
}

// A closed site is asked again after RetryInterval (a minute by default),
// and never uses its closed copy longer than TTL (RFC 9309 §2.4).
func TestCache_ClosedSiteRetry(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ttl, retry  time.Duration
		quiet, next time.Duration // no fetch after quiet; a fetch after next
	}{
		{"default retry interval", 0, 0, 59 * time.Second, 61 * time.Second},
		{"TTL shorter than RetryInterval", time.Hour, 48 * time.Hour, 59 * time.Minute, time.Hour + time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				web := &fakeWeb{}
				web.set(serve(503, ""))
				c := &Cache{Transport: web, TTL: tc.ttl, RetryInterval: tc.retry}
				ctx := context.Background()
				u := mustURL(t, "https://example.com/x")
				start := time.Now()
				c.Get(ctx, u)
				time.Sleep(tc.quiet)
				c.Get(ctx, u)
				if web.count() != 1 {
					t.Fatalf("%d fetches after %v, want 1", web.count(), tc.quiet)
				}
				time.Sleep(tc.next - time.Since(start))
				c.Get(ctx, u)
				if web.count() != 2 {
					t.Fatalf("%d fetches after %v, want 2", web.count(), tc.next)
				}
			})
		})
	}
}

// countingStore is a Store that counts its loads and can fail them and
// its saves.
type countingStore struct {
	MemoryStore
	mu       sync.Mutex
	loads    int
	fail     bool // Load returns the entry, ok and an error
	failSave bool // Save saves nothing and returns an error
}

func (s *countingStore) Save(ctx context.Context, origin string, e Entry) error {
	if s.failSave {
		return errors.New("disk full")
	}
	return s.MemoryStore.Save(ctx, origin, e)
}

func (s *countingStore) Load(ctx context.Context, origin string) (Entry, bool, error) {
	s.mu.Lock()
	s.loads++
	fail := s.fail
	s.mu.Unlock()
	e, ok, err := s.MemoryStore.Load(ctx, origin)
	if fail {
		return e, ok, errors.New("disk error")
	}
	return e, ok, err
}

// The Store is consulted only when an origin is not in memory, and a Load
// that fails is not used.
func TestCache_StoreConsultation(t *testing.T) {
	t.Run("stale copy in memory", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			web := &fakeWeb{}
			web.set(serve(200, "User-agent: *\nDisallow: /\n"))
			store := &countingStore{}
			c := &Cache{Transport: web, Store: store, TTL: time.Hour}
			u := mustURL(t, "https://example.com/x")
			c.Get(context.Background(), u)
			time.Sleep(2 * time.Hour)
			c.Get(context.Background(), u)
			if store.loads != 1 || web.count() != 2 {
				t.Fatalf("%d loads, %d fetches; want 1, 2", store.loads, web.count())
			}
		})
	})
	t.Run("load error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			store := &countingStore{fail: true}
			store.Save(context.Background(), "https://example.com:443",
				Entry{Fetched: time.Now(), Status: 200, Body: []byte("User-agent: *\nDisallow: /\n")})
			web := &fakeWeb{}
			web.set(serve(404, ""))
			c := &Cache{Transport: web, Store: store}
			if err := c.Check(context.Background(), bothy, mustURL(t, "https://example.com/x")); err != nil || web.count() != 1 {
				t.Fatalf("Check = %v after %d fetches; want the fetched 404 (allowed)", err, web.count())
			}
		})
	})
}

// A stored copy dated later than now (saved under a clock that was ahead,
// by another machine, or damaged) is not used: its age is unknown, and
// used as fresh it would outlive the 24 hours of RFC 9309 §2.4 by as much
// as it lies ahead, for good when the date is far off. It is fetched
// again and the new copy replaces it; a copy dated a moment ago is used
// (the test can fail).
func TestCache_StoredCopyFromTheFuture(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fetched   time.Duration // from now
		status    int
		wantFetch bool
	}{
		{"an hour ago", -time.Hour, 200, false},
		{"a second ahead", time.Second, 200, true},
		{"a day ahead", 24 * time.Hour, 200, true},
		{"in the year 9999", 0, 200, true},
		{"closed site, an hour ahead", time.Hour, 503, true},
		{"closed site, a second ago", -time.Second, 503, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &MemoryStore{}
				fetched := time.Now().Add(tc.fetched)
				if tc.fetched == 0 {
					fetched = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
				}
				const origin = "https://example.com:443"
				store.Save(context.Background(), origin, Entry{Fetched: fetched.Round(0), Status: tc.status,
					Body: []byte("User-agent: *\nDisallow: /\n")})
				web := &fakeWeb{}
				web.set(serve(200, "User-agent: *\nAllow: /\n"))
				c := &Cache{Transport: web, Store: store}
				err := c.Check(context.Background(), bothy, mustURL(t, "https://example.com/x"))
				if !tc.wantFetch {
					if web.count() != 0 || err == nil {
						t.Fatalf("%d fetches, Check = %v; want the stored copy used (disallowed)", web.count(), err)
					}
					return
				}
				if web.count() != 1 || err != nil {
					t.Fatalf("%d fetches, Check = %v; want robots.txt fetched again (allowed)", web.count(), err)
				}
				e, ok, _ := store.Load(context.Background(), origin)
				if !ok || !strings.Contains(string(e.Body), "Allow: /") || e.Fetched.After(time.Now()) {
					t.Errorf("stored after the fetch: %+v; want the new copy, dated now", e)
				}
			})
		})
	}
}

// A site closed in the Store stays closed with a *StatusError as the cause.
func TestCache_StoreClosedSiteHasStatusError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		h      func(*http.Request) (*http.Response, error)
		status int
		cause  string // the *StatusError's message
	}{
		{"503", serve(503, ""), 503, "robots: https://example.com/robots.txt answered 503"},
		{"network error", func(*http.Request) (*http.Response, error) { return nil, errors.New("reset") }, 0,
			"robots: https://example.com/robots.txt: fetch failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				web := &fakeWeb{}
				web.set(tc.h)
				store := &MemoryStore{}
				u := mustURL(t, "https://example.com/x")
				(&Cache{Transport: web, Store: store}).Get(context.Background(), u)
				err := (&Cache{Transport: web, Store: store}).Check(context.Background(), bothy, u)
				var se *StatusError
				if !errors.Is(err, ErrUnreachable) || !errors.As(err, &se) || se.Status != tc.status || web.count() != 1 {
					t.Fatalf("Check = %v (%d fetches), want a *StatusError with status %d", err, web.count(), tc.status)
				}
				if se.Error() != tc.cause {
					t.Errorf("cause reads %q, want %q", se.Error(), tc.cause)
				}
			})
		})
	}
}

// A negative MaxEntries means no bound.
func TestCache_NegativeMaxEntriesKeepsAll(t *testing.T) {
	web := newCountingWeb()
	c := &Cache{Transport: web, MaxEntries: -1}
	ctx := context.Background()
	for i := range 10_001 {
		if _, err := c.Get(ctx, mustURL(t, siteURL(i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := c.Cached(mustURL(t, siteURL(0))); !ok {
		t.Error("the first of 10001 sites was forgotten")
	}
}

// Agent.Token's white space is ignored as its doc says: " ExampleBot/1.0"
// and "\tExampleBot " are ExampleBot.
func TestAllowed_TokenWhiteSpaceIgnored(t *testing.T) {
	r := Parse([]byte("User-agent: ExampleBot\nDisallow: /private\n\nUser-agent: *\nDisallow: /\n"))
	// Every white space before the token goes, not only the first.
	for _, token := range []string{"ExampleBot", " ExampleBot/1.0", "\tExampleBot ", "  ExampleBot", " \t\u00a0ExampleBot"} {
		a := Agent{Token: token}
		if !r.Allowed(a, "/public") || r.Allowed(a, "/private") {
			t.Errorf("%q: /public %v, /private %v: want ExampleBot's group", token, r.Allowed(a, "/public"), r.Allowed(a, "/private"))
		}
	}
}

// The Logger gets one record per fetch, and a warning for each Store
// operation that fails; a copy used from memory logs nothing.
func TestCache_Logger(t *testing.T) {
	const fetched = `level=INFO msg="robots: fetched" origin=https://example.com:443`
	for _, tc := range []struct {
		name  string
		store Store
		want  []string
	}{
		{"fetch", nil, []string{fetched}},
		{"store failing", &countingStore{fail: true, failSave: true}, []string{
			`level=WARN msg="robots: store load failed" origin=https://example.com:443`,
			fetched,
			`level=WARN msg="robots: store save failed" origin=https://example.com:443`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
				ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
					if a.Key == slog.LevelKey || a.Key == slog.MessageKey || a.Key == "origin" {
						return a
					}
					return slog.Attr{}
				},
			}))
			web := &fakeWeb{}
			web.set(serve(200, "User-agent: *\nDisallow: /x\n"))
			c := &Cache{Transport: web, Store: tc.store, Logger: logger}
			u := mustURL(t, "https://example.com/x")
			for range 2 {
				if err := c.Check(context.Background(), bothy, u); !errors.Is(err, ErrDisallowed) {
					t.Fatalf("Check = %v, want the fetched rule", err)
				}
			}
			if web.count() != 1 {
				t.Fatalf("%d fetches, want 1", web.count())
			}
			if got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"); !slices.Equal(got, tc.want) {
				t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// closeCounter is a RoundTripper that counts the response bodies it hands
// out and how many of them were closed.
type closeCounter struct {
	rt             http.RoundTripper
	opened, closed atomic.Int32
}

func (c *closeCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(req)
	if err == nil {
		c.opened.Add(1)
		resp.Body = countedBody{resp.Body, &c.closed}
	}
	return resp, err
}

type countedBody struct {
	io.ReadCloser
	closed *atomic.Int32
}

func (b countedBody) Close() error {
	b.closed.Add(1)
	return b.ReadCloser.Close()
}

// Every answer's body is closed, and a redirect's body is read first, so
// that the hops of a redirect within one site share one connection.
func TestCache_BodiesClosedHopsShareAConnection(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   int // of /robots.txt; its redirect goes to /moved.txt (200)
		requests int
	}{
		{"redirect", http.StatusMovedPermanently, 2},
		{"200", http.StatusOK, 1},
		{"503", http.StatusServiceUnavailable, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" && tc.status != http.StatusOK {
					if tc.status == http.StatusMovedPermanently {
						w.Header().Set("Location", "/moved.txt")
					}
					w.WriteHeader(tc.status)
					io.WriteString(w, "not the file\n")
					return
				}
				io.WriteString(w, "User-agent: *\nDisallow: /x\n")
			}))
			var conns atomic.Int32
			srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
				if st == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			defer srv.Close()
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			bodies := &closeCounter{rt: tr}
			c := &Cache{Transport: bodies}
			if _, err := c.Get(context.Background(), mustURL(t, srv.URL+"/x")); err != nil {
				t.Fatal(err)
			}
			if n := bodies.opened.Load(); n != int32(tc.requests) {
				t.Fatalf("%d answers, want %d", n, tc.requests)
			}
			if n, m := bodies.closed.Load(), bodies.opened.Load(); n != m {
				t.Errorf("%d of %d bodies closed", n, m)
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("%d connections, want 1", n)
			}
		})
	}
}
