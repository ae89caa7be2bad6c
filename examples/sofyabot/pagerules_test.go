package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/sofya"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// indexed reports whether a file under dir holds s.
func indexed(dir, s string) bool {
	found := false
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			found = found || strings.Contains(string(b), s)
		}
		return nil
	})
	return found
}

// SofyaBot builds a search index: a noindex page is fetched but not
// indexed; a noai page is indexed (noai does not concern search); a
// nofollow home page's links are not followed.
func TestSofya_PageRules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		news(w, "a.test", "User-agent: *\nAllow: /\n", 3)
		w.Host("a.test").Handle("/story/1", fetchtest.Page{Body: `<p>first story</p><a href="/story/2">next</a>`, Header: http.Header{"X-Robots-Tag": {"noindex"}}})
		w.Host("a.test").Handle("/story/2", fetchtest.Page{Body: `<p>second story</p>`, Header: http.Header{"X-Robots-Tag": {"noai"}}})
		news(w, "b.test", "User-agent: *\nAllow: /\n", 2)
		w.Host("b.test").Handle("/", fetchtest.HTML(`<head><meta name="SofyaBot" content="nofollow"></head><body><a href="/story/1">s1</a></body>`))
		outDir := t.TempDir()
		out := bottest.Run(t, sofya.Run, w, 0, args(t, "", "-out", outDir, "http://a.test/", "http://b.test/")...)

		for _, p := range []string{"/story/1", "/story/2"} {
			if n := w.Count("a.test", p); n != 1 {
				t.Fatalf("a.test%s requested %d times, want 1: the crawl did not run", p, n)
			}
		}
		if n := w.Count("b.test", "/"); n != 1 {
			t.Fatalf("b.test home requested %d times, want 1", n)
		}
		if n := w.Count("b.test", "/story/1"); n != 0 {
			t.Errorf("b.test/story/1 requested %d times: the nofollow home page's link was followed", n)
		}
		if r, _ := out.Result("http://a.test/story/1"); !r.NotKept || r.Rules != "noindex" || !strings.Contains(r.Reason, "noindex: not kept") {
			t.Errorf("/story/1: %+v, want not kept for noindex", r)
		}
		if r, _ := out.Result("http://a.test/story/2"); r.NotKept || r.Rules != "noai" {
			t.Errorf("/story/2: %+v, want kept with rules noai", r)
		}
		if r, _ := out.Result("http://b.test/"); r.Rules != "nofollow" || !strings.Contains(r.Reason, "links not followed") {
			t.Errorf("b.test home: %+v, want rules nofollow with the reason", r)
		}
		if indexed(outDir, "first story") {
			t.Error("the noindex page was indexed")
		}
		if !indexed(outDir, "second story") {
			t.Error("the noai page was not indexed")
		}
	})
}
