package fetch_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
)

// getAll fetches urls concurrently and returns the outcomes by URL.
func getAll(f *fetch.Fetcher, urls []string) map[string]fetch.Outcome {
	var mu sync.Mutex
	out := map[string]fetch.Outcome{}
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Go(func() {
			p, _ := f.Get(context.Background(), u)
			mu.Lock()
			defer mu.Unlock()
			if p != nil {
				out[u] = p.Outcome
			}
		})
	}
	wg.Wait()
	return out
}

func pages(host string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("http://%s/p%d", host, i))
	}
	return out
}

// C3, B5, D10: concurrent fetches to one host never overlap, and the gap
// from one response's end to the next request is at least the delay (2 s,
// or the Crawl-delay when larger), robots.txt included. Other hosts run
// alongside (S11).
func TestPacing_C3_B5_OneAtATimeWithGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "User-agent: *\nAllow: /\n").Fallback(fetchtest.Slow(300*time.Millisecond, fetchtest.HTML("p")))
		site(w, "b.test", "User-agent: *\nCrawl-delay: 10\n").Fallback(fetchtest.HTML("p"))
		bot := memBot(w)
		bot.Politeness.MinDelay = 2 * time.Second
		f := mustFetcher(t, bot)
		start := time.Now()
		out := getAll(f, append(pages("a.test", 5), pages("b.test", 3)...))
		for u, o := range out {
			if o != fetch.OK {
				t.Errorf("%s: %v", u, o)
			}
		}
		// a.test: robots + 5 pages, 2 s gaps and 0.3 s each; b.test: robots + 3, 10 s gaps.
		if d := time.Since(start); d != 30*time.Second {
			t.Errorf("took %v, want 30s (b.test's three 10 s gaps, run alongside a.test)", d)
		}
		w.Check(t, fetchtest.NoOverlap(), fetchtest.MinGapOn("a.test", 2*time.Second), fetchtest.MinGapOn("b.test", 10*time.Second))
	})
}

// D10: over real loopback too, many checks for one host never overlap.
func TestPacing_D10_NoOverlapLoopback(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").Fallback(fetchtest.Slow(5*time.Millisecond, fetchtest.HTML("p")))
	f := mustFetcher(t, bot)
	out := getAll(f, pages("a.test", 8))
	if len(out) != 8 {
		t.Fatalf("outcomes %v", out)
	}
	w.Check(t, fetchtest.NoOverlap())
}

// C4, B6: a 429 with Retry-After pauses the whole host, not just the URL;
// without Retry-After a 503 pauses it a minute.
func TestPacing_C4_RateLimitPausesHost(t *testing.T) {
	tests := []struct {
		name    string
		handler http.Handler
		pause   time.Duration
		checks  []fetchtest.Check // beyond AtLeast and NoOverlap
	}{
		{"429 Retry-After 120", fetchtest.RetryAfter(http.StatusTooManyRequests, "120"), 120 * time.Second, []fetchtest.Check{fetchtest.HonoursRetryAfter()}},
		{"503 without Retry-After", fetchtest.RetryAfter(http.StatusServiceUnavailable, ""), time.Minute, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				site(w, "a.test", "").Handle("/limited", tt.handler).Handle("/other", fetchtest.HTML("o"))
				f := mustFetcher(t, memBot(w))
				p := get(t, f, "http://a.test/limited", fetch.RateLimited)
				if p.Status != http.StatusTooManyRequests && p.Status != http.StatusServiceUnavailable {
					t.Errorf("status %d", p.Status)
				}
				sent := time.Now()
				get(t, f, "http://a.test/other", fetch.OK)
				if d := time.Since(sent); d != tt.pause {
					t.Errorf("next request to the host after %v, want %v", d, tt.pause)
				}
				w.Check(t, append(tt.checks, fetchtest.AtLeast("a.test", 3), fetchtest.NoOverlap())...)
			})
		})
	}
}

// S6: 509 pauses the site when the bot lists it.
func TestPacing_S6_509(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "").Handle("/x", fetchtest.RetryAfter(509, "30")).Handle("/y", fetchtest.HTML("y"))
		bot := memBot(w)
		bot.Politeness.RateLimitStatuses = []int{429, 503, 509}
		f := mustFetcher(t, bot)
		get(t, f, "http://a.test/x", fetch.RateLimited)
		get(t, f, "http://a.test/y", fetch.OK)
		w.Check(t, fetchtest.HonoursRetryAfter())
	})
}

