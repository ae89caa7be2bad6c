package challenge

import (
	"net/http"
	"strings"
	"testing"
)

// Content is content, a wall is a wall: pages that talk about challenges
// (testdata/trap: articles, documentation tables, blog posts and Q&A threads
// naming the widgets, their JavaScript calls and the vendors' block texts,
// in several languages) against pages that are a wall (testdata/gate: a
// site's own CAPTCHA gate, little more than a widget and a form, and
// origin block notices without vendor markers). All written for this
// package.
//
//	go test -run 'TestWalls' -v ./challenge

var contentTraps = []base{
	{file: "captcha_history_en.html", statuses: []int{200, 403}},
	{file: "vendor_block_texts_docs_en.html", statuses: []int{200, 403}},
	{file: "docs_table_de.html", statuses: []int{200}},
	{file: "blog_checking_browser_en.html", statuses: []int{200, 403}},
	{file: "blog_es.html", statuses: []int{200}},
	{file: "qa_cloudflare_python_en.html", statuses: []int{200}},
	{file: "qa_turnstile_fr.html", statuses: []int{200}},
	{file: "article_recaptcha_ja.html", statuses: []int{200}},
	{file: "news_automated_access_en.html", statuses: []int{200, 403}},
	{file: "forum_de_blocked.html", statuses: []int{200, 403}},
	{file: "tutorial_hcaptcha_demo_es.html", statuses: []int{200}},
	{file: "glossary_fr.html", statuses: []int{200}},
	{file: "block_texts_list_es.html", statuses: []int{200, 403}},
	{file: "widget_notes_en.html", statuses: []int{200, 403}},
	{file: "robots_comments.txt", statuses: []int{200}},
}

var ownWalls = []base{
	{file: "turnstile_en.html", statuses: []int{200, 403}, vendor: "turnstile", kind: Captcha},
	{file: "turnstile_ja_chrome.html", statuses: []int{200}, vendor: "turnstile", kind: Captcha},
	{file: "hcaptcha_de.html", statuses: []int{200}, vendor: "hcaptcha", kind: Captcha},
	{file: "hcaptcha_en_chrome.html", statuses: []int{200, 429}, vendor: "hcaptcha", kind: Captcha},
	{file: "recaptcha_v2_es.html", statuses: []int{200}, vendor: "recaptcha", kind: Captcha},
	{file: "recaptcha_v3_fr.html", statuses: []int{200}, vendor: "recaptcha", kind: Captcha},
	{file: "recaptcha_enterprise_en.html", statuses: []int{200}, vendor: "recaptcha", kind: Captcha},
	{file: "recaptcha_v3_noform_en.html", statuses: []int{200}, vendor: "recaptcha", kind: Captcha},
	{file: "hcaptcha_terms_en.html", statuses: []int{200}, vendor: "hcaptcha", kind: Captcha},
	{file: "origin_automated_en.html", statuses: []int{403, 200}, kind: Block},
	{file: "origin_bot_traffic_en.html", statuses: []int{429, 200}, kind: Block},
	{file: "origin_bots_minimal_en.html", statuses: []int{403}, kind: Block},
	{file: "origin_de.html", statuses: []int{403, 200}, kind: Block},
	{file: "origin_es.html", statuses: []int{403}, kind: Block},
	{file: "origin_fr.html", statuses: []int{429}, kind: Block},
	{file: "origin_ja.html", statuses: []int{403, 200}, kind: Block},
	{file: "origin_plain.txt", statuses: []int{403}, kind: Block},
	{file: "origin_detected_and_blocked_en.html", statuses: []int{403, 200}, kind: Block},
}

