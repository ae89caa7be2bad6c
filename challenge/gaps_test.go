package challenge

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestRule_ValidateKindRange: a rule's kind is one of the named kinds;
// values outside them (whose String is "") are no kind.
func TestRule_ValidateKindRange(t *testing.T) {
	for _, tt := range []struct {
		kind Kind
		ok   bool
	}{
		{None - 1, false}, {None, false}, {JSChallenge, true}, {Captcha, true},
		{Block, true}, {RateLimit, true}, {RateLimit + 1, false}, {99, false},
	} {
		r := Rule{Name: "x", Kind: tt.kind, Header: []HeaderMatch{{Name: "X-Wall"}}}
		if err := r.Validate(); (err == nil) != tt.ok {
			t.Errorf("Kind %d (%q): Validate = %v, want ok %v", tt.kind, tt.kind, err, tt.ok)
		}
	}
}

// TestDetector_InvalidRuleIsSkippedNotFatal: an invalid rule never
// matches, and the rules after it still do.
func TestDetector_InvalidRuleIsSkippedNotFatal(t *testing.T) {
	d := &Detector{Rules: Rules{
		{Kind: Block, Body: [][]string{{"walled garden"}}}, // no name
		{Name: "ok", Vendor: "x", Kind: Block, Body: [][]string{{"walled garden"}}},
	}}
	if v := d.Detect(200, nil, []byte("<p>walled garden</p>")); v.Rule != "ok" {
		t.Errorf("%+v, want rule ok", v)
	}
}

// TestDetect_RulesWithoutBodyGroups: MaxText, Not and the other page
// conditions hold for a rule that has no body group (a header rule). A bare
// form without MaxText is looked for in the whole page, past the 1,536
// bytes of visible text where the layout pass could stop: a search field
// below a long text is a field a person fills in.
func TestDetect_RulesWithoutBodyGroups(t *testing.T) {
	h := http.Header{"X-Wall": {"1"}}
	long := "<p>" + strings.Repeat("An ordinary article paragraph. ", 20) + "</p>"
	longer := "<p>" + strings.Repeat("An ordinary article paragraph. ", 200) + "</p>" // 6,000 bytes of text
	for _, tt := range []struct {
		name string
		rule Rule
		body string
		want bool
	}{
		{"MaxText, little text", Rule{MaxText: 64}, "<p>Please wait.</p>", true},
		{"MaxText, long text", Rule{MaxText: 64}, long, false},
		{"Not absent", Rule{Not: []string{"type=\"password\""}}, `<form><input name="q"></form>`, true},
		{"Not present", Rule{Not: []string{"type=\"password\""}}, `<form><input type="password"></form>`, false},
		{"HTML, page", Rule{HTML: true}, "<p>x</p>", true},
		{"HTML, plain text", Rule{HTML: true}, "x", false},
		{"bare form after long text", Rule{BareForm: true}, longer + `<form><input type="hidden" name="t"><button>Go</button></form>`, true},
		{"text field after long text", Rule{BareForm: true}, longer + `<form><input type="text" name="q"></form>`, false},
		{"text field before long text", Rule{BareForm: true}, `<form><input type="text" name="q"></form>` + longer, false},
	} {
		r := tt.rule
		r.Name, r.Vendor, r.Kind, r.Header = "x/header", "x", Block, []HeaderMatch{{Name: "X-Wall"}}
		d := &Detector{Rules: Rules{r}}
		if v := d.Detect(200, h, []byte(tt.body)); v.Blocked != tt.want {
			t.Errorf("%s: %+v, want blocked %v", tt.name, v, tt.want)
		}
	}
}

