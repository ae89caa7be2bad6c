package fetch_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/challenge"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
)

// D4: a redirect chain of 4 for a bot that follows 3: the three redirects
// are followed, the fourth is not, the outcome is TooManyRedirects.
func TestLimits_D4_RedirectChainOf4For3RedirectBot(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").HandleChain("/r", 4, fetchtest.HTML("end")).HandleChain("/s", 3, fetchtest.HTML("end"))
	bot.Limits.MaxRedirects = 3
	f := mustFetcher(t, bot)
	p := get(t, f, "http://a.test/r/0", fetch.TooManyRedirects)
	if p.Status != http.StatusFound || p.FinalURL != "http://a.test/r/3" {
		t.Errorf("status %d final %q", p.Status, p.FinalURL)
	}
	for i, path := range []string{"/r/0", "/r/1", "/r/2", "/r/3"} {
		if w.Count("a.test", path) != 1 {
			t.Errorf("hop %d (%s) not fetched once", i, path)
		}
	}
	w.Check(t, fetchtest.NotFetched("a.test", "/r/4"))
	p = get(t, f, "http://a.test/s/0", fetch.OK) // exactly 3 redirects is fine
	if string(p.Body) != "end" || p.FinalURL != "http://a.test/s/3" {
		t.Errorf("3 redirects: %q at %q", p.Body, p.FinalURL)
	}
}