// TestWalls_C6_ContentAndWalls scores the detector on the trap and gate
// fixtures (each as written and minified, at every listed status) and
// requires every verdict right: no trap flagged, every gate flagged with
// its vendor and kind.
func TestWalls_C6_ContentAndWalls(t *testing.T) {
	var tp, fp, fn, tn int
	for _, b := range contentTraps {
		for _, f := range variants(t, "trap", b, false) {
			if v := Detect(f.status, f.header, f.body); v.Blocked {
				fp++
				t.Errorf("%s: content flagged: %s (rule %q, evidence %q)", f.name, v, v.Rule, v.Evidence)
			} else {
				tn++
			}
		}
	}
	for _, b := range ownWalls {
		for _, f := range variants(t, "gate", b, true) {
			v := Detect(f.status, f.header, f.body)
			switch {
			case !v.Blocked:
				fn++
				t.Errorf("%s: wall missed", f.name)
			case v.Vendor != f.vendor || v.Kind != f.kind:
				tp++
				t.Errorf("%s: got %s (rule %q), want %q %s", f.name, v, v.Rule, f.vendor, f.kind)
			default:
				tp++
			}
		}
	}
	precision, recall := 1.0, float64(tp)/float64(tp+fn)
	if tp+fp > 0 {
		precision = float64(tp) / float64(tp+fp)
	}
	t.Logf("%d walls, %d traps: TP %d FP %d FN %d TN %d: precision %.3f, recall %.3f",
		tp+fn, tn+fp, tp, fp, fn, tn, precision, recall)
	if tp+fn < 30 || tn+fp < 30 {
		t.Errorf("only %d walls and %d traps", tp+fn, tn+fp)
	}
}

// visibleOf counts the bytes other than white space of the text of a page
// made of tags and text only, without a title (the test's own measure,
// not layout's).
func visibleOf(page string) int {
	n, inTag := 0, false
	for _, c := range []byte(page) {
		switch {
		case c == '<':
			inTag = true
		case c == '>':
			inTag = false
		case !inTag && c != ' ' && c != '\n' && c != '\t':
			n++
		}
	}
	return n
}

// padTo appends a paragraph of filler so that page has exactly visible
// bytes of visible text.
func padTo(t *testing.T, page string, visible int) []byte {
	t.Helper()
	fill := visible - visibleOf(page)
	if fill < 1 {
		t.Fatalf("page already has %d visible bytes", visibleOf(page))
	}
	return []byte(page + "<p>" + strings.Repeat("w", fill) + "</p>")
}

// TestDetect_C6_TextCountsOnNoticePagesOnly: a marker in the text of a page
// is evidence while the page has at most 1,536 bytes of visible text (a
// notice), and not above; markup markers do not depend on it. Vendor rules
// and the origin rule alike.
func TestDetect_C6_TextCountsOnNoticePagesOnly(t *testing.T) {
	cases := []struct {
		name, page string
		status     int
		rule       string
		bound      int
	}{
		{"cloudflare block text", `<h1>Sorry, you have been blocked</h1><p>Cloudflare Ray ID: 8a1b2c3d4e5f6a7b</p>`, 200, "cloudflare/sorry-blocked", 1536},
		{"origin block at 403", `<h1>Blocked</h1><p>Automated access detected. Your requests have been blocked.</p>`, 403, "origin/automated-blocked-status", 1536},
		{"origin block at 200", `<h1>Blocked</h1><p>Automated access detected. Your requests have been blocked.</p>`, 200, "origin/automated-blocked", 512},
		{"origin block in German at 429", `<h1>Gesperrt</h1><p>Automatisierte Zugriffe erkannt. Ihr Zugriff wurde gesperrt.</p>`, 429, "origin/automated-blocked-status", 1536},
	}
	for _, c := range cases {
		at := padTo(t, c.page, c.bound)
		if v := Detect(c.status, nil, at); !v.Blocked || v.Rule != c.rule {
			t.Errorf("%s with %d visible bytes: got %+v, want rule %s", c.name, c.bound, v, c.rule)
		}
		if v := Detect(c.status, nil, padTo(t, c.page, c.bound+1)); v.Blocked {
			t.Errorf("%s with %d visible bytes: flagged %+v", c.name, c.bound+1, v)
		}
	}
	// Markup evidence on a long page still counts.
	managed := append(readFixture(t, "challenge/cf_managed.html"), padTo(t, "", 20000)...)
	if v := Detect(403, nil, managed); !v.Blocked || v.Vendor != "cloudflare" {
		t.Errorf("managed challenge with a long text: %+v", v)
	}
}

