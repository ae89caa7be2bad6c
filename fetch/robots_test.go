package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
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

var errIs = errors.Is

// C1: robots.txt is read before the first request to each origin and
// obeyed; every later request to the origin uses the cached copy.
func TestRobots_C1_ReadFirstAndObeyed(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "User-agent: *\nDisallow: /private\nAllow: /private/ok$\n\nUser-agent: TestBot\nDisallow: /nottest\n").
		Handle("/private/ok", fetchtest.HTML("ok")).
		Handle("/page", fetchtest.HTML("page")).
		Handle("/nottest", fetchtest.HTML("x"))
	site(w, "b.test", "User-agent: *\nDisallow: /\n")
	f := mustFetcher(t, bot)

	get(t, f, "http://a.test/page", fetch.OK)
	get(t, f, "http://a.test/private", fetch.OK) // TestBot's own group wins over *
	get(t, f, "http://a.test/nottest", fetch.Disallowed)
	get(t, f, "http://A.TEST/Nottest", fetch.OK) // paths are case-sensitive
	get(t, f, "http://b.test/", fetch.Disallowed)
	get(t, f, "http://a.test:80/page", fetch.OK) // same origin

	reqs := w.Requests()
	if reqs[0].Path != "/robots.txt" || reqs[0].Host != "a.test" {
		t.Errorf("first request was %s", reqs[0].URL())
	}
	if n := w.Count("a.test", "/robots.txt"); n != 1 {
		t.Errorf("a.test robots.txt fetched %d times, want 1", n)
	}
	if n := w.Count("b.test", ""); n != 1 {
		t.Errorf("b.test got %d requests, want only robots.txt", n)
	}
	w.Check(t, w.ObeysRobots(testAgent), fetchtest.NotFetched("a.test", "/nottest"), fetchtest.RobotsFirst())
}

// C2, H5, D8: robots.txt fetch outcomes. 4xx allows all; 5xx, a reset or a
// timeout closes the site (Unreachable, distinct from a rule); redirects
// are followed.
func TestRobots_C2_H5_D8_Outcomes(t *testing.T) {
	tests := []struct {
		name   string
		robots http.Handler
		want   fetch.Outcome
	}{
		{"missing", nil, fetch.OK},
		{"404", fetchtest.Status(http.StatusNotFound), fetch.OK},
		{"403", fetchtest.Status(http.StatusForbidden), fetch.OK},
		{"500", fetchtest.Status(http.StatusInternalServerError), fetch.Unreachable},
		{"503", fetchtest.RetryAfter(http.StatusServiceUnavailable, ""), fetch.Unreachable},
		{"reset", fetchtest.Reset(), fetch.Unreachable},
		{"redirect to disallow", fetchtest.Redirect("/real-robots.txt", http.StatusMovedPermanently), fetch.Disallowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, bot := loopback(t)
			h := w.Host("a.test").Handle("/", fetchtest.HTML("home")).
				Handle("/real-robots.txt", fetchtest.Robots("User-agent: *\nDisallow: /\n"))
			if tt.robots != nil {
				h.Handle("/robots.txt", tt.robots)
			}
			bot.Politeness.BreakerThreshold = -1
			f := mustFetcher(t, bot)
			p := get(t, f, "http://a.test/", tt.want)
			if tt.want == fetch.Unreachable {
				_, err := f.Get(context.Background(), "http://a.test/")
				if !errors.Is(err, robots.ErrUnreachable) || !errors.Is(err, robots.ErrDisallowed) {
					t.Errorf("err %v: want robots.ErrUnreachable", err)
				}
				if p.Status != 0 {
					t.Errorf("status %d for a page never fetched", p.Status)
				}
			}
			if tt.want != fetch.OK {
				w.Check(t, fetchtest.NotFetched("a.test", "/"))
			}
		})
	}
}

// D8, H5: a robots.txt that does not answer within the robots timeout means
// the page is not fetched (in fake time: the 10 s timeout passes at once).
func TestRobots_D8_TimeoutMeansNotFetched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		w.Host("a.test").Handle("/robots.txt", fetchtest.Hang()).Handle("/", fetchtest.HTML("home"))
		bot := memBot(w)
		bot.RobotsTimeout = 10 * time.Second
		f := mustFetcher(t, bot)
		start := time.Now()
		get(t, f, "http://a.test/", fetch.Unreachable)
		if d := time.Since(start); d != 10*time.Second {
			t.Errorf("gave up after %v, want the 10s robots timeout", d)
		}
		synctest.Wait()
		w.Check(t, fetchtest.NotFetched("a.test", "/"))
	})
}

