package fetch_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/politeness"
)

// Normalize never panics, fails only with ErrBadURL, is idempotent, and
// keeps the URL's site: the site key of Normalize(u) is the site key of u.
// Its shortcuts change nothing: a host taken as already canonical is the
// one the site key gives, the key is the one built from the parsed URL, and
// a URL that is its own key writes itself back unchanged.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"http://a.test/", "http://a.test/p/1?x=1", "http://a.test:8080/p", "HTTP://a.test:80/",
		"https://a.test:443/", "http://a.test:0443/", "http://a.test?q", "http://a.test/?", "http://a.test/#", "http://127.0.0.1:9/x",
		"http://a.test/%7e", "http://a.test/a%2Fb", "http://a.test/a|b", "http://a.test/ä", "http://-a-.test/x", "http://a.test/./p", "HTTP://A.test:80/./x/../y?q=%7e#f", "https://[::1]:443/%2f%zz", "http://a.test./..", "ftp://x", "http://u@x/",
		"http://h.example/?a #top", "http://h.example/?a\u00a0", "http://EXAMPLE.com.:080/", "http://blocked。example/", "http://ｅｘａｍｐｌｅ.com/",
		"https://bücher.example/p", "http://[fe80::1%25en0]/", "http://[::ffff:127.0.0.1]/", "http://My_Host.Example/", "http://xn--xn--xn--:080/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := fetch.Normalize(s)
		if err != nil {
			if !errors.Is(err, fetch.ErrBadURL) {
				t.Fatalf("Normalize(%q): untyped error %v", s, err)
			}
			return
		}
		n2, err := fetch.Normalize(n)
		if err != nil || n2 != n {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", s, n, n2, err)
		}
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("Normalize(%q) = %q, but it does not parse: %v", s, n, err)
		}
		nu, err := url.Parse(n)
		if err != nil {
			t.Fatalf("Normalize(%q) = %q does not parse: %v", s, n, err)
		}
		if k, nk := politeness.HostKey(u), politeness.HostKey(nu); k != nk {
			t.Fatalf("Normalize(%q) = %q moved the site key from %s to %s", s, n, k, nk)
		}
		if plain, host, ok := fetch.PlainHostAuthority(u); plain && (!ok || host != u.Host) {
			t.Fatalf("%q: host %q taken as canonical, but the site key spells it %q (%v)", s, u.Host, host, ok)
		}
		if built, err := fetch.NormalizeParsed(u); err != nil || built != n {
			t.Fatalf("Normalize(%q) = %q, but the key built from the parsed URL is %q, %v", s, n, built, err)
		}
		if n == strings.TrimSpace(s) && u.String() != n {
			t.Fatalf("%q is its own key but writes itself as %q", n, u.String())
		}
	})
}

// A User-Agent value either is refused with ErrUserAgent or contains no
// control character, so it can never split a header.
func FuzzWithUserAgentVar(f *testing.F) {
	for _, s := range []string{"dir.example", "a\r\nb", "x) Evil (", "é"} {
		f.Add(s)
	}
	bot := fetch.Bot{UserAgent: "FuzzBot/1.0 (for {dir})"}
	if _, err := fetch.New(bot); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, v string) {
		_, err := fetch.WithUserAgentVar(context.Background(), "dir", v)
		if err != nil {
			if !errors.Is(err, fetch.ErrUserAgent) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if strings.ContainsAny(v, "\r\n\x00();") {
			t.Fatalf("accepted %q", v)
		}
	})
}
