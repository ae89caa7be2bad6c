package fetch_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
)

// afterCtx is a caller's context that counts the contexts derived from it
// which are still waiting on it (context.WithDeadline registers through
// AfterFunc and stops the registration when it is cancelled).
type afterCtx struct {
	context.Context
	done chan struct{}
	made atomic.Int32
	live atomic.Int32
}

func newAfterCtx() *afterCtx {
	return &afterCtx{Context: context.Background(), done: make(chan struct{})}
}

func (c *afterCtx) Done() <-chan struct{} { return c.done }

func (c *afterCtx) AfterFunc(func()) func() bool {
	c.made.Add(1)
	c.live.Add(1)
	var once sync.Once
	return func() bool {
		stopped := false
		once.Do(func() { c.live.Add(-1); stopped = true })
		return stopped
	}
}

// A redirect hop runs under the fetch's deadline; the context it makes for
// it is released when the hop ends: at the body's Close, or on the hop's
// refusal or failure. None is left waiting on the caller's context.
func TestTransport_HopDeadlineReleased(t *testing.T) {
	for _, tt := range []struct {
		name, target string
		ok           bool
	}{
		{"page", "/page", true},
		{"disallowed", "/no", false},
		{"reset", "/reset", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, bot := loopback(t)
			site(w, "a.test", "User-agent: *\nDisallow: /no\n").
				Handle("/r", fetchtest.Redirect(tt.target, 0)).
				Handle("/page", fetchtest.HTML("<p>page</p>")).
				Handle("/reset", fetchtest.Reset())
			c := plainClient(t, bot)
			ctx := newAfterCtx()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.test/r", nil)
			resp, err := c.Do(req)
			if tt.ok {
				if err != nil {
					t.Fatalf("Get: %v", err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != "<p>page</p>" {
					t.Fatalf("body %q", b)
				}
			} else if err == nil {
				resp.Body.Close()
				t.Fatalf("%s: no error", tt.target)
			}
			if got := w.Count("a.test", "/r"); got != 1 {
				t.Fatalf("/r asked %d times", got)
			}
			if ctx.made.Load() == 0 {
				t.Fatal("no context derived from the caller's")
			}
			if n := ctx.live.Load(); n != 0 {
				t.Errorf("%d derived contexts still wait on the caller's", n)
			}
		})
	}
}

// A hop that the transport refuses before sending it closes the request's
// body once: past the redirect limit, after the fetch's deadline, or with a
// User-Agent placeholder its context lacks. The hop is not sent, and the
// context made for it is released.
func TestTransport_LaterHopRefusals(t *testing.T) {
	for _, tt := range []struct {
		name    string
		max     int  // Limits.MaxRedirects
		late    bool // the second hop comes after the deadline
		noVar   bool // the second hop's context lacks the User-Agent value
		outcome fetch.Outcome
		errIs   error
	}{
		{"too many redirects", -1, false, false, fetch.TooManyRedirects, fetch.ErrTooManyRedirects},
		{"deadline passed", 5, true, false, fetch.Timeout, context.DeadlineExceeded},
		{"no user agent value", 5, false, true, fetch.OK, fetch.ErrUserAgent},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				site(w, "a.test", "").Handle("/r", fetchtest.Redirect("/page", 0)).
					Handle("/page", fetchtest.HTML("<p>page</p>"))
				bot := memBot(w)
				bot.UserAgent = "TestBot/1.0 (for {dir})"
				bot.Politeness = politeness.Policy{MinDelay: -1}
				bot.Limits.Timeout = 15 * time.Second
				bot.Limits.MaxRedirects = tt.max
				rt, err := fetch.NewTransport(bot)
				if err != nil {
					t.Fatal(err)
				}
				withVar, _ := fetch.WithUserAgentVar(context.Background(), "dir", "d.example")
				req1, _ := http.NewRequestWithContext(withVar, http.MethodGet, "http://a.test/r", nil)
				resp1, err := rt.RoundTrip(req1)
				if err != nil {
					t.Fatalf("first hop: %v", err)
				}
				resp1.Body.Close()
				if resp1.StatusCode != http.StatusFound && resp1.StatusCode != http.StatusMovedPermanently {
					t.Fatalf("first hop: status %d", resp1.StatusCode)
				}
				if tt.late {
					time.Sleep(15 * time.Second) // the budget runs out
				}
				ctx := newAfterCtx()
				var parent context.Context = ctx
				if !tt.noVar {
					parent, _ = fetch.WithUserAgentVar(ctx, "dir", "d.example")
				}
				body := &closeCounter{Reader: strings.NewReader("x")}
				req2, _ := http.NewRequestWithContext(parent, http.MethodGet, "http://a.test/page", body)
				req2.Response = resp1
				resp2, err := rt.RoundTrip(req2)
				if err == nil {
					resp2.Body.Close()
					t.Fatal("second hop: no error")
				}
				if !errors.Is(err, tt.errIs) {
					t.Errorf("second hop: err %v, want %v", err, tt.errIs)
				}
				var fe *fetch.Error
				if tt.outcome != fetch.OK && (!errors.As(err, &fe) || fe.Outcome != tt.outcome) {
					t.Errorf("second hop: err %v, want outcome %v", err, tt.outcome)
				}
				if n := body.closed.Load(); n != 1 {
					t.Errorf("request body closed %d times", n)
				}
				w.Check(t, fetchtest.NotFetched("a.test", "/page"))
				if n := ctx.live.Load(); n != 0 {
					t.Errorf("%d derived contexts still wait on the caller's", n)
				}
			})
		})
	}
}

