package robots

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jimsmart/grobotstxt"
)

// An anchored wildcard rule needs its last piece after everything before
// it: the last piece may not overlap the literal prefix or an earlier piece
// ("/a*ab$" is "/a", anything, then "ab" at the end, so at least "/aab").
// Each answer is also Google's parser's.
func TestAllowed_AnchoredWildcardPiecesDoNotOverlap(t *testing.T) {
	cases := []struct {
		rule, target string
		disallowed   bool
	}{
		{"/a*ab$", "/ab", false},
		{"/a*ab$", "/aab", true},
		{"/a*ab$", "/axab", true},
		{"/a*ab$", "/aaba", false},
		{"/*x*xy$", "/xy", false},
		{"/*x*xy$", "/xxy", true},
		{"/*x*xy$", "/x/xy", true},
		{"/ab*b$", "/ab", false},
		{"/ab*b$", "/abb", true},
	}
	for _, c := range cases {
		body := "User-agent: *\nDisallow: " + c.rule + "\n"
		got := !Parse([]byte(body)).Allowed(Agent{Token: "a"}, c.target)
		if got != c.disallowed {
			t.Errorf("Disallow: %s, %s: disallowed = %v, want %v", c.rule, c.target, got, c.disallowed)
		}
		google := !grobotstxt.AgentAllowed(body, "a", "https://example.com"+c.target)
		if google != c.disallowed {
			t.Errorf("Disallow: %s, %s: grobotstxt says disallowed = %v; the table is wrong", c.rule, c.target, google)
		}
	}
}

// Escapes match whatever the case of their hex digits, and the escape of
// an unreserved character matches the character (RFC 9309 §2.2.2), for
// digits and letters at both ends of the hex ranges.
func TestAllowed_EscapesAnyHexDigit(t *testing.T) {
	cases := []struct {
		rule, target string
		disallowed   bool
	}{
		{"/page9", "/page%39", true}, // %39 is "9"
		{"/page%39", "/page9", true},
		{"/page0", "/page%30", true},
		{"/page%30%7e", "/page0~", true}, // %30 is "0", next to a lower-case escape
		{"/AZaz", "/%41%5A%61%7A", true}, // the ends of the letters
		{"/-._~", "/%2D%2E%5F%7E", true},
		{"/J", "/%4A", true}, // %4A is "J"
		{"/J", "/%4a", true},
		{"/o", "/%6F", true},
		{"/o", "/%6f", true},
		{"/x%2A", "/x%2a", true}, // "*" escaped stays escaped, any case
		{"/x%2a", "/x%2A", true},
		{"/a%2Fb", "/a%2fb", true},
		{"/a%2fb", "/a%2Fb", true},
		{"/%9a", "/%9A", true}, // a byte beyond ASCII stays escaped
		{"/%FA", "/%fa", true},
		{"/%2A", "/%2B", false},
		{"/page9", "/page%38", false},
		// Octets that may not appear raw in a URI are escaped in the target,
		// so the rule's escape matches them: DEL (a CTL, like 0x00-0x1F)
		// and each of the excluded graphic characters.
		{"/a%7Fb", "/a\x7fb", true},
		{"/%22%3C%3E%5C%5E%60%7B%7C%7D", "/\"<>\\^`{|}", true},
		{"/a%7C", "/a|", true},
		{"/a%60", "/a`", true},
	}
	for _, c := range cases {
		body := "User-agent: *\nDisallow: " + c.rule + "\n"
		if got := !Parse([]byte(body)).Allowed(Agent{Token: "a"}, c.target); got != c.disallowed {
			t.Errorf("Disallow: %s, %s: disallowed = %v, want %v", c.rule, c.target, got, c.disallowed)
		}
	}
}

// In the query, the escapes of the delimiters a query may carry raw (":",
// "/", "?", "@", RFC 3986 §3.4) equal the raw characters; in the path they
// stay escapes, which a raw delimiter does not match ("/a%2Fb" is one
// segment, "/a/b" two).
func TestAllowed_QueryDelimiterEscapes(t *testing.T) {
	cases := []struct {
		rule, target string
		disallowed   bool
	}{
		{"/r?u=a:b", "/r?u=a%3Ab", true},
		{"/r?u=a/b", "/r?u=a%2Fb", true},
		{"/r?u=a?b", "/r?u=a%3Fb", true},
		{"/r?u=a@b", "/r?u=a%40b", true},
		{"/r?u=a@b", "/r?u=a%40B", false},
		{"/r?u=a%40b", "/r?u=a@b", true},
		{"/a/b", "/a%2Fb", false},
		{"/a:b", "/a%3Ab", false},
		{"/a@b", "/a%40b", false},
	}
	for _, c := range cases {
		body := "User-agent: *\nDisallow: " + c.rule + "\n"
		if got := !Parse([]byte(body)).Allowed(Agent{Token: "a"}, c.target); got != c.disallowed {
			t.Errorf("Disallow: %s, %s: disallowed = %v, want %v", c.rule, c.target, got, c.disallowed)
		}
	}
}

