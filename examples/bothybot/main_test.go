package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/bothy"
	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/profiles"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// lastmod is the sites' publication date: a month before the test's
// (fake) start, so that sitemap lastmods are in the past.
var lastmod time.Time

// parish is a site with robots.txt groups for BothyBot's former names, a
// sitemap, linked pages with validators, and one page behind a challenge.
func parish(robots string) *fetchtest.Web {
	lastmod = time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Second).UTC()
	w := fetchtest.New()
	h := w.Host("parish.test")
	h.Handle("/robots.txt", fetchtest.Robots(robots))
	h.Handle("/", fetchtest.Page{Body: `<a href="/mass">Mass</a> <a href="/staff/rota">rota</a> <a href="/archive/1">old</a> <a href="/visit">visit</a>
		<a href="/news" rel="nofollow">news</a> <a href="http://elsewhere.test/">away</a>`, ETag: `"h1"`, LastModified: lastmod})
	h.Handle("/mass", fetchtest.Page{Body: `<p>Sunday 10am</p><a href="/">home</a>`, ETag: `"m1"`, LastModified: lastmod})
	h.Handle("/visit", fetchtest.HTML(`<p>Only linked from the home page</p>`))
	h.Handle("/contact", fetchtest.Page{Body: `<p>Call us</p>`, ETag: `"c1"`, LastModified: lastmod})
	h.Handle("/staff/rota", fetchtest.HTML("rota"))
	h.Handle("/archive/1", fetchtest.HTML("archive"))
	h.Handle("/hidden", fetchtest.HTML("not linked, not in the sitemap"))
	h.Handle("/protected", fetchtest.Challenge(http.StatusOK))
	setSitemap(w, nil)
	w.Host("elsewhere.test").Fallback(fetchtest.HTML("other site"))
	return w
}

func setSitemap(w *fetchtest.Web, moved map[string]time.Time) {
	var urls []fetchtest.SitemapURL
	for _, p := range []string{"/", "/mass", "/contact", "/protected"} {
		lm := lastmod
		if t, ok := moved[p]; ok {
			lm = t
		}
		urls = append(urls, fetchtest.SitemapURL{Loc: "http://parish.test" + p, LastMod: lm})
	}
	w.Host("parish.test").Handle("/sitemap.xml", fetchtest.Sitemap(urls...))
}

const formerNames = `User-agent: BothyBot
Crawl-delay: 3

User-agent: CleatBot
Disallow: /staff/

User-agent: UnvarnishedCrawler
Disallow: /archive/

User-agent: *
Disallow: /

Sitemap: http://parish.test/sitemap.xml
`

// crawlArgs are a signed run's arguments over the state file (a new one
// when state is "").
func crawlArgs(t *testing.T, state string, extra ...string) []string {
	return bottest.Args(t, signingtest.BothyKey(), state, extra...)
}

// runs returns what runs the bot over w with args and extra, each run
// expected to exit 0, after w's record of requests is emptied.
func runs(t *testing.T, w *fetchtest.Web, args []string) func(extra ...string) *bottest.Output {
	return func(extra ...string) *bottest.Output {
		t.Helper()
		w.Reset()
		return bottest.Run(t, bothy.Run, w, 0, append(append([]string(nil), args...), extra...)...)
	}
}

// paths are the paths of reqs, in order.
func paths(reqs []fetchtest.Request) []string {
	var p []string
	for _, r := range reqs {
		p = append(p, r.Path)
	}
	return p
}

// -h documents the flags, with sane defaults.
func TestBothy_Help(t *testing.T) {
	bottest.CheckHelp(t, bothy.Run, "-key", "-genkey", "-max-pages", "-fresh", "-out")
}

