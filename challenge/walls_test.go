package challenge

import (
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
}

var ownWalls = []base{
	{file: "turnstile_en.html", statuses: []int{200, 403}, vendor: "turnstile", kind: Captcha},
	{file: "turnstile_ja_chrome.html", statuses: []int{200}, vendor: "turnstile", kind: Captcha},
	{file: "hcaptcha_de.html", statuses: []int{200}, vendor: "hcaptcha", kind: Captcha},
	{file: "hcaptcha_en_chrome.html", statuses: []int{200, 429}, vendor: "hcaptcha", kind: Captcha},
	{file: "recaptcha_v2_es.html", statuses: []int{200}, vendor: "recaptcha", kind: Captcha},
	{file: "recaptcha_v3_fr.html", statuses: []int{200}, vendor: "recaptcha", kind: Captcha},
	{file: "recaptcha_enterprise_en.html", statuses: []int{200}, vendor: "recaptcha", kind: Captcha},
	{file: "origin_automated_en.html", statuses: []int{403, 200}, kind: Block},
	{file: "origin_bot_traffic_en.html", statuses: []int{429, 200}, kind: Block},
	{file: "origin_bots_minimal_en.html", statuses: []int{403}, kind: Block},
	{file: "origin_de.html", statuses: []int{403, 200}, kind: Block},
	{file: "origin_es.html", statuses: []int{403}, kind: Block},
	{file: "origin_fr.html", statuses: []int{429}, kind: Block},
	{file: "origin_ja.html", statuses: []int{403, 200}, kind: Block},
	{file: "origin_plain.txt", statuses: []int{403}, kind: Block},
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
