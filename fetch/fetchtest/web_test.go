package fetchtest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/robots"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newWeb() *Web {
	w := New()
	w.Host("a.test").
		Handle("/robots.txt", Robots("User-agent: *\nDisallow: /private\n")).
		Handle("/", HTML("<p>home</p>")).
		Handle("/cookie", SetCookie("sid", "1", HTML("c"))).
		Handle("/429", RetryAfter(http.StatusTooManyRequests, "120")).
		Handle("/reset", Reset()).
		Handle("/hang", Hang()).
		Handle("/huge", Huge(64<<20)).
		Handle("/endless", Endless()).
		Handle("/etag", Page{Body: "e", ETag: `"v1"`}).
		HandleChain("/r", 2, HTML("end"))
	w.Host("b.test").Handle("/", Challenge(http.StatusForbidden))
	return w
}

// transports runs f once over loopback and once in memory.
func transports(t *testing.T, f func(t *testing.T, w *Web, rt http.RoundTripper)) {
	t.Run("loopback", func(t *testing.T) {
		w := newWeb()
		tr := w.Transport()
		defer w.Close()
		defer tr.CloseIdleConnections()
		f(t, w, tr)
	})
	t.Run("memory", func(t *testing.T) {
		w := newWeb()
		defer w.Close()
		f(t, w, w.RoundTripper())
	})
}

func get(t *testing.T, rt http.RoundTripper, url string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp, string(b)
}

func TestWeb_RoutesAndRecords(t *testing.T) {
	transports(t, func(t *testing.T, w *Web, rt http.RoundTripper) {
		resp, body := get(t, rt, "http://a.test/", "User-Agent", "x")
		if resp.StatusCode != 200 || body != "<p>home</p>" {
			t.Fatalf("got %d %q", resp.StatusCode, body)
		}
		resp, body = get(t, rt, "http://a.test/r/0")
		if body != "end" || resp.Request.URL.Path != "/r/2" {
			t.Fatalf("chain: %q %s", body, resp.Request.URL)
		}
		resp, _ = get(t, rt, "http://b.test/")
		if resp.StatusCode != 403 || resp.Header.Get("Cf-Mitigated") != "challenge" {
			t.Fatalf("challenge: %d", resp.StatusCode)
		}
		resp, _ = get(t, rt, "http://a.test/etag", "If-None-Match", `"v1"`)
		if resp.StatusCode != http.StatusNotModified {
			t.Fatalf("etag: %d", resp.StatusCode)
		}
		resp, _ = get(t, rt, "http://c.test/")
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Fatalf("unknown host: %d", resp.StatusCode)
		}
		reqs := w.Requests()
		if len(reqs) != 7 {
			t.Fatalf("recorded %d requests, want 7", len(reqs))
		}
		if r := reqs[0]; r.Host != "a.test" || r.Path != "/" || r.Header.Get("User-Agent") != "x" || r.Status != 200 || r.End.Before(r.Start) {
			t.Errorf("record: %+v", r)
		}
		if got := w.Count("a.test", "/r/1"); got != 1 {
			t.Errorf("Count = %d", got)
		}
		if !w.Check(t, AtLeast("a.test", 5), NoOverlap(), NoCookies(), OnlyGetHead()) {
			t.Error("checks failed on a polite run")
		}
	})
}

func TestWeb_ResetAndHang(t *testing.T) {
	transports(t, func(t *testing.T, w *Web, rt http.RoundTripper) {
		c := &http.Client{Transport: rt}
		if _, err := c.Get("http://a.test/reset"); err == nil {
			t.Error("reset: no error")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.test/hang", nil)
		if _, err := c.Do(req); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("hang: err = %v", err)
		}
	})
}

