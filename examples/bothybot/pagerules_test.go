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

const openParish = "User-agent: *\nAllow: /\n\nSitemap: http://parish.test/sitemap.xml\n"

// keptText reports whether any file under dir holds s.
func keptText(t *testing.T, dir, s string) bool {
	t.Helper()
	found := false
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Base(path) != "report.md" {
			b, _ := os.ReadFile(path)
			found = found || strings.Contains(string(b), s)
		}
		return nil
	})
	return found
}

// BothyBot feeds an assistant: a page that says noindex, or noai (also
// through its former name CleatBot), is fetched but not kept, and the JSON
// output and the report say why.
func TestBothy_PageRulesNotKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := parish(openParish)
		h := w.Host("parish.test")
		h.Handle("/mass", fetchtest.Page{Body: `<p>Sunday 10am</p>`, Header: http.Header{"X-Robots-Tag": {"noindex"}}})
		h.Handle("/contact", fetchtest.Page{Body: `<p>Call us</p>`, Header: http.Header{"X-Robots-Tag": {"cleatbot: noai"}}})
		h.Handle("/visit", fetchtest.Page{Body: `<p>Only linked from the home page</p>`, Header: http.Header{"X-Robots-Tag": {"otherbot: noindex"}}})
		outDir := t.TempDir()
		out := bottest.Run(t, bothy.Run, w, 0, crawlArgs(t, "", "-json", "-out", outDir, "http://parish.test/")...)

		for _, p := range []string{"/", "/mass", "/contact", "/visit"} {
			if n := w.Count("parish.test", p); n != 1 {
				t.Fatalf("%s requested %d times, want 1: the crawl did not run", p, n)
			}
		}
		for _, tt := range []struct{ path, rule string }{{"/mass", "noindex"}, {"/contact", "noai"}} {
			r, ok := out.Result("http://parish.test" + tt.path)
			if !ok || r.Outcome != "ok" || !r.NotKept || r.Rules != tt.rule || !strings.Contains(r.Reason, tt.rule+": not kept") {
				t.Errorf("%s: %+v, want ok, not kept, rules %q, and the reason", tt.path, r, tt.rule)
			}
			if !strings.Contains(out.Stdout, `"rules":"`+tt.rule+`"`) {
				t.Errorf("the -json output has no rules field for %s", tt.path)
			}
		}
		if keptText(t, outDir, "Sunday 10am") || keptText(t, outDir, "Call us") {
			t.Error("a noindex or noai page's text was written to -out")
		}
		if !keptText(t, outDir, "Only linked from the home page") {
			t.Error("/visit, whose directive names another bot, was not kept")
		}
		if r, _ := out.Result("http://parish.test/visit"); r.NotKept || r.Rules != "" {
			t.Errorf("/visit: %+v: otherbot's directive applied to BothyBot", r)
		}
		report, err := os.ReadFile(filepath.Join(outDir, "report.md"))
		if err != nil || !strings.Contains(string(report), "noindex: not kept") {
			t.Errorf("report.md does not say why /mass was not kept (err %v)", err)
		}
	})
}

// A nofollow home page's links are not followed: /visit, linked only from
// it, is never requested; the sitemap's pages still are.
func TestBothy_PageRulesNoFollow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := parish(openParish)
		w.Host("parish.test").Handle("/", fetchtest.Page{Body: `<a href="/visit">visit</a> <a href="/mass">mass</a>`,
			Header: http.Header{"X-Robots-Tag": {"bothybot: nofollow"}}})
		out := bottest.Run(t, bothy.Run, w, 0, crawlArgs(t, "", "-json", "http://parish.test/")...)
		if n := w.Count("parish.test", "/"); n != 1 {
			t.Fatalf("home requested %d times: the crawl did not run", n)
		}
		if n := w.Count("parish.test", "/mass"); n != 1 {
			t.Errorf("/mass (in the sitemap) requested %d times, want 1", n)
		}
		if n := w.Count("parish.test", "/visit"); n != 0 {
			t.Errorf("/visit requested %d times: the nofollow home page's link was followed", n)
		}
		if r, _ := out.Result("http://parish.test/"); r.Rules != "nofollow" || !strings.Contains(r.Reason, "links not followed") {
			t.Errorf("home: %+v, want rules nofollow with the reason", r)
		}
	})
}
