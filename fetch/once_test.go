package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/challenge"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// S8: with Once, a fetch that got no definitive answer (rate limited,
// unreachable, timed out) does not count as done: the next Get fetches the
// page again. Definitive answers (a page, 404, 401/403) keep the mark.
func TestOnce_S8_RetryableOutcomesReleaseTheMark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "").
			Handle("/busy", fetchtest.Sequence(fetchtest.Status(http.StatusTooManyRequests), fetchtest.HTML("ok"))).
			Handle("/down", fetchtest.Sequence(fetchtest.Status(http.StatusInternalServerError), fetchtest.HTML("ok"))).
			Handle("/reset", fetchtest.Sequence(fetchtest.Reset(), fetchtest.HTML("ok"))).
			Handle("/slow", fetchtest.Sequence(fetchtest.Hang(), fetchtest.HTML("ok"))).
			Handle("/gone", fetchtest.Status(http.StatusNotFound)).
			Handle("/private", fetchtest.Status(http.StatusForbidden))
		bot := memBot(w)
		bot.Once = true
		bot.Limits.Timeout = 10 * time.Second
		f := mustFetcher(t, bot)
		tests := []struct {
			path  string
			first fetch.Outcome
			then  fetch.Outcome
		}{
			{"/busy", fetch.RateLimited, fetch.OK},
			{"/down", fetch.Unreachable, fetch.OK},
			{"/reset", fetch.Unreachable, fetch.OK},
			{"/slow", fetch.Timeout, fetch.OK},
			{"/gone", fetch.OK, fetch.Duplicate},
			{"/private", fetch.AuthRequired, fetch.Duplicate},
		}
		for _, tt := range tests {
			u := "http://a.test" + tt.path
			get(t, f, u, tt.first)
			get(t, f, u, tt.then)
			get(t, f, u, fetch.Duplicate) // fetched for good now
			want := 1
			if tt.first.Retryable() {
				want = 2
			}
			if n := w.Count("a.test", tt.path); n != want {
				t.Errorf("%s: %d requests, want %d", tt.path, n, want)
			}
		}
	})
}

// S8: a cancelled Get gives its mark back too, even though its context is
// done when the mark is released.
func TestOnce_S8_CancelReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "").Handle("/p", fetchtest.Sequence(fetchtest.Hang(), fetchtest.HTML("ok")))
		bot := memBot(w)
		bot.Once = true
		f := mustFetcher(t, bot)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		getCtx(t, ctx, f, "http://a.test/p", fetch.Timeout)
		get(t, f, "http://a.test/p", fetch.OK)
	})
}

// S8: concurrent Gets of one URL fetch it once, also while its fetch ends
// retryably: the others end as Duplicate, not as a second request.
func TestOnce_S8_ConcurrentGetsFetchOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "").
			Handle("/p", fetchtest.Slow(time.Second, fetchtest.HTML("p"))).
			Handle("/busy", fetchtest.Slow(time.Second, fetchtest.Status(http.StatusServiceUnavailable)))
		bot := memBot(w)
		bot.Once = true
		f := mustFetcher(t, bot)
		for _, path := range []string{"/p", "/busy"} {
			u := "http://a.test" + path
			urls := []string{u, u, u, u, u, u}
			outs := make(chan fetch.Outcome, len(urls))
			for _, u := range urls {
				go func() {
					p, _ := f.Get(context.Background(), u)
					outs <- p.Outcome
				}()
			}
			dups := 0
			for range urls {
				if <-outs == fetch.Duplicate {
					dups++
				}
			}
			if dups != len(urls)-1 {
				t.Errorf("%s: %d duplicates, want %d", path, dups, len(urls)-1)
			}
			if n := w.Count("a.test", path); n != 1 {
				t.Errorf("%s: %d requests, want 1", path, n)
			}
		}
	})
}

// C6, C7, S8: a vendor's rate-limit page (Cloudflare 1015) is RateLimited,
// not Blocked: its body is not content, the error is typed both ways
// (ErrRateLimited and challenge.ErrChallenged with the verdict), the host is
// paused (429), and with Once the page is fetched again after the pause. A
// challenge to solve stays Blocked and keeps its mark.
func TestChallenge_C6_C7_RateLimitPageIsRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "").
			Handle("/limited", fetchtest.Sequence(fetchtest.RateLimitPage(http.StatusTooManyRequests), fetchtest.HTML("ok"))).
			Handle("/limited200", fetchtest.Sequence(fetchtest.RateLimitPage(http.StatusOK), fetchtest.HTML("ok"))).
			Handle("/challenge", fetchtest.Sequence(fetchtest.Challenge(http.StatusForbidden), fetchtest.HTML("ok")))
		bot := memBot(w)
		bot.Once = true
		f := mustFetcher(t, bot)
		for _, path := range []string{"/limited", "/limited200"} {
			u := "http://a.test" + path
			p, err := f.Get(context.Background(), u)
			var ce *challenge.ChallengeError
			if p.Outcome != fetch.RateLimited || p.Body != nil || p.Verdict.Kind != challenge.RateLimit ||
				!errors.Is(err, fetch.ErrRateLimited) || !errors.Is(err, challenge.ErrChallenged) ||
				!errors.As(err, &ce) || ce.Verdict.Vendor != "cloudflare" {
				t.Fatalf("%s: outcome %v, body %q, verdict %+v, err %v", path, p.Outcome, p.Body, p.Verdict, err)
			}
			start := time.Now()
			get(t, f, u, fetch.OK)
			if path == "/limited" && time.Since(start) != time.Minute {
				t.Errorf("refetch after %v, want the host paused the default backoff, 1m", time.Since(start))
			}
		}
		get(t, f, "http://a.test/challenge", fetch.Blocked)
		get(t, f, "http://a.test/challenge", fetch.Duplicate)
		w.Check(t, fetchtest.AtLeast("a.test", 6), fetchtest.NoOverlap())
	})
}