// TestDetect_ShortMarkersAreFoundAndPlaced: markers shorter than the
// scan's grams are found in any body (also when the table has no longer
// marker), and their occurrences are placed like the others, wherever
// they are in the page.
func TestDetect_ShortMarkersAreFoundAndPlaced(t *testing.T) {
	only := &Detector{Rules: Rules{{Name: "short", Vendor: "x", Kind: Block, Body: [][]string{{"zq"}}}}}
	if v := only.Detect(200, nil, []byte("<p>xx zq xx, and more text</p>")); !v.Blocked {
		t.Errorf("short-only table: %+v, want blocked", v)
	}
	mixed := &Detector{Rules: Rules{{Name: "mixed", Vendor: "x", Kind: Block,
		Markup: [][]string{{"zq="}}, Body: [][]string{{"longer wall marker"}}}}}
	for _, tt := range []struct {
		page string
		want bool
	}{
		{`<div zq=1></div><p>longer wall marker</p>`, true},           // the short marker, in markup, comes first
		{`<p>zq=1</p><div data-x="longer wall marker"></div>`, false}, // in text it is not markup
	} {
		if v := mixed.Detect(200, nil, []byte(tt.page)); v.Blocked != tt.want {
			t.Errorf("%s: %+v, want blocked %v", tt.page, v, tt.want)
		}
	}
}

// TestDetect_NoAllocNegativeUpToStackTable: a custom table of up to 512
// markers keeps its marker sets on the stack (no allocation for a
// negative verdict).
func TestDetect_NoAllocNegativeUpToStackTable(t *testing.T) {
	var markers []string
	for i := range stackWords * 64 {
		markers = append(markers, fmt.Sprintf("wall-marker-%04d", i))
	}
	d := &Detector{Rules: Rules{{Name: "many", Vendor: "x", Kind: Block, Body: [][]string{markers}}}}
	page := []byte("<p>" + strings.Repeat("Nothing to see here. ", 100) + "</p>")
	if v := d.Detect(200, nil, page); v.Blocked {
		t.Fatalf("%+v", v)
	}
	if n := testing.AllocsPerRun(10, func() { d.Detect(200, nil, page) }); n != 0 {
		t.Errorf("%d markers, negative verdict: %v allocs, want 0", len(markers), n)
	}
}

// TestVerdict_EvidenceOnePerCondition: the evidence names the status, each
// header and, per body group, the one marker that satisfied it.
func TestVerdict_EvidenceOnePerCondition(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		header http.Header
		body   string
		rule   string
		want   []string
	}{
		// DataDome marks challenged responses with x-dd-b (MARKERS.md);
		// x-datadome alone is on every protected response.
		{"two headers", 403, http.Header{"X-Dd-B": {"1"}, "X-Datadome": {"protected"}}, "", "datadome/header",
			[]string{"status:403", "header:X-Dd-B", "header:X-Datadome"}},
		// Both Cloudflare machinery markers of the first group are on the
		// page: only the first of the group is named.
		{"group with two markers", 503, nil,
			`<script>window._cf_chl_opt={cvId:'2'};</script><form id="challenge-form" action="/?__cf_chl_f_tk=abc"></form>`,
			"cloudflare/challenge",
			[]string{"body:window._cf_chl_opt", "body:<form id=\"challenge-form\""}},
	} {
		v := Detect(tt.status, tt.header, []byte(tt.body))
		if v.Rule != tt.rule || !slices.Equal(v.Evidence, tt.want) {
			t.Errorf("%s: %s %q, want %s %q", tt.name, v.Rule, v.Evidence, tt.rule, tt.want)
		}
	}
}

// TestDetect_SharedMarkerSpeaksForNoVendor: a marker that two vendors'
// rules share does not make a notice page name two vendors.
func TestDetect_SharedMarkerSpeaksForNoVendor(t *testing.T) {
	d := &Detector{Rules: Rules{
		{Name: "a/shared", Vendor: "a", Kind: Block, Body: [][]string{{"sharedwall"}, {"alphaonly"}}},
		{Name: "b/shared", Vendor: "b", Kind: Block, Body: [][]string{{"sharedwall"}, {"betaonly"}}},
	}}
	for page, rule := range map[string]string{
		"<p>sharedwall alphaonly</p>": "a/shared",
		"<p>sharedwall betaonly</p>":  "b/shared",
	} {
		if v := d.Detect(200, nil, []byte(page)); v.Rule != rule {
			t.Errorf("%s: %+v, want rule %q", page, v, rule)
		}
	}
}