// TestDetect_C6_OwnGateShape: a widget is a gate only on a page that is
// little more than the widget (at most 512 bytes of visible text) and a
// form that asks for nothing else; a form with a field to fill in, or no
// form at all, is not a gate.
func TestDetect_C6_OwnGateShape(t *testing.T) {
	head := `<!DOCTYPE html><html><head><script src="https://challenges.cloudflare.com/turnstile/v0/api.js" async defer></script></head><body>`
	form := `<form action="/verify" method="post"><input type="hidden" name="next" value="/a"><div class="cf-turnstile" data-sitekey="0x4AAAAAAAExample"></div><button>Go on</button></form>`
	gate := head + form
	if v := Detect(200, nil, padTo(t, gate, 512)); !v.Blocked || v.Rule != "turnstile/gate" || v.Kind != Captcha {
		t.Errorf("gate with 512 visible bytes: %+v", v)
	}
	for name, body := range map[string][]byte{
		"513 visible bytes":      padTo(t, gate, 513),
		"a search field":         []byte(strings.Replace(gate, `<input type="hidden"`, `<input name="q"><input type="hidden"`, 1)),
		"an e-mail field":        []byte(strings.Replace(gate, `<input type="hidden"`, `<input type=email name="e"><input type="hidden"`, 1)),
		"a textarea":             []byte(strings.Replace(gate, `<button>`, `<textarea name="m"></textarea><button>`, 1)),
		"no form":                []byte(head + `<div class="cf-turnstile" data-sitekey="0x4AAAAAAAExample"></div>`),
		"widget quoted in <pre>": []byte(head[:strings.Index(head, "<script")] + `</head><body><form method="post"><pre>&lt;div class="cf-turnstile"&gt; turnstile.render()</pre><button>Go</button></form>`),
	} {
		if v := Detect(200, nil, body); v.Blocked {
			t.Errorf("%s: flagged %s by %q", name, v, v.Rule)
		}
	}
}

// TestDetect_PayPerCrawl402: a 402 with a crawler-price header (pay per
// crawl) or a Payment-Required header (x402) is never a challenge, even
// with a challenge's header and body; the same response at 403, or at 402
// without a price, is.
func TestDetect_PayPerCrawl402(t *testing.T) {
	fx := challengeFixtures(t)
	priced := 0
	for _, f := range fx {
		for _, price := range [][]string{{"Crawler-Price", "USD 0.01"}, {"Payment-Required", "eyJ4NDAyVmVyc2lvbiI6MX0="}} {
			h := f.header.Clone()
			if h == nil {
				h = http.Header{}
			}
			h.Set(price[0], price[1])
			if v := Detect(402, h, f.body); v.Blocked {
				t.Errorf("%s at 402 with %s: %+v", f.name, price[0], v)
			}
			priced++
		}
	}
	h := hdr("Cf-Mitigated", "challenge", "Crawler-Price", "USD 0.01")
	if v := Detect(403, h, nil); !v.Blocked {
		t.Errorf("403 with a price and cf-mitigated: %+v", v)
	}
	if v := Detect(402, hdr("Cf-Mitigated", "challenge"), nil); !v.Blocked {
		t.Errorf("402 without a price and with cf-mitigated: %+v", v)
	}
	d := &Detector{Rules: Rules{{Name: "mine", Kind: Block, Status: []int{402}, Header: []HeaderMatch{{Name: "Crawler-Price"}}}}}
	if v := d.Detect(402, hdr("Crawler-Price", "USD 0.01"), nil); v.Blocked {
		t.Errorf("a custom rule made a priced 402 a challenge: %+v", v)
	}
	if priced < 300 {
		t.Errorf("only %d priced responses tried", priced)
	}
}
