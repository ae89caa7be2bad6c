package robots

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jimsmart/grobotstxt"
)

type allowCase struct {
	agent  string
	target string
	want   bool
}

func runAllowed(t *testing.T, body string, cases []allowCase) {
	t.Helper()
	r := Parse([]byte(body))
	for _, c := range cases {
		if got := r.Allowed(Agent{Token: c.agent}, c.target); got != c.want {
			t.Errorf("Allowed(%q, %q) = %v, want %v\nrobots.txt:\n%s", c.agent, c.target, got, c.want, body)
		}
	}
}

// RFC 9309 §5.1, the simple example. C1, H2, S3, D7.
func TestRFC9309_SimpleExample(t *testing.T) {
	body := `User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
`
	runAllowed(t, body, []allowCase{
		{"foobot", "https://www.example.com/example/page.html", true},
		{"foobot", "https://www.example.com/example/allowed.gif", true},
		{"foobot", "https://www.example.com/", false},
		{"foobot", "https://www.example.com/example/other.gif", false},
		{"barbot", "/example/page.html", false},
		{"bazbot", "/example/page.html", false},
		{"barbot", "/example/other.gif", true}, // * is ignored: barbot has a group
		{"quxbot", "/example/page.html", true}, // empty group: everything allowed
		{"quxbot", "/a.gif", true},
		{"otherbot", "/a.gif", false},
		{"otherbot", "/example/", false},
		{"otherbot", "/publications/x.html", true},
		{"otherbot", "/publications/x.gif", true}, // Allow /publications/ (14 octets) beats *.gif$ (6)
	})
}

// RFC 9309 §5.2, the longest match example.
func TestRFC9309_LongestMatch(t *testing.T) {
	runAllowed(t, "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n", []allowCase{
		{"foobot", "/example/page/", true},
		{"foobot", "/example/page/disallowed.gif", false},
		{"foobot", "/example/page/allowed.gif", true},
	})
}

// RFC 9309 §2.2.1: groups for the same agent are merged.
func TestRFC9309_MergedGroups(t *testing.T) {
	runAllowed(t, "user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: ExampleBot\ndisallow: /baz\n", []allowCase{
		{"ExampleBot", "/foo", false}, {"ExampleBot", "/bar", false}, {"ExampleBot", "/baz", false}, {"ExampleBot", "/qux", true},
		{"examplebot", "/baz", false}, // C1: case-insensitive product token
	})
}

// RFC 9309 §2.2.1: the * group, and no rules at all.
func TestRFC9309_StarAndNoGroup(t *testing.T) {
	runAllowed(t, "User-agent: *\nDisallow: /x\n", []allowCase{{"AnyBot", "/x", false}, {"AnyBot", "/y", true}})
	runAllowed(t, "User-agent: other\nDisallow: /\n", []allowCase{{"AnyBot", "/x", true}})
	runAllowed(t, "", []allowCase{{"AnyBot", "/x", true}})
}