// D11: a 20 MB body is cut at 5 MB and its connection closed: the server
// sees the client go away long before the end.
func TestLimits_D11_BodyCutAt5MBConnectionClosed(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").Handle("/huge", fetchtest.Huge(20<<20)).Handle("/small", fetchtest.Huge(5<<20))
	bot.Limits.MaxBodyBytes = 5 << 20
	f := mustFetcher(t, bot)
	p := get(t, f, "http://a.test/huge", fetch.TooLarge)
	if !p.Truncated || len(p.Body) != 5<<20 || p.Status != 200 {
		t.Errorf("truncated %v, body %d bytes, status %d", p.Truncated, len(p.Body), p.Status)
	}
	p = get(t, f, "http://a.test/small", fetch.OK) // exactly the limit is fine
	if p.Truncated || len(p.Body) != 5<<20 {
		t.Errorf("at the limit: truncated %v, %d bytes", p.Truncated, len(p.Body))
	}
	f.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := w.RequestsTo("a.test", "/huge")[0]
		if !r.End.IsZero() {
			if !r.Aborted || r.BytesWritten >= 20<<20 {
				t.Errorf("server wrote %d bytes, aborted %v: connection not closed at the cut", r.BytesWritten, r.Aborted)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("server handler still writing: connection not closed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The plain client reports the cut as a typed error from Read.
	resp, err := mustClient(t, bot).Get("http://a.test/huge")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n != 5<<20 || !errors.Is(err, fetch.ErrTooLarge) {
		t.Errorf("client read %d bytes, err %v", n, err)
	}
}

// D11: a server sending one byte per second is stopped at the 15 s total,
// counted from the first request and covering redirects (fake time).
func TestLimits_D11_TrickleStoppedAt15s(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		body := strings.Repeat("x", 60)
		site(w, "a.test", "").
			Handle("/slow", fetchtest.Trickle(time.Second, body)).
			Handle("/hop", fetchtest.Slow(5*time.Second, fetchtest.Redirect("/slow", 0))).
			Handle("/hang", fetchtest.Hang())
		bot := memBot(w)
		bot.Politeness.MinDelay = -1
		bot.Limits.Timeout = 15 * time.Second
		f := mustFetcher(t, bot)
		for _, tt := range []struct {
			path  string
			bytes int
		}{{"/slow", 15}, {"/hop", 10}, {"/hang", 0}} {
			start := time.Now()
			p := get(t, f, "http://a.test"+tt.path, fetch.Timeout)
			if d := time.Since(start); d != 15*time.Second {
				t.Errorf("%s: stopped after %v, want 15s", tt.path, d)
			}
			if len(p.Body) < tt.bytes-1 || len(p.Body) > tt.bytes {
				t.Errorf("%s: read %d bytes, want about %d", tt.path, len(p.Body), tt.bytes)
			}
		}
		synctest.Wait()
		for _, r := range w.Requests() {
			if r.End.IsZero() {
				t.Errorf("%s still running", r.URL())
			}
		}
	})
}

// C6, H8: a challenge page, also one served with status 200, is detected,
// its body never returned, and reported as Blocked (with the verdict),
// distinct from Unreachable.
func TestChallenge_C6_H8_BlockedNotContent(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").
		Handle("/c200", fetchtest.Challenge(http.StatusOK)).
		Handle("/c403", fetchtest.Challenge(http.StatusForbidden)).
		Handle("/c503", fetchtest.Challenge(http.StatusServiceUnavailable)).
		Handle("/down", fetchtest.Status(http.StatusInternalServerError))
	bot.Politeness.DefaultBackoff = time.Millisecond
	bot.Politeness.MaxSlowdown = -1
	f := mustFetcher(t, bot)
	for _, path := range []string{"/c200", "/c403", "/c503"} {
		p := get(t, f, "http://a.test"+path, fetch.Blocked)
		if p.Body != nil || !p.Verdict.Blocked || p.Verdict.Vendor != "cloudflare" || p.Status == 0 {
			t.Errorf("%s: body %d bytes, verdict %+v, status %d", path, len(p.Body), p.Verdict, p.Status)
		}
		time.Sleep(5 * time.Millisecond) // the 503 pauses the host for the 1 ms backoff
	}
	get(t, f, "http://a.test/down", fetch.Unreachable)

	resp, err := mustClient(t, bot).Get("http://a.test/c200")
	if resp != nil || !errors.Is(err, challenge.ErrChallenged) || !errors.Is(err, fetch.ErrBlocked) {
		t.Errorf("client: resp %v err %v", resp, err)
	}
}

// C7: every failure reaches the caller of the plain client as a typed error
// inside *url.Error that errors.Is/As tell apart.
func TestErrors_C7_TypedThroughURLError(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "User-agent: *\nDisallow: /no\n").
		Handle("/challenge", fetchtest.Challenge(http.StatusForbidden)).
		Handle("/pdf", fetchtest.Text("application/pdf", "%PDF")).
		HandleChain("/r", 2, fetchtest.HTML("x"))
	site(w, "limit.test", "").Handle("/limited", fetchtest.RetryAfter(http.StatusTooManyRequests, "7200"))
	w.Host("down.test").Handle("/robots.txt", fetchtest.Status(500))
	bot.HTMLOnly = true
	bot.Limits.MaxRedirects = 1
	bot.BlockedDomains = []string{"blocked.test"}
	bot.Politeness.RetryAfterMode = politeness.GiveUp
	c := mustClient(t, bot)
	resp, err := c.Get("http://limit.test/limited") // the 429 itself is returned; the host is given up
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tests := []struct {
		url   string
		is    []error
		cause any
	}{
		{"http://a.test/no", []error{fetch.ErrDisallowed, robots.ErrDisallowed}, new(*robots.DisallowedError)},
		{"http://down.test/", []error{fetch.ErrUnreachable, robots.ErrUnreachable}, new(*robots.DisallowedError)},
		{"http://b.test/cart", []error{fetch.ErrDisallowed, fetch.ErrDenied}, nil},
		{"http://blocked.test/", []error{fetch.ErrBlockedDomain}, nil},
		{"http://a.test/pdf", []error{fetch.ErrNotHTML}, nil},
		{"http://a.test/r/0", []error{fetch.ErrTooManyRedirects}, nil},
		{"http://limit.test/", []error{fetch.ErrGaveUp, politeness.ErrGaveUp}, new(*politeness.HostError)},
	}
	resp, err = c.Get("http://a.test/challenge")
	var ce *challenge.ChallengeError
	if resp != nil || !errors.As(err, &ce) || !errors.Is(err, fetch.ErrBlocked) {
		t.Errorf("challenge: err %v", err)
	}
	for _, tt := range tests {
		resp, err := c.Get(tt.url)
		if resp != nil {
			resp.Body.Close()
		}
		var ue *url.Error
		var fe *fetch.Error
		if !errors.As(err, &ue) || !errors.As(err, &fe) {
			t.Errorf("%s: err %T %v, want *url.Error around *fetch.Error", tt.url, err, err)
			continue
		}
		for _, target := range tt.is {
			if !errors.Is(err, target) {
				t.Errorf("%s: errors.Is(%v) false for %v", tt.url, target, err)
			}
		}
		if tt.cause != nil && !errors.As(err, tt.cause) {
			t.Errorf("%s: cause %T not found in %v", tt.url, tt.cause, err)
		}
		if fe.Outcome.Err() == nil || !errors.Is(err, fe.Outcome.Err()) || fetch.OutcomeOf(err) != fe.Outcome {
			t.Errorf("%s: outcome %v inconsistent", tt.url, fe.Outcome)
		}
	}
}

