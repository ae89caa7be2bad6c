package fetch_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
)

// Normalize never panics, fails only with ErrBadURL, and is idempotent.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"http://a.test/", "HTTP://A.test:80/./x/../y?q=%7e#f", "https://[::1]:443/%2f%zz", "http://a.test./..", "ftp://x", "http://u@x/"} {
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