// A relative target is a path (from the root) even when its query holds a
// URL: "p?next=https://example.com/q" is the path "/p", never the URL
// "https://example.com/q".
func TestAllowed_RelativeTargetWithURLInQuery(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /p\nDisallow: /?next\n"))
	a := Agent{Token: "a"}
	for _, c := range []struct {
		target     string
		disallowed bool
	}{
		{"p?next=https://example.com/q", true},
		{"?next=https://example.com/q", true},
		{"q/p?u=http://example.com/x", false},
		{"https://example.com/p?next=https://other.example/q", true},
		{"https://example.com/q?next=https://other.example/p", false},
	} {
		if got := !r.Allowed(a, c.target); got != c.disallowed {
			t.Errorf("Allowed(%q): disallowed = %v, want %v", c.target, got, c.disallowed)
		}
	}
}

// CrawlDelay is the largest value of the groups that apply, whatever the
// order of the groups in the file and of the agent's names; one group's
// largest value is its value.
func TestCrawlDelay_LargestOfSeveralGroups(t *testing.T) {
	a := Agent{Token: "NewBot", Former: []string{"OldBot"}}
	cases := []struct {
		name, body string
		want       time.Duration
	}{
		{"former larger, after", "User-agent: NewBot\nCrawl-delay: 2\nDisallow: /x\n\nUser-agent: OldBot\nCrawl-delay: 7\nDisallow: /x\n", 7 * time.Second},
		{"former larger, before", "User-agent: OldBot\nCrawl-delay: 7\nDisallow: /x\n\nUser-agent: NewBot\nCrawl-delay: 2\nDisallow: /x\n", 7 * time.Second},
		{"token larger", "User-agent: OldBot\nCrawl-delay: 2\nDisallow: /x\n\nUser-agent: NewBot\nCrawl-delay: 7\nDisallow: /x\n", 7 * time.Second},
		{"one name, two groups", "User-agent: NewBot\nCrawl-delay: 1\nDisallow: /x\n\nUser-agent: NewBot\nCrawl-delay: 4\nDisallow: /y\n", 4 * time.Second},
		{"one group, larger first", "User-agent: NewBot\nCrawl-delay: 9\nCrawl-delay: 3\nDisallow: /x\n", 9 * time.Second},
		{"one group, larger last", "User-agent: NewBot\nCrawl-delay: 3\nCrawl-delay: 9\nDisallow: /x\n", 9 * time.Second},
		{"star groups", "User-agent: *\nCrawl-delay: 1\nDisallow: /x\n\nUser-agent: *\nCrawl-delay: 6\nDisallow: /y\n", 6 * time.Second},
	}
	for _, c := range cases {
		d, ok := Parse([]byte(c.body)).CrawlDelay(a)
		if !ok || d != c.want {
			t.Errorf("%s: CrawlDelay = %v, %v; want %v, true", c.name, d, ok, c.want)
		}
	}
}

// A file of exactly MaxParseBytes (512 KiB) is read whole, last line
// included; one byte more and the last line, now cut, is dropped.
func TestParse_ExactlyMaxParseBytes(t *testing.T) {
	head := "User-agent: *\nDisallow: /first\n"
	last := "Disallow: /last"
	pad := strings.Repeat("#\n", (512<<10-len(head)-len(last))/2)
	body := head + pad + last
	if len(body) != 512<<10 {
		t.Fatalf("test body is %d bytes", len(body))
	}
	a := Agent{Token: "a"}
	r := Parse([]byte(body))
	if r.Truncated() || r.Allowed(a, "/first") || r.Allowed(a, "/last") {
		t.Errorf("512 KiB: Truncated = %v, /first allowed = %v, /last allowed = %v; want false, false, false",
			r.Truncated(), r.Allowed(a, "/first"), r.Allowed(a, "/last"))
	}
	r = Parse([]byte(body + "x"))
	if !r.Truncated() || r.Allowed(a, "/first") || !r.Allowed(a, "/last") || !r.Allowed(a, "/lastx") {
		t.Errorf("512 KiB + 1: Truncated = %v, /first allowed = %v, /last allowed = %v; want true, false, true",
			r.Truncated(), r.Allowed(a, "/first"), r.Allowed(a, "/last"))
	}
}