func TestOutcome_Strings(t *testing.T) {
	want := []string{"ok", "not_modified", "disallowed", "blocked", "rate_limited", "gave_up", "unreachable",
		"auth_required", "not_html", "too_large", "too_many_redirects", "timeout", "blocked_domain", "duplicate",
		"internal_address", "insecure_redirect", "usage_refused", "payment_required"}
	for i, s := range want {
		o := fetch.Outcome(i + 1)
		if o.String() != s {
			t.Errorf("Outcome(%d) = %q, want %q", i+1, o, s)
		}
		if p, ok := fetch.ParseOutcome(s); !ok || p != o {
			t.Errorf("ParseOutcome(%q) = %v %v", s, p, ok)
		}
	}
	// Outside the set, on both sides and just past its end: no name, no
	// sentinel.
	for _, o := range []fetch.Outcome{-1, 0, fetch.Outcome(len(want) + 1), 99} {
		if o.String() != "" || o.Err() != nil {
			t.Errorf("Outcome(%d): name %q, sentinel %v; want none", int(o), o.String(), o.Err())
		}
	}
	// The message names the outcome, the URL if there is one, and the cause.
	cause := errors.New("connection reset")
	for _, tc := range []struct {
		err  *fetch.Error
		want string
	}{
		{&fetch.Error{Outcome: fetch.Unreachable, URL: "http://a.test/", Err: cause}, "fetch: unreachable http://a.test/: connection reset"},
		{&fetch.Error{Outcome: fetch.Unreachable, Err: cause}, "fetch: unreachable: connection reset"},
		{&fetch.Error{Outcome: fetch.Timeout, URL: "http://a.test/"}, "fetch: timeout http://a.test/"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

// Redirect loops end as TooManyRedirects, endless bodies as TooLarge, a
// reset connection as Unreachable (not Blocked).
func TestLimits_LoopsEndlessReset(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").
		Handle("/loop-a", fetchtest.Redirect("/loop-b", 0)).
		Handle("/loop-b", fetchtest.Redirect("/loop-a", 0)).
		Handle("/endless", fetchtest.Endless()).
		Handle("/reset", fetchtest.Reset())
	bot.Limits.MaxBodyBytes = 1 << 20
	bot.Politeness.BreakerThreshold = -1
	f := mustFetcher(t, bot)
	get(t, f, "http://a.test/loop-a", fetch.TooManyRedirects)
	if n := w.Count("a.test", "/loop-a") + w.Count("a.test", "/loop-b"); n != 6 {
		t.Errorf("loop: %d requests, want 6 (the default limit of 5 redirects)", n)
	}
	p := get(t, f, "http://a.test/endless", fetch.TooLarge)
	if len(p.Body) != 1<<20 {
		t.Errorf("endless: %d bytes", len(p.Body))
	}
	get(t, f, "http://a.test/reset", fetch.Unreachable)
}

// Limits.Timeout zero means 30 s; negative means no limit (a redirect an
// hour late is still followed); the smallest positive one is a limit too
// (fake time).
func TestLimits_TimeoutDefaultAndNone(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		want    fetch.Outcome
		took    time.Duration
		there   int // requests for the redirect's target
	}{
		{"zero: 30s", 0, fetch.Timeout, 30 * time.Second, 0},
		{"negative: none", -1, fetch.OK, time.Hour, 1},
		{"1ns", time.Nanosecond, fetch.Timeout, time.Nanosecond, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				site(w, "a.test", "").
					Handle("/late", fetchtest.Slow(time.Hour, fetchtest.Redirect("/there", 0))).
					Handle("/there", fetchtest.HTML("<p>late</p>"))
				bot := memBot(w)
				bot.Politeness.MinDelay = -1
				bot.Limits.Timeout = tt.timeout
				bot.RobotsTimeout = time.Minute
				f := mustFetcher(t, bot)
				get(t, f, "http://a.test/robots.txt", fetch.OK) // robots.txt fetched before the clock starts
				start := time.Now()
				get(t, f, "http://a.test/late", tt.want)
				if d := time.Since(start); d != tt.took {
					t.Errorf("Get took %v, want %v", d, tt.took)
				}
				if n := w.Count("a.test", "/late"); n != 1 {
					t.Errorf("%d requests for /late, want 1", n)
				}
				if n := w.Count("a.test", "/there"); n != tt.there {
					t.Errorf("%d requests for the redirect's target, want %d", n, tt.there)
				}
				synctest.Wait()
			})
		})
	}
}