// TestDetect_WordfenceTextOnLargePages: Wordfence's block wording counts
// on a small block page, not in the strings a large served page carries
// (a WordPress page whose scripts embed the plugin's messages).
func TestDetect_WordfenceTextOnLargePages(t *testing.T) {
	notice := "<p>Your access to this site has been limited by the site owner</p><p>HTTP response code 503</p><p>Generated by Wordfence</p>"
	if v := Detect(200, nil, []byte(notice)); v.Vendor != "wordfence" || v.Kind != Block {
		t.Fatalf("small block page: %+v", v)
	}
	script := `<script>var wfMsgs={"limited":"Your access to this site has been limited by the site owner","code":"HTTP response code 503","footer":"Generated by Wordfence"};</script>`
	page := "<!DOCTYPE html><html><head>" + script + "<style>" + strings.Repeat(".c{margin:0}\n", 1500) + "</style></head><body><p>Welcome.</p></body></html>"
	if len(page) <= 2*8192 {
		t.Fatalf("page of %d bytes is not large", len(page))
	}
	if v := Detect(200, nil, []byte(page)); v.Blocked {
		t.Errorf("large served page with Wordfence strings in a script: %+v", v)
	}
}

// TestLayout_EarlyStopStillExceeds: when the layout pass stops early, the
// visible text it reports exceeds the bound it was given, and an element
// seen after text that is only in comments or end tags still counts.
func TestLayout_EarlyStopStillExceeds(t *testing.T) {
	for _, tt := range []struct {
		page         string
		enough       int
		minVisible   int
		wantElements int
	}{
		{"<p>0123456789</p><p>x</p><p>y</p>", 10, 11, 2},
		{"0123456789 <!-- c --> </b> <p>x</p>", 5, 6, 1},
	} {
		f := layout([]byte(tt.page), nil, tt.enough)
		if f.visible <= tt.enough || f.visible < tt.minVisible || f.elements < tt.wantElements {
			t.Errorf("%q, enough %d: %+v, want visible > %d and elements >= %d", tt.page, tt.enough, f, tt.enough, tt.wantElements)
		}
	}
}

// TestLayout_MoreFacts: visible text and elements at the edges of tags.
func TestLayout_MoreFacts(t *testing.T) {
	for _, tt := range []struct {
		page              string
		visible, elements int
	}{
		{"<p>a</p><", 2, 1},
		{"<p>a</p></", 3, 1},
		{"<p>a</p><a href=", 1, 2},
		{"<p>a</p><a href= ", 1, 2},
		{`<script>var c=a>b</script><p>hi</p>`, 2, 2},
		{`<zx-card>hi</zx-card>`, 2, 1},
		{"<!---->hi", 2, 0},
	} {
		f := layout([]byte(tt.page), nil, 1<<30)
		if f.visible != tt.visible || f.elements != tt.elements {
			t.Errorf("%q: %+v, want visible %d, elements %d", tt.page, f, tt.visible, tt.elements)
		}
	}
}