// B1 B2 B3 B4 B5 B7 B12: a full crawl of a site with former-name groups.
func TestBothy_B1_B2_B3_B5_B7_B12_Crawl(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := parish(formerNames)
		out := bottest.Run(t, bothy.Run, w, 0, crawlArgs(t, "", "http://parish.test/")...)
		w.Check(t,
			fetchtest.AtLeast("parish.test", 7),                              // robots, sitemap, /, /mass, /contact, /visit, /protected
			fetchtest.UserAgent(profiles.BothyUA),                            // B1
			fetchtest.Signed(bottest.Verifier(t, signingtest.BothyKey())),    // B2
			fetchtest.HeaderIs("Signature-Agent", "https://bothy.tools"),     // B2
			fetchtest.NotFetched("parish.test", "/staff/rota", "/archive/1"), // B3: former names' blocks hold
			fetchtest.NoOverlap(),                                            // B5
			fetchtest.NotFetched("parish.test", "/hidden", "/news"),          // B7: sitemap and (followed) links only
			fetchtest.None("elsewhere.test"),                                 // B7: never leaves the site
			fetchtest.NoCookies(), fetchtest.OnlyGetHead(), fetchtest.NoCredentials(),
		)
		gaps(t, w, 7, 3*time.Second) // B4: Crawl-delay 3 honoured, exactly
		// B12: the site owner's WAF rule matches every request, robots.txt included.
		for _, r := range w.Requests() {
			if !strings.Contains(r.Header.Get("User-Agent"), "BothyBot") || !strings.Contains(r.Header.Get("Signature-Agent"), "bothy.tools") {
				t.Errorf("B12: %s does not match the WAF rule", r.URL())
			}
		}
		if reqs := w.Requests(); len(reqs) == 0 || w.Count("parish.test", "/robots.txt") != 1 || reqs[0].Path != "/robots.txt" {
			t.Errorf("robots.txt not read first, once: %d requests", len(reqs))
		}
		// B7: the challenge is a no, recorded as one.
		if r, ok := out.Result("http://parish.test/protected"); !ok || r.Outcome != "blocked" {
			t.Errorf("B7: challenge page result %+v", r)
		}
		for _, p := range []string{"/", "/mass", "/contact", "/visit"} { // B7: sitemap pages and public links
			if r, _ := out.Result("http://parish.test" + p); r.Outcome != "ok" {
				t.Errorf("%s: %+v", p, r)
			}
		}
		for _, p := range []string{"/staff/rota", "/archive/1"} { // B3: recorded, never requested
			if r, _ := out.Result("http://parish.test" + p); r.Outcome != "disallowed" || r.Status != 0 {
				t.Errorf("B3: %s: %+v", p, r)
			}
		}
	})
}

// gaps checks that the crawl of parish.test made at least n requests and
// that every request started exactly want after the previous one ended (in
// fake time, so exactly: a longer wait is as broken as a shorter one).
func gaps(t *testing.T, w *fetchtest.Web, n int, want time.Duration) {
	t.Helper()
	reqs := w.RequestsTo("parish.test")
	if len(reqs) < n {
		t.Fatalf("%d requests to parish.test, want at least %d", len(reqs), n)
	}
	for i := 1; i < len(reqs); i++ {
		if gap := reqs[i].Start.Sub(reqs[i-1].End); gap != want {
			t.Errorf("gap before %s (#%d) was %v, want %v", reqs[i].Path, i, gap, want)
		}
	}
}

// B4: a Crawl-delay above 60 s is treated as 60 s: every gap is 60 s.
func TestBothy_B4_CrawlDelayCappedAt60s(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := parish("User-agent: BothyBot\nCrawl-delay: 100\nDisallow: /protected\n\nSitemap: http://parish.test/sitemap.xml\n")
		bottest.Run(t, bothy.Run, w, 0, crawlArgs(t, "", "http://parish.test/")...)
		w.Check(t, fetchtest.NoOverlap())
		gaps(t, w, 6, 60*time.Second) // robots, /, sitemap, /mass, /contact, /visit
	})
}

// B6: a Retry-After above one hour is held to one hour, after which the host
// is crawled again (the backoff's doubling on repeats is proven by
// politeness's TestTransport_B6_DefaultBackoffDoubles).
func TestBothy_B6_RetryAfterCappedAtAnHour(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := parish("User-agent: *\nAllow: /\n\nSitemap: http://parish.test/sitemap.xml\n")
		w.Host("parish.test").Handle("/mass", fetchtest.Sequence(fetchtest.RetryAfter(http.StatusTooManyRequests, "7200"), fetchtest.HTML("mass")))
		bottest.Run(t, bothy.Run, w, 0, crawlArgs(t, "", "http://parish.test/")...)
		w.Check(t, fetchtest.NoOverlap())
		reqs := w.RequestsTo("parish.test")
		capped := false
		for i := 0; i+1 < len(reqs); i++ {
			if reqs[i].Status == http.StatusTooManyRequests {
				if gap := reqs[i+1].Start.Sub(reqs[i].End); gap != time.Hour {
					t.Errorf("B6: Retry-After 7200 followed after %v, want one hour", gap)
				}
				capped = true
			}
		}
		if !capped || w.Count("parish.test", "/mass") != 2 {
			t.Errorf("B6: 429 seen %v, /mass fetched %d times, want the 429 then the page", capped, w.Count("parish.test", "/mass"))
		}
	})
}

