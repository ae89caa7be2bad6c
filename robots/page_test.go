package robots_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/robots"
)

var bothy = robots.Agent{Token: "BothyBot", Former: []string{"CleatBot", "UnvarnishedCrawler"}}

func TestPageRulesFromHeader(t *testing.T) {
	date := time.Date(2010, 6, 25, 15, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		h    http.Header
		want robots.PageRules
	}{
		{"none", http.Header{}, robots.PageRules{}},
		{"x-robots-tag", http.Header{"X-Robots-Tag": {"noindex, nofollow"}}, robots.PageRules{NoIndex: true, NoFollow: true}},
		{"case-insensitive rules", http.Header{"X-Robots-Tag": {"NoIndex,NOARCHIVE"}}, robots.PageRules{NoIndex: true, NoArchive: true}},
		{"none means noindex nofollow", http.Header{"X-Robots-Tag": {"none"}}, robots.PageRules{NoIndex: true, NoFollow: true}},
		{"all restricts nothing", http.Header{"X-Robots-Tag": {"all"}}, robots.PageRules{}},
		{"other bot ignored", http.Header{"X-Robots-Tag": {"otherbot: noindex"}}, robots.PageRules{}},
		{"own token", http.Header{"X-Robots-Tag": {"bothybot: nosnippet"}}, robots.PageRules{NoSnippet: true}},
		// A rule written for a former name still binds (as robots.txt groups do).
		{"former name binds", http.Header{"X-Robots-Tag": {"cleatbot: noai"}}, robots.PageRules{NoAI: true}},
		{"several fields are a union", http.Header{"X-Robots-Tag": {"noindex", "otherbot: nofollow", "bothybot: noimageai"}},
			robots.PageRules{NoIndex: true, NoImageAI: true}},
		{"unknown ignored", http.Header{"X-Robots-Tag": {"max-snippet:20, noodles, nofollow"}}, robots.PageRules{NoFollow: true}},
		{"unavailable_after RFC 850", http.Header{"X-Robots-Tag": {"unavailable_after: Friday, 25-Jun-10 15:00:00 UTC, noarchive"}},
			robots.PageRules{UnavailableAfter: date, NoArchive: true}},
		{"unavailable_after RFC 3339", http.Header{"X-Robots-Tag": {"unavailable_after: 2010-06-25T15:00:00Z"}},
			robots.PageRules{UnavailableAfter: date}},
		{"unavailable_after garbage keeps the rest", http.Header{"X-Robots-Tag": {"unavailable_after: soon, noindex"}},
			robots.PageRules{NoIndex: true}},
		// draft-illyes-repext §3.1.1 example: rules for all, none for ExampleBot.
		{"robots-tag draft example", http.Header{"Robots-Tag": {"*;noindex;nosnippet, ExampleBot;"}},
			robots.PageRules{NoIndex: true, NoSnippet: true}},
		{"robots-tag own token", http.Header{"Robots-Tag": {"bothybot;noai, otherbot;noindex"}}, robots.PageRules{NoAI: true}},
		{"robots-tag name as a string", http.Header{"Robots-Tag": {`"bothybot";noai, "otherbot";noindex`}}, robots.PageRules{NoAI: true}},
		{"robots-tag repeated member merges", http.Header{"Robots-Tag": {"*;noindex, *;nofollow"}}, robots.PageRules{NoIndex: true, NoFollow: true}},
		{"robots-tag malformed ignored", http.Header{"Robots-Tag": {"*;noindex;;"}}, robots.PageRules{}},
		{"robots-tag false param ignored", http.Header{"Robots-Tag": {"*;noindex=?0"}}, robots.PageRules{}},
		{"robots-tag non-boolean params ignored", http.Header{"Robots-Tag": {`*;noindex=1;nofollow="yes";noai=yes`}}, robots.PageRules{}},
		{"unavailable_after in any case", http.Header{"X-Robots-Tag": {"Unavailable_After: 2010-06-25T15:00:00Z"}},
			robots.PageRules{UnavailableAfter: date}},
		{"structured x-robots-tag", http.Header{"X-Robots-Tag": {"*;nofollow"}}, robots.PageRules{NoFollow: true}},
		{"both fields combine", http.Header{"Robots-Tag": {"*;noindex"}, "X-Robots-Tag": {"nofollow"}},
			robots.PageRules{NoIndex: true, NoFollow: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := robots.PageRulesFromHeader(tc.h, bothy); got != tc.want {
				t.Errorf("PageRulesFromHeader(%v) = %+v, want %+v", tc.h, got, tc.want)
			}
		})
	}
}

