package challenge

import (
	"strings"
	"testing"
)

// places runs the layout pass on page for every occurrence of marker and
// returns their places.
func places(page, marker string) ([]place, pageFacts) {
	var occ []occurrence
	for at := 0; ; {
		i := strings.Index(page[at:], marker)
		if i < 0 {
			break
		}
		occ = append(occ, occurrence{start: int32(at + i), place: 99})
		at += i + 1
	}
	facts := layout([]byte(page), occ, 1<<30)
	ps := make([]place, len(occ))
	for i, o := range occ {
		ps[i] = o.place
	}
	return ps, facts
}

var placeNames = map[place]string{placeQuoted: "quoted", placeText: "text", placeCode: "code", 99: "unset"}

// TestLayout_C6_Places: where a marker sits decides whether it counts:
// markup and scripts are the page's machinery, text is the page's words,
// quoting elements, table cells, comments, data scripts, text attributes
// and quotation marks show a marker as an example.
func TestLayout_C6_Places(t *testing.T) {
	const sorry = "Sorry, you have been blocked"
	const exec = "grecaptcha.execute"
	cases := []struct {
		name, page, marker string
		want               []place
	}{
		{"widget div", `<form><div class="g-recaptcha" data-sitekey="k"></div></form>`, `class="g-recaptcha`, []place{placeCode}},
		{"script src", `<script src="https://www.google.com/recaptcha/api.js"></script>`, "www.google.com/recaptcha/api.js", []place{placeCode}},
		{"script body", `<script>grecaptcha.execute(k)</script>`, exec, []place{placeCode}},
		{"upper-case script", `<SCRIPT>grecaptcha.execute(k)</SCRIPT><p>grecaptcha.execute</p>`, exec, []place{placeCode, placeText}},
		{"module script", `<script type="module">grecaptcha.execute(k)</script>`, exec, []place{placeCode}},
		{"javascript type", `<script type="text/javascript">grecaptcha.execute(k)</script>`, exec, []place{placeCode}},
		{"JSON-LD", `<script type="application/ld+json">{"articleBody":"grecaptcha.execute"}</script>`, exec, []place{placeQuoted}},
		{"JSON data", `<script id="__NEXT_DATA__" type="application/json">{"t":"grecaptcha.execute"}</script><p>x</p>`, exec, []place{placeQuoted}},
		{"script ends at its end tag", `<script type="text/template">grecaptcha.execute</script>grecaptcha.execute`, exec, []place{placeQuoted, placeText}},
		{"style", `<style>.cf-turnstile{margin:0}</style>`, "cf-turnstile", []place{placeCode}},
		{"code", `<p>Call <code>grecaptcha.execute</code> then.</p>`, exec, []place{placeQuoted}},
		{"pre", "<pre>grecaptcha.execute(key)\n</pre>", exec, []place{placeQuoted}},
		{"escaped markup in pre", `<pre>&lt;div class="g-recaptcha"&gt;</pre>`, `class="g-recaptcha`, []place{placeQuoted}},
		{"kbd samp q", `<kbd>grecaptcha.execute</kbd><samp>grecaptcha.execute</samp><q>grecaptcha.execute</q>`, exec, []place{placeQuoted, placeQuoted, placeQuoted}},
		{"blockquote", `<blockquote><p>` + sorry + `</p></blockquote><p>` + sorry + `</p>`, sorry, []place{placeQuoted, placeText}},
		{"nested quoting", `<pre><code>grecaptcha.execute</code> grecaptcha.execute</pre> grecaptcha.execute`, exec, []place{placeQuoted, placeQuoted, placeText}},
		{"stray end tag", `</pre></code><p>` + sorry, sorry, []place{placeText}},
		{"unclosed pre", `<pre>x<p>` + sorry, sorry, []place{placeQuoted}},
		{"self-closed code", `<code/>` + sorry, sorry, []place{placeQuoted}},
		{"template", `<template><div class="g-recaptcha"></div>` + sorry + `</template>`, sorry, []place{placeQuoted}},
		{"textarea", `<textarea>grecaptcha.execute</textarea>grecaptcha.execute`, exec, []place{placeQuoted, placeText}},
		{"comment", `<!-- <div class="g-recaptcha"> --><div class="g-recaptcha">`, `class="g-recaptcha`, []place{placeQuoted, placeCode}},
		{"unclosed comment", `<!-- <div class="g-recaptcha">`, `class="g-recaptcha`, []place{placeQuoted}},
		{"title", `<title>` + sorry + `</title>`, sorry, []place{placeText}},
		{"heading", `<h1>` + sorry + `</h1>`, sorry, []place{placeText}},
		{"docs table", `<table><tr><th>Vendor</th><th>Text</th></tr><tr><td>Cloudflare</td><td>` + sorry + `</td></tr></table>`, sorry, []place{placeQuoted}},
		{"header cell", `<table><tr><th>` + sorry + `</th></tr></table>`, sorry, []place{placeQuoted}},
		{"layout table", `<table width="100%"><tr><td align="center"><h1>` + sorry + `</h1></td></tr></table>`, sorry, []place{placeText}},
		{"cells without end tags", `<table><tr><td>a<td>` + sorry + `<tr><td>` + sorry + `</table><p>` + sorry, sorry, []place{placeQuoted, placeQuoted, placeText}},
		{"nested table in a quoted cell", `<table><tr><td>a</td><td><table><tr><td>` + sorry + `</td></tr></table>` + sorry + `</td></tr></table>`, sorry, []place{placeQuoted, placeQuoted}},
		{"markup in a cell", `<table><tr><td>a</td><td><div class="g-recaptcha"></div></td></tr></table>`, `class="g-recaptcha`, []place{placeCode}},
		{"straight quotes", `<p>It said "` + sorry + `" and stopped. ` + sorry, sorry, []place{placeQuoted, placeText}},
		{"quote entity", `<p>It said &quot;` + sorry + `&quot;.</p>`, sorry, []place{placeQuoted}},
		{"curly quotes", `<p>It said “` + sorry + `”.</p>`, sorry, []place{placeQuoted}},
		{"german quotes", `<p>Es hieß „` + sorry + `“.</p>`, sorry, []place{placeQuoted}},
		{"guillemets", `<p>Le site affiche « ` + sorry + ` ».</p>`, sorry, []place{placeQuoted}},
		{"japanese brackets", `<p>「` + sorry + `」と表示された。</p>`, sorry, []place{placeQuoted}},
		{"quote across an inline tag", `<p>It said “<strong>` + sorry + `</strong>”.</p>`, sorry, []place{placeQuoted}},
		{"closed quotation before", `<p>Your address "198.51.100.7" has been blocked.</p>`, "has been blocked", []place{placeText}},
		{"attribute quotes keep parity", `<p><a href="/x" class="y">x</a> has been blocked.</p>`, "has been blocked", []place{placeText}},
		{"alt text", `<img alt="` + sorry + `" src="/x.png">`, sorry, []place{placeQuoted}},
		{"title attribute", `<a title="grecaptcha.execute" class="grecaptcha.execute">`, exec, []place{placeQuoted, placeCode}},
		{"named meta", `<meta content="` + sorry + `" name="description">`, sorry, []place{placeQuoted}},
		{"og meta", `<meta property="og:title" content="` + sorry + `">`, sorry, []place{placeQuoted}},
		{"meta refresh", `<meta http-equiv="refresh" content="5;URL='/?__cf_chl_jschl_tk__=abc'">`, "__cf_chl_jschl_tk__=", []place{placeCode}},
		{"meta marker at the attribute name", `<meta name="description" content="px-captcha">`, `content="px-captcha"`, []place{placeCode}},
		{"quoted '>' in an attribute", `<div data-x="a>b" class="g-recaptcha">`, `class="g-recaptcha`, []place{placeCode}},
		{"unterminated tag", `<div class="g-recaptcha`, `class="g-recaptcha`, []place{placeCode}},
		{"lone '<'", `a < b ` + sorry, sorry, []place{placeText}},
		{"plain text body", "error code: 1020", "error code: 1020", []place{placeText}},
		{"plaintext element", `<plaintext><div class="g-recaptcha">`, `class="g-recaptcha`, []place{placeQuoted}},
	}
	for _, c := range cases {
		got, _ := places(c.page, c.marker)
		if len(got) != len(c.want) {
			t.Errorf("%s: %d occurrences, want %d", c.name, len(got), len(c.want))
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: occurrence %d is %s, want %s", c.name, i, placeNames[got[i]], placeNames[c.want[i]])
			}
		}
	}
}