// H4: a Retry-After longer than the bot will wait makes it give up on the
// site instead of coming back early.
func TestPacing_H4_GiveUpOnLongRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "").Handle("/x", fetchtest.RetryAfter(http.StatusTooManyRequests, "7200")).Handle("/y", fetchtest.HTML("y"))
		bot := memBot(w)
		bot.Politeness.MaxRetryAfter = time.Hour
		bot.Politeness.RetryAfterMode = politeness.GiveUp
		f := mustFetcher(t, bot)
		get(t, f, "http://a.test/x", fetch.RateLimited)
		get(t, f, "http://a.test/y", fetch.GaveUp)
		w.Check(t, fetchtest.HonoursRetryAfter(), fetchtest.NotFetched("a.test", "/y"))
	})
}

// Chain order: the robots gate runs before politeness, so a disallowed URL
// is refused at once instead of waiting for the host's turn; an allowed one
// waits its gap.
func TestPacing_ChainOrder_RobotsBeforePoliteness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "User-agent: *\nDisallow: /private\n").Fallback(fetchtest.HTML("p"))
		bot := memBot(w)
		bot.Politeness.MinDelay = 10 * time.Second
		f := mustFetcher(t, bot)
		get(t, f, "http://a.test/one", fetch.OK) // robots.txt, 10 s, /one
		start := time.Now()
		get(t, f, "http://a.test/private", fetch.Disallowed)
		if d := time.Since(start); d != 0 {
			t.Errorf("a disallowed URL waited %v for politeness", d)
		}
		get(t, f, "http://a.test/two", fetch.OK)
		if d := time.Since(start); d != 10*time.Second {
			t.Errorf("allowed URL after %v, want 10s", d)
		}
	})
}

// The robots.txt copy kept for the gap after its own fetch (its
// Crawl-delay) is let go once that gap is set, whether or not a page of
// the site is fetched after it: a crawl of many sites whose robots.txt
// disallows everything holds no copy beyond the robots cache's own.
func TestPacing_RobotsCopyForTheGapIsLetGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		var urls []string
		for i := range 20 {
			host := fmt.Sprintf("s%d.test", i)
			rules := "User-agent: *\nCrawl-delay: 3\n"
			if i%2 == 0 {
				rules += "Disallow: /\n" // nothing fetched after robots.txt
			}
			site(w, host, rules).Fallback(fetchtest.HTML("p"))
			urls = append(urls, "http://"+host+"/p")
		}
		f := mustFetcher(t, memBot(w))
		for u, o := range getAll(f, urls) {
			if want := fetch.OK; o != want && o != fetch.Disallowed {
				t.Errorf("%s: %v", u, o)
			}
		}
		if n := fetch.PendingRobots(f); n != 0 {
			t.Errorf("%d robots.txt copies held outside the cache after the crawl, want 0", n)
		}
		w.Check(t, fetchtest.MinGapOn("s1.test", 3*time.Second))
	})
}

// B5: robots.txt fetched again with a new Crawl-delay (7 s, was 5 s)
// sets the gap after its own fetch, and the gap after every page that ends
// later, also a page admitted under the older copy: /p1 is admitted while
// the first copy is fresh and waits for its gap while robots.txt is
// fetched again; /p1 goes 7 s after that fetch, /p2 7 s after /p1.
func TestPacing_B5_GapAfterPageFollowsTheCurrentCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		start := time.Now()
		var mu sync.Mutex
		sent := map[string]time.Duration{}
		page := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			mu.Lock()
			sent[r.URL.Path] = time.Since(start)
			mu.Unlock()
			fetchtest.HTML("p").ServeHTTP(rw, r)
		})
		w.Host("a.test").
			Handle("/robots.txt", fetchtest.Sequence(fetchtest.Robots("User-agent: *\nCrawl-delay: 5\n"),
				fetchtest.Robots("User-agent: *\nCrawl-delay: 7\n"))).
			Fallback(page)
		bot := memBot(w)
		bot.RobotsTTL = 8 * time.Second
		bot.Politeness.MinDelay = time.Second
		f := mustFetcher(t, bot)
		get(t, f, "http://a.test/p0", fetch.OK) // robots.txt at 0 s, /p0 at 5 s
		var wg sync.WaitGroup
		time.Sleep(time.Second) // 6 s: the first copy is fresh
		wg.Go(func() {          // off the test's goroutine: no Fatal
			if p, err := f.Get(context.Background(), "http://a.test/p1"); p == nil || p.Outcome != fetch.OK {
				t.Errorf("Get(/p1): %v", err)
			}
		})
		time.Sleep(3 * time.Second) // 9 s: stale, fetched again at 10 s
		u, _ := url.Parse("http://a.test/")
		if _, err := f.Robots().Get(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		get(t, f, "http://a.test/p2", fetch.OK)
		if got, want := sent["/p1"], 17*time.Second; got != want {
			t.Errorf("/p1 sent at %v, want %v (7 s after robots.txt was fetched again)", got, want)
		}
		if got, want := sent["/p2"]-sent["/p1"], 7*time.Second; got != want {
			t.Errorf("/p2 sent %v after /p1, want %v", got, want)
		}
	})
}
