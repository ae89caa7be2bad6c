package main

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/examples/internal/bottest"
	"github.com/goodbot-go/goodbot/examples/internal/sofya"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// SofyaBot builds a search index: what a site refuses for search is not
// requested (robots.txt) or not indexed (header), and is reported as
// usage_refused; a site that refuses search everywhere gets only its
// robots.txt request.
func TestSofya_RefusesPagesRefusedForSearch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		news(w, "a.test", "User-agent: *\nDisallow: /private/\nContent-Usage: /story/2 search=n\nContent-Usage: ai-use=n, train-ai=n\n", 4)
		w.Host("a.test").Handle("/story/3", fetchtest.Page{Body: `<a href="/story/4">next</a>`, Header: http.Header{"Content-Usage": {"search=n"}}})
		news(w, "b.test", "Content-Signal: search=no, ai-input=yes\n\nUser-agent: *\nAllow: /\n", 2)
		out := bottest.Run(t, sofya.Run, w, 0, args(t, "", "http://a.test/", "http://b.test/")...)

		if n := w.Count("a.test", "/story/1"); n != 1 {
			t.Fatalf("/story/1 requested %d times: the crawl did not run", n)
		}
		if n := w.Count("a.test", "/story/2"); n != 0 {
			t.Errorf("/story/2 requested %d times: robots.txt refuses it for search", n)
		}
		if n := w.Count("a.test", "/story/3"); n != 1 {
			t.Errorf("/story/3 requested %d times, want 1 (its header refuses)", n)
		}
		if n := w.Count("b.test", ""); n != 1 {
			t.Errorf("b.test got %d requests, want only robots.txt (search refused site-wide)", n)
		}
		for _, u := range []string{"http://a.test/story/2", "http://a.test/story/3", "http://b.test/"} {
			if r, _ := out.Result(u); r.Outcome != "usage_refused" || !strings.Contains(r.Reason, "refuses search") {
				t.Errorf("%s: %+v, want usage_refused for search", u, r)
			}
		}
		// ai-use=n and train-ai=n do not concern SofyaBot.
		if r, _ := out.Result("http://a.test/story/1"); r.Outcome != "ok" {
			t.Errorf("/story/1: %+v", r)
		}
	})
}
