package fetch_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/internal/syncbuf"
)

// retrying is a go-retryablehttp client that retries twice, 1 ms apart, on
// its own schedule (its linear backoff ignores Retry-After): what a caller
// reaches for when a site answers 503.
func retrying(hc *http.Client) *retryablehttp.Client {
	return &retryablehttp.Client{
		HTTPClient:   hc,
		RetryWaitMin: time.Millisecond,
		RetryWaitMax: time.Millisecond,
		RetryMax:     2,
		CheckRetry:   retryablehttp.DefaultRetryPolicy,
		Backoff:      retryablehttp.LinearJitterBackoff,
	}
}

// A retrying client ABOVE the bot keeps pacing: its retry, sent 1 ms after
// a 503 with Retry-After: 1, waits in politeness until the site's second has
// passed (fake time), and no Warn line is logged.
func TestRetries_AboveTheBotKeepPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "").Handle("/x", fetchtest.Sequence(
			fetchtest.RetryAfter(http.StatusServiceUnavailable, "1"),
			fetchtest.HTML("<p>x</p>")))
		var logs syncbuf.Buffer
		bot := memBot(w)
		bot.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		rc := retrying(mustClient(t, bot))
		req, err := retryablehttp.NewRequestWithContext(context.Background(), http.MethodGet, "http://a.test/x", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		reqs := w.RequestsTo("a.test", "/x")
		if len(reqs) != 2 || resp.StatusCode != http.StatusOK {
			t.Fatalf("%d requests, last status %d; want 2, 200", len(reqs), resp.StatusCode)
		}
		if gap := reqs[1].Start.Sub(reqs[0].Start); gap < time.Second {
			t.Errorf("retry %v after the 503, want at least 1s (Retry-After: 1)", gap)
		}
		w.Check(t, fetchtest.HonoursRetryAfter(), fetchtest.NoOverlap())
		if strings.Contains(logs.String(), "level=WARN") {
			t.Errorf("warned: %s", logs.String())
		}
	})
}

// A retrying transport BELOW the bot (as Bot.Transport) hammers the origin:
// three requests within 50 ms despite Retry-After: 1. The chain cannot stop
// it, but says so: a Warn line naming the URL and the 3 sends.
func TestRetries_BelowTheBotHammerAndAreReported(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").Handle("/x", fetchtest.RetryAfter(http.StatusServiceUnavailable, "1")).
		Handle("/ok", fetchtest.HTML("ok"))
	var logs syncbuf.Buffer
	bot.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	bot.Transport = &retryablehttp.RoundTripper{Client: retrying(&http.Client{Transport: bot.Transport})}
	f := mustFetcher(t, bot)
	get(t, f, "http://a.test/ok", fetch.OK) // robots.txt and one page: one send each, no warning
	if strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("warned for single sends: %s", logs.String())
	}
	p, _ := f.Get(context.Background(), "http://a.test/x")
	if p == nil || p.Outcome == fetch.OK {
		t.Fatalf("page %+v", p)
	}
	reqs := w.RequestsTo("a.test", "/x")
	if len(reqs) != 3 {
		t.Fatalf("%d requests to /x, want 3", len(reqs))
	}
	if d := reqs[2].Start.Sub(reqs[0].Start); d >= 50*time.Millisecond {
		t.Errorf("3 requests over %v, want within 50ms", d)
	}
	if v := fetchtest.Violations(w.Requests(), fetchtest.HonoursRetryAfter()); len(v) == 0 {
		t.Error("no Retry-After violation recorded")
	}
	out := logs.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "retries belong above") ||
		!strings.Contains(out, "url=http://a.test/x") || !strings.Contains(out, "sends=3") {
		t.Errorf("no warning for the resends: %s", out)
	}
}

// The resends of a retrying Bot.Transport are reported for the robots.txt
// request too (the first to its host, outside any fetch's time limit).
func TestRetries_BelowTheBotReportedForRobotsTxt(t *testing.T) {
	w, bot := loopback(t)
	w.Host("a.test").Handle("/robots.txt", fetchtest.RetryAfter(http.StatusServiceUnavailable, "1"))
	var logs syncbuf.Buffer
	bot.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	bot.Transport = &retryablehttp.RoundTripper{Client: retrying(&http.Client{Transport: bot.Transport})}
	f := mustFetcher(t, bot)
	f.Get(context.Background(), "http://a.test/page")
	if n := w.Count("a.test", "/robots.txt"); n != 3 {
		t.Fatalf("%d requests for robots.txt, want 3", n)
	}
	if out := logs.String(); !strings.Contains(out, "retries belong above") ||
		!strings.Contains(out, "url=http://a.test/robots.txt") || !strings.Contains(out, "sends=3") {
		t.Errorf("no warning for the robots.txt resends: %s", out)
	}
}