// C1: a redirect into a disallowed path is not followed: robots is checked
// on every hop, also on another host.
func TestRobots_C1_RedirectIntoDisallowedNotFetched(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "User-agent: *\nDisallow: /private\n").
		Handle("/go", fetchtest.Redirect("/private/x", 0)).
		Handle("/away", fetchtest.Redirect("http://b.test/secret", 0))
	site(w, "b.test", "User-agent: *\nDisallow: /secret\n")
	f := mustFetcher(t, bot)
	p := get(t, f, "http://a.test/go", fetch.Disallowed)
	if p.FinalURL != "http://a.test/private/x" {
		t.Errorf("FinalURL %q", p.FinalURL)
	}
	get(t, f, "http://a.test/away", fetch.Disallowed)
	w.Check(t, w.ObeysRobots(testAgent), fetchtest.NotFetched("a.test", "/private/x"), fetchtest.NotFetched("b.test", "/secret"))
	if w.Count("b.test", "/robots.txt") != 1 {
		t.Error("b.test robots.txt not read before the redirect hop")
	}
}

// H5: while robots.txt answers a server error the whole site stops (robots.txt
// itself is asked again at most once a minute); once it is readable, the
// site opens again.
func TestRobots_H5_SiteStopsUntilReadable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		w.Host("a.test").Handle("/robots.txt", fetchtest.Sequence(
			fetchtest.Status(http.StatusInternalServerError),
			fetchtest.Status(http.StatusBadGateway),
			fetchtest.Robots("User-agent: *\nAllow: /\n"))).
			Fallback(fetchtest.HTML("p"))
		bot := memBot(w)
		bot.RobotsRetry = 5 * time.Minute
		f := mustFetcher(t, bot)
		for _, p := range []string{"/a", "/b", "/c"} {
			get(t, f, "http://a.test"+p, fetch.Unreachable)
		}
		time.Sleep(4 * time.Minute)
		get(t, f, "http://a.test/a", fetch.Unreachable) // still closed, robots.txt not asked
		time.Sleep(time.Minute)
		get(t, f, "http://a.test/a", fetch.Unreachable) // 502 now
		time.Sleep(5 * time.Minute)
		get(t, f, "http://a.test/a", fetch.OK)
		if n := w.Count("a.test", "/robots.txt"); n != 3 {
			t.Errorf("robots.txt asked %d times, want 3", n)
		}
		w.Check(t, fetchtest.NotFetched("a.test", "/b", "/c"), fetchtest.NoOverlap())
	})
}

// Fetcher.Robots gives the copy the Fetcher read, without a second request.
func TestRobots_FetcherCache(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "Sitemap: http://a.test/sitemap.xml\n")
	f := mustFetcher(t, bot)
	get(t, f, "http://a.test/", fetch.OK)
	r, ok := f.Robots().Cached(&url.URL{Scheme: "http", Host: "a.test", Path: "/"})
	if !ok || len(r.Sitemaps()) != 1 || r.Sitemaps()[0] != "http://a.test/sitemap.xml" {
		t.Fatalf("cached copy %v %v", ok, r)
	}
	if n := w.Count("a.test", "/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times", n)
	}
}

// A robots.txt that trickles one byte a second, never ending, is abandoned
// at the robots time limit, not later: Bot.RobotsTimeout, or when zero the
// bot's own fetch time limit if shorter than 30 s, else 30 s. The page is not
// fetched. (Fake time: the elapsed times are exact.)
func TestRobots_D8_TrickleAbandonedAtTimeLimit(t *testing.T) {
	for _, tt := range []struct {
		name   string
		robots time.Duration
		limit  time.Duration
		want   time.Duration
	}{
		{"defaults", 0, 0, 30 * time.Second},
		{"fetch limit 15 s", 0, 15 * time.Second, 15 * time.Second},
		{"fetch limit 60 s", 0, 60 * time.Second, 30 * time.Second},
		{"no fetch limit", 0, -1, 30 * time.Second},
		{"RobotsTimeout 5 s", 5 * time.Second, 15 * time.Second, 5 * time.Second},
		{"RobotsTimeout 45 s", 45 * time.Second, 0, 45 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				w.Host("a.test").Handle("/robots.txt", fetchtest.Trickle(time.Second, strings.Repeat("#", 3600))).
					Handle("/", fetchtest.HTML("home"))
				bot := memBot(w)
				bot.RobotsTimeout = tt.robots
				bot.Limits.Timeout = tt.limit
				f := mustFetcher(t, bot)
				start := time.Now()
				get(t, f, "http://a.test/", fetch.Unreachable)
				if n := w.Count("a.test", "/robots.txt"); n != 1 {
					t.Fatalf("robots.txt asked %d times", n)
				}
				if d := time.Since(start); d != tt.want {
					t.Errorf("robots.txt abandoned after %v, want %v", d, tt.want)
				}
				synctest.Wait()
				w.Check(t, fetchtest.NotFetched("a.test", "/"))
			})
		})
	}
}