// The transport never changes the caller's request: the bot's headers go
// on its own copy. Validators a caller set go with the URL first asked for,
// not with a redirect target.
func TestTransport_CallersHeaderUntouched(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").Handle("/r", fetchtest.Redirect("/page", 0)).
		Handle("/page", fetchtest.HTML("<p>page</p>"))
	bot.From = "bot@test.example"
	c := plainClient(t, bot)
	req, _ := http.NewRequest(http.MethodGet, "http://a.test/r", nil)
	req.Header.Set("If-None-Match", `"v1"`)
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != "/page" {
		t.Fatalf("ended at %s", resp.Request.URL.Path)
	}
	want := http.Header{"If-None-Match": {`"v1"`}, "Authorization": {"Bearer secret"}}
	if len(req.Header) != len(want) || req.Header.Get("If-None-Match") != `"v1"` || req.Header.Get("Authorization") != "Bearer secret" {
		t.Errorf("caller's header became %v, want %v", req.Header, want)
	}
	reqs := w.RequestsTo("a.test", "/r", "/page")
	if len(reqs) != 2 {
		t.Fatalf("%d requests to /r and /page", len(reqs))
	}
	for _, r := range reqs {
		want := ""
		if r.Path == "/r" {
			want = `"v1"`
		}
		if got := r.Header.Get("If-None-Match"); got != want {
			t.Errorf("%s sent If-None-Match %q, want %q", r.Path, got, want)
		}
		if got := r.Header.Get("From"); got != "bot@test.example" {
			t.Errorf("%s sent From %q", r.Path, got)
		}
	}
}

// A request made with http.NewRequest carries its URL's host in Host; sent
// to the site key's spelling, it carries that spelling in Host too. A Host
// the caller chose is kept. The response's Request is the request as sent,
// even from a base transport that leaves it unset.
func TestTransport_HostOfARespelledRequest(t *testing.T) {
	for _, tt := range []struct {
		name, host, want string
	}{
		{"from the URL", "", "a.test"},
		{"the caller's", "vhost.test", "vhost.test"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var sent []string
			bot := fetch.Bot{
				UserAgent:  testUA,
				Politeness: politeness.Policy{MinDelay: -1},
				Transport: rtFunc(func(r *http.Request) (*http.Response, error) {
					host := r.Host
					if host == "" {
						host = r.URL.Host
					}
					mu.Lock()
					sent = append(sent, r.URL.Host+" "+host+" "+r.URL.Path)
					mu.Unlock()
					status, body := http.StatusOK, "<p>ok</p>"
					if r.URL.Path == "/robots.txt" {
						status, body = http.StatusNotFound, ""
					}
					return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"text/html"}},
						Body: io.NopCloser(strings.NewReader(body))}, nil
				}),
			}
			rt, err := fetch.NewTransport(bot)
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodGet, "http://A.TEST./page", nil)
			if tt.host != "" {
				req.Host = tt.host
			}
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			if len(sent) == 0 || sent[len(sent)-1] != "a.test "+tt.want+" /page" {
				t.Fatalf("sent %q, want the last %q", sent, "a.test "+tt.want+" /page")
			}
			if resp.Request == nil || resp.Request.URL.String() != "http://a.test/page" || resp.Request.Header.Get("User-Agent") != testUA {
				t.Errorf("response's Request %+v, want the request sent to http://a.test/page", resp.Request)
			}
		})
	}
}