// A Crawl-delay value is decimal seconds: one optional dot, at least one
// digit. Anything else is no value at all.
func TestCrawlDelay_Malformed(t *testing.T) {
	for _, v := range []string{".", "1.5.5", "..5", "", "1..", "1,5"} {
		if d, ok := Parse([]byte("User-agent: *\nCrawl-delay: " + v + "\nDisallow: /x\n")).CrawlDelay(Agent{Token: "a"}); ok {
			t.Errorf("Crawl-delay: %q = %v, want none", v, d)
		}
	}
	for v, want := range map[string]time.Duration{"1.": time.Second, "0.25": 250 * time.Millisecond, "3": 3 * time.Second} {
		if d, ok := Parse([]byte("User-agent: *\nCrawl-delay: " + v + "\nDisallow: /x\n")).CrawlDelay(Agent{Token: "a"}); !ok || d != want {
			t.Errorf("Crawl-delay: %q = %v, %v; want %v", v, d, ok, want)
		}
	}
}

// A redirect to a URL that is not http or https is "nowhere to go": the
// file is unavailable (RFC 9309 §2.3.1.2, everything allowed), and no
// request is made to that URL.
func TestCache_RedirectToOtherSchemeIsUnavailable(t *testing.T) {
	for _, loc := range []string{"ftp://example.com/robots.txt", "file:///etc/robots.txt", "mailto:webmaster@example.com"} {
		t.Run(loc, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				web := &fakeWeb{}
				web.set(func(req *http.Request) (*http.Response, error) {
					if req.URL.Scheme != "https" {
						return response(req, 200, "User-agent: *\nDisallow: /\n"), nil
					}
					r := response(req, 301, "")
					r.Header.Set("Location", loc)
					return r, nil
				})
				c := &Cache{Transport: web}
				err := c.Check(context.Background(), bothy, mustURL(t, "https://example.com/x"))
				if err != nil || web.count() != 1 {
					t.Fatalf("Check = %v after %d fetches; want nil after 1", err, web.count())
				}
				if r, _ := c.Cached(mustURL(t, "https://example.com/")); r.Unreachable() {
					t.Error("robots.txt is unreachable; want unavailable (allow all)")
				}
			})
		})
	}
}

// A *DisallowedError matches ErrUnreachable only when robots.txt could not
// be fetched; a rule's refusal is ErrDisallowed alone.
func TestCache_DisallowedByRuleIsNotUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web := &fakeWeb{}
		web.set(serve(200, "User-agent: *\nDisallow: /private\n"))
		c := &Cache{Transport: web}
		err := c.Check(context.Background(), bothy, mustURL(t, "https://example.com/private/x"))
		if !errors.Is(err, ErrDisallowed) || errors.Is(err, ErrUnreachable) {
			t.Fatalf("Check = %v; want ErrDisallowed and not ErrUnreachable", err)
		}
		web.set(serve(503, ""))
		c = &Cache{Transport: web}
		err = c.Check(context.Background(), bothy, mustURL(t, "https://other.example/x"))
		if !errors.Is(err, ErrDisallowed) || !errors.Is(err, ErrUnreachable) {
			t.Fatalf("Check after 503 = %v; want ErrDisallowed and ErrUnreachable", err)
		}
	})
}

