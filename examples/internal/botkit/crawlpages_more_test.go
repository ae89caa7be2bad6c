package botkit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// Pages keeps the text of each page fetched ok; a page whose directives
// forbid keeping it for the bot's Use is fetched but not kept, and its
// result says why; a page text that cannot be written ends the run with
// ExitPartial.
func TestCrawlRun_PageText(t *testing.T) {
	okDir := t.TempDir()
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, []byte("x"), 0o600)
	for _, tc := range []struct {
		name     string
		dir      string
		use      Use
		kept     bool
		exit     int
		log      string
		reasonIn string
	}{
		{"kept", okDir, UseNone, true, ExitOK, "", ""},
		{"dropped by noindex", t.TempDir(), UseIndex, false, ExitOK, "", "not kept"},
		{"not written", filepath.Join(blocker, "sub"), UseNone, false, ExitPartial, "page text not written", ""},
	} {
		w := fetchtest.New()
		w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n")).
			Handle("/", fetchtest.HTML(`<html><head><title>T</title><meta name="robots" content="noindex"></head><body>hello</body></html>`))
		synctest.Test(t, func(t *testing.T) {
			s, f, stdout, _, logs := crawlSession(t, w)
			front := &crawl.Frontier{}
			front.Add(mustURL(t, "http://a.test/"), 0, "seed")
			counts := (&Crawl{Fetcher: f, Frontier: front, Pages: &PageStore{Dir: tc.dir}, Use: tc.use}).Run(context.Background(), s)
			if counts["ok"] != 1 {
				t.Fatalf("%s: counts %v", tc.name, counts)
			}
			_, err := os.Stat(filepath.Join(tc.dir, PageFile(mustURL(t, "http://a.test/"))))
			if (err == nil) != tc.kept {
				t.Errorf("%s: page text kept: %v", tc.name, err == nil)
			}
			if got := s.Exit(context.Background(), ExitOK); got != tc.exit || !strings.Contains(logs.String(), tc.log) {
				t.Errorf("%s: Exit = %d, want %d; log:\n%s", tc.name, got, tc.exit, logs.String())
			}
			rs := ParseResults(stdout.String())
			if len(rs) != 1 || !strings.Contains(rs[0].Reason, tc.reasonIn) || rs[0].Rules != "noindex" {
				t.Errorf("%s: results %+v", tc.name, rs)
			}
		})
	}
}
