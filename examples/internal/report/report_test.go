package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func sample() *Report {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	return &Report{
		Site: "http://parish.test", Agent: "BothyBot/1.0 (+https://bothy.tools/bot)",
		Started: t0, Finished: t0.Add(1500 * time.Millisecond),
		Items: []Item{
			{Kind: "home", URL: "http://parish.test/", Status: 200, Outcome: "ok", Bytes: 1200},
			{Kind: "robots", URL: "http://parish.test/robots.txt", Status: 200, Outcome: "ok"},
			{Kind: "ai-file", URL: "http://parish.test/llms.txt", Status: 404, Outcome: "ok"},
			{Kind: "page", URL: "http://parish.test/private/x", Outcome: "disallowed", Why: "Disallow: /private/ (group CleatBot)"},
			{Kind: "page", URL: "http://parish.test/mass|times", Status: 403, Outcome: "blocked", Why: "cloudflare js_challenge <script>"},
			{Kind: "page", URL: "http://parish.test/slow", Outcome: "timeout"},
		},
	}
}

// B10: the readiness report says what was found, what is blocked and why.
func TestMarkdown_B10(t *testing.T) {
	var b bytes.Buffer
	if err := sample().WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"# Readiness report: http://parish.test",
		"| 2 | 1 | 1 | 1 | 1 |",
		"## Files for AI assistants",
		"| http://parish.test/llms.txt | 404 | missing |",
		"not read: robots.txt disallows | Disallow: /private/ (group CleatBot)",
		`mass\|times`,
		"error: timeout",
		"WAF rule",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

func TestHTML_B10(t *testing.T) {
	var b bytes.Buffer
	if err := sample().WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"<!DOCTYPE html>", "<style>", "blocked by bot protection", "&lt;script&gt;", "Files for AI assistants"} {
		if !strings.Contains(out, want) {
			t.Errorf("html lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "src=", "http-equiv", "<link"} {
		if strings.Contains(out, bad) {
			t.Errorf("html not self-contained / safe: has %q", bad)
		}
	}
}