// The head holds title, link, base, meta, script, style, template and
// noscript, whatever their contents; text or any other element begins the
// body, and meta elements after that do not count. The usual head (a title
// with text, then the robots meta) failed before the fix: the title's text
// was taken for the body.
func TestPageRulesFromHTML_WhatEndsTheHead(t *testing.T) {
	meta := `<meta name="robots" content="noindex">`
	cases := []struct {
		name, html string
		noindex    bool
	}{
		{"link", `<html><head><link rel="stylesheet" href="/s.css">` + meta, true},
		{"base", `<html><head><base href="https://example.com/">` + meta, true},
		{"title", `<head><title>t</title>` + meta, true},
		{"white space", "<head>\n\t \n" + meta, true},
		{"style", `<head><style>p{}</style>` + meta, true},
		{"script", `<head><script>var x = 1</script>` + meta, true},
		{"script with a tag in a string", `<head><script>document.write("<p>")</script>` + meta, true},
		{"template", `<head><template><p>x</p></template>` + meta, true},
		{"noscript", `<head><noscript><p>no js</p></noscript>` + meta, true},
		{"text", `<html><head>hello` + meta, false},
		{"text before head", `hello<head>` + meta, false},
		{"div", `<head><div></div>` + meta, false},
		{"end of head", `<head></head>` + meta, false},
	}
	for _, c := range cases {
		if got := PageRulesFromHTML([]byte(c.html), Agent{Token: "a"}); got.NoIndex != c.noindex {
			t.Errorf("%s: %q: NoIndex = %v, want %v", c.name, c.html, got.NoIndex, c.noindex)
		}
	}
}

// Rules addressed to a bot match its product token and former names as the
// token grammar reads them: an Agent whose Token carries a version
// ("ExampleBot/1.0") is addressed as "examplebot", in X-Robots-Tag, in
// Robots-Tag and in a meta element.
func TestPageRules_AgentTokenWithVersion(t *testing.T) {
	a := Agent{Token: "ExampleBot/1.0", Former: []string{"OldBot/2 (+https://example.com)"}}
	cases := []struct {
		name string
		h    http.Header
		want PageRules
	}{
		{"X-Robots-Tag token", http.Header{"X-Robots-Tag": {"examplebot: noindex"}}, PageRules{NoIndex: true}},
		{"X-Robots-Tag former", http.Header{"X-Robots-Tag": {"OLDBOT: nofollow"}}, PageRules{NoFollow: true}},
		{"Robots-Tag token", http.Header{"Robots-Tag": {"examplebot;noai"}}, PageRules{NoAI: true}},
		{"other bot", http.Header{"X-Robots-Tag": {"examplebot2: noindex"}}, PageRules{}},
	}
	for _, c := range cases {
		if got := PageRulesFromHeader(c.h, a); got != c.want {
			t.Errorf("%s: %v = %+v, want %+v", c.name, c.h, got, c.want)
		}
	}
	if got := PageRulesFromHTML([]byte(`<head><meta name="ExampleBot" content="nosnippet">`), a); got != (PageRules{NoSnippet: true}) {
		t.Errorf("meta name=ExampleBot = %+v, want NoSnippet", got)
	}
}

// The zero Agent has no name, so an empty name addresses nobody: not a
// meta element without a name, nor an empty "name:" or an empty string
// member.
func TestPageRules_EmptyNameAddressesNobody(t *testing.T) {
	for _, a := range []Agent{{}, {Token: " ", Former: []string{""}}} {
		for _, page := range []string{`<head><meta content="noindex">`, `<head><meta name="" content="noindex">`, `<head><meta name=" " content="noindex">`} {
			if got := PageRulesFromHTML([]byte(page), a); !got.IsZero() {
				t.Errorf("%+v: %s = %+v, want nothing", a, page, got)
			}
		}
		for _, h := range []http.Header{{"X-Robots-Tag": {": noindex"}}, {"X-Robots-Tag": {" : noindex"}}, {"Robots-Tag": {`"";noindex`}}} {
			if got := PageRulesFromHeader(h, a); !got.IsZero() {
				t.Errorf("%+v: %v = %+v, want nothing", a, h, got)
			}
		}
	}
}

// An X-Robots-Tag value whose first colon belongs to a rule after other
// rules ("noindex, unavailable_after: DATE", "nosnippet, max-snippet: 20")
// addresses every bot: the text before the colon is a list, not a name.
func TestPageRulesFromHeader_ColonAfterARule(t *testing.T) {
	a := Agent{Token: "a"}
	cases := []struct {
		v    string
		want PageRules
	}{
		{"noindex, unavailable_after: 2010-06-25", PageRules{NoIndex: true, UnavailableAfter: time.Date(2010, 6, 25, 0, 0, 0, 0, time.UTC)}},
		{"nosnippet, max-snippet: 20", PageRules{NoSnippet: true}},
		{"noarchive nofollow: x", PageRules{}},
		{"max-snippet: 20, noai", PageRules{NoAI: true}},
	}
	for _, c := range cases {
		if got := PageRulesFromHeader(http.Header{"X-Robots-Tag": {c.v}}, a); got != c.want {
			t.Errorf("X-Robots-Tag: %s = %+v, want %+v", c.v, got, c.want)
		}
	}
}