func TestWeb_EarlyCloseIsAborted(t *testing.T) {
	transports(t, func(t *testing.T, w *Web, rt http.RoundTripper) {
		for _, path := range []string{"/huge", "/endless"} {
			resp, err := (&http.Client{Transport: rt}).Get("http://a.test" + path)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.CopyN(io.Discard, resp.Body, 1000)
			resp.Body.Close()
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			rs := w.RequestsTo("a.test")
			if len(rs) == 2 && !rs[0].End.IsZero() && !rs[1].End.IsZero() {
				for _, r := range rs {
					if !r.Aborted {
						t.Errorf("%s not aborted (%d bytes written)", r.Path, r.BytesWritten)
					}
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("handlers did not end")
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

func TestChecks_Detect(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := func(seq int, path string, start, end time.Duration, status int, hdr ...string) Request {
		h := http.Header{}
		for i := 0; i+1 < len(hdr); i += 2 {
			h.Set(hdr[i], hdr[i+1])
		}
		return Request{Seq: seq, Host: "a.test", Method: "GET", Path: path, Header: h, Start: t0.Add(start), End: t0.Add(end), Status: status, RespHeader: http.Header{"Retry-After": {"10"}}}
	}
	tests := []struct {
		name  string
		check Check
		reqs  []Request
		want  int
	}{
		{"robots first", RobotsFirst(), []Request{r(0, "/a", 0, 1, 200), r(1, "/robots.txt", 2, 3, 200)}, 1},
		{"robots first ok", RobotsFirst(), []Request{r(0, "/robots.txt", 0, 1, 200), r(1, "/a", 2, 3, 200)}, 0},
		{"overlap", NoOverlap(), []Request{r(0, "/a", 0, 2*time.Second, 200), r(1, "/b", time.Second, 3*time.Second, 200)}, 1},
		{"no overlap", NoOverlap(), []Request{r(0, "/a", 0, time.Second, 200), r(1, "/b", time.Second, 3*time.Second, 200)}, 0},
		{"gap", MinGap(2 * time.Second), []Request{r(0, "/a", 0, time.Second, 200), r(1, "/b", 2*time.Second, 3*time.Second, 200)}, 1},
		{"gap ok", MinGapOn("a.test", time.Second), []Request{r(0, "/a", 0, time.Second, 200), r(1, "/b", 2*time.Second, 3*time.Second, 200)}, 0},
		{"retry-after broken", HonoursRetryAfter(), []Request{r(0, "/a", 0, time.Second, 429), r(1, "/b", 5*time.Second, 6*time.Second, 200)}, 1},
		{"retry-after kept", HonoursRetryAfter(), []Request{r(0, "/a", 0, time.Second, 503), r(1, "/b", 11*time.Second, 12*time.Second, 200)}, 0},
		{"cookie", NoCookies(), []Request{r(0, "/a", 0, 1, 200, "Cookie", "a=b")}, 1},
		{"method", OnlyGetHead(), []Request{{Method: "POST", Host: "a.test", Path: "/"}}, 1},
		{"ua", UserAgent("Bot/1"), []Request{r(0, "/a", 0, 1, 200, "User-Agent", "Bot/2")}, 1},
		{"from ok", From("a@b"), []Request{r(0, "/a", 0, 1, 200, "From", "a@b")}, 0},
		{"not fetched", NotFetched("a.test", "/a"), []Request{r(0, "/a", 0, 1, 200)}, 1},
		{"allowed", Allowed(func(h, p string) bool { return !strings.HasPrefix(p, "/private") }), []Request{r(0, "/private/x", 0, 1, 200), r(1, "/robots.txt", 2, 3, 200)}, 1},
		{"unsigned", Signed(func(*http.Request) error { return nil }), []Request{r(0, "/a", 0, 1, 200)}, 1},
		{"at least", AtLeast("A.test", 2), []Request{r(0, "/a", 0, 1, 200)}, 1},
		{"at least ok", AtLeast("a.test", 1), []Request{r(0, "/a", 0, 1, 200)}, 0},
		{"none", None("a.test"), []Request{r(0, "/a", 0, 1, 200), r(1, "/b", 2, 3, 200)}, 2},
		{"none ok", None("b.test"), []Request{r(0, "/a", 0, 1, 200)}, 0},
		// Nothing to judge is a failure, not a pass.
		{"one request, no gap", NoOverlap(), []Request{r(0, "/a", 0, 1, 200)}, 1},
		{"one request, no min gap", MinGap(time.Second), []Request{r(0, "/a", 0, 1, 200)}, 1},
		{"other host's gap", MinGapOn("b.test", time.Second), []Request{r(0, "/a", 0, 1, 200), r(1, "/b", 2*time.Second, 3*time.Second, 200)}, 1},
		{"no pause asked", HonoursRetryAfter(), []Request{r(0, "/a", 0, 1, 200), r(1, "/b", 2, 3, 200)}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.check(tt.reqs); len(got) != tt.want {
				t.Errorf("got %d violations %q, want %d", len(got), got, tt.want)
			}
		})
	}
}

// Every check fails on a run that recorded no request: a bot that returned
// before doing its work proves nothing.
func TestChecks_FailOnEmptyRun(t *testing.T) {
	verify := func(*http.Request) error { return nil }
	checks := map[string]Check{
		"NoOverlap":         NoOverlap(),
		"RobotsFirst":       RobotsFirst(),
		"MinGap":            MinGap(time.Second),
		"MinGapOn":          MinGapOn("a.test", time.Second),
		"HonoursRetryAfter": HonoursRetryAfter(),
		"NoCookies":         NoCookies(),
		"NoCredentials":     NoCredentials(),
		"OnlyGetHead":       OnlyGetHead(),
		"UserAgent":         UserAgent("Bot/1"),
		"From":              From("a@b"),
		"HeaderIs":          HeaderIs("X", "y"),
		"NotFetched":        NotFetched("a.test", "/a"),
		"Allowed":           Allowed(func(string, string) bool { return true }),
		"Signed":            Signed(verify),
		"SignedOnArrival":   SignedOnArrival(),
		"ObeysRobots":       New().ObeysRobots(robots.Agent{Token: "bot"}),
		"AtLeast":           AtLeast("a.test", 1),
		"None":              None("a.test"),
	}
	for name, c := range checks {
		for _, reqs := range [][]Request{nil, {}} {
			if v := c(reqs); len(v) != 1 {
				t.Errorf("%s on an empty run: %d violations %q, want 1", name, len(v), v)
			}
		}
	}
}

// The in-memory transport runs in a synctest bubble: a 10-minute trickle
// takes no real time.
func TestMemory_Synctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := New()
		defer w.Close()
		w.Host("slow.test").Handle("/", Trickle(time.Minute, "0123456789"))
		start := time.Now()
		resp, err := (&http.Client{Transport: w.RoundTripper()}).Get("http://slow.test/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "0123456789" || time.Since(start) != 10*time.Minute {
			t.Errorf("got %q after %v", b, time.Since(start))
		}
		synctest.Wait()
		if r := w.Requests()[0]; r.End.Sub(r.Start) != 10*time.Minute {
			t.Errorf("record %v..%v", r.Start, r.End)
		}
	})
}
