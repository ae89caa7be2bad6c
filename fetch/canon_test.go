package fetch_test

import (
	"net/url"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
)

// TestPlainHost: the host spellings taken as their own site key without
// building it (no allocation on the request path) are exactly the plain
// ones: lower-case ASCII letters, digits, '-' and inner dots, with a port
// that is not the scheme's default and has no leading zero. Every other
// spelling goes through the site key, which gives the host the request is
// sent to; the fuzz target checks that a plain one is always its key.
func TestPlainHost(t *testing.T) {
	for _, tc := range []struct {
		url   string
		plain bool
	}{
		{"http://a.test/", true},
		{"http://a/", true},
		{"http://z9-0.a.test/", true},
		{"http://a.test:8080/", true},
		{"http://a.test:1/", true},
		{"http://a.test:9999/", true},
		{"http://a.test:443/", true}, // not http's default
		{"https://a.test:80/", true}, // not https's default
		{"http://a.test:80/", false},
		{"https://a.test:443/", false},
		{"http://a.test:080/", false},
		{"http://a.test:/", false},
		{"http://A.test/", false},
		{"http://a.test./", false},
		{"http://.a.test/", false},
		{"http://a_b.test/", false},
		{"http://xn--bcher-kva.test/", false},
		{"http://a.xn--p1ai/", false},
		{"http://[::1]:8080/", false},
		{"http://127.0.0.1:8080/", true},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		plain, host, ok := fetch.PlainHostAuthority(u)
		if plain != tc.plain {
			t.Errorf("%s: plain = %v, want %v", tc.url, plain, tc.plain)
		}
		if plain && (!ok || host != u.Host) {
			t.Errorf("%s: plain, but its site key's host is %q (%v)", tc.url, host, ok)
		}
	}
}