func TestPageRulesFromHeader_LongFieldKeepsWholeMembers(t *testing.T) {
	// 8 KiB are read; the member the limit cuts is dropped, not misread.
	v := strings.Repeat("nosnippet, ", 8<<10/11) // just under 8 KiB
	v += "noindex, noarchive"
	got := robots.PageRulesFromHeader(http.Header{"X-Robots-Tag": {v}}, bothy)
	if !got.NoSnippet {
		t.Error("rules inside the first 8 KiB were not read")
	}
	if got.NoArchive {
		t.Error("a rule past 8 KiB was read")
	}
	long := strings.Repeat("*;nosnippet, ", 700) + "*;noindex"
	if got := robots.PageRulesFromHeader(http.Header{"Robots-Tag": {long}}, bothy); !got.NoSnippet || got.NoIndex {
		t.Errorf("structured field of %d bytes: %+v", len(long), got)
	}
}

func TestPageRules_UnavailableAfterPastMeansNoIndex(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := robots.PageRules{UnavailableAfter: at}
	if r.At(at.Add(-time.Second)).NoIndex {
		t.Error("noindex before unavailable_after")
	}
	if !r.At(at).NoIndex || !r.At(at.Add(time.Hour)).NoIndex {
		t.Error("not noindex once unavailable_after has passed")
	}
}

func TestPageRulesFromHTML(t *testing.T) {
	tests := []struct {
		name string
		html string
		want robots.PageRules
	}{
		{"robots meta", `<html><head><meta name="robots" content="noindex, nofollow"></head><body>x</body></html>`,
			robots.PageRules{NoIndex: true, NoFollow: true}},
		{"own token meta", `<head><meta name="BothyBot" content="nosnippet"><meta name="otherbot" content="noindex">`,
			robots.PageRules{NoSnippet: true}},
		{"former token meta", `<head><meta content="noai" name="unvarnishedcrawler">`, robots.PageRules{NoAI: true}},
		{"several metas union", `<head><meta name=robots content=noarchive><meta name="ROBOTS" content="NOINDEX"></head>`,
			robots.PageRules{NoArchive: true, NoIndex: true}},
		{"meta in body ignored", `<html><head><title>t</title></head><body><meta name="robots" content="noindex"></body>`,
			robots.PageRules{}},
		{"meta after body content ignored", `<p>article</p><meta name="robots" content="noindex">`, robots.PageRules{}},
		{"meta inside script ignored", `<head><script>document.write('<meta name="robots" content="noindex">')</script></head>`,
			robots.PageRules{}},
		{"meta inside template ignored", `<head><template><meta name="robots" content="noindex"></template><meta name="robots" content="nofollow">`,
			robots.PageRules{NoFollow: true}},
		{"meta inside comment ignored", `<head><!-- <meta name="robots" content="noindex"> --></head>`, robots.PageRules{}},
		{"implicit head", `<!doctype html><meta charset=utf-8><meta name="robots" content="noindex">`, robots.PageRules{NoIndex: true}},
		{"unavailable_after in meta", `<head><meta name="robots" content="unavailable_after: 2010-06-25">`,
			robots.PageRules{UnavailableAfter: time.Date(2010, 6, 25, 0, 0, 0, 0, time.UTC)}},
		{"no meta", `<html><head><title>x</title></head></html>`, robots.PageRules{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := robots.PageRulesFromHTML([]byte(tc.html), bothy); got != tc.want {
				t.Errorf("PageRulesFromHTML(%q) = %+v, want %+v", tc.html, got, tc.want)
			}
		})
	}
}

func TestPageRulesFromHTML_Only64KiB(t *testing.T) {
	head := "<head>" + strings.Repeat(`<link rel="x" href="/y">`, 64<<10/24) // past 64 KiB of head
	got := robots.PageRulesFromHTML([]byte(head+`<meta name="robots" content="noindex"></head>`), bothy)
	if got.NoIndex {
		t.Error("a meta element past 64 KiB was read")
	}
}

