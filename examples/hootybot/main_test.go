package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/hooty"
	"github.com/goodbot-go/goodbot/examples/internal/profiles"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

func docs(robots string) *fetchtest.Web {
	w := fetchtest.New()
	h := w.Host("docs.test")
	h.Handle("/robots.txt", fetchtest.Robots(robots))
	h.Handle("/", fetchtest.HTML(`<a href="/guide">Guide</a> <a href="/faq">FAQ</a> <a href="/manual.pdf">PDF</a>
		<a href="/export">Export</a> <a href="/internal/notes">Notes</a> <a href="/cart">Cart</a> <a href="/checkout">Pay</a>
		<a href="/login">Log in</a> <a href="/page.php">PHP</a> <a href="/page.php?x=1">PHP query</a> <a href="/shield">Shield</a>
		<form method="post" action="/subscribe"><a href="/in-form">in form</a></form>`))
	h.Handle("/guide", fetchtest.HTML(`<p>Guide</p><a href="/guide/2">next</a>`))
	h.Handle("/guide/2", fetchtest.HTML(`<p>Guide 2</p><a href="/guide/3">next</a>`))
	h.Handle("/guide/3", fetchtest.HTML(`<p>Guide 3</p>`))
	h.Handle("/faq", fetchtest.HTML(`<p>FAQ</p>`))
	h.Handle("/export", fetchtest.Text("text/csv", "a,b\n"))
	h.Handle("/shield", fetchtest.Challenge(http.StatusOK))
	h.Fallback(fetchtest.HTML("other"))
	return w
}

func args(t *testing.T, extra ...string) []string { return bottest.Args(t, nil, "", extra...) }

// -h documents the flags, with sane defaults.
func TestHooty_Help(t *testing.T) {
	bottest.CheckHelp(t, hooty.Run, "-max-pages", "-max-wait", "-out")
}

// H1 H2 H3 H7 H8: identity, robots.txt with * and $, pacing, HTML only, no
// forms/logins/carts/checkouts, challenges discarded and reported.
func TestHooty_H1_H2_H3_H7_H8_Crawl(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := docs("User-agent: HootyBot\nDisallow: /internal/\nDisallow: /*.php$\nCrawl-delay: 2\n\nUser-agent: *\nDisallow: /\n")
		outDir := t.TempDir()
		out := bottest.Run(t, hooty.Run, w, 0, args(t, "-out", outDir, "http://docs.test/")...)
		w.Check(t,
			fetchtest.AtLeast("docs.test", 9),                                         // robots, /, /guide, /guide/2, /guide/3, /faq, /export, /shield, /page.php?x=1
			fetchtest.UserAgent(profiles.HootyUA), fetchtest.From(profiles.HootyFrom), // H1
			fetchtest.Allowed(func(host, pq string) bool { // H2: HootyBot's group; $ anchors at the end
				return pq != "/page.php" && !strings.HasPrefix(pq, "/internal/")
			}),
			fetchtest.MinGap(2*time.Second), fetchtest.NoOverlap(), // H3: Crawl-delay, one at a time
			fetchtest.NotFetched("docs.test", "/manual.pdf", "/cart", "/checkout", "/login", "/subscribe", "/in-form"), // H7
			fetchtest.OnlyGetHead(), fetchtest.NoCookies(),
		)
		if reqs := w.Requests(); len(reqs) == 0 || reqs[0].Path != "/robots.txt" {
			t.Error("H2: robots.txt not first")
		}
		if reqs := w.RequestsTo("docs.test", "/page.php"); len(reqs) != 1 || reqs[0].RawQuery != "x=1" {
			t.Error("H2: /*.php$ must block /page.php but not /page.php?x=1")
		}
		bottest.CheckJSONFields(t, out, "http://docs.test/guide", map[string]any{ // issue 8's -json surface
			"final_url": "http://docs.test/guide", "status": 200.0, "outcome": "ok", "bytes": nil,
		})
		if r, _ := out.Result("http://docs.test/export"); r.Outcome != "not_html" {
			t.Errorf("H7: csv page: %+v", r)
		}
		if r, _ := out.Result("http://docs.test/shield"); r.Outcome != "blocked" {
			t.Errorf("H8: challenge with status 200: %+v", r)
		}
		if !strings.Contains(out.Stderr, "blocked by bot protection: page discarded") {
			t.Error("H8: block not reported")
		}
		if _, err := os.Stat(filepath.Join(outDir, "docs.test", "shield.txt")); err == nil {
			t.Error("H8: challenge page stored as content")
		}
		if _, err := os.Stat(filepath.Join(outDir, "docs.test", "guide.txt")); err != nil {
			t.Errorf("content page not stored: %v", err)
		}
	})
}

// H3: at least 0.5 s between requests without a Crawl-delay; H7: a bounded
// number of pages per site.
func TestHooty_H3_HalfSecond_H7_PageCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := docs("User-agent: *\nAllow: /\n")
		bottest.Run(t, hooty.Run, w, 0, args(t, "-max-pages", "3", "http://docs.test/")...)
		w.Check(t, fetchtest.NoOverlap())
		reqs := w.RequestsTo("docs.test")
		if n := len(reqs) - w.Count("docs.test", "/robots.txt"); n != 3 {
			t.Errorf("H7: %d pages fetched with -max-pages 3", n)
		}
		for i := 1; i < len(reqs); i++ { // fake time: exactly the promised half second
			if gap := reqs[i].Start.Sub(reqs[i-1].End); gap != 500*time.Millisecond {
				t.Errorf("H3: gap before %s was %v, want 500ms", reqs[i].Path, gap)
			}
		}
	})
}

