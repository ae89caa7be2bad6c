package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/profiles"
	"github.com/goodbot-go/goodbot/examples/internal/readiness"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

func site() *fetchtest.Web {
	w := fetchtest.New()
	h := w.Host("school.test")
	h.Handle("/robots.txt", fetchtest.Robots("User-agent: CleatBot\nDisallow: /staff\n\nSitemap: http://school.test/sitemap.xml\n"))
	h.Handle("/", fetchtest.HTML(`<a href="/about">About</a><a href="/staff">Staff</a><a href="/admissions">Admissions</a>`))
	h.Handle("/llms.txt", fetchtest.Text("text/plain", "# School\n"))
	h.Handle("/sitemap.xml", fetchtest.Sitemap(fetchtest.SitemapURL{Loc: "http://school.test/about"}, fetchtest.SitemapURL{Loc: "http://school.test/admissions"}, fetchtest.SitemapURL{Loc: "http://school.test/staff"}))
	h.Handle("/about", fetchtest.HTML("about"))
	h.Handle("/admissions", fetchtest.Challenge(http.StatusForbidden))
	h.Handle("/staff", fetchtest.HTML("staff"))
	return w
}

func args(t *testing.T, extra ...string) []string {
	return bottest.Args(t, signingtest.BothyKey(), "", extra...)
}

// report runs a check of http://school.test/ on w with -report and returns
// the run's output and the Markdown report.
func report(t *testing.T, w *fetchtest.Web) (*bottest.Output, string) {
	t.Helper()
	prefix := filepath.Join(t.TempDir(), "report")
	out := bottest.Run(t, readiness.Run, w, 0, args(t, "-report", prefix, "http://school.test/")...)
	md, err := os.ReadFile(prefix + ".md")
	if err != nil {
		t.Fatal(err)
	}
	return out, string(md)
}

// -h documents the flags, with sane defaults.
func TestReadiness_Help(t *testing.T) {
	bottest.CheckHelp(t, readiness.Run, "-key", "-genkey", "-max-pages", "-full", "-report")
}

// Without a key the check refuses to run and says how to make one.
func TestReadiness_KeyRequired(t *testing.T) {
	bottest.CheckKeyRequired(t, readiness.Run, site(), profiles.KeyDirectory(profiles.BothyAgent), "http://school.test/")
}

// B10: home page, robots.txt, AI files, sitemap, a few pages; the report says
// what was found and what is blocked and why. B1 B2 B5 B12: as BothyBot.
func TestReadiness_B10_Report(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := site()
		prefix := filepath.Join(t.TempDir(), "report")
		out := bottest.Run(t, readiness.Run, w, 0, args(t, "-report", prefix, "http://school.test/")...)
		for path, want := range map[string]string{"/": "ok", "/llms.txt": "ok", "/llms-full.txt": "ok", "/about": "ok", "/admissions": "blocked"} {
			if r, _ := out.Result("http://school.test" + path); r.Outcome != want {
				t.Errorf("%s: %+v, want %s", path, r, want)
			}
		}
		w.Check(t, fetchtest.NotFetched("school.test", "/staff"), fetchtest.UserAgent(profiles.BothyUA),
			fetchtest.Signed(bottest.Verifier(t, signingtest.BothyKey())), fetchtest.MinGap(2*time.Second), fetchtest.NoOverlap())
		md, err := os.ReadFile(prefix + ".md")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"| http://school.test/robots.txt | 200 | found | 1 sitemap(s) declared |",
			"| http://school.test/llms.txt | 200 | found |",
			"| http://school.test/llms-full.txt | 404 | missing |",
			"| http://school.test/sitemap.xml | 200 | found | 3 pages listed |",
			"| http://school.test/staff | - | not read: robots.txt disallows | robots.txt: Disallow: /staff (listed in the sitemap) |",
			"| http://school.test/admissions | 403 | blocked by bot protection |",
		} {
			if !strings.Contains(string(md), want) {
				t.Errorf("report lacks %q:\n%s", want, md)
			}
		}
		if h, err := os.ReadFile(prefix + ".html"); err != nil || !strings.Contains(string(h), "blocked by bot protection") {
			t.Errorf("html report: %v", err)
		}
	})
}

// B10: a full readiness crawl is capped at a few hundred pages.
func TestReadiness_B10_FullCrawlCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		h := w.Host("big.test")
		h.Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n"))
		h.Fallback(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			var n int
			fmt.Sscanf(r.URL.Path, "/p%d", &n)
			rw.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(rw, `<a href="/p%d">next</a><a href="/p%d">skip</a>`, n+1, n+2)
		}))
		bottest.Run(t, readiness.Run, w, 0, args(t, "-full", "-max-pages", "1000", "http://big.test/")...)
		pages := 0
		for _, r := range w.RequestsTo("big.test") {
			if r.Path == "/" || strings.HasPrefix(r.Path, "/p") {
				pages++
			}
		}
		if pages != 300 { // the site has endless pages: the crawl stops at the promised cap, 300
			t.Errorf("B10: full crawl fetched %d pages, want 300", pages)
		}
	})
}

// Bad input and interrupted runs: the documented exit status (1 could not
// run, 3 some work failed), one clear line, the rest of the work done.
func TestReadiness_ExitStatus(t *testing.T) {
	bottest.CheckExitStatus(t, readiness.Run, signingtest.BothyKey(), bottest.CrawlCases("-report"))
}
