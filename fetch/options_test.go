package fetch_test

import (
	"context"
	"errors"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// Get's options reach the request: Fresh sends Cache-Control: no-cache (B9),
// MachineFile lets an HTML-only bot take XML and asks for it, a Validator
// replaces the stored one (a 304 ends as NotModified), and several options
// are merged. No option sends none of these.
func TestGetOptions_ReachTheRequest(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		opts    []fetch.GetOptions
		want    fetch.Outcome
		headers map[string]string // request headers the server must see ("" = absent)
	}{
		{"none", "/page", nil, fetch.OK,
			map[string]string{"Cache-Control": "", "If-None-Match": "", "Accept": "text/html,application/xhtml+xml;q=0.9"}},
		{"zero", "/page", []fetch.GetOptions{{}}, fetch.OK,
			map[string]string{"Cache-Control": "", "If-None-Match": ""}},
		{"fresh", "/page", []fetch.GetOptions{{Fresh: true}}, fetch.OK,
			map[string]string{"Cache-Control": "no-cache"}},
		{"xml refused", "/sitemap.xml", nil, fetch.NotHTML, nil},
		{"machine file", "/sitemap.xml", []fetch.GetOptions{{MachineFile: true}}, fetch.OK,
			map[string]string{"Accept": "application/xml,text/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5", "Cache-Control": ""}},
		{"etag", "/page", []fetch.GetOptions{{Validator: fetch.Validator{ETag: `"v7"`}}}, fetch.NotModified,
			map[string]string{"If-None-Match": `"v7"`}},
		{"other etag", "/page", []fetch.GetOptions{{Validator: fetch.Validator{ETag: `"v6"`}}}, fetch.OK,
			map[string]string{"If-None-Match": `"v6"`}},
		{"last-modified", "/page", []fetch.GetOptions{{Validator: fetch.Validator{LastModified: "Tue, 01 Dec 2026 00:00:00 GMT"}}}, fetch.OK,
			map[string]string{"If-Modified-Since": "Tue, 01 Dec 2026 00:00:00 GMT", "If-None-Match": ""}},
		{"merged", "/sitemap.xml", []fetch.GetOptions{{Fresh: true, Validator: fetch.Validator{ETag: `"a"`}}, {MachineFile: true}, {Validator: fetch.Validator{ETag: `"b"`}}}, fetch.OK,
			map[string]string{"Cache-Control": "no-cache", "If-None-Match": `"b"`, "Accept": "application/xml,text/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, bot := loopback(t)
			site(w, "a.test", "").
				Handle("/page", fetchtest.Page{Body: "<p>page</p>", ETag: `"v7"`}).
				Handle("/sitemap.xml", fetchtest.Text("application/xml", "<urlset/>"))
			bot.HTMLOnly = true
			f := mustFetcher(t, bot)
			p, err := f.Get(context.Background(), "http://a.test"+tt.path, tt.opts...)
			if p == nil || p.Outcome != tt.want {
				t.Fatalf("outcome %v, err %v, want %v", p.Outcome, err, tt.want)
			}
			reqs := w.RequestsTo("a.test", tt.path)
			if len(reqs) != 1 {
				t.Fatalf("%s asked %d times, want 1", tt.path, len(reqs))
			}
			for k, v := range tt.headers {
				if got := reqs[0].Header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
}

// A Validator that would break out of its header is refused before anything
// is sent, with ErrBadValidator.
func TestGetOptions_BadValidatorRefused(t *testing.T) {
	for _, v := range []fetch.Validator{
		{ETag: "\"a\"\r\nCookie: x=1"},
		{LastModified: "Tue\n"},
		{ETag: "\"\x00\""},
	} {
		w, bot := loopback(t)
		site(w, "a.test", "")
		f := mustFetcher(t, bot)
		p, err := f.Get(context.Background(), "http://a.test/", fetch.GetOptions{Validator: v})
		if p != nil || !errors.Is(err, fetch.ErrBadValidator) {
			t.Errorf("%q: page %v, err %v", v, p, err)
		}
		if n := len(w.Requests()); n != 0 {
			t.Errorf("%q: %d requests sent", v, n)
		}
	}
}

// The stored validator is sent when no option gives one, and a given one
// wins over it.
func TestGetOptions_ValidatorOverridesStore(t *testing.T) {
	w, bot := loopback(t)
	site(w, "a.test", "").Handle("/page", fetchtest.Page{Body: "<p>page</p>", ETag: `"v7"`})
	f := mustFetcher(t, bot)
	get(t, f, "http://a.test/page", fetch.OK)
	get(t, f, "http://a.test/page", fetch.NotModified) // the stored "v7"
	p, err := f.Get(context.Background(), "http://a.test/page", fetch.GetOptions{Validator: fetch.Validator{ETag: `"old"`}})
	if err != nil || p.Outcome != fetch.OK || string(p.Body) != "<p>page</p>" {
		t.Fatalf("given validator: outcome %v, err %v", p.Outcome, err)
	}
	reqs := w.RequestsTo("a.test", "/page")
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if reqs[1].Header.Get("If-None-Match") != `"v7"` || reqs[2].Header.Get("If-None-Match") != `"old"` {
		t.Errorf("If-None-Match sent: %q", []string{reqs[1].Header.Get("If-None-Match"), reqs[2].Header.Get("If-None-Match")})
	}
}