// The time budget covers a politeness wait between redirect hops: with a
// 15 s limit and 20 s between requests to the host, the fetch ends as
// Timeout 15 s after its first request, the redirect's target unsent
// (fake time).
func TestLimits_BudgetCoversWaitBetweenHops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "").
			Handle("/hop", fetchtest.Redirect("/there", 0)).
			Handle("/there", fetchtest.HTML("<p>there</p>"))
		bot := memBot(w)
		bot.Politeness.MinDelay = 20 * time.Second
		bot.Limits.Timeout = 15 * time.Second
		f := mustFetcher(t, bot)
		start := time.Now()
		get(t, f, "http://a.test/hop", fetch.Timeout)
		reqs := w.RequestsTo("a.test", "/hop")
		if len(reqs) != 1 {
			t.Fatalf("%d requests for /hop, want 1", len(reqs))
		}
		if d := reqs[0].Start.Sub(start); d != 20*time.Second {
			t.Errorf("/hop sent %v after the Get began, want 20s (after robots.txt)", d)
		}
		if d := time.Since(reqs[0].Start); d != 15*time.Second {
			t.Errorf("Get ended %v after its first request, want 15s", d)
		}
		if n := w.Count("a.test", "/there"); n != 0 {
			t.Errorf("%d requests for the redirect's target, want 0", n)
		}
		synctest.Wait()
	})
}

// answer is a response to r of status, HTML, with body (nil: a nil Body)
// over HTTP/major.
func answer(r *http.Request, status, major int, body io.ReadCloser) *http.Response {
	return &http.Response{StatusCode: status, ProtoMajor: major, Header: http.Header{"Content-Type": {"text/html"}},
		Body: body, ContentLength: -1, Request: r}
}

// A Bot.Transport's answer with a nil Body is an empty body, not a panic.
func TestLimits_NilBodyIsEmpty(t *testing.T) {
	var n atomic.Int32
	site := rtFunc(func(r *http.Request) (*http.Response, error) {
		n.Add(1)
		if r.URL.Path == "/robots.txt" {
			return answer(r, 404, 1, nil), nil
		}
		return answer(r, 200, 1, nil), nil
	})
	f := mustFetcher(t, fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1}, Transport: site})
	p := get(t, f, "http://a.test/page", fetch.OK)
	if n.Load() != 2 {
		t.Fatalf("%d requests, want 2 (robots.txt, the page)", n.Load())
	}
	if p.Body == nil || len(p.Body) != 0 {
		t.Errorf("body %q, want empty", p.Body)
	}
}

// A transport error after the time limit ran out is a Timeout, whatever
// the transport made of it (fake time).
func TestLimits_TimeoutWhateverTheTransportSays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int32
		site := rtFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/robots.txt" {
				return answer(r, 404, 1, http.NoBody), nil
			}
			sent.Add(1)
			<-r.Context().Done()
			return nil, errors.New("connection closed")
		})
		f := mustFetcher(t, fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1}, Transport: site,
			Limits: fetch.Limits{Timeout: 15 * time.Second}})
		start := time.Now()
		get(t, f, "http://a.test/page", fetch.Timeout)
		if sent.Load() != 1 {
			t.Fatalf("%d page requests, want 1", sent.Load())
		}
		if d := time.Since(start); d != 15*time.Second {
			t.Errorf("ended after %v, want 15s", d)
		}
	})
}

// A host whose answers move from HTTP/1.1 to HTTP/2 gets its requests
// without a body again (see "No silent resends"): only requests after an
// HTTP/1.x answer carry the empty non-rewindable one.
func TestLimits_BodylessAfterMoveToHTTP2(t *testing.T) {
	var mu sync.Mutex
	var got []string
	protos := map[string]int{"/robots.txt": 1, "/a": 2, "/b": 2}
	site := rtFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		got = append(got, fmt.Sprintf("%s body %v", r.URL.Path, r.Body != nil))
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			return answer(r, 404, 1, http.NoBody), nil
		}
		return answer(r, 200, protos[r.URL.Path], io.NopCloser(strings.NewReader("<p>x</p>"))), nil
	})
	f := mustFetcher(t, fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1}, Transport: site})
	get(t, f, "http://a.test/a", fetch.OK)
	get(t, f, "http://a.test/b", fetch.OK)
	mu.Lock()
	defer mu.Unlock()
	want := []string{"/robots.txt body false", "/a body true", "/b body false"}
	if !slices.Equal(got, want) {
		t.Errorf("requests %q, want %q", got, want)
	}
}

