package botkit

import (
	"strings"

	"github.com/goodbot-go/goodbot/fetch"
)

// Use is what a bot keeps pages for. It decides which page directives
// (fetch.Page.Rules: X-Robots-Tag, Robots-Tag, robots meta) make the bot
// drop a page it fetched. Every bot honours nofollow. The zero Use keeps
// nothing, so directives are only reported.
type Use uint8

const (
	UseNone      Use = iota // a link check or a report: directives are reported, nothing is dropped
	UseIndex                // a search index: noindex drops the page (noai does not concern search)
	UseAssistant            // an assistant's knowledge: noindex and noai drop the page
)

// dropped names the directives in p's rules that forbid keeping the page
// for u, "" if none.
func (u Use) dropped(p *fetch.Page) string {
	var why []string
	if u != UseNone && p.Rules.NoIndex {
		why = append(why, "noindex")
	}
	if u == UseAssistant && p.Rules.NoAI {
		why = append(why, "noai")
	}
	return strings.Join(why, ", ")
}

// ApplyRules records p's page directives in r (Rules) and says in r.Reason
// what they change: a page kept for nothing its directives allow is marked
// NotKept ("not kept"), and a nofollow page's links are not followed. It
// changes nothing for a page that did not end ok.
func (u Use) ApplyRules(r *Result, p *fetch.Page) {
	if p == nil || r.Outcome != "ok" || p.Rules.IsZero() {
		return
	}
	r.Rules = p.Rules.String()
	var why []string
	if d := u.dropped(p); d != "" {
		r.NotKept = true
		why = append(why, "page says "+d+": not kept")
	}
	if p.Rules.NoFollow {
		why = append(why, "page says nofollow: links not followed")
	}
	r.Reason = strings.Join(why, "; ")
}

// FollowsLinks reports whether the links of p may be followed: an HTML page
// fetched ok whose directives do not say nofollow.
func FollowsLinks(p *fetch.Page, r Result) bool {
	return p != nil && r.Outcome == "ok" && IsHTML(p) && !p.Rules.NoFollow
}