func TestPageRules_String(t *testing.T) {
	r := robots.PageRules{NoIndex: true, NoFollow: true}
	if got := r.String(); got != "noindex, nofollow" {
		t.Errorf("String = %q", got)
	}
	if got := (robots.PageRules{}).String(); got != "" {
		t.Errorf("zero String = %q", got)
	}
	// The instant is written in UTC, whatever zone it was read in.
	cest := time.FixedZone("CEST", 2*60*60)
	r = robots.PageRules{NoAI: true, UnavailableAfter: time.Date(2010, 6, 25, 17, 0, 0, 0, cest)}
	if got, want := r.String(), "noai, unavailable_after: 2010-06-25T15:00:00Z"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func FuzzPageRules(f *testing.F) {
	f.Add("noindex, otherbot: nofollow", "*;noindex, bothybot;noai", `<head><meta name=robots content="none">`)
	f.Add("unavailable_after: Friday, 25-Jun-10 15:00:00 UTC", "", "<meta")
	f.Fuzz(func(t *testing.T, x, structured, page string) {
		h := http.Header{"X-Robots-Tag": {x}, "Robots-Tag": {structured}}
		a := robots.PageRulesFromHeader(h, bothy)
		b := robots.PageRulesFromHTML([]byte(page), bothy)
		u := a.Union(b)
		if a.NoIndex && !u.NoIndex || b.NoFollow && !u.NoFollow {
			t.Errorf("union lost a restriction: %+v ∪ %+v = %+v", a, b, u)
		}
	})
}

// A page without robots directives costs no allocation: no header field,
// and an HTML body without a meta element.
func TestPageRules_NoAllocWithoutDirectives(t *testing.T) {
	h := http.Header{"Content-Type": {"text/html"}}
	body := []byte(strings.Repeat("<p>Some <b>text</b> of a page.</p>\n", 2000))
	a := robots.Agent{Token: "BothyBot", Former: []string{"CleatBot"}}
	if n := testing.AllocsPerRun(100, func() {
		if !robots.PageRulesFromHeader(h, a).Union(robots.PageRulesFromHTML(body, a)).IsZero() {
			t.Fatal("rules found on a page without any")
		}
	}); n != 0 {
		t.Errorf("%v allocations per page without directives, want 0", n)
	}
	// The quick test for a meta element ignores case and stops at the end.
	for _, tt := range []struct {
		body string
		want string
	}{
		{"<HTML><HEAD><Meta Name=ROBOTS content=NOINDEX></HEAD>", "noindex"},
		{"<head><META name=robots content=nofollow>", "nofollow"},
		{"<head><met", ""},
		{"<head>meta name=robots content=noindex <", ""},
	} {
		if got := robots.PageRulesFromHTML([]byte(tt.body), a).String(); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.body, got, tt.want)
		}
	}
}

