package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/hooty"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// HootyBot is a knowledge source for an assistant (AI input): a page the
// site refuses for that use is not requested (robots.txt) or not kept
// (header), and is reported as usage_refused.
func TestHooty_RefusesPagesRefusedForAIInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := docs("User-agent: HootyBot\nAllow: /\nContent-Usage: /faq ai-use=n\nContent-Signal: search=no, ai-train=no\n")
		w.Host("docs.test").Handle("/guide/2", fetchtest.Page{Body: `<p>Guide 2</p>`, Header: http.Header{"Content-Usage": {"ai-use=n"}}})
		outDir := t.TempDir()
		out := bottest.Run(t, hooty.Run, w, 0, args(t, "-out", outDir, "http://docs.test/")...)

		if n := w.Count("docs.test", "/guide"); n != 1 {
			t.Fatalf("/guide requested %d times: the crawl did not run", n)
		}
		if n := w.Count("docs.test", "/faq"); n != 0 {
			t.Errorf("/faq requested %d times: robots.txt refuses it for AI input", n)
		}
		if n := w.Count("docs.test", "/guide/2"); n != 1 {
			t.Errorf("/guide/2 requested %d times, want 1 (its header refuses)", n)
		}
		for _, p := range []string{"/faq", "/guide/2"} {
			if r, _ := out.Result("http://docs.test" + p); r.Outcome != "usage_refused" || !strings.Contains(r.Reason, "ai-input") {
				t.Errorf("%s: %+v, want usage_refused for ai-input", p, r)
			}
		}
		// search=no and ai-train=no do not concern HootyBot.
		if _, err := os.Stat(filepath.Join(outDir, "docs.test", "guide.txt")); err != nil {
			t.Errorf("/guide not kept: %v", err)
		}
		filepath.WalkDir(outDir, func(path string, d os.DirEntry, err error) error {
			if b, _ := os.ReadFile(path); err == nil && !d.IsDir() && strings.Contains(string(b), "Guide 2") {
				t.Errorf("%s keeps a refused page's text", path)
			}
			return nil
		})
	})
}

// HootyBot refuses what a site refuses for AI input in robots.txt's
// Content-Signal line: the refused site's pages are never requested and
// are reported as usage_refused; a site beside it that says nothing is
// crawled.
func TestHooty_RefusesSiteRefusedForAIInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := docs("User-agent: HootyBot\nAllow: /\nContent-Signal: search=yes, ai-input=no\n")
		bottest.CheckSiteRefused(t, hooty.Run, w, 0, "docs.test", "ai-input", args(t, "-out", t.TempDir())...)
	})
}
