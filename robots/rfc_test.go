package robots

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jimsmart/grobotstxt"
)

// otherRecordLines are lines other than User-agent, Allow and Disallow, as
// real files write them. Content-Usage is not among them: draft-ietf-aipref-
// attach §3 adds it to the rule production, so it closes the user-agent list
// as Allow and Disallow do (TestRobotsUsage).
var otherRecordLines = []struct{ name, line string }{
	{"Crawl-delay", "Crawl-delay: 5"},
	{"crawl-delay lower case", "crawl-delay: 5"},
	{"Crawl-delay garbage", "Crawl-delay: soon"},
	{"Sitemap", "Sitemap: https://example.com/sitemap.xml"},
	{"Host", "Host: example.com"},
	{"Noindex", "Noindex: /x"},
	{"Request-rate", "Request-rate: 1/5"},
	{"Visit-time", "Visit-time: 0600-0845"},
	{"Clean-param", "Clean-param: ref /"},
	{"Content-Signal", "Content-Signal: search=yes, ai-train=no"},
	{"unknown key", "X-Whatever: 1"},
	{"HTML tag", "<br />"},
	{"comment", "# a comment"},
	{"empty line", ""},
}

// RFC 9309 §2.2.4: "parsing of other records MUST NOT interfere with the
// parsing of explicitly defined records", so no record other than Allow and
// Disallow ends the user-agent lines of a group, and none starts a group.
// Every record kind, in every place a file puts it.
func TestRFC9309_2_2_4_OtherRecordsNeverEndAGroup(t *testing.T) {
	positions := []struct {
		name, file string // %s is the record line
		cases      []allowCase
	}{
		{"between user-agent lines", "User-agent: a\n%s\nUser-agent: b\nDisallow: /private\n", []allowCase{
			{"a", "/private", false}, {"b", "/private", false}, {"c", "/private", true}, {"a", "/public", true}}},
		{"between * and a name", "User-agent: *\n%s\nUser-agent: b\nDisallow: /private\n", []allowCase{
			{"c", "/private", false}, {"b", "/private", false}, {"c", "/public", true}}},
		{"between a name and *", "User-agent: a\n%s\nUser-agent: *\nDisallow: /private\n", []allowCase{
			{"a", "/private", false}, {"c", "/private", false}}},
		{"twice between three names", "User-agent: a\n%[1]s\nUser-agent: b\n%[1]s\nUser-agent: c\nDisallow: /private\n", []allowCase{
			{"a", "/private", false}, {"b", "/private", false}, {"c", "/private", false}, {"d", "/private", true}}},
		{"before the first user-agent line", "%s\nUser-agent: a\nDisallow: /private\n", []allowCase{
			{"a", "/private", false}, {"b", "/private", true}}},
		{"between rules", "User-agent: a\nDisallow: /private\n%s\nDisallow: /secret\n", []allowCase{
			{"a", "/private", false}, {"a", "/secret", false}, {"b", "/secret", true}}},
		{"between rules and the next group", "User-agent: a\nDisallow: /private\n%s\nUser-agent: b\nDisallow: /secret\n", []allowCase{
			{"a", "/private", false}, {"a", "/secret", true}, {"b", "/secret", false}, {"b", "/private", true}}},
		{"after the last rule", "User-agent: a\nUser-agent: b\nDisallow: /private\n%s\n", []allowCase{
			{"a", "/private", false}, {"b", "/private", false}}},
	}
	n := 0
	for _, rec := range otherRecordLines {
		for _, pos := range positions {
			t.Run(rec.name+"/"+pos.name, func(t *testing.T) {
				body := strings.ReplaceAll(pos.file, "%[1]s", rec.line)
				body = strings.ReplaceAll(body, "%s", rec.line)
				r := Parse([]byte(body))
				for _, c := range pos.cases {
					n++
					if got := r.Allowed(Agent{Token: c.agent}, c.target); got != c.want {
						t.Errorf("Allowed(%s, %s) = %v, want %v\n%s", c.agent, c.target, got, c.want, body)
					}
					// Google's parser agrees on every one of these.
					if g := grobotstxt.AgentAllowed(body, c.agent, "https://example.com"+c.target); g != c.want {
						t.Errorf("grobotstxt: Allowed(%s, %s) = %v", c.agent, c.target, g)
					}
				}
			})
		}
	}
	if n < 300 {
		t.Errorf("only %d cases ran", n)
	}
}