// RFC 9309 §2.2.2: the percent-encoding table.
func TestRFC9309_PercentEncodingTable(t *testing.T) {
	cases := []struct{ rule, target string }{
		{"/foo/bar?baz=quz", "/foo/bar?baz=quz"},
		{"/foo/bar?baz=https://foo.bar", "/foo/bar?baz=https%3A%2F%2Ffoo.bar"},
		{"/foo/bar/ツ", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%62%61%7A", "/foo/bar/baz"},
	}
	for _, c := range cases {
		r := Parse([]byte("User-agent: *\nDisallow: " + c.rule + "\n"))
		if r.Allowed(Agent{Token: "a"}, c.target) {
			t.Errorf("rule %q does not match %q", c.rule, c.target)
		}
		if r.Allowed(Agent{Token: "a"}, "/other") == false {
			t.Errorf("rule %q matches /other", c.rule)
		}
	}
}

// RFC 9309 §2.2.3: special characters, and their escapes.
func TestRFC9309_SpecialCharacters(t *testing.T) {
	runAllowed(t, `User-agent: *
Disallow: / # comment in line
# comment on its own line
Allow: /this/path/exactly$
Allow: /that/*/exactly
Allow: /path/file-with-a-%2A.html
Allow: /path/foo-%24
`, []allowCase{
		{"a", "/x", false},
		{"a", "/this/path/exactly", true},
		{"a", "/this/path/exactlyx", false}, // $ anchors
		{"a", "/that/any/thing/exactly", true},
		{"a", "/that/exactly", false},
		{"a", "https://www.example.com/path/file-with-a-*.html", true},
		{"a", "https://www.example.com/path/file-with-a-%2A.html", true},
		{"a", "https://www.example.com/path/file-with-a-x.html", false}, // %2A is no wildcard
		{"a", "https://www.example.com/path/foo-$", true},
		{"a", "https://www.example.com/path/foo-", false},
	})
}

// RFC 9309 §2.2.2: /robots.txt is implicitly allowed.
func TestRFC9309_RobotsTxtAlwaysAllowed(t *testing.T) {
	runAllowed(t, "User-agent: *\nDisallow: /\n", []allowCase{
		{"a", "/robots.txt", true},
		{"a", "https://example.com/robots.txt", true},
		{"a", "/robots.txt?x=1", true},
		{"a", "/robots.txt/x", false},
	})
	if !DisallowAll.Allowed(Agent{Token: "a"}, "/robots.txt") {
		t.Error("DisallowAll disallows /robots.txt")
	}
}

// C1, H2, D7: longest match, Allow wins ties, wildcards, empty Disallow.
func TestAllowed_C1_Matching(t *testing.T) {
	body := `User-agent: *
Disallow: /a
Allow: /a
Disallow: /b/
Allow: /b/c
Disallow: /*.php$
Disallow: /*?sort=
Allow: /x/*/y$
Disallow: /x/
Disallow: /q$
Disallow:
Disallow: /dollar$in
`
	runAllowed(t, body, []allowCase{
		{"a", "/a", true}, // tie: Allow wins
		{"a", "/ab", true},
		{"a", "/b/", false},
		{"a", "/b/c", true},
		{"a", "/b/cd", true},
		{"a", "/index.php", false},
		{"a", "/index.php?x", true},
		{"a", "/list?sort=asc", false},
		{"a", "/list?page=2&sort=asc", true}, // "?sort=" needs "?sort=", not "&sort="
		{"a", "/x/1/y", true},
		{"a", "/x/1/y/z", false},
		{"a", "/q", false},
		{"a", "/q/", true},
		{"a", "/dollar$in", false}, // '$' inside a pattern is literal
		{"a", "/dollarin", true},
		{"a", "/", true},
		{"a", "", true},
	})
	// D7: a group whose only rule is an empty Disallow allows everything.
	runAllowed(t, "User-agent: DirectoriesBot\nDisallow:\n\nUser-agent: *\nDisallow: /\n", []allowCase{
		{"DirectoriesBot", "/anything", true},
		{"Other", "/anything", false},
	})
}

// Targets: absolute URLs, fragments, queries, no path.
func TestAllowed_TargetForms(t *testing.T) {
	runAllowed(t, "User-agent: *\nDisallow: /p\nDisallow: /?q\n", []allowCase{
		{"a", "https://example.com/p", false},
		{"a", "https://example.com:8443/p?x#frag", false},
		{"a", "https://user@example.com/p", false},
		{"a", "//example.com/p", true}, // the path "//example.com/p"
		{"a", "//p", true},
		{"a", "https://example.com", true},
		{"a", "https://example.com?q", false},
		{"a", "/x#/p", true},
		{"a", "p", false}, // a relative path is taken from the root
	})
}

// B3: former names, with the traps from the issue. S3: the token group wins over *.
func TestAllowed_B3_FormerNames(t *testing.T) {
	bothy := Agent{Token: "BothyBot", Former: []string{"CleatBot", "UnvarnishedCrawler"}}
	cases := []struct {
		name, body, target string
		want               bool
	}{
		{"star block plus Allow for the token", "User-agent: *\nDisallow: /\n\nUser-agent: BothyBot\nAllow: /\n", "/page", true},
		{"block on a former name plus Allow for the token", "User-agent: CleatBot\nDisallow: /\n\nUser-agent: BothyBot\nAllow: /\n", "/page", false},
		{"block on the other former name", "User-agent: unvarnishedcrawler\nDisallow: /private\n", "/private/x", false},
		{"former name group ignores star", "User-agent: *\nDisallow: /\n\nUser-agent: CleatBot\nDisallow: /old\n", "/page", true},
		{"former name group rule", "User-agent: *\nDisallow: /\n\nUser-agent: CleatBot\nDisallow: /old\n", "/old/x", false},
		{"no named group: star applies", "User-agent: *\nDisallow: /x\n\nUser-agent: OtherBot\nDisallow: /\n", "/x", false},
		{"no named group: star allows", "User-agent: *\nDisallow: /x\n\nUser-agent: OtherBot\nDisallow: /\n", "/y", true},
		{"no star, no name: allowed", "User-agent: OtherBot\nDisallow: /\n", "/y", true},
		{"one group naming token and former", "User-agent: BothyBot\nUser-agent: CleatBot\nDisallow: /a\nAllow: /a/b\n", "/a/b", true},
		{"token allow longer does not lift a former block", "User-agent: CleatBot\nDisallow: /a\n\nUser-agent: BothyBot\nAllow: /a/b\n", "/a/b", false},
		{"token version suffix in file", "User-agent: BothyBot/2.0\nDisallow: /\n", "/x", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Parse([]byte(c.body))
			if got := r.Allowed(bothy, c.target); got != c.want {
				t.Errorf("Allowed(%q) = %v, want %v", c.target, got, c.want)
			}
		})
	}
	// S3: the SofyaBot group takes precedence over *.
	runAllowed(t, "User-agent: *\nDisallow: /\n\nUser-agent: SofyaBot\nDisallow: /private\n", []allowCase{
		{"SofyaBot", "/public", true}, {"sofyabot", "/private", false}, {"SofyaBot/1.0 (+https://x)", "/public", true},
	})
}