// H4: Retry-After obeyed exactly; a longer wait than the bot accepts makes it
// give up on the site rather than come back early.
func TestHooty_H4_RetryAfterExactOrGiveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := docs("User-agent: *\nAllow: /\n")
		w.Host("docs.test").Handle("/guide", fetchtest.Sequence(fetchtest.RetryAfter(http.StatusTooManyRequests, "30"), fetchtest.HTML("guide")))
		w.Host("long.test").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n"))
		w.Host("long.test").Handle("/", fetchtest.HTML(`<a href="/a">a</a><a href="/b">b</a>`))
		w.Host("long.test").Handle("/a", fetchtest.RetryAfter(http.StatusServiceUnavailable, "7200"))
		out := bottest.Run(t, hooty.Run, w, 3, args(t, "-max-wait", "10m", "http://docs.test/", "http://long.test/")...) // 3: long.test given up
		w.Check(t, fetchtest.HonoursRetryAfter(), fetchtest.NoOverlap())
		reqs := w.RequestsTo("docs.test")
		waited := false
		for i := 0; i+1 < len(reqs); i++ {
			if reqs[i].Status == http.StatusTooManyRequests {
				if gap := reqs[i+1].Start.Sub(reqs[i].End); gap != 30*time.Second {
					t.Errorf("H4: Retry-After 30 followed after %v, want exactly 30s", gap)
				}
				waited = true
			}
		}
		if !waited || w.Count("docs.test", "/guide") != 2 {
			t.Errorf("H4: 429 seen %v, /guide fetched %d times, want the 429, then the page", waited, w.Count("docs.test", "/guide"))
		}
		if n := w.Count("long.test", "/a"); n != 1 {
			t.Errorf("H4: the page answering Retry-After 7200 was fetched %d times, want 1", n)
		}
		if n := w.Count("long.test", "/b"); n != 0 {
			t.Errorf("H4: came back to long.test after a 2 h Retry-After (%d requests)", n)
		}
		if r, _ := out.Result("http://long.test/b"); r.Outcome != "" && r.Outcome != "gave_up" {
			t.Errorf("H4: /b: %+v", r)
		}
		if w.Count("docs.test", "/faq") != 1 {
			t.Error("the other site was not crawled")
		}
	})
}

// H5: robots.txt answering 5xx: nothing else fetched until it is readable
// again; H9: robots.txt changes take effect within an hour.
func TestHooty_H5_RobotsServerError_H9_WithinAnHour(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := docs("")
		w.Host("docs.test").Handle("/robots.txt", fetchtest.Status(http.StatusInternalServerError))
		a := args(t)
		out := bottest.Run(t, hooty.Run, w, 3, append(a, "http://docs.test/")...)
		if w.Count("docs.test", "/robots.txt") == 0 {
			t.Error("H5: robots.txt never asked for")
		}
		if n := w.Count("docs.test", ""); n != w.Count("docs.test", "/robots.txt") {
			t.Errorf("H5: %d requests beyond robots.txt while it answered 500", n-w.Count("docs.test", "/robots.txt"))
		}
		if r, _ := out.Result("http://docs.test/"); r.Outcome != "unreachable" {
			t.Errorf("H5: %+v", r)
		}

		time.Sleep(61 * time.Minute)
		w.Host("docs.test").Handle("/robots.txt", fetchtest.Robots("User-agent: HootyBot\nDisallow: /guide\n"))
		w.Reset()
		bottest.Run(t, hooty.Run, w, 0, append(a, "http://docs.test/")...)
		if w.Count("docs.test", "/faq") != 1 {
			t.Error("H5: site not crawled once robots.txt was readable again")
		}

		time.Sleep(61 * time.Minute)
		w.Host("docs.test").Handle("/robots.txt", fetchtest.Robots("User-agent: HootyBot\nDisallow: /\n"))
		w.Reset()
		bottest.Run(t, hooty.Run, w, 3, append(a, "http://docs.test/")...) // 3: nothing the bot may read
		if n := w.Count("docs.test", ""); n != 1 || w.Count("docs.test", "/robots.txt") != 1 {
			t.Errorf("H9: a block written an hour ago not honoured: %d requests", n)
		}
	})
}

// H6: a server that stops answering is given up on.
func TestHooty_H6_DeadHostGivenUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := docs("User-agent: *\nAllow: /\n")
		h := w.Host("docs.test")
		for _, p := range []string{"/guide", "/faq", "/export", "/shield", "/guide/2", "/guide/3"} {
			h.Handle(p, fetchtest.Reset())
		}
		h.Fallback(fetchtest.Reset())
		out := bottest.Run(t, hooty.Run, w, 3, args(t, "http://docs.test/")...)
		if n := w.Count("docs.test", ""); n != 1+1+3 {
			t.Errorf("H6: %d requests to a dead host, want robots + home + at most 3 failures", n)
		}
		if !strings.Contains(out.Stderr, "giving up on site") && !strings.Contains(out.Stderr, "site stopped") {
			t.Errorf("H6: no give-up reported:\n%s", out.Stderr)
		}
	})
}

// Bad input and interrupted runs: the documented exit status (1 could not
// run, 3 some work failed), one clear line, the rest of the work done.
func TestHooty_ExitStatus(t *testing.T) {
	bottest.CheckExitStatus(t, hooty.Run, nil, bottest.CrawlCases("-out"))
}