// TestPageRules_Boundaries pins the vocabulary, the 8 KiB field and 64 KiB
// body limits to the byte, and the parsing corners of both header forms.
func TestPageRules_Boundaries(t *testing.T) {
	exact := func(n int, last string) string { // n bytes ending in ", last"
		return strings.Repeat(" ", n-len(", "+last)-len("nosnippet")) + "nosnippet, " + last
	}
	tests := []struct {
		name string
		h    http.Header
		want robots.PageRules
	}{
		{"every structured rule", http.Header{"Robots-Tag": {"*;noindex;nofollow;noarchive;nosnippet;noai;noimageai"}},
			robots.PageRules{NoIndex: true, NoFollow: true, NoArchive: true, NoSnippet: true, NoAI: true, NoImageAI: true}},
		{"none in structured form", http.Header{"Robots-Tag": {"*;none"}}, robots.PageRules{NoIndex: true, NoFollow: true}},
		{"8192 bytes read whole", http.Header{"X-Robots-Tag": {exact(8192, "noindex")}}, robots.PageRules{NoSnippet: true, NoIndex: true}},
		{"8193 bytes lose the cut member", http.Header{"X-Robots-Tag": {exact(8193, "noindex")}}, robots.PageRules{NoSnippet: true}},
		{"a member ending at the cut is whole", http.Header{"X-Robots-Tag": {exact(8192, "noindex") + ", noarchive"}},
			robots.PageRules{NoSnippet: true, NoIndex: true}},
		{"a structured member ending at the cut is whole", http.Header{"Robots-Tag": {strings.Repeat(" ", 8192-len("*;noindex")) + "*;noindex,*;nofollow"}},
			robots.PageRules{NoIndex: true}},
		{"one member over 8 KiB ignored", http.Header{"X-Robots-Tag": {strings.Repeat(" ", 9000) + "noindex"}}, robots.PageRules{}},
		{"max-video-preview is a rule, not a bot", http.Header{"X-Robots-Tag": {"max-video-preview: -1, noindex"}}, robots.PageRules{NoIndex: true}},
		{"max-image-preview is a rule, not a bot", http.Header{"X-Robots-Tag": {"max-image-preview: large, nofollow"}}, robots.PageRules{NoFollow: true}},
		{"max-snippet is a rule, not a bot", http.Header{"X-Robots-Tag": {"max-snippet: 20, noarchive"}}, robots.PageRules{NoArchive: true}},
		{"unavailable_after ISO local time", http.Header{"X-Robots-Tag": {"unavailable_after: 2010-06-25T15:00:00"}},
			robots.PageRules{UnavailableAfter: time.Date(2010, 6, 25, 15, 0, 0, 0, time.UTC)}},
		{"unavailable_after four-digit RFC 850", http.Header{"X-Robots-Tag": {"unavailable_after: Friday, 25-Jun-2010 15:00:00 GMT, nosnippet"}},
			robots.PageRules{UnavailableAfter: time.Date(2010, 6, 25, 15, 0, 0, 0, time.FixedZone("GMT", 0)), NoSnippet: true}},
		{"earlier unavailable_after wins", http.Header{"X-Robots-Tag": {"unavailable_after: 2011-01-01", "unavailable_after: 2010-01-01", "unavailable_after: 2012-01-01"}},
			robots.PageRules{UnavailableAfter: time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"empty parameters before a tab", http.Header{"Robots-Tag": {"ExampleBot;\t, *;noindex"}}, robots.PageRules{NoIndex: true}},
		{"leading semicolon is malformed", http.Header{"Robots-Tag": {";"}}, robots.PageRules{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := robots.PageRulesFromHeader(tc.h, bothy); !got.UnavailableAfter.Equal(tc.want.UnavailableAfter) ||
				got.String() != tc.want.String() {
				t.Errorf("PageRulesFromHeader(%.60q) = %+v, want %+v", tc.h, got, tc.want)
			}
		})
	}
}

func TestPageRulesFromHTML_Boundaries(t *testing.T) {
	meta := `<meta name="robots" content="noindex">`
	sized := func(n int) string { // n bytes, the meta element last
		return "<head>" + strings.Repeat(" ", n-len("<head>")-len(meta)) + meta
	}
	tests := []struct {
		name string
		html string
		want robots.PageRules
	}{
		{"65536 bytes read whole", sized(64 << 10), robots.PageRules{NoIndex: true}},
		{"65537 bytes cut the meta", sized(64<<10 + 1), robots.PageRules{}},
		{"meta after an empty noscript", `<head><noscript></noscript><meta name="robots" content="noai">`,
			robots.PageRules{NoAI: true}},
		{"meta after the head ends", `<head></head><meta name="robots" content="noindex">`, robots.PageRules{}},
		{"whitespace is not body text", "<head>\n  <meta name=\"robots\" content=\"noindex\">\n</head>", robots.PageRules{NoIndex: true}},
		{"name with spaces", `<head><meta name=" robots " content="noarchive">`, robots.PageRules{NoArchive: true}},
		{"content over 8 KiB loses the cut rule", `<head><meta name="robots" content="` + strings.Repeat("nosnippet, ", 800) + `noindex">`,
			robots.PageRules{NoSnippet: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := robots.PageRulesFromHTML([]byte(tc.html), bothy); got != tc.want {
				t.Errorf("PageRulesFromHTML(%.60q) = %+v, want %+v", tc.html, got, tc.want)
			}
		})
	}
}

func TestPageRules_UnionAndString(t *testing.T) {
	early := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	late := early.Add(24 * time.Hour)
	tests := []struct {
		name string
		a, b robots.PageRules
		want string
	}{
		{"each restriction of either", robots.PageRules{NoArchive: true, NoImageAI: true}, robots.PageRules{NoSnippet: true, NoAI: true},
			"noarchive, nosnippet, noai, noimageai"},
		{"kept from the receiver", robots.PageRules{NoIndex: true, NoFollow: true, NoArchive: true, NoSnippet: true, NoAI: true, NoImageAI: true}, robots.PageRules{},
			"noindex, nofollow, noarchive, nosnippet, noai, noimageai"},
		{"earlier date, later given", robots.PageRules{UnavailableAfter: late}, robots.PageRules{UnavailableAfter: early}, "unavailable_after: 2010-01-01T00:00:00Z"},
		{"earlier date, earlier given", robots.PageRules{UnavailableAfter: early}, robots.PageRules{UnavailableAfter: late}, "unavailable_after: 2010-01-01T00:00:00Z"},
		{"date into none", robots.PageRules{}, robots.PageRules{UnavailableAfter: late}, "unavailable_after: 2010-01-02T00:00:00Z"},
		{"no date keeps the date", robots.PageRules{UnavailableAfter: late}, robots.PageRules{}, "unavailable_after: 2010-01-02T00:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Union(tc.b).String(); got != tc.want {
				t.Errorf("Union = %q, want %q", got, tc.want)
			}
		})
	}
}

