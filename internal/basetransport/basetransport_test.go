package basetransport_test

import (
	"net/http"
	"testing"

	"github.com/goodbot-go/goodbot/internal/basetransport"
)

type wrapper struct{ http.RoundTripper }

// With http.DefaultTransport an *http.Transport, New is a clone of it (a
// transport of its own, with its settings); replaced by a wrapper, New
// has net/http's default settings all the same.
func TestNew(t *testing.T) {
	orig := http.DefaultTransport.(*http.Transport)
	defaults := orig.Clone()
	check := func(t *testing.T, got *http.Transport) {
		t.Helper()
		if got == orig {
			t.Fatal("New returned http.DefaultTransport itself, not a transport of its own")
		}
		if got.Proxy == nil || got.DialContext == nil || !got.ForceAttemptHTTP2 ||
			got.MaxIdleConns != defaults.MaxIdleConns || got.IdleConnTimeout != defaults.IdleConnTimeout ||
			got.TLSHandshakeTimeout != defaults.TLSHandshakeTimeout || got.ExpectContinueTimeout != defaults.ExpectContinueTimeout {
			t.Errorf("settings %+v, want net/http's defaults %+v", got, defaults)
		}
	}
	t.Run("default", func(t *testing.T) { check(t, basetransport.New()) })
	t.Run("replaced", func(t *testing.T) {
		http.DefaultTransport = wrapper{orig}
		defer func() { http.DefaultTransport = orig }()
		check(t, basetransport.New())
	})
	t.Run("customised", func(t *testing.T) {
		custom := orig.Clone()
		custom.MaxIdleConns = 7
		http.DefaultTransport = custom
		defer func() { http.DefaultTransport = orig }()
		if got := basetransport.New(); got == custom || got.MaxIdleConns != 7 {
			t.Errorf("MaxIdleConns %d (same transport %v), want a clone keeping the program's 7", got.MaxIdleConns, got == custom)
		}
	})
}
