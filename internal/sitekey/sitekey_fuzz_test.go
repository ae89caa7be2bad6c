package sitekey

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/idna"
)

// FuzzAppend checks that Append never panics, that the fast path for
// canonical hosts agrees with IDNA processing, and that a key is its own
// key.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"example.com", "EXAMPLE.com.", "bücher.example", "xn--bcher-kva.example", "a_b.example",
		"blocked。example", "::1", "::ffff:1.2.3.4", "ｅｘａｍｐｌｅ.com", "xn--zz", "-a.b-", "127.0.0.1", "xn--xn--xn--"} {
		f.Add(s, "080")
	}
	f.Fuzz(func(t *testing.T, host, port string) {
		h := Host(host)
		if plain(host) {
			slow, _ := idna.Lookup.ToASCII(host)
			if slow = strings.ToLower(strings.TrimRight(slow, ".")); slow != h {
				t.Fatalf("Host(%q) = %q, IDNA gives %q", host, h, slow)
			}
		}
		u := &url.URL{Scheme: "http", Host: host}
		if strings.IndexByte(host, ':') >= 0 {
			u.Host = "[" + host + "]"
		}
		if port != "" {
			u.Host += ":" + port
		}
		k := string(Append(nil, u))
		if !strings.HasPrefix(k, "http://") {
			t.Fatalf("Append(%q) = %q", u.Host, k)
		}
		if h2 := Host(h); h2 != h {
			t.Fatalf("Host not idempotent: %q -> %q -> %q", host, h, h2)
		}
	})
}