// B4 (reading part): Crawl-delay from the chosen groups, decimal seconds, garbage ignored.
func TestCrawlDelay_B4(t *testing.T) {
	bothy := Agent{Token: "BothyBot", Former: []string{"CleatBot"}}
	cases := []struct {
		name, body string
		want       time.Duration
		ok         bool
	}{
		{"star", "User-agent: *\nCrawl-delay: 10\n", 10 * time.Second, true},
		{"decimal", "User-agent: *\nCrawl-delay: 0.5\n", 500 * time.Millisecond, true},
		{"leading dot", "User-agent: *\ncrawl-delay: .25\n", 250 * time.Millisecond, true},
		{"garbage", "User-agent: *\nCrawl-delay: soon\n", 0, false},
		{"negative", "User-agent: *\nCrawl-delay: -5\n", 0, false},
		{"unit", "User-agent: *\nCrawl-delay: 5s\n", 0, false},
		{"named wins over star", "User-agent: *\nCrawl-delay: 30\nDisallow: /x\n\nUser-agent: BothyBot\nCrawl-delay: 2\n", 2 * time.Second, true},
		{"named without delay ignores star", "User-agent: *\nCrawl-delay: 30\nDisallow: /x\n\nUser-agent: BothyBot\nDisallow: /x\n", 0, false},
		// RFC 9309 §2.2.4: with no rule between them, both user-agent lines
		// open one group, and its delays are the whole group's.
		{"no rule: one group", "User-agent: *\nCrawl-delay: 30\n\nUser-agent: BothyBot\nCrawl-delay: 2\n", 30 * time.Second, true},
		{"largest of named groups", "User-agent: CleatBot\nCrawl-delay: 7\n\nUser-agent: BothyBot\nCrawl-delay: 2\n", 7 * time.Second, true},
		{"no groups", "Crawl-delay: 5\n", 0, false},
		{"huge", "User-agent: *\nCrawl-delay: 99999999999999999999\n", time.Duration(1<<63 - 1), true},
		// The largest Duration, in seconds: as a float64 it is 2^63, one past
		// what a Duration holds, and must saturate, not wrap to a negative delay.
		{"largest Duration", "User-agent: *\nCrawl-delay: 9223372036.854775807\n", time.Duration(1<<63 - 1), true},
		{"delay does not end the agent list", "User-agent: Other\nCrawl-delay: 3\nUser-agent: BothyBot\nDisallow: /\n", 3 * time.Second, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, ok := Parse([]byte(c.body)).CrawlDelay(bothy)
			if d != c.want || ok != c.ok {
				t.Errorf("CrawlDelay = %v, %v; want %v, %v", d, ok, c.want, c.ok)
			}
		})
	}
	if _, ok := AllowAll.CrawlDelay(bothy); ok {
		t.Error("AllowAll has a crawl delay")
	}
}