// B5: without a Crawl-delay, one request at a time, 2 s apart.
func TestBothy_B5_TwoSecondsApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := parish("User-agent: *\nAllow: /\n\nSitemap: http://parish.test/sitemap.xml\n")
		bottest.Run(t, bothy.Run, w, 0, crawlArgs(t, "", "http://parish.test/")...)
		w.Check(t, fetchtest.NoOverlap())
		gaps(t, w, 9, 2*time.Second) // robots, /, sitemap, /mass, /contact, /protected, /staff/rota, /archive/1, /visit
	})
}

// B6: 429 with Retry-After pauses the whole host that long; without it, one
// minute; afterwards the host is crawled more slowly.
func TestBothy_B6_RetryAfterPausesHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := parish("User-agent: *\nAllow: /\n\nSitemap: http://parish.test/sitemap.xml\n")
		h := w.Host("parish.test")
		h.Handle("/mass", fetchtest.Sequence(fetchtest.RetryAfter(http.StatusTooManyRequests, "120"), fetchtest.HTML("mass")))
		h.Handle("/contact", fetchtest.Sequence(fetchtest.RetryAfter(http.StatusServiceUnavailable, ""), fetchtest.HTML("contact")))
		out := bottest.Run(t, bothy.Run, w, 0, crawlArgs(t, "", "http://parish.test/")...)
		w.Check(t, fetchtest.HonoursRetryAfter(), fetchtest.NoOverlap())
		reqs := w.RequestsTo("parish.test")
		var sawBackoff, slower, retried bool
		for i, r := range reqs {
			if r.Status == http.StatusServiceUnavailable && i+1 < len(reqs) {
				if gap := reqs[i+1].Start.Sub(r.End); gap == time.Minute {
					sawBackoff = true
				} else {
					t.Errorf("B6: 503 without Retry-After followed after %v, want 1m", gap)
				}
			}
			if r.Status == http.StatusTooManyRequests && i+2 < len(reqs) && reqs[i+2].Start.Sub(reqs[i+1].End) > 2*time.Second {
				slower = true
			}
			if r.Path == "/mass" && r.Status == http.StatusOK {
				retried = true
			}
		}
		if !retried {
			t.Error("B6: the rate-limited page was not fetched after the pause")
		}
		if !sawBackoff {
			t.Errorf("B6: no backoff seen; requests: %d\n%s", len(reqs), out.Stderr)
		}
		if !slower {
			for _, r := range reqs {
				t.Logf("%s %s %d", r.Start.Format("15:04:05.000"), r.Path, r.Status)
			}
			t.Errorf("B6: host not crawled more slowly after the pause")
		}
		var paused bool
		for _, e := range out.Events {
			if e.Kind == "pause" {
				paused = true
			}
		}
		if !paused {
			t.Error("B6: no pause event observed")
		}
	})
}

// B8 B9 B11: a second full crawl costs 304s; -fresh on an unchanged site is one
// request in all (robots.txt cached in the state file); after a page's
// lastmod moves, only that page is refetched, with Cache-Control: no-cache;
// robots.txt is read again once a day has passed.
func TestBothy_B8_B9_B11_FreshnessFromState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := parish(formerNames)
		run := runs(t, w, crawlArgs(t, ""))
		run("http://parish.test/")

		// B8: a second crawl sends the validators and gets 304s.
		time.Sleep(time.Hour)
		run("http://parish.test/")
		for _, r := range w.RequestsTo("parish.test", "/mass") {
			if r.Header.Get("If-None-Match") != `"m1"` || r.Header.Get("If-Modified-Since") == "" || r.Status != http.StatusNotModified {
				t.Errorf("B8: refetch of /mass: INM %q IMS %q status %d", r.Header.Get("If-None-Match"), r.Header.Get("If-Modified-Since"), r.Status)
			}
		}
		if n := w.Count("parish.test", "/robots.txt"); n != 0 {
			t.Errorf("B11: robots.txt fetched again within the day (%d)", n)
		}

		// B9: nothing published: one request in all.
		time.Sleep(time.Hour)
		run("-fresh", "http://parish.test/")
		if reqs := w.Requests(); len(reqs) != 1 || reqs[0].Path != "/sitemap.xml" {
			t.Errorf("B9: unchanged site cost %d requests %v, want just the sitemap", len(reqs), paths(reqs))
		}

		// B9: one page moved: sitemap + that page, with no-cache, paced as a crawl.
		time.Sleep(time.Hour)
		setSitemap(w, map[string]time.Time{"/mass": lastmod.Add(48 * time.Hour)})
		w.Host("parish.test").Handle("/mass", fetchtest.Page{Body: "new times", ETag: `"m2"`, LastModified: lastmod.Add(48 * time.Hour)})
		out := run("-fresh", "http://parish.test/")
		if reqs := w.Requests(); len(reqs) != 2 || reqs[1].Path != "/mass" || reqs[1].Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("B9: moved page: %d requests %v, want the sitemap, then /mass with no-cache", len(reqs), reqs)
		}
		if r, _ := out.Result("http://parish.test/mass"); r.Outcome != "ok" || r.Status != 200 {
			t.Errorf("B9: moved page result %+v", r)
		}
		w.Check(t, fetchtest.MinGap(3*time.Second), fetchtest.UserAgent(profiles.BothyUA))

		// B11: a day later robots.txt is read again before anything else.
		time.Sleep(25 * time.Hour)
		run("-fresh", "http://parish.test/")
		if reqs := w.Requests(); len(reqs) == 0 || reqs[0].Path != "/robots.txt" {
			t.Errorf("B11: robots.txt not re-read after a day")
		}
	})
}