// A Crawl-delay inside a group belongs to the whole group: to every agent
// the group names, wherever the line stands among the group's lines.
func TestCrawlDelay_BelongsToWholeGroup(t *testing.T) {
	cases := []struct{ name, body string }{
		{"between user-agent lines", "User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow: /p\n"},
		{"before the user-agent lines' end with a Sitemap", "User-agent: a\nSitemap: https://example.com/s.xml\nCrawl-delay: 5\nUser-agent: b\nDisallow: /p\n"},
		{"after the rules", "User-agent: a\nUser-agent: b\nDisallow: /p\nCrawl-delay: 5\n"},
		{"between rules", "User-agent: a\nUser-agent: b\nDisallow: /p\nCrawl-delay: 5\nAllow: /p/q\n"},
		{"after the user-agent lines", "User-agent: a\nUser-agent: b\nCrawl-delay: 5\nDisallow: /p\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Parse([]byte(c.body))
			for _, ag := range []string{"a", "b"} {
				if r.Allowed(Agent{Token: ag}, "/p") {
					t.Errorf("%s: /p allowed", ag)
				}
				if d, ok := r.CrawlDelay(Agent{Token: ag}); !ok || d != 5*time.Second {
					t.Errorf("%s: CrawlDelay = %v, %v; want 5s", ag, d, ok)
				}
			}
			if d, ok := r.CrawlDelay(Agent{Token: "c"}); ok {
				t.Errorf("c (no group, no *): CrawlDelay = %v", d)
			}
		})
	}
}

// RFC 9309 §2.2.1: "*" names every bot, and authors type all kinds of white
// space after it: "User-agent: *<space>" is the * group whatever the space.
func TestRFC9309_2_2_1_StarFollowedByWhiteSpace(t *testing.T) {
	spaces := []struct{ name, s string }{
		{"space", " "}, {"tab", "\t"}, {"VT", "\v"}, {"FF", "\f"},
		{"NBSP Latin-1", "\xA0"}, {"NEL Latin-1", "\x85"},
		{"NBSP UTF-8", "\xC2\xA0"}, {"NEL UTF-8", "\xC2\x85"},
		{"ideographic space", "\u3000"}, {"em space", "\u2003"},
	}
	n := 0
	for _, sp := range spaces {
		for _, form := range []string{"*%s", "*%s%s", "*%sall bots", "%s*%s", "*%s# comment"} {
			line := strings.ReplaceAll(form, "%s", sp.s)
			body := "User-agent: " + line + "\nDisallow: /private\n"
			t.Run(sp.name+"/"+strings.ReplaceAll(form, "%s", "_"), func(t *testing.T) {
				n++
				r := Parse([]byte(body))
				if r.Allowed(Agent{Token: "AnyBot"}, "/private") {
					t.Errorf("%q is not the * group", line)
				}
				if !r.Allowed(Agent{Token: "AnyBot"}, "/public") {
					t.Error("/public disallowed")
				}
			})
		}
	}
	if n != 50 {
		t.Errorf("%d cases ran, want 50", n)
	}
	// "*" glued to a name is no product token: that line names no bot.
	for _, v := range []string{"*bot", "*-", "*/1.0", "**"} {
		r := Parse([]byte("User-agent: " + v + "\nDisallow: /\n"))
		if !r.Allowed(Agent{Token: "AnyBot"}, "/x") {
			t.Errorf("User-agent: %s is read as *", v)
		}
	}
}

