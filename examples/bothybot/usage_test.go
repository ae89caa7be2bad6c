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

// BothyBot feeds an assistant (AI input). The AIPREF vocabulary has no
// category for that use since draft-ietf-aipref-vocab-03 dropped "ai-use",
// and unknown labels MUST be ignored (-07 §6.4): a page whose robots.txt
// rule or header says only "ai-use=n" is fetched and kept like any other.
// BothyBot learns of an AI-input refusal from Content-Signal lines.
func TestBothy_IgnoresWithdrawnAIUseLabel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := parish("User-agent: BothyBot\nAllow: /\nContent-Usage: /contact ai-use=n\nContent-Usage: train-ai=n\n\nSitemap: http://parish.test/sitemap.xml\n")
		w.Host("parish.test").Handle("/mass", fetchtest.Page{Body: `<p>Sunday 10am</p>`, Header: http.Header{"Content-Usage": {"ai-use=n"}}})
		outDir := t.TempDir()
		out := bottest.Run(t, bothy.Run, w, 0, crawlArgs(t, "", "-out", outDir, "http://parish.test/")...)

		if n := w.Count("parish.test", "/"); n != 1 {
			t.Fatalf("home page requested %d times: the crawl did not run", n)
		}
		for _, p := range []string{"/contact", "/mass"} {
			if n := w.Count("parish.test", p); n != 1 {
				t.Errorf("%s requested %d times, want 1 (ai-use is not a label)", p, n)
			}
			if r, _ := out.Result("http://parish.test" + p); r.Outcome != "ok" {
				t.Errorf("%s: %+v, want ok", p, r)
			}
		}
		// train-ai=n does not concern BothyBot: the home page is kept.
		if r, _ := out.Result("http://parish.test/"); r.Outcome != "ok" {
			t.Errorf("home: %+v", r)
		}
		var all strings.Builder
		filepath.WalkDir(outDir, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(path)
				all.Write(b)
			}
			return nil
		})
		for _, text := range []string{"Sunday 10am", "Call us", "Only linked from the home page"} {
			if !strings.Contains(all.String(), text) {
				t.Errorf("%q not kept", text)
			}
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
