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

// HootyBot is a knowledge source for an assistant (AI input). The AIPREF
// vocabulary has no category for that use since draft-ietf-aipref-vocab-03
// dropped "ai-use", and unknown labels MUST be ignored (-07 §6.4): a page
// whose robots.txt rule or header says only "ai-use=n" is fetched and kept.
func TestHooty_IgnoresWithdrawnAIUseLabel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := docs("User-agent: HootyBot\nAllow: /\nContent-Usage: /faq ai-use=n\nContent-Signal: search=no, ai-train=no\n")
		w.Host("docs.test").Handle("/guide/2", fetchtest.Page{Body: `<p>Guide 2</p>`, Header: http.Header{"Content-Usage": {"ai-use=n"}}})
		outDir := t.TempDir()
		out := bottest.Run(t, hooty.Run, w, 0, args(t, "-out", outDir, "http://docs.test/")...)

		if n := w.Count("docs.test", "/guide"); n != 1 {
			t.Fatalf("/guide requested %d times: the crawl did not run", n)
		}
		for _, p := range []string{"/faq", "/guide/2"} {
			if n := w.Count("docs.test", p); n != 1 {
				t.Errorf("%s requested %d times, want 1 (ai-use is not a label)", p, n)
			}
			if r, _ := out.Result("http://docs.test" + p); r.Outcome != "ok" {
				t.Errorf("%s: %+v, want ok", p, r)
			}
		}
		// search=no and ai-train=no do not concern HootyBot.
		if _, err := os.Stat(filepath.Join(outDir, "docs.test", "guide.txt")); err != nil {
			t.Errorf("/guide not kept: %v", err)
		}
		kept := false
		filepath.WalkDir(outDir, func(path string, d os.DirEntry, err error) error {
			if b, _ := os.ReadFile(path); err == nil && !d.IsDir() && strings.Contains(string(b), "Guide 2") {
				kept = true
			}
			return nil
		})
		if !kept {
			t.Error("the text of /guide/2 was not kept")
		}
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