// logRec is a Debug record's message and url attribute.
type logRec struct{ msg, url string }

type recHandler struct {
	mu   *sync.Mutex
	recs *[]logRec
}

func (h recHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h recHandler) WithGroup(string) slog.Handler            { return h }
func (h recHandler) Handle(_ context.Context, r slog.Record) error {
	rec := logRec{msg: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "url" {
			rec.url = a.Value.String()
		}
		return true
	})
	h.mu.Lock()
	*h.recs = append(*h.recs, rec)
	h.mu.Unlock()
	return nil
}

// Bot.Logger receives a Debug record for each refusal of the transport:
// by the URL rules, by robots.txt, by robots.txt's usage preferences.
func TestTransport_RefusalsLogged(t *testing.T) {
	for _, tt := range []struct {
		path, msg string
		outcome   fetch.Outcome
	}{
		{"/checkout", "fetch: refused", fetch.Disallowed},
		{"/no", "fetch: robots.txt refused", fetch.Disallowed},
		{"/u", "fetch: usage refused", fetch.UsageRefused},
	} {
		t.Run(tt.msg, func(t *testing.T) {
			w, bot := loopback(t)
			site(w, "a.test", "User-agent: *\nDisallow: /no\nContent-Usage: /u ai-use=n\n").
				Handle("/u", fetchtest.HTML("<p>u</p>"))
			var mu sync.Mutex
			var recs []logRec
			bot.Logger = slog.New(recHandler{&mu, &recs})
			bot.Purposes, bot.UsageMode = []robots.Purpose{robots.AIInput}, fetch.UsageRefuse
			resp, err := plainClient(t, bot).Get("http://a.test" + tt.path)
			if resp != nil {
				resp.Body.Close()
			}
			var fe *fetch.Error
			if !errors.As(err, &fe) || fe.Outcome != tt.outcome {
				t.Fatalf("err %v, want %v", err, tt.outcome)
			}
			if n := w.Count("a.test", tt.path); n != 0 {
				t.Fatalf("%s asked %d times", tt.path, n)
			}
			mu.Lock()
			defer mu.Unlock()
			want := logRec{tt.msg, "http://a.test" + tt.path}
			for _, r := range recs {
				if r == want {
					return
				}
			}
			t.Errorf("records %q, want %q among them", recs, want)
		})
	}
}

// A paying bot whose budget cannot cover one more request sends none to a
// new site, not even for robots.txt.
func TestTransport_BudgetRefusesBeforeRobotsTxt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		w.Host("a.test").
			Handle("/robots.txt", fetchtest.Page{Body: "User-agent: *\nAllow: /\n", ContentType: "text/plain",
				Header: http.Header{"Crawler-Charged": {"USD 0.02"}}})
		site(w, "b.test", "")
		c := plainClient(t, payingBot(w, 20000, 20000))
		for _, u := range []string{"http://a.test/", "http://b.test/"} {
			resp, err := c.Get(u)
			if resp != nil {
				resp.Body.Close()
			}
			var fe *fetch.Error
			if !errors.As(err, &fe) || fe.Outcome != fetch.PaymentRequired || !errors.Is(err, fetch.ErrBudgetSpent) {
				t.Fatalf("%s: err %v, want payment_required with ErrBudgetSpent", u, err)
			}
		}
		if n := len(w.RequestsTo("a.test", "/robots.txt")); n != 1 {
			t.Fatalf("%d requests for a.test's robots.txt, want 1", n)
		}
		w.Check(t, fetchtest.None("b.test"))
	})
}