// A noscript element in the head (its contents are raw text to the
// tokenizer) does not end the head: a robots meta after it still counts.
func TestPageRulesFromHTML_NoscriptInHead(t *testing.T) {
	body := `<head><noscript><img src="/pixel.gif"></noscript><meta name="robots" content="noindex"></head>`
	if got := robots.PageRulesFromHTML([]byte(body), bothy); !got.NoIndex {
		t.Errorf("the meta after a noscript was not read: %+v", got)
	}
}

// Only the head's own end tag (or the document's) ends the head: a stray end
// tag of a head element ("</meta>", "</link>", common in XHTML-style pages;
// a parse error the HTML parser ignores in the head) does not, so a robots
// meta after it still counts. Pages that end right after a "<" (or inside
// "<met") are read without trouble.
func TestPageRulesFromHTML_EndTagsInHead(t *testing.T) {
	tests := []struct {
		name string
		html string
		want robots.PageRules
	}{
		{"after </meta>", `<head><meta name="robots" content="nofollow"></meta><meta name="robots" content="noindex"></head>`,
			robots.PageRules{NoIndex: true, NoFollow: true}},
		{"after </link>", `<html><head><link rel="icon" href="/f.ico"></link><meta name="robots" content="noarchive">`,
			robots.PageRules{NoArchive: true}},
		{"after </html>", `<html><head></html><meta name="robots" content="noindex">`, robots.PageRules{}},
		{"ends in <", `<html><head><`, robots.PageRules{}},
		{"ends in <m", `<head><m`, robots.PageRules{}},
		{"ends in <met", `<head><met`, robots.PageRules{}},
		{"ends in <meta", `<head><meta`, robots.PageRules{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := robots.PageRulesFromHTML([]byte(tc.html), bothy); got != tc.want {
				t.Errorf("PageRulesFromHTML(%q) = %+v, want %+v", tc.html, got, tc.want)
			}
		})
	}
}

// An X-Robots-Tag value led by an empty name (": rule, rule") addresses
// nobody, whatever follows: not only its first rule is dropped.
func TestPageRulesFromHeader_EmptyNameDropsWholeValue(t *testing.T) {
	for _, v := range []string{": noindex, nofollow", ":nofollow,noarchive", ": unavailable_after: 2010-01-01, noindex"} {
		if got := robots.PageRulesFromHeader(http.Header{"X-Robots-Tag": {v}}, bothy); !got.IsZero() {
			t.Errorf("X-Robots-Tag: %q = %+v, want nothing", v, got)
		}
	}
}

// Each field line and each member is read on its own: a structured
// X-Robots-Tag line does not stop the lines after it; a Robots-Tag member
// that is not a product token (an Inner List, an Integer) is skipped and the
// members after it still count; a date given to a rule other than
// unavailable_after is not an unavailable_after.
func TestPageRulesFromHeader_SkippedPartsDoNotStopTheRest(t *testing.T) {
	tests := []struct {
		name string
		h    http.Header
		want robots.PageRules
	}{
		{"structured X-Robots-Tag line, then a legacy one", http.Header{"X-Robots-Tag": {"*;noindex", "nofollow"}},
			robots.PageRules{NoIndex: true, NoFollow: true}},
		{"two structured X-Robots-Tag lines", http.Header{"X-Robots-Tag": {"*;noarchive", "bothybot;nosnippet"}},
			robots.PageRules{NoArchive: true, NoSnippet: true}},
		{"inner list member first", http.Header{"Robots-Tag": {"(bothybot);noai, *;noindex"}}, robots.PageRules{NoIndex: true}},
		{"integer member first", http.Header{"Robots-Tag": {"1;noai, *;nofollow"}}, robots.PageRules{NoFollow: true}},
		{"a date for max-snippet", http.Header{"X-Robots-Tag": {"nosnippet, max-snippet: 2010-01-01"}}, robots.PageRules{NoSnippet: true}},
		{"a date for an unknown rule", http.Header{"X-Robots-Tag": {"noarchive, rule: 2010-01-01, noai"}}, robots.PageRules{NoArchive: true, NoAI: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := robots.PageRulesFromHeader(tc.h, bothy); got != tc.want {
				t.Errorf("PageRulesFromHeader(%q) = %+v, want %+v", tc.h, got, tc.want)
			}
		})
	}
}
