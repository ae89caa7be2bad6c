package botkit

import (
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/robots"
)

func TestUse_ApplyRules(t *testing.T) {
	html := map[string][]string{"Content-Type": {"text/html"}}
	tests := []struct {
		use     Use
		rules   robots.PageRules
		outcome string
		notKept bool
		reason  string
		follows bool
	}{
		{UseAssistant, robots.PageRules{}, "ok", false, "", true},
		{UseAssistant, robots.PageRules{NoIndex: true}, "ok", true, "page says noindex: not kept", true},
		{UseAssistant, robots.PageRules{NoAI: true}, "ok", true, "page says noai: not kept", true},
		{UseAssistant, robots.PageRules{NoIndex: true, NoAI: true, NoFollow: true}, "ok", true, "page says noindex, noai: not kept; page says nofollow: links not followed", false},
		{UseIndex, robots.PageRules{NoAI: true}, "ok", false, "", true},
		{UseIndex, robots.PageRules{NoIndex: true}, "ok", true, "page says noindex: not kept", true},
		{UseNone, robots.PageRules{NoIndex: true, NoAI: true}, "ok", false, "", true},
		{UseNone, robots.PageRules{NoFollow: true}, "ok", false, "page says nofollow: links not followed", false},
		{UseAssistant, robots.PageRules{NoSnippet: true}, "ok", false, "", true},
		{UseAssistant, robots.PageRules{NoIndex: true}, "blocked", false, "x", false},
	}
	for i, tt := range tests {
		p := &fetch.Page{Rules: tt.rules, Header: html}
		r := Result{Outcome: tt.outcome}
		if tt.outcome != "ok" {
			r.Reason = "x"
		}
		tt.use.ApplyRules(&r, p)
		if r.NotKept != tt.notKept || r.Reason != tt.reason {
			t.Errorf("%d: not kept %v, reason %q; want %v, %q", i, r.NotKept, r.Reason, tt.notKept, tt.reason)
		}
		if got := FollowsLinks(p, r); got != tt.follows {
			t.Errorf("%d: FollowsLinks %v, want %v", i, got, tt.follows)
		}
	}
}

// Links are followed only from an HTML page fetched ok that does not say
// nofollow: a text or PDF answer, even one whose text looks like links,
// gives none.
func TestFollowsLinks(t *testing.T) {
	typed := func(ct string, rules robots.PageRules) *fetch.Page {
		return &fetch.Page{Header: map[string][]string{"Content-Type": {ct}}, Rules: rules, Body: []byte(`<a href="/x">x</a>`)}
	}
	for _, tt := range []struct {
		name    string
		p       *fetch.Page
		outcome string
		want    bool
	}{
		{"html", typed("text/html; charset=utf-8", robots.PageRules{}), "ok", true},
		{"xhtml", typed("application/xhtml+xml", robots.PageRules{}), "ok", true},
		{"plain text", typed("text/plain", robots.PageRules{}), "ok", false},
		{"pdf", typed("application/pdf", robots.PageRules{}), "ok", false},
		{"no content type", &fetch.Page{Body: []byte(`<a href="/x">x</a>`)}, "ok", false},
		{"html, not ok", typed("text/html", robots.PageRules{}), "blocked", false},
		{"html, nofollow", typed("text/html", robots.PageRules{NoFollow: true}), "ok", false},
		{"no page", nil, "ok", false},
	} {
		if got := FollowsLinks(tt.p, Result{Outcome: tt.outcome}); got != tt.want {
			t.Errorf("%s: FollowsLinks = %v, want %v", tt.name, got, tt.want)
		}
	}
}