// TestLayout_MorePlaces: tables, attributes, raw-text end tags and
// quotation marks at their edges.
func TestLayout_MorePlaces(t *testing.T) {
	const sorry = "Sorry, you have been blocked"
	const exec = "grecaptcha.execute"
	nest := func(n int, inner string) string {
		return strings.Repeat("<table><tr><td>", n) + inner + strings.Repeat("</td></tr></table>", n)
	}
	cells := func(n int) string { return strings.Repeat("<td>x</td>", n) }
	cases := []struct {
		name, page, marker string
		want               place
	}{
		{"empty comment", "<!---->" + sorry, sorry, placeText},
		{"32 nested tables, first cell", nest(32, sorry), sorry, placeText},
		{"33 nested tables", nest(33, sorry), sorry, placeQuoted},
		{"second table restarts its cells", `<table><tr><td>a</td><td>b</td></tr></table><table><tr><td>` + sorry + `</td></tr></table>`, sorry, placeText},
		{"text after a cell's end", `<table><tr><td>a</td><td>b</td>` + sorry + `</tr></table>`, sorry, placeText},
		{"cell 256 and later stay quoted", `<table><tr>` + cells(256) + `<td>` + sorry + `</td></tr></table>`, sorry, placeQuoted},
		{"stray td", `<td>a</td><p>` + sorry + `</p>`, sorry, placeText},
		{"stray table end", `</table></td><table><tr><td>` + sorry + `</td></tr></table>`, sorry, placeText},
		{"valueless attribute before type", `<script async type="application/ld+json">{"a":"grecaptcha.execute"}</script>`, exec, placeQuoted},
		{"spaces around =", `<script type = "application/json">{"a":"grecaptcha.execute"}</script>`, exec, placeQuoted},
		{"space after =", `<script type= "text/javascript">grecaptcha.execute(k)</script>`, exec, placeCode},
		{"empty attribute value", `<img alt=""><p>` + sorry + `</p>`, sorry, placeText},
		{"script end tag with a space", `<script>x()</script ><p>` + sorry + `</p>`, sorry, placeText},
		{"script end tag self-closed", `<script>x()</script/><p>` + sorry + `</p>`, sorry, placeText},
		{"not a script end tag", `<script>var t="</scripty>"; grecaptcha.execute(k)</script>`, exec, placeCode},
		{"script end tag at the end", `<script>grecaptcha.execute(k)</script`, exec, placeCode},
		{"unterminated script", `<script>grecaptcha.execute(k)</scr`, exec, placeCode},
		{"xmp end", `<xmp>x</xmp>` + sorry + `<p>`, sorry, placeText},
		{"quote at the page start", `"<em>` + sorry + `</em>"`, sorry, placeQuoted},
		{"guillemets", "<p>«" + sorry + "»</p>", sorry, placeQuoted},
		{"copyright sign", "<p>\u00a9 2024 " + sorry + "</p>", sorry, placeText},
		{"no-break space", "<p>Note:\u00a0" + sorry + "</p>", sorry, placeText},
		{"closed guillemets", "<p>«a» " + sorry + "</p>", sorry, placeText},
		{"em dash", "<p>\u2014 " + sorry + "</p>", sorry, placeText},
		{"ellipsis", "<p>Error\u2026 " + sorry + "</p>", sorry, placeText},
		{"high reversed-9 quotation mark", "<p>\u201f" + sorry + "</p>", sorry, placeQuoted},
		{"Japanese lenticular brackets", "<p>【重要】 " + sorry + "</p>", sorry, placeText},
		{"white corner brackets", "<p>『a』『" + sorry + "』</p>", sorry, placeQuoted},
	}
	for _, c := range cases {
		got, _ := places(c.page, c.marker)
		if len(got) != 1 || got[0] != c.want {
			names := make([]string, len(got))
			for i, p := range got {
				names[i] = placeNames[p]
			}
			t.Errorf("%s: %v, want [%s]", c.name, names, placeNames[c.want])
		}
	}
}

// TestLayout_RawTextEndAtBufferEnd: a raw-text element cut short at the end
// of the examined bytes (a partial end tag) reads nothing beyond them.
func TestLayout_RawTextEndAtBufferEnd(t *testing.T) {
	for _, page := range []string{"<script>x()</scr", "<script>x()</script", "<title>x</titl", "<xmp>x</x"} {
		b := []byte(page)
		occ := []occurrence{{start: int32(strings.Index(page, "x")), place: 99}}
		layout(b[:len(b):len(b)], occ, 1<<30)
		if occ[0].place == 99 {
			t.Errorf("%q: occurrence not placed", page)
		}
	}
}
