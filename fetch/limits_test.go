package fetch_test

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
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
	if fetch.Outcome(0).String() != "" || fetch.Outcome(99).String() != "" {
		t.Error("values outside the set must have empty names")
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