// A rule cut by the 8 KiB limit is dropped, not read as the shorter rule it
// would leave ("noindexing" cut to "noindex"), in a header field and in a
// meta element's content.
func TestPageRules_CutMemberIsDropped(t *testing.T) {
	prefix := strings.Repeat("a", 8<<10-len("noindex")-2) + ", "
	v := prefix + "noindexing, nofollow"
	if len(prefix+"noindex") != 8<<10 {
		t.Fatalf("the cut is at %d", len(prefix+"noindex"))
	}
	a := Agent{Token: "a"}
	if got := PageRulesFromHeader(http.Header{"X-Robots-Tag": {v}}, a); !got.IsZero() {
		t.Errorf("X-Robots-Tag cut in \"noindexing\" = %+v, want nothing", got)
	}
	if got := PageRulesFromHTML([]byte(`<head><meta name="robots" content="`+v+`">`), a); !got.IsZero() {
		t.Errorf("meta content cut in \"noindexing\" = %+v, want nothing", got)
	}
	if got := PageRulesFromHeader(http.Header{"X-Robots-Tag": {"noindex, " + v}}, a); got != (PageRules{NoIndex: true}) {
		t.Errorf("rule before the cut: %+v, want noindex", got)
	}
	// A value that is one member longer than the limit has no whole member
	// left: nothing, not the cut start of it.
	one := strings.Repeat(" ", 8<<10-len("noindex")) + "noindexing"
	if got := PageRulesFromHeader(http.Header{"X-Robots-Tag": {one}}, a); !got.IsZero() {
		t.Errorf("one member cut in \"noindexing\" = %+v, want nothing", got)
	}
	if got := PageRulesFromHTML([]byte(`<head><meta name="robots" content="`+one+`">`), a); !got.IsZero() {
		t.Errorf("meta content of one member cut in \"noindexing\" = %+v, want nothing", got)
	}
}

// /robots.txt may always be fetched, so its usage is what the file states,
// never NotApplicable, even under "Disallow: /".
func TestRobotsUsage_RobotsTxtIsApplicable(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /\nContent-Usage: train-ai=n\n"))
	a := Agent{Token: "a"}
	want := Usage{}.With(TrainAI, Disallowed)
	if got := r.Usage(a, "/robots.txt"); got != want {
		t.Errorf("Usage(/robots.txt) = %v, want %v", got, want)
	}
	if got := r.Usage(a, "/x"); got.Get(TrainAI) != NotApplicable || got.Get(Search) != NotApplicable {
		t.Errorf("Usage(/x) = %v, want every purpose n/a", got)
	}
}

// Content-Usage rules of the same length: only those that match the target
// count, and they combine most restrictively, within one group and across
// the groups of one name (which RFC 9309 §2.2.1 merges).
func TestRobotsUsage_EqualLengthRules(t *testing.T) {
	a := Agent{Token: "a"}
	cases := []struct {
		name, body, target string
		want               Usage
	}{
		{"only the matching rule", "User-agent: a\nAllow: /\nContent-Usage: /a train-ai=n\nContent-Usage: /b search=n\n", "/a/x",
			Usage{}.With(TrainAI, Disallowed)},
		{"both match, one group", "User-agent: a\nAllow: /\nContent-Usage: /a train-ai=n\nContent-Usage: /* search=n\n", "/a/x",
			Usage{}.With(TrainAI, Disallowed).With(Search, Disallowed)},
		{"both match, two groups of one name", "User-agent: a\nAllow: /\nContent-Usage: /a train-ai=n\n\nUser-agent: a\nAllow: /\nContent-Usage: /a search=n\n", "/a/x",
			Usage{}.With(TrainAI, Disallowed).With(Search, Disallowed)},
		{"longer rule in the second group wins", "User-agent: a\nAllow: /\nContent-Usage: /a train-ai=n\n\nUser-agent: a\nAllow: /\nContent-Usage: /a/ search=n\n", "/a/x",
			Usage{}.With(Search, Disallowed)},
	}
	for _, c := range cases {
		if got := Parse([]byte(c.body)).Usage(a, c.target); got != c.want {
			t.Errorf("%s: Usage(%s) = %v, want %v", c.name, c.target, got, c.want)
		}
	}
}

