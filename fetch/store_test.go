package fetch_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// B8: the validators of a URL go with the request for that URL only: when
// the page has moved since, the redirect's target is asked without them.
func TestState_B8_ValidatorsStayOnTheirURL(t *testing.T) {
	w, bot := loopback(t)
	var asked atomic.Int32
	site(w, "a.test", "").
		Handle("/moved", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if asked.Add(1) == 1 {
				fetchtest.Page{Body: "m", ETag: `"m1"`}.ServeHTTP(rw, r)
				return
			}
			http.Redirect(rw, r, "/new", http.StatusMovedPermanently)
		})).
		Handle("/new", fetchtest.Page{Body: "n", ETag: `"n1"`})
	f := mustFetcher(t, bot)
	get(t, f, "http://a.test/moved", fetch.OK)
	if p := get(t, f, "http://a.test/moved", fetch.OK); string(p.Body) != "n" {
		t.Fatalf("refetch body %q, want %q", p.Body, "n")
	}
	moved, target := w.RequestsTo("a.test", "/moved"), w.RequestsTo("a.test", "/new")
	if len(moved) != 2 || len(target) != 1 {
		t.Fatalf("%d requests for /moved, %d for /new; want 2, 1", len(moved), len(target))
	}
	if got := moved[1].Header.Get("If-None-Match"); got != `"m1"` {
		t.Errorf("refetch of /moved: If-None-Match %q, want %q", got, `"m1"`)
	}
	if got := target[0].Header.Get("If-None-Match"); got != "" {
		t.Errorf("/new asked with If-None-Match %q, the validator of /moved", got)
	}
}

// Normalize on the edges of its rules: long parts that are rewritten, the
// query's escapes (a "%" without two hex digits after it stays), escapes
// of bytes over 0x7f, dot segments that end the path or climb above the
// root, a non-plain host (zone escapes, a port that goes), and a host byte
// no URL host may hold.
func TestNormalize_Edges(t *testing.T) {
	long := strings.Repeat("x", 40)
	tests := []struct{ in, want string }{
		{"http://a.test/?%2f", "http://a.test/?%2F"},
		{"http://a.test/?x%", "http://a.test/?x%"},
		{"http://a.test/?x%4", "http://a.test/?x%4"},
		{"http://a.test/%c3%a9", "http://a.test/%C3%A9"},
		{"HTTP://" + long + ".test/", "http://" + long + ".test/"},
		{"HTTP://a.test/" + long, "http://a.test/" + long},
		{"HTTP://a.test/?" + long, "http://a.test/?" + long},
		{"http://a.test/a/.", "http://a.test/a/"},
		{"http://a.test/..//a", "http://a.test//a"},
		{"http://z.test:080/", "http://z.test/"},
		{"http://[fe80::1%25A]/", "http://[fe80::1%25A]/"},
		{"http://[fe80::1%25en!0]/", "http://[fe80::1%25en%210]/"},
	}
	for _, tt := range tests {
		got, err := fetch.Normalize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"http://a<b/", "http://a>b:8080/", "http://a]b.test/", "http://a[b.test/", "http://[::1]]/"} {
		if got, err := fetch.Normalize(bad); !errors.Is(err, fetch.ErrBadURL) {
			t.Errorf("Normalize(%q) = %q, %v; want ErrBadURL", bad, got, err)
		}
	}
}

// A URL built by hand may put anything in its Host: a name with a colon
// is refused (it came out as "[é:x]", which no URL parser reads back); what
// stands in brackets is the Hostname, as the site key reads it.
func TestNormalize_HandBuiltHosts(t *testing.T) {
	tests := []struct {
		host, want string // want "": ErrBadURL
	}{
		{"[::1]", "http://[::1]/"},
		{"[0:0::1]:8080", "http://[::1]:8080/"},
		{"[fe80::1%en0]", "http://[fe80::1%25en0]/"},
		{"é:x", ""},
		{"[é:x]", ""},
		{"[127.0.0.1]", "http://127.0.0.1/"}, // the host is its Hostname, as the site key reads it
		{"[v1.x]", "http://v1.x/"},
	}
	for _, tt := range tests {
		got, err := fetch.NormalizeParsed(&url.URL{Scheme: "http", Host: tt.host, Path: "/"})
		switch {
		case tt.want == "" && !errors.Is(err, fetch.ErrBadURL):
			t.Errorf("host %q: %q, %v; want ErrBadURL", tt.host, got, err)
		case tt.want != "" && (err != nil || got != tt.want):
			t.Errorf("host %q: %q, %v; want %q", tt.host, got, err, tt.want)
		}
	}
}

// A URL built by hand may hold bytes url.Parse refuses: DEL in the query
// is escaped, in the host it is refused.
func TestNormalize_ParsedDEL(t *testing.T) {
	got, err := fetch.NormalizeParsed(&url.URL{Scheme: "http", Host: "a.test", Path: "/", RawQuery: "a\x7fb"})
	if err != nil || got != "http://a.test/?a%7Fb" {
		t.Errorf("query with DEL: %q, %v; want %q", got, err, "http://a.test/?a%7Fb")
	}
	if got, err := fetch.NormalizeParsed(&url.URL{Scheme: "http", Host: "a\x7fb", Path: "/"}); !errors.Is(err, fetch.ErrBadURL) {
		t.Errorf("host with DEL: %q, %v; want ErrBadURL", got, err)
	}
}

// A URL already in normal form is returned itself, no string built.
func TestNormalize_NormalFormIsItself(t *testing.T) {
	for _, in := range []string{"http://a.test/", "http://a.test/p?q=1", "https://a.test:8443/a%2Fb?x=%7F&y"} {
		got, err := fetch.Normalize(in)
		if err != nil || got != in {
			t.Errorf("Normalize(%q) = %q, %v; want it unchanged", in, got, err)
			continue
		}
		if unsafe.StringData(got) != unsafe.StringData(in) {
			t.Errorf("Normalize(%q) built a new string", in)
		}
	}
}

// Normalize is idempotent on hosts that are not plain.
func TestNormalize_IdempotentOnOddHosts(t *testing.T) {
	for _, in := range []string{"http://A.test:080/", "http://[fe80::1%25en0]:80/", "http://[0:0::1]/", "http://xn--bcher-kva.test./"} {
		got, err := fetch.Normalize(in)
		if err != nil {
			t.Errorf("Normalize(%q): %v", in, err)
			continue
		}
		if again, err := fetch.Normalize(got); err != nil || again != got {
			t.Errorf("Normalize(%q) = %q, then %q, %v; want it unchanged", in, got, again, err)
		}
	}
}