func TestSitemaps(t *testing.T) {
	r := Parse([]byte("Sitemap: https://example.com/a.xml\nUser-agent: *\nDisallow: /\nsitemap: https://example.com/b.xml\nSitemap:\n"))
	got := r.Sitemaps()
	if len(got) != 2 || got[0] != "https://example.com/a.xml" || got[1] != "https://example.com/b.xml" {
		t.Fatalf("Sitemaps = %q", got)
	}
	got[0] = "changed"
	if r.Sitemaps()[0] == "changed" {
		t.Error("Sitemaps returns internal state")
	}
	var nilR *Robots
	if nilR.Sitemaps() != nil || !nilR.Allowed(Agent{}, "/x") {
		t.Error("nil *Robots is not an empty file")
	}
}

// Each form of the DisallowedError message: the rule is quoted only when
// there is one, and an unreachable file names its error when known.
func TestDisallowedError_Error(t *testing.T) {
	cases := []struct {
		e    DisallowedError
		want string
	}{
		{DisallowedError{URL: "https://h/p", Agent: "a", Rule: "Disallow: /p"}, `robots: https://h/p disallowed for a by "Disallow: /p"`},
		{DisallowedError{URL: "https://h/p", Agent: "a"}, "robots: https://h/p disallowed for a"},
		{DisallowedError{URL: "https://h/p", Agent: "a", Unreachable: true}, "robots: https://h/p: robots.txt unreachable, site closed"},
		{DisallowedError{URL: "https://h/p", Agent: "a", Unreachable: true, Err: ErrBadURL},
			"robots: https://h/p: robots.txt unreachable, site closed: " + ErrBadURL.Error()},
	}
	for _, c := range cases {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

// Names is sorted and lower-cased whatever the file order, with "*" and a
// name repeated in several groups listed once. Twelve names written in
// reverse order leave no chance for a map's order to pass for sorted.
func TestNames_SortedOnce(t *testing.T) {
	var b strings.Builder
	var want []string
	for c := 'l'; c >= 'a'; c-- {
		fmt.Fprintf(&b, "User-agent: %cBot\nUser-agent: *\nDisallow: /%c\n\n", c-'a'+'A', c)
		want = append([]string{string(c) + "bot"}, want...)
	}
	b.WriteString("User-agent: ABot\nDisallow: /again\n")
	got := Parse([]byte(b.String())).Names()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
}

// C2: fetch outcomes. D8: 404 opens the site, errors close it.
func TestFromResponse_C2(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /x\n")
	a := Agent{Token: "a"}
	cases := []struct {
		status      int
		err         error
		x, y        bool // Allowed for /x and /y
		unreachable bool
	}{
		{200, nil, false, true, false},
		{204, nil, false, true, false},
		{299, nil, false, true, false}, // the last 2xx: the body is the rules
		{300, nil, true, true, false},  // 3xx (§2.3.1.2): unavailable
		{301, nil, true, true, false},
		{399, nil, true, true, false},
		{400, nil, true, true, false}, // the first 4xx (§2.3.1.3)
		{401, nil, true, true, false},
		{403, nil, true, true, false},
		{404, nil, true, true, false},
		{410, nil, true, true, false},
		{499, nil, true, true, false}, // the last 4xx
		{429, nil, false, false, true},
		{500, nil, false, false, true},
		{503, nil, false, false, true},
		{0, ErrUnreachable, false, false, true},
		{200, ErrUnreachable, false, false, true},
		{100, nil, false, false, true},
	}
	for _, c := range cases {
		r := FromResponse(c.status, body, c.err)
		if got := r.Allowed(a, "/x"); got != c.x {
			t.Errorf("%d %v: /x allowed = %v", c.status, c.err, got)
		}
		if got := r.Allowed(a, "/y"); got != c.y {
			t.Errorf("%d %v: /y allowed = %v", c.status, c.err, got)
		}
		if r.Unreachable() != c.unreachable {
			t.Errorf("%d %v: Unreachable = %v", c.status, c.err, r.Unreachable())
		}
	}
}

func TestDecide_Rule(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /p\nAllow: /p/ok\n"))
	if ok, rule := r.Decide(Agent{Token: "a"}, "/p/x"); ok || rule != "Disallow: /p" {
		t.Errorf("Decide = %v, %q", ok, rule)
	}
	if ok, rule := r.Decide(Agent{Token: "a"}, "/p/ok"); !ok || rule != "Allow: /p/ok" {
		t.Errorf("Decide = %v, %q", ok, rule)
	}
	if ok, rule := r.Decide(Agent{Token: "a"}, "/q"); !ok || rule != "" {
		t.Errorf("Decide = %v, %q", ok, rule)
	}
}

// Each deliberate departure from grobotstxt, pinned with the RFC 9309 rule
// that decides it (or "more restrictive" where the RFC says nothing): ours
// follows the rule, grobotstxt.AgentAllowed does not. The package
// documentation lists the same cases.
func TestDeparture(t *testing.T) {
	cases := []struct {
		name, rfc, body, agent, target string
		want                           bool // ours; grobotstxt answers the opposite
	}{
		{"UnreservedEscapeDecoded", "§2.2.2", "User-agent: a\nDisallow: /~foo\n", "a", "/%7Efoo", false},
		{"UnreservedEscapeInRuleDecoded", "§2.2.2 table", "User-agent: a\nDisallow: /%7Efoo\n", "a", "/~foo", false},
		{"LowercaseEscapeInRule", "§2.2.2, RFC 3986 §2.1", "User-agent: a\nDisallow: /a%2fb\n", "a", "/a%2Fb", false},
		{"RobotsTxtAlwaysAllowed", "§2.2.2", "User-agent: a\nDisallow: /\n", "a", "/robots.txt", true},
		{"EscapedStarIsLiteral", "§2.2.3", "User-agent: a\nDisallow: /\nAllow: /file-%2A.html\n", "a", "/file-*.html", true},
		{"EscapedDollarIsLiteral", "§2.2.3", "User-agent: a\nDisallow: /\nAllow: /foo-%24\n", "a", "/foo-$", true},
		{"RawUTF8InQuery", "§2.2.2", "User-agent: a\nDisallow: /s?q=ツ\n", "a", "/s?q=ツ", false},
		{"QueryDelimEscapes", "§2.2.2 table", "User-agent: a\nDisallow: /r?u=https://x\n", "a", "/r?u=https%3A%2F%2Fx", false},
		{"UnparsableTargetMatchedAsWritten", "§2.2.2", "User-agent: a\nDisallow: /private\n", "a", "/public/%zz", true},
		{"TokenGrammarInFile", "§2.2.1", "User-agent: *\nAllow: /\n\nUser-agent: examplebot*\nDisallow: /\n", "examplebot", "/x", false},
		{"TokenGrammarInAgent", "§2.2.1", "User-agent: *\nDisallow: /\n\nUser-agent: Foo Bar\nAllow: /x/\n", "Foo Bar", "/x/y", true},
		{"StarThenUTF8NBSP", "§2.2.1, more restrictive", "User-agent: *\u00a0all\nDisallow: /\n", "a", "/x", false},
		{"NoIndexHTMLExtension", "more restrictive", "User-agent: a\nDisallow: /d/\nAllow: /d/index.html\n", "a", "/d/", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Parse([]byte(c.body)).Allowed(Agent{Token: c.agent}, c.target); got != c.want {
				t.Errorf("ours = %v, want %v (RFC 9309 %s)", got, c.want, c.rfc)
			}
			if g := grobotstxt.AgentAllowed(c.body, c.agent, "https://example.com"+c.target); g == c.want {
				t.Errorf("grobotstxt now agrees (%v): drop this departure", g)
			}
		})
	}
	// grobotstxt's AgentsAllowed merges several agents' groups into one, which
	// lets the token's Allow lift a former name's block (B3).
	body := "User-agent: CleatBot\nDisallow: /\n\nUser-agent: BothyBot\nAllow: /\n"
	if Parse([]byte(body)).Allowed(Agent{Token: "BothyBot", Former: []string{"CleatBot"}}, "/x") {
		t.Error("ours allows")
	}
	if !grobotstxt.AgentsAllowed(body, []string{"BothyBot", "CleatBot"}, "https://example.com/x") {
		t.Error("grobotstxt.AgentsAllowed now disallows")
	}
}

// Bad input: parses without panic, in bounded time and memory, as documented.
func TestParse_BadInput(t *testing.T) {
	a := Agent{Token: "a"}
	long := strings.Repeat("x", 100_000)
	cases := []struct {
		name   string
		body   []byte
		target string
		want   bool
	}{
		{"BOM", []byte("\xEF\xBB\xBFUser-agent: *\nDisallow: /x\n"), "/x", false},
		{"CR only", []byte("User-agent: *\rDisallow: /x\rAllow: /x/y\r"), "/x/z", false},
		{"CR only allow", []byte("User-agent: *\rDisallow: /x\rAllow: /x/y\r"), "/x/y", true},
		{"CRLF", []byte("User-agent: *\r\nDisallow: /x\r\n"), "/x", false},
		{"NUL in rule", []byte("User-agent: *\nDisallow: /a\x00b\n"), "/a%00b", false},
		{"NUL line", []byte("\x00\x00\x00\nUser-agent: *\nDisallow: /x\n"), "/x", false},
		{"long line cut", []byte("User-agent: *\nDisallow: /" + long + "\n"), "/" + long[:20000], false},
		{"long line no effect on others", []byte("User-agent: *\nAllow: /" + long + "\nDisallow: /y\n"), "/y", false},
		{"invalid escape literal", []byte("User-agent: *\nDisallow: /%zz\n"), "/%zz", false},
		{"invalid escape other", []byte("User-agent: *\nDisallow: /%zz\n"), "/%25zz", true},
		{"truncated escape", []byte("User-agent: *\nDisallow: /a%4\n"), "/a%4", false},
		// A '%' that starts no escape does not hide the (lower-case) escape
		// next to it, which still matches in any case.
		{"lone % before an escape", []byte("User-agent: *\nDisallow: /a%%2fb\n"), "/a%%2Fb", false},
		{"one hex digit before an escape", []byte("User-agent: *\nDisallow: /%a%2fb\n"), "/%a%2Fb", false},
		{"truncated escape after an escape", []byte("User-agent: *\nDisallow: /a%2fb%c\n"), "/a%2Fb%c", false},
		{"invalid UTF-8", []byte("User-agent: *\nDisallow: /\xff\xfe\n"), "/%FF%FE", false},
		{"invalid UTF-8 target", []byte("User-agent: *\nDisallow: /\xff\n"), "/\xff", false},
		{"binary junk", bytes.Repeat([]byte{0x00, 0xff, 0x13, '\n', ':', '*', '%'}, 1000), "/x", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Parse(c.body).Allowed(a, c.target); got != c.want {
				t.Errorf("Allowed(%q) = %v, want %v", c.target[:min(len(c.target), 40)], got, c.want)
			}
		})
	}
}