// FuzzPageRulesFromHTML: any document is read without panic, and a robots
// meta element that opens the document always counts, whatever follows.
func FuzzPageRulesFromHTML(f *testing.F) {
	for _, s := range []string{
		"", "<title>t</title><p>x", "<script>if (a < b) {}</script>", "<noscript><p></noscript>",
		"<template><meta name=robots content=nofollow></template>", "<style>", "<title>", "<!--", "<head></head><body>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		a := Agent{Token: "a"}
		_ = PageRulesFromHTML([]byte(doc), a)
		if got := PageRulesFromHTML([]byte(`<head><meta name="robots" content="noindex">`+doc), a); !got.NoIndex {
			t.Errorf("a leading robots meta did not count before %q", doc)
		}
	})
}

// A nil *Robots and the zero value allow everything and state nothing, and
// none of their methods panics.
func TestRobots_NilAndZeroAllowEverything(t *testing.T) {
	a := Agent{Token: "bothybot"}
	for name, r := range map[string]*Robots{"nil": nil, "zero": {}} {
		if ok, rule := r.Decide(a, "/private"); !ok || rule != "" || !r.Allowed(a, "/") {
			t.Errorf("%s: Decide = %v, %q; want allowed by no rule", name, ok, rule)
		}
		if d, ok := r.CrawlDelay(a); ok || d != 0 {
			t.Errorf("%s: CrawlDelay = %v, %v; want none", name, d, ok)
		}
		if r.Usage(a, "/") != (Usage{}) || r.Statement(a, "/") != (Usage{}) {
			t.Errorf("%s: a usage stated", name)
		}
		if r.Sitemaps() != nil || len(r.Names()) != 0 || r.Truncated() || r.Unreachable() {
			t.Errorf("%s: Sitemaps %v, Names %v, Truncated %v, Unreachable %v", name, r.Sitemaps(), r.Names(), r.Truncated(), r.Unreachable())
		}
	}
}

// A product token may hold every letter, "-" and "_", matched whatever the
// case on either side (RFC 9309 §2.2.1): the ends of the ranges included.
func TestAgent_EveryIdentifierCharacter(t *testing.T) {
	name := "ABCDEFGHIJKLMNOPQRSTUVWXYZ-abcdefghijklmnopqrstuvwxyz_Bot"
	r := Parse([]byte("User-agent: " + name + "/2.1\nDisallow: /\n\nUser-agent: *\nAllow: /\n"))
	for _, token := range []string{name, strings.ToLower(name), strings.ToUpper(name)} {
		if r.Allowed(Agent{Token: token}, "/page") {
			t.Errorf("%s: allowed, want its group's Disallow: /", token)
		}
	}
	for _, token := range []string{"ABCDEFGHIJKLMNOPQRSTUVWXY", "abcdefghijklmnopqrstuvwxyz_Bot"} {
		if !r.Allowed(Agent{Token: token}, "/page") {
			t.Errorf("%s: disallowed, want the * group", token)
		}
	}
}

// Target forms at the edges of pathAndQuery: a fragment alone is the empty
// path, so "/" (the fragment is ignored); a URL with an empty authority
// ("https:///p", "file:///p") has the path after it (RFC 3986 §3.2: the
// authority is empty, the path starts at the third slash); a string with
// no scheme before "://" is not an absolute URL (RFC 3986 §3.1: a scheme
// is at least one letter) but a relative path, taken from the root.
func TestAllowed_TargetEdgeForms(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /$\nDisallow: /p\n"))
	a := Agent{Token: "a"}
	for _, c := range []struct {
		target     string
		disallowed bool
	}{
		{"#top", true},       // the path "/"
		{"#/p", true},        // still "/": the fragment is not the path
		{"/#top", true},      // "/"
		{"/q#/p", false},     // "/q"
		{"https:///p", true}, // the path "/p"
		{"file:///p?x", true},
		{"https:///q", false},
		{"https://?x", false},                // the path "/?x": neither "/" alone nor "/p"
		{"://example.com/p", false},          // the relative path "/://example.com/p"
		{"://example.com/", false},           // "/://example.com/"
		{"https://example.com", true},        // the path "/"
		{"https://example.com#frag", true},   // "/"
		{"https://example.com/p#frag", true}, // "/p"
	} {
		if got := !r.Allowed(a, c.target); got != c.disallowed {
			t.Errorf("Allowed(%q): disallowed = %v, want %v", c.target, got, c.disallowed)
		}
	}
}