// robots.txt is asked for as text; an answer to it that is a challenge
// page is no file, at a 400 as at a 403, and the site stays closed. A 3xx
// goes back to the cache to follow.
func TestRobotsTransport_AcceptAndChallengeStatuses(t *testing.T) {
	for _, tt := range []struct {
		name   string
		robots http.Handler
		want   fetch.Outcome
	}{
		{"challenge 400", fetchtest.Challenge(400), fetch.Unreachable},
		{"challenge 403", fetchtest.Challenge(403), fetch.Unreachable},
		{"redirect 301", fetchtest.Redirect("/r.txt", 301), fetch.Disallowed},
		{"redirect 307", fetchtest.Redirect("/r.txt", 307), fetch.Disallowed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, bot := loopback(t)
			w.Host("a.test").Handle("/robots.txt", tt.robots).
				Handle("/r.txt", fetchtest.Robots("User-agent: *\nDisallow: /page\n")).
				Handle("/page", fetchtest.HTML("<p>page</p>"))
			f := mustFetcher(t, bot)
			get(t, f, "http://a.test/page", tt.want)
			reqs := w.RequestsTo("a.test", "/robots.txt")
			if len(reqs) != 1 {
				t.Fatalf("%d requests for robots.txt", len(reqs))
			}
			if got := reqs[0].Header.Get("Accept"); got != "text/plain,*/*;q=0.5" {
				t.Errorf("robots.txt asked for with Accept %q", got)
			}
			w.Check(t, fetchtest.NotFetched("a.test", "/page"))
		})
	}
}

// robots.txt is matched against the request target: path and query, the
// "?" of an empty query included, "/" for an empty path.
func TestTransport_RobotsMatchTheRequestTarget(t *testing.T) {
	for _, tt := range []struct {
		url  string
		want fetch.Outcome
	}{
		{"http://a.test/page", fetch.OK},
		{"http://a.test/page?x=1", fetch.Disallowed},
		{"http://a.test/q", fetch.OK},
		{"http://a.test/q?", fetch.Disallowed},
		{"http://b.test", fetch.Disallowed},
	} {
		t.Run(tt.url, func(t *testing.T) {
			w, bot := loopback(t)
			site(w, "a.test", "User-agent: *\nDisallow: /page?x\nDisallow: /q?\n").
				Handle("/page", fetchtest.HTML("<p>page</p>")).Handle("/q", fetchtest.HTML("<p>q</p>"))
			site(w, "b.test", "User-agent: *\nDisallow: /\n")
			resp, err := plainClient(t, bot).Get(tt.url)
			got := fetch.OK
			if err != nil {
				var fe *fetch.Error
				if !errors.As(err, &fe) {
					t.Fatalf("err %v", err)
				}
				got = fe.Outcome
			} else {
				resp.Body.Close()
			}
			if got != tt.want {
				t.Errorf("outcome %v (err %v), want %v", got, err, tt.want)
			}
			if n := len(w.Requests()); n == 0 {
				t.Error("no request sent, not even for robots.txt")
			}
		})
	}
}

// A *UsageError matches ErrUsageRefused on its own, and nothing else.
func TestUsageError_Is(t *testing.T) {
	ue := &fetch.UsageError{Purpose: robots.AIInput, Source: "header"}
	for _, tt := range []struct {
		target error
		want   bool
	}{
		{fetch.ErrUsageRefused, true},
		{fetch.ErrDisallowed, false},
		{errors.New("other"), false},
	} {
		if got := errors.Is(ue, tt.target); got != tt.want {
			t.Errorf("errors.Is(%v, %v) = %v, want %v", ue, tt.target, got, tt.want)
		}
	}
}

// A page reached through a redirect carries what robots.txt says about its
// final URL, not about the URL first asked for.
func TestUsage_RecordedForTheFinalURL(t *testing.T) {
	for _, tt := range []struct {
		path string
		want robots.Usage
	}{
		{"/go", verdicts(robots.AIInput, robots.Disallowed)},
		{"/page", verdicts(robots.AIInput, robots.Disallowed)},
		{"/ok", robots.Usage{}},
	} {
		t.Run(tt.path, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				usageSite(w, "User-agent: *\nAllow: /\nContent-Usage: /page ai-use=n\n", nil)
				bot := memBot(w)
				bot.Purposes = []robots.Purpose{robots.AIInput} // UsageMode zero: record
				p := get(t, mustFetcher(t, bot), "http://a.test"+tt.path, fetch.OK)
				if len(p.Body) == 0 {
					t.Fatal("empty body")
				}
				if p.Usage != tt.want {
					t.Errorf("Page.Usage = %v, want %v", p.Usage, tt.want)
				}
			})
		})
	}
}