// Without a key the bot refuses to run and says how to make one; -genkey
// writes one and prints the JWKS.
func TestBothy_KeyRequired(t *testing.T) {
	bottest.CheckKeyRequired(t, bothy.Run, parish(formerNames), profiles.KeyDirectory(profiles.BothyAgent), "http://parish.test/")
	// -genkey prints the Signature Agent Card too, made from the profile.
	out := bottest.Run(t, bothy.Run, parish(formerNames), 0, "-genkey", filepath.Join(t.TempDir(), "k.pem"))
	for _, want := range []string{`"client_id": "https://bothy.tools/bot/signature-agent-card.json"`, `"rfc9309-product-token": "BothyBot"`,
		`"expected-user-agent": "BothyBot/1.0 (+https://bothy.tools/bot)"`, `"rate-expectation": "max=0.5rps per host; one request at a time per host"`} {
		if out.Code != 0 || !strings.Contains(out.Stdout, want) {
			t.Errorf("-genkey: exit %d, no %s in\n%s", out.Code, want, out.Stdout)
		}
	}
}

// Bad input: an unreachable site, a site that answers garbage, a bad URL and
// a corrupt state file are reported; the other site is still crawled and the
// corrupt file is kept aside, not overwritten.
func TestBothy_BadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := parish("User-agent: *\nAllow: /\n")
		w.Host("dead.test").Fallback(fetchtest.Reset())
		garbage := string([]byte{0x00, 0xff, 0xfe, '<', 'a', ' ', 'h', 'r', 'e', 'f', '=', 0x01, '>', 0x8f})
		w.Host("junk.test").Handle("/robots.txt", fetchtest.Text("text/plain", garbage))
		w.Host("junk.test").Fallback(fetchtest.Page{Body: garbage + "<a href='/x'>" + garbage, ContentType: "text/html"})
		state := filepath.Join(t.TempDir(), "s.db")
		if err := os.WriteFile(state, []byte(strings.Repeat("corrupt ", 2000)), 0o600); err != nil {
			t.Fatal(err)
		}
		out := bottest.Run(t, bothy.Run, w, 3, crawlArgs(t, state, "http://dead.test/", "ftp://x", "http://junk.test/", "http://parish.test/")...)
		if r, _ := out.Result("http://parish.test/mass"); r.Outcome != "ok" {
			t.Errorf("good site not crawled after bad ones: %+v", r)
		}
		if r, _ := out.Result("http://junk.test/"); r.Outcome != "ok" {
			t.Errorf("garbage page: %+v", r)
		}
		if !strings.Contains(out.Stderr, `"ftp://x" is not an http(s) URL`) {
			t.Errorf("no clear message for the bad URL:\n%s", out.Stderr)
		}
		if kept, _ := filepath.Glob(state + ".corrupt-*"); len(kept) != 1 || !strings.Contains(out.Stderr, "state file is corrupt") {
			t.Errorf("corrupt state not kept aside with a message: %v", kept)
		}
	})
}

// Bad input and interrupted runs: the documented exit status (1 could not
// run, 3 some work failed), one clear line, the rest of the work done.
func TestBothy_ExitStatus(t *testing.T) {
	bottest.CheckExitStatus(t, bothy.Run, signingtest.BothyKey(), bottest.CrawlCases("-out"))
}