// A robots.txt answered with a bot challenge or block page, whatever its
// status, is not a robots.txt: the site is closed as if robots.txt were
// unreachable (never "allow everything", which a 200 page without rules or
// a 403 would mean), the page says why, and robots.txt is asked for again
// after the retry interval.
func TestRobots_ChallengeAnswerClosesSite(t *testing.T) {
	for _, tt := range []struct {
		name   string
		robots http.Handler
		want   fetch.Outcome
	}{
		{"challenge 200", fetchtest.Challenge(http.StatusOK), fetch.Unreachable},
		{"challenge 403", fetchtest.Challenge(http.StatusForbidden), fetch.Unreachable},
		{"challenge 404", fetchtest.Challenge(http.StatusNotFound), fetch.Unreachable},
		{"challenge 503", fetchtest.Challenge(http.StatusServiceUnavailable), fetch.Unreachable},
		{"rate-limit page 200", fetchtest.RateLimitPage(http.StatusOK), fetch.Unreachable},
		{"plain 403", fetchtest.Status(http.StatusForbidden), fetch.OK},              // a 4xx: allow all (RFC 9309)
		{"real robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n"), fetch.OK}, // the control: /private is fetched
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				w.Host("a.test").Handle("/robots.txt", tt.robots).Handle("/private", fetchtest.HTML("private"))
				bot := memBot(w)
				bot.RobotsRetry = time.Minute
				f := mustFetcher(t, bot)
				p, err := f.Get(context.Background(), "http://a.test/private")
				if w.Count("a.test", "/robots.txt") != 1 {
					t.Fatalf("robots.txt asked %d times", w.Count("a.test", "/robots.txt"))
				}
				if p.Outcome != tt.want {
					t.Fatalf("outcome %v (%v), want %v", p.Outcome, err, tt.want)
				}
				if tt.want == fetch.OK {
					return
				}
				var ce *challenge.ChallengeError
				if !errors.Is(err, robots.ErrUnreachable) || !errors.As(err, &ce) || !strings.Contains(err.Error(), "challenge") {
					t.Errorf("error does not say robots.txt was a challenge page: %v", err)
				}
				if p.Body != nil {
					t.Errorf("body returned: %q", p.Body)
				}
				time.Sleep(61 * time.Second)
				f.Get(context.Background(), "http://a.test/private")
				if n := w.Count("a.test", "/robots.txt"); n != 2 {
					t.Errorf("robots.txt asked %d times after the retry interval, want 2", n)
				}
				synctest.Wait()
				w.Check(t, fetchtest.NotFetched("a.test", "/private"))
			})
		})
	}
}

// The challenge check on robots.txt answers never mistakes a real robots.txt
// for a challenge page: each of the 898 real files of
// ../shared/robots-realworld, served with 200 as text/plain, is read as
// rules through the bot's chain, not as unreachable.
func TestRobots_RealFilesAreNotChallenges(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "robots-realworld")
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	if len(files) == 0 {
		if ci() {
			t.Fatalf("no robots.txt files in %s", dir)
		}
		t.Skipf("no robots.txt files in %s (the shared data is not here)", dir)
	}
	w := fetchtest.New()
	hosts := make([]string, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		hosts[i] = fmt.Sprintf("r%04d.test", i)
		w.Host(hosts[i]).Handle("/robots.txt", fetchtest.Text("text/plain", string(b)))
	}
	bot := memBot(w)
	bot.Politeness = politeness.Policy{MinDelay: -1}
	f := mustFetcher(t, bot)
	for i, h := range hosts {
		r, err := f.Robots().Get(context.Background(), &url.URL{Scheme: "http", Host: h, Path: "/"})
		if err != nil || r.Unreachable() {
			t.Errorf("%s: read as unreachable (%v)", files[i], err)
		}
	}
	if n := len(w.Requests()); n != len(files) {
		t.Fatalf("%d robots.txt requests for %d files", n, len(files))
	}
}