// Past the body limit every Read says ErrTooLarge, with no bytes, however
// often it is called (a limit past the challenge sniff's 64 KiB, so the
// Reads reach the limit itself).
func TestLimits_TooLargeSticks(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").Handle("/page", fetchtest.Huge(200<<10))
	bot.Limits.MaxBodyBytes = 100 << 10
	c := mustClient(t, bot)
	resp, err := c.Get("http://a.test/page")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if len(got) != 100<<10 || !errors.Is(err, fetch.ErrTooLarge) {
		t.Fatalf("read %d bytes, err %v; want 102400, ErrTooLarge", len(got), err)
	}
	for range 2 {
		if n, err := resp.Body.Read(make([]byte, 8)); n != 0 || !errors.Is(err, fetch.ErrTooLarge) {
			t.Errorf("Read after the limit: %d, %v; want 0, ErrTooLarge", n, err)
		}
	}
}

// A body of exactly the limit is whole, not TooLarge, however its end is
// told: a reader that says EOF only on the Read after the last byte, or a
// chunked body over loopback; one byte more is TooLarge even when that
// byte comes with the EOF.
func TestLimits_BodyOfExactlyTheLimit(t *testing.T) {
	const limit = 1000
	page := "<p>" + strings.Repeat("x", limit-3)
	t.Run("EOF after the last byte", func(t *testing.T) {
		site := rtFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/robots.txt" {
				return answer(r, 404, 1, http.NoBody), nil
			}
			return answer(r, 200, 1, io.NopCloser(strings.NewReader(page))), nil
		})
		f := mustFetcher(t, fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1}, Transport: site,
			Limits: fetch.Limits{MaxBodyBytes: limit}})
		if p := get(t, f, "http://a.test/page", fetch.OK); len(p.Body) != limit || p.Truncated {
			t.Errorf("%d bytes, truncated %v; want %d, false", len(p.Body), p.Truncated, limit)
		}
	})
	t.Run("one byte more, with its EOF", func(t *testing.T) {
		site := rtFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/robots.txt" {
				return answer(r, 404, 1, http.NoBody), nil
			}
			return answer(r, 200, 1, io.NopCloser(iotest.DataErrReader(strings.NewReader(page+"y")))), nil
		})
		f := mustFetcher(t, fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1}, Transport: site,
			Limits: fetch.Limits{MaxBodyBytes: limit}})
		if p := get(t, f, "http://a.test/page", fetch.TooLarge); len(p.Body) != limit || !p.Truncated {
			t.Errorf("%d bytes, truncated %v; want %d, true", len(p.Body), p.Truncated, limit)
		}
	})
	t.Run("chunked", func(t *testing.T) {
		w, bot := loopback(t)
		site(w, "a.test", "").Handle("/page", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/html")
			io.WriteString(rw, page[:500])
			rw.(http.Flusher).Flush()
			io.WriteString(rw, page[500:])
		}))
		bot.Limits.MaxBodyBytes = limit
		f := mustFetcher(t, bot)
		if p := get(t, f, "http://a.test/page", fetch.OK); len(p.Body) != limit || p.Truncated {
			t.Errorf("%d bytes, truncated %v; want %d, false", len(p.Body), p.Truncated, limit)
		}
	})
}

// Reading to the body limit closes the connection by itself, before the
// caller closes the body: the server sees the client go away (fake time).
func TestLimits_CutClosesBeforeClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "").Handle("/huge", fetchtest.Huge(20<<20))
		bot := memBot(w)
		bot.Politeness.MinDelay = -1
		bot.Limits.MaxBodyBytes = 100 << 10
		resp, err := mustClient(t, bot).Get("http://a.test/huge")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if n, err := io.Copy(io.Discard, resp.Body); n != 100<<10 || !errors.Is(err, fetch.ErrTooLarge) {
			t.Fatalf("read %d bytes, err %v; want 102400, ErrTooLarge", n, err)
		}
		synctest.Wait()
		r := w.RequestsTo("a.test", "/huge")[0]
		if r.End.IsZero() || !r.Aborted || r.BytesWritten >= 20<<20 {
			t.Errorf("server: ended %v, aborted %v, wrote %d bytes; want the connection closed at the cut", !r.End.IsZero(), r.Aborted, r.BytesWritten)
		}
	})
}

// A body limit of one byte reads one byte, then says TooLarge.
func TestLimits_OneByteLimit(t *testing.T) {
	site := rtFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/robots.txt" {
			return answer(r, 404, 1, http.NoBody), nil
		}
		return answer(r, 200, 1, io.NopCloser(strings.NewReader("<p>ten</p>"))), nil
	})
	f := mustFetcher(t, fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1}, Transport: site,
		Limits: fetch.Limits{MaxBodyBytes: 1}})
	if p := get(t, f, "http://a.test/page", fetch.TooLarge); string(p.Body) != "<" || !p.Truncated {
		t.Errorf("body %q, truncated %v; want %q, true", p.Body, p.Truncated, "<")
	}
}
