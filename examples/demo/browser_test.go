package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/browser"
	"github.com/goodbot-go/goodbot/examples/internal/report"
	"github.com/goodbot-go/goodbot/examples/internal/timeline"
)

// The demo's timeline.html and readiness report, as the demo writes them,
// render in a real browser without script errors and show what a person
// looks for: one lane per host with the requests drawn, the pauses listed
// with their reasons, the report's sections and verdicts. Set
// DEMO_SCREENSHOTS=dir to keep screenshots.
func TestDemo_PagesRenderInBrowser(t *testing.T) {
	b := browser.Find(t)
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	run := timeline.Run{Title: "SofyaBot: a crawl with one host rate-limited", Spans: []timeline.Span{
		{Host: "a.test", Path: "/robots.txt", Start: ms(0), End: ms(10), Status: 200},
		{Host: "a.test", Path: "/", Start: ms(1010), End: ms(1040), Status: 200},
		{Host: "b.test", Path: "/robots.txt", Start: ms(5), End: ms(20), Status: 200},
		{Host: "b.test", Path: "/", Start: ms(1020), End: ms(1030), Status: 429},
		{Host: "b.test", Path: "/", Start: ms(3030), End: ms(3050), Status: 200},
	}, Pauses: []timeline.Pause{
		{Host: "b.test", Start: ms(1030), Dur: 2 * time.Second, Reason: "retry-after (status 429)"},
		{Host: "a.test", Start: ms(10), Dur: time.Second, Reason: "wait: delay", Routine: true},
	}}
	tl, err := os.Create(filepath.Join(dir, "timeline.html"))
	if err != nil {
		t.Fatal(err)
	}
	if err := timeline.WriteHTML(tl, "goodbot demo: requests per host", []timeline.Run{run}); err != nil {
		t.Fatal(err)
	}
	tl.Close()
	rep := &report.Report{Site: "http://parish.test", Agent: "BothyBot/1.0 (+https://bothy.tools/bot)",
		Started: t0, Finished: t0.Add(2 * time.Second), Items: []report.Item{
			{Kind: "home", URL: "http://parish.test/", Status: 200, Outcome: "ok", Bytes: 1200},
			{Kind: "robots", URL: "http://parish.test/robots.txt", Status: 200, Outcome: "ok"},
			{Kind: "ai-file", URL: "http://parish.test/llms.txt", Status: 404, Outcome: "ok"},
			{Kind: "page", URL: "http://parish.test/private/x", Outcome: "disallowed", Why: "Disallow: /private/"},
			{Kind: "page", URL: "http://parish.test/shop", Status: 403, Outcome: "blocked", Why: "cloudflare js_challenge <script>alert(1)</script>"},
		}}
	rf, err := os.Create(filepath.Join(dir, "readiness.html"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(rf); err != nil {
		t.Fatal(err)
	}
	rf.Close()

	cases := []struct {
		file string
		want []string
	}{
		{"timeline.html", []string{"<h1>goodbot demo: requests per host", "SofyaBot: a crawl with one host rate-limited",
			"a.test", "b.test", "<svg", "<rect", "retry-after (status 429)", "No host ever had two requests in flight at once"}},
		{"readiness.html", []string{"Readiness report: http://parish.test", "<h2>robots.txt", "<h2>Files for AI assistants",
			"http://parish.test/llms.txt", "Disallow: /private/", "cloudflare js_challenge &lt;script&gt;"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			url := "file://" + filepath.Join(dir, tc.file)
			p := b.Load(t, url)
			if !strings.Contains(p.DOM, "</body>") {
				t.Fatalf("no document rendered: %q", p.DOM)
			}
			if errs := p.ScriptErrors(); len(errs) > 0 {
				t.Errorf("script errors: %v", errs)
			}
			if strings.Contains(p.DOM, "<script") {
				t.Errorf("the page runs a script (text injected unescaped?)")
			}
			for _, w := range tc.want {
				if !strings.Contains(p.DOM, w) {
					t.Errorf("the rendered page lacks %q", w)
				}
			}
			if shots := os.Getenv("DEMO_SCREENSHOTS"); shots != "" {
				path, _ := filepath.Abs(filepath.Join(shots, strings.TrimSuffix(tc.file, ".html")+".png"))
				b.Screenshot(t, url, path, 1100, 700)
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if img, err := png.Decode(f); err != nil || img.Bounds().Dx() != 1100 {
					t.Errorf("screenshot %s: %v", path, err)
				}
				t.Logf("screenshot: %s", path)
			}
		})
	}
}
