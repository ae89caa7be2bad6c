package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/readiness"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// The report says, per token, what robots.txt states about the use of the
// site's pages and flags a file that grants a use of pages it closes
// (Disallow: / with search=yes). The check itself records rather than
// refuses: the pages the site refuses for AI input are still read for the
// report.
func TestReadiness_UsagePreferencesPerToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		w.Host("school.test").
			Handle("/robots.txt", fetchtest.Robots("Content-Signal: search=yes\n\nUser-agent: HootyBot\nDisallow: /\n\nUser-agent: SofyaBot\nAllow: /\nContent-Usage: train-ai=n\n\nUser-agent: *\nAllow: /\nContent-Usage: ai-use=n\n")).
			Handle("/", fetchtest.HTML(`<a href="/about">About</a>`)).
			Handle("/about", fetchtest.Page{Body: "about", Header: http.Header{"Tdm-Reservation": {"1"}}})
		prefix := filepath.Join(t.TempDir(), "report")
		out := bottest.Run(t, readiness.Run, w, 0, args(t, "-report", prefix, "http://school.test/")...)
		if n := w.Count("school.test", "/about"); n != 1 {
			t.Errorf("/about requested %d times, want 1 (the check records, it does not refuse)", n)
		}
		if r, _ := out.Result("http://school.test/about"); r.Outcome != "ok" {
			t.Errorf("/about: %+v", r)
		}
		md, err := os.ReadFile(prefix + ".md")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"## Usage preferences: robots.txt per token, response headers",
			"| http://school.test/robots.txt | - | stated | BothyBot: search=y, ai-input=n; refuses ai-input: BothyBot's crawl will not use these pages |",
			"| http://school.test/robots.txt | - | contradiction | hootybot: search=y, but robots.txt does not let it fetch / |",
			"| http://school.test/robots.txt | - | stated | sofyabot: search=y, train-ai=n |",
			"| http://school.test/robots.txt | - | stated | *: search=y, ai-input=n |",
			"| http://school.test/about | 200 | stated | response header: train-ai=n; TDMRep: tdm-reservation \"1\" |", // W3C TDMRep
			"6 URLs in",             // the usage lines are statements, not URLs read
			"| 3 | 3 | 0 | 0 | 0 |", // home, robots.txt, /about found; llms.txt, llms-full.txt, sitemap missing
		} {
			if !strings.Contains(string(md), want) {
				t.Errorf("report lacks %q:\n%s", want, md)
			}
		}
		if h, err := os.ReadFile(prefix + ".html"); err != nil || !strings.Contains(string(h), `class="usage-contradiction">contradiction`) {
			t.Errorf("html report lacks the contradiction: %v", err)
		}
	})
}
