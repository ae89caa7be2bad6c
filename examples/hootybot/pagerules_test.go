package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/hooty"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// HootyBot feeds an assistant: a noindex or noai page (header or robots
// meta in the head) is fetched but not kept, and a nofollow page's links
// are not followed; the JSON output says why.
func TestHooty_PageRules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := docs("User-agent: HootyBot\nAllow: /\n")
		h := w.Host("docs.test")
		h.Handle("/guide", fetchtest.HTML(`<html><head><meta name="robots" content="noai, nofollow"></head><body><p>Guide</p><a href="/guide/2">next</a></body></html>`))
		h.Handle("/faq", fetchtest.Page{Body: `<p>FAQ text</p>`, Header: http.Header{"X-Robots-Tag": {"hootybot: noindex"}}})
		outDir := t.TempDir()
		out := bottest.Run(t, hooty.Run, w, 0, args(t, "-out", outDir, "http://docs.test/")...)

		for _, p := range []string{"/", "/guide", "/faq"} {
			if n := w.Count("docs.test", p); n != 1 {
				t.Fatalf("%s requested %d times, want 1: the crawl did not run", p, n)
			}
		}
		if n := w.Count("docs.test", "/guide/2"); n != 0 {
			t.Errorf("/guide/2 requested %d times: the nofollow page's link was followed", n)
		}
		for _, tt := range []struct{ path, rules, why string }{
			{"/guide", "nofollow, noai", "noai: not kept"},
			{"/faq", "noindex", "noindex: not kept"},
		} {
			r, _ := out.Result("http://docs.test" + tt.path)
			if r.Outcome != "ok" || !r.NotKept || r.Rules != tt.rules || !strings.Contains(r.Reason, tt.why) {
				t.Errorf("%s: %+v, want ok, not kept, rules %q, reason %q", tt.path, r, tt.rules, tt.why)
			}
		}
		for _, p := range []string{"guide.txt", "faq.txt"} {
			if _, err := os.Stat(filepath.Join(outDir, "docs.test", p)); err == nil {
				t.Errorf("%s written to -out", p)
			}
		}
		if _, err := os.Stat(filepath.Join(outDir, "docs.test", "index_.txt")); err != nil {
			t.Errorf("the home page, without directives, was not kept: %v", err)
		}
	})
}

// A 402 is never content: a page answering 402 with crawler-price is
// reported as payment_required with its price, requested once, and not
// written to -out; HootyBot does not pay (no crawler-max-price sent).
func TestHooty_PaymentRequiredNotStored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := docs("User-agent: HootyBot\nAllow: /\n")
		w.Host("docs.test").Handle("/guide", fetchtest.Page{Status: http.StatusPaymentRequired, Body: `<p>Guide for sale</p>`,
			Header: http.Header{"Crawler-Price": {"USD 0.05"}}})
		outDir := t.TempDir()
		out := bottest.Run(t, hooty.Run, w, 0, args(t, "-out", outDir, "http://docs.test/")...)
		if n := w.Count("docs.test", "/guide"); n != 1 {
			t.Fatalf("/guide requested %d times, want 1 (no retry)", n)
		}
		r, _ := out.Result("http://docs.test/guide")
		if r.Outcome != "payment_required" || r.Status != 402 || !strings.Contains(r.Reason, "USD 0.05") {
			t.Errorf("/guide: %+v, want payment_required with the price", r)
		}
		if _, err := os.Stat(filepath.Join(outDir, "docs.test", "guide.txt")); err == nil {
			t.Error("the 402 page was written to -out")
		}
		for _, q := range w.Requests() {
			if q.Header.Get("Crawler-Max-Price") != "" {
				t.Errorf("%s: HootyBot offered to pay", q.URL())
			}
		}
	})
}
