package signing_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// expiresOnly rewrites a response's caching headers before they are sent:
// no Cache-Control, and Expires and Date as set.
type expiresOnly struct {
	http.ResponseWriter
	expires, date string
}

func (w expiresOnly) WriteHeader(code int) {
	h := w.Header()
	h.Del("Cache-Control")
	h.Set("Expires", w.expires)
	h.Set("Date", w.date)
	w.ResponseWriter.WriteHeader(code)
}

// TestDirectoryCache_Expires: a directory that sends Expires and no max-age
// is cached until then (RFC 9111 §4.2.1: Expires minus Date); one whose
// Expires does not parse or is already past is refetched each time; a far
// Expires is capped at MaxDirectoryTTL.
func TestDirectoryCache_Expires(t *testing.T) {
	cases := []struct {
		name    string
		expires func(now time.Time) string
		fresh   time.Duration // how long the copy is used without a fetch
	}{
		{"ten minutes", func(now time.Time) string { return now.Add(10 * time.Minute).Format(http.TimeFormat) }, 10 * time.Minute},
		{"capped", func(now time.Time) string { return now.Add(30 * 24 * time.Hour).Format(http.TimeFormat) }, signing.MaxDirectoryTTL},
		{"invalid", func(time.Time) string { return "0" }, 0},
		{"past", func(now time.Time) string { return now.Add(-time.Hour).Format(http.TimeFormat) }, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				key := signingtest.BothyKey()
				dir := &signing.Directory{Keys: signers(key)}
				mem := newMem()
				mem.handle("bothy.tools", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					now := time.Now()
					dir.ServeHTTP(expiresOnly{w, tc.expires(now), now.Format(http.TimeFormat)}, r)
				}))
				v := &signing.Verifier{Client: &http.Client{Transport: mem}}
				signer := &signing.Signer{Key: key, Agent: "https://bothy.tools"}
				verify := func() {
					t.Helper()
					req := httptest.NewRequest(http.MethodGet, "https://site.example/", nil)
					if err := signer.Sign(req); err != nil {
						t.Fatal(err)
					}
					if _, err := v.Verify(req); err != nil {
						t.Fatal(err)
					}
				}
				verify()
				if tc.fresh == 0 {
					verify()
					if n := mem.count("bothy.tools"); n != 2 {
						t.Fatalf("%d fetches for two verifications, want 2 (stale at once)", n)
					}
					return
				}
				time.Sleep(tc.fresh - time.Second)
				verify()
				if n := mem.count("bothy.tools"); n != 1 {
					t.Fatalf("%d fetches within the lifetime, want 1", n)
				}
				time.Sleep(2 * time.Second)
				verify()
				if n := mem.count("bothy.tools"); n != 2 {
					t.Fatalf("%d fetches after the lifetime, want 2", n)
				}
			})
		})
	}
}