// C2: at least 500 KiB are read; past MaxParseBytes the rest, and a line cut
// in two, are ignored.
func TestParse_C2_SizeLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /first\n")
	for b.Len() < 500<<10 {
		b.WriteString("Disallow: /filler/path/segment\n")
	}
	b.WriteString("Disallow: /late\n") // still within 512 KiB
	for b.Len() < MaxParseBytes-10 {
		b.WriteString("#\n")
	}
	b.WriteString("Disallow: /private-area-cut-in-two\n") // straddles the limit
	b.WriteString("Disallow: /after\n")
	body := []byte(b.String())
	r := Parse(body)
	a := Agent{Token: "a"}
	if !r.Truncated() {
		t.Error("not Truncated")
	}
	for target, want := range map[string]bool{"/first": false, "/late": false, "/after": true, "/private": true, "/x": true} {
		if got := r.Allowed(a, target); got != want {
			t.Errorf("Allowed(%s) = %v, want %v", target, got, want)
		}
	}
	if Parse(body[:1000]).Truncated() {
		t.Error("short body Truncated")
	}
}

// 10 MiB of rules: bounded by MaxParseBytes.
func TestParse_TenMiB(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	body := bytes.Repeat([]byte("User-agent: *\nDisallow: /a*b*c*d$\n"), (10<<20)/34)
	start := time.Now()
	r := Parse(body)
	if !r.Truncated() {
		t.Error("not truncated")
	}
	if r.Allowed(Agent{Token: "a"}, "/a-b-c-d") {
		t.Error("allowed")
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("took %v", el)
	}
}

