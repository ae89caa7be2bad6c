package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/examples/internal/bothy"
	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// BothyBot feeds an assistant (AI input) and refuses what a site refuses for
// that use: a page robots.txt refuses is never requested, one whose header
// refuses is fetched but not kept, and both are reported as usage_refused.
func TestBothy_RefusesPagesRefusedForAIInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := parish("User-agent: BothyBot\nAllow: /\nContent-Usage: /contact ai-use=n\nContent-Usage: train-ai=n\n\nSitemap: http://parish.test/sitemap.xml\n")
		w.Host("parish.test").Handle("/mass", fetchtest.Page{Body: `<p>Sunday 10am</p>`, Header: http.Header{"Content-Usage": {"ai-use=n"}}})
		outDir := t.TempDir()
		out := bottest.Run(t, bothy.Run, w, 0, crawlArgs(t, "", "-out", outDir, "http://parish.test/")...)

		if n := w.Count("parish.test", "/"); n != 1 {
			t.Fatalf("home page requested %d times: the crawl did not run", n)
		}
		if n := w.Count("parish.test", "/contact"); n != 0 {
			t.Errorf("/contact requested %d times: robots.txt refuses it for AI input", n)
		}
		if n := w.Count("parish.test", "/mass"); n != 1 {
			t.Errorf("/mass requested %d times, want 1 (its header refuses)", n)
		}
		for _, p := range []string{"/contact", "/mass"} {
			r, _ := out.Result("http://parish.test" + p)
			if r.Outcome != "usage_refused" || !strings.Contains(r.Reason, "refuses ai-input") {
				t.Errorf("%s: %+v, want usage_refused for ai-input", p, r)
			}
		}
		// train-ai=n does not concern BothyBot: the home page is kept.
		if r, _ := out.Result("http://parish.test/"); r.Outcome != "ok" {
			t.Errorf("home: %+v", r)
		}
		kept := false
		filepath.WalkDir(outDir, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(path)
				if strings.Contains(string(b), "Sunday 10am") || strings.Contains(string(b), "Call us") {
					t.Errorf("%s keeps a refused page's text", path)
				}
				kept = kept || strings.Contains(string(b), "Only linked from the home page")
			}
			return nil
		})
		if !kept {
			t.Error("the text of /visit, which nothing refuses, was not kept")
		}
	})
}

// BothyBot refuses what a site refuses for AI input in robots.txt's
// Content-Signal line: the refused site's pages are never requested and
// are reported as usage_refused (the run ends partial: a parish it could
// not read); a site beside it that says nothing is crawled.
func TestBothy_RefusesSiteRefusedForAIInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := parish("User-agent: BothyBot\nAllow: /\nContent-Signal: ai-input=no\n")
		bottest.CheckSiteRefused(t, bothy.Run, w, 3, "parish.test", "ai-input", crawlArgs(t, "", "-out", t.TempDir())...)
	})
}