// TestLayout_C6_Facts: visible text, forms and fields.
func TestLayout_C6_Facts(t *testing.T) {
	cases := []struct {
		page                             string
		visible, elements, forms, fields int
	}{
		{"", 0, 0, 0, 0},
		{"plain words", 10, 0, 0, 0},
		{"# robots.txt\nUser-agent: *\nDisallow: /a<1", 36, 0, 0, 0},
		{"<p>ab cd</p>\n<p>\te</p>", 5, 2, 0, 0},
		{"<!DOCTYPE html><title>Title</title><script>var x = 1;</script><style>p{}</style><!-- note --><p>ab</p>", 2, 4, 0, 0},
		{"<textarea>abc</textarea><noscript>Enable JS</noscript>", 8, 2, 0, 1},
		{`<form><input type="hidden" name="t"><input type=submit value=Go><button>Go</button></form>`, 2, 4, 1, 0},
		{`<form><input name="q"></form>`, 0, 2, 1, 1},
		{`<form><INPUT TYPE="EMAIL"><select><option>a</select></form><form></form>`, 1, 5, 2, 2},
		{`<form><input type="checkbox"><input type="image" src="x"><input type="reset"></form>`, 0, 4, 1, 1},
		{`<p>a&nbsp;b</p>`, 8, 1, 0, 0},
	}
	for _, c := range cases {
		_, f := places(c.page, "\x00")
		if want := (pageFacts{c.visible, c.elements, c.forms, c.fields}); f != want {
			t.Errorf("%q: facts %+v, want %+v", c.page, f, want)
		}
	}
	// The pass may stop once every occurrence has its place and the text
	// is above enough; it still reports more than enough.
	long := []byte("<p>" + strings.Repeat("word ", 2000) + "</p>")
	if f := layout(long, nil, 100); f.visible <= 100 {
		t.Errorf("early stop reported %d visible bytes", f.visible)
	}
	if f := layout(long, nil, 1<<30); f.visible != 8000 {
		t.Errorf("full pass: %d visible bytes, want 8000", f.visible)
	}
}
