package fetch_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/internal/syncbuf"
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

// A stored validator holding a value net/http would refuse to send (a
// damaged record, a store that holds anything) does not fail the fetch for
// good: that value is left out (the other is still sent), the store gets
// the validator without it, a Warn line names the URL, and the answer's
// own validator then replaces it. A value with bytes above ASCII, which
// net/http sends, is sent.
func TestFetcher_DamagedStoredValidator(t *testing.T) {
	const lm = "Mon, 07 Dec 2026 06:00:00 GMT"
	for _, tc := range []struct {
		name               string
		stored             fetch.Validator
		sentETag, sentLM   string
		keptETag, keptLast string // in the store right after the load
	}{
		{"CR LF in the ETag", fetch.Validator{ETag: "\"a\"\r\nCookie: x=1", LastModified: lm}, "", lm, "", lm},
		{"NUL in the ETag", fetch.Validator{ETag: "\"a\x00\""}, "", "", "", ""},
		{"LF in Last-Modified", fetch.Validator{ETag: `"v1"`, LastModified: "Mon,\n07 Dec"}, `"v1"`, "", `"v1"`, ""},
		{"DEL in both", fetch.Validator{ETag: "\"\x7f\"", LastModified: "\x7f"}, "", "", "", ""},
		{"bytes above ASCII", fetch.Validator{ETag: "\"caf\xc3\xa9\""}, "\"caf\xc3\xa9\"", "", "\"caf\xc3\xa9\"", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, bot := loopback(t)
			site(w, "a.test", "").Handle("/page", fetchtest.Page{Body: "<p>page</p>", ETag: `"v2"`})
			var logs syncbuf.Buffer
			bot.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			store := &savesOf{}
			store.Save(context.Background(), "http://a.test/page", tc.stored)
			store.saves = nil
			bot.Validators = store
			f := mustFetcher(t, bot)
			get(t, f, "http://a.test/page", fetch.OK)
			reqs := w.RequestsTo("a.test", "/page")
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			if g, l := reqs[0].Header.Get("If-None-Match"), reqs[0].Header.Get("If-Modified-Since"); g != tc.sentETag || l != tc.sentLM {
				t.Errorf("sent If-None-Match %q, If-Modified-Since %q; want %q, %q", g, l, tc.sentETag, tc.sentLM)
			}
			damaged := tc.keptETag != tc.stored.ETag || tc.keptLast != tc.stored.LastModified
			want := []fetch.Validator{{ETag: `"v2"`}}
			if damaged {
				want = append([]fetch.Validator{{ETag: tc.keptETag, LastModified: tc.keptLast}}, want...)
			}
			if !slices.Equal(store.saves, want) {
				t.Errorf("saved %q, want %q", store.saves, want)
			}
			if warned := strings.Contains(logs.String(), "stored validator is not a valid header value"); warned != damaged {
				t.Errorf("warned %v, want %v:\n%s", warned, damaged, logs.String())
			}
		})
	}
}

// savesOf is a MemoryValidators that records what was saved.
type savesOf struct {
	fetch.MemoryValidators
	mu    sync.Mutex
	saves []fetch.Validator
}

func (s *savesOf) Save(ctx context.Context, url string, v fetch.Validator) error {
	s.mu.Lock()
	s.saves = append(s.saves, v)
	s.mu.Unlock()
	return s.MemoryValidators.Save(ctx, url, v)
}