// RFC 9309 §2.2.1: product-token = identifier / "*", identifier =
// 1*("-" / A-Z / "_" / a-z). A user-agent value names the bot of its
// leading identifier, whatever follows it; so does the bot's own token.
func TestRFC9309_2_2_1_ProductTokenGrammar(t *testing.T) {
	values := []string{
		"examplebot", "ExampleBot", "examplebot*", "examplebot/1.0", "ExampleBot (+https://example.com/bot)",
		"examplebot;", "examplebot,otherbot", "examplebot.com", "examplebot!", "examplebot%20", "examplebot'",
		"examplebot+", "examplebot|x", "examplebot~", "examplebot^", "examplebot`", "examplebot&", "examplebot#",
		"examplebot$", "\xA0examplebot", "examplebot\v", "examplebot\xC2\xA0more",
	}
	for _, v := range values {
		t.Run(v, func(t *testing.T) {
			r := Parse([]byte("User-agent: *\nDisallow: /star-only\n\nUser-agent: " + v + "\nDisallow: /private\n"))
			for _, tok := range []string{"examplebot", "ExampleBot/2.0", "EXAMPLEBOT (compatible)"} {
				a := Agent{Token: tok}
				if r.Allowed(a, "/private") {
					t.Errorf("User-agent: %q does not name %q", v, tok)
				}
				if !r.Allowed(a, "/star-only") {
					t.Errorf("User-agent: %q: %q falls back to *", v, tok)
				}
			}
		})
	}
	// Names with characters from the identifier set stay whole.
	runAllowed(t, "User-agent: example-bot_2\nDisallow: /\n", []allowCase{
		{"example-bot_", "/x", false}, {"example-bot", "/x", true}, {"example", "/x", true},
	})
}

// A partial UTF-8 byte order mark (EF, EF BB) is skipped like a whole one:
// what follows it is the first line.
func TestParse_PartialBOM(t *testing.T) {
	for _, bom := range []string{"\xEF\xBB\xBF", "\xEF\xBB", "\xEF"} {
		for _, eol := range []string{"\n", "\r\n", "\r"} {
			body := bom + "User-agent: examplebot" + eol + "Disallow: /private" + eol
			if Parse([]byte(body)).Allowed(Agent{Token: "examplebot"}, "/private") {
				t.Errorf("%q: first line lost", body)
			}
		}
	}
}

// RFC 9309 §2.2.2 matches the path. A target that starts with "/" is a path
// (RFC 3986 path-absolute), also when it starts with "//": it is never a
// network-path reference whose first segment is a host. Every entry point
// that takes a path or URL.
func TestAllowed_DoubleSlashIsAPath(t *testing.T) {
	body := "User-agent: *\nDisallow: /*admin\nDisallow: //\nAllow: /page\n"
	r := Parse([]byte(body))
	a := Agent{Token: "a"}
	cases := []struct {
		target string
		want   bool
	}{
		{"//admin/page", false}, // not host "admin" with path "/page"
		{"//x", false},
		{"//example.com/page", false},
		{"//admin?q=1", false},
		{"https://example.com//admin/page", false},
		{"https://example.com//x", false},
		{"/page", true},
		{"https://example.com/page", true},
		{"/x", true},
	}
	for _, c := range cases {
		if got := r.Allowed(a, c.target); got != c.want {
			t.Errorf("Allowed(%q) = %v, want %v", c.target, got, c.want)
		}
		if got, _ := r.Decide(a, c.target); got != c.want {
			t.Errorf("Decide(%q) = %v, want %v", c.target, got, c.want)
		}
		if got := slowAllowed(r, a, c.target); got != c.want {
			t.Errorf("slowAllowed(%q) = %v, want %v", c.target, got, c.want)
		}
	}
	// Cache.Check passes the URL's request URI, which is "//admin/page" for
	// https://example.com//admin/page.
	web := &fakeWeb{handler: serve(200, body)}
	c := &Cache{Transport: web}
	for _, c2 := range cases[4:6] {
		err := c.Check(context.Background(), a, mustURL(t, c2.target))
		if !errors.Is(err, ErrDisallowed) {
			t.Errorf("Check(%s) = %v, want disallowed", c2.target, err)
		}
	}
	if err := c.Check(context.Background(), a, mustURL(t, "https://example.com/page")); err != nil {
		t.Errorf("Check(/page) = %v", err)
	}
	if web.count() == 0 {
		t.Fatal("robots.txt never fetched")
	}
}