// Allowed does not allocate for ASCII targets (nor for UTF-8 ones that fit
// the buffer).
func TestAllowed_ZeroAllocs(t *testing.T) {
	r := Parse([]byte(genRobots(1, 30<<10)))
	a := Agent{Token: "BothyBot", Former: []string{"CleatBot", "UnvarnishedCrawler"}}
	for _, target := range []string{"/search?q=shoes&sort=price", "https://example.com/wp-admin/x.php", "/%7Euser/a%2fb*$", "/ツ"} {
		if n := testing.AllocsPerRun(100, func() { r.Allowed(a, target) }); n != 0 {
			t.Errorf("Allowed(%q): %v allocs", target, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { r.CrawlDelay(a) }); n != 0 {
		t.Errorf("CrawlDelay: %v allocs", n)
	}
}

// Hostile wildcards: 500 KiB of distinct wildcard rules that never match cost
// one linear scan of the target per rule, no more.
func TestAllowed_HostileWildcards(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := 0; b.Len() < 500<<10; i++ {
		fmt.Fprintf(&b, "Disallow: /*a*%d*b$\n", i)
	}
	start := time.Now()
	r := Parse([]byte(b.String()))
	target := "/" + strings.Repeat("a", 2000)
	if !r.Allowed(Agent{Token: "x"}, target) {
		t.Error("disallowed")
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("took %v", el)
	}
}

// The result does not refer to the body: the caller may reuse its buffer.
func TestParse_DoesNotRetainBody(t *testing.T) {
	body := []byte("User-agent: BothyBot\nDisallow: /%7Eprivate\nCrawl-delay: 2\nSitemap: https://example.com/s.xml\n")
	r := Parse(body)
	for i := range body {
		body[i] = 'X'
	}
	a := Agent{Token: "bothybot"}
	if r.Allowed(a, "/~private/x") || !r.Allowed(a, "/public") {
		t.Error("rules changed with the body")
	}
	if d, _ := r.CrawlDelay(a); d != 2*time.Second {
		t.Errorf("CrawlDelay = %v", d)
	}
	if s := r.Sitemaps(); len(s) != 1 || s[0] != "https://example.com/s.xml" {
		t.Errorf("Sitemaps = %q", s)
	}
}
