package signing_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// TestSigner_NilSigner: a nil *Signer has no key, like the zero Signer.
func TestSigner_NilSigner(t *testing.T) {
	var s *signing.Signer
	if _, err := s.KeyID(); !errors.Is(err, signing.ErrNoKey) {
		t.Errorf("KeyID: %v, want ErrNoKey", err)
	}
	req := httptest.NewRequest(http.MethodGet, "https://example.com/", nil)
	if err := s.Sign(req); !errors.Is(err, signing.ErrNoKey) {
		t.Errorf("Sign: %v, want ErrNoKey", err)
	}
}

// TestConfigError_Message: the message names the field, then the detail
// and the cause when there are any.
func TestConfigError_Message(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  *signing.ConfigError
		want string
	}{
		{"field only", &signing.ConfigError{Field: "Components"}, "signing: Signer.Components"},
		{"detail", &signing.ConfigError{Field: "Components", Detail: "must contain @authority or @target-uri"},
			"signing: Signer.Components: must contain @authority or @target-uri"},
		{"detail and cause", &signing.ConfigError{Field: "Expires", Detail: "25h0m0s", Err: signing.ErrExpiresTooLong},
			"signing: Signer.Expires: 25h0m0s: signing: expires more than 24h after created"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
	s := &signing.Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools", Expires: 25 * time.Hour}
	err := s.Sign(httptest.NewRequest(http.MethodGet, "https://example.com/", nil))
	if err == nil || !strings.Contains(err.Error(), "Expires: 25h0m0s") {
		t.Errorf("Sign with Expires 25h: %v, want the value in the message", err)
	}
}

// TestSigner_OwnFieldsRefused: Signature and Signature-Input cannot be
// covered components (RFC 9421 7.2.5 warns against covering the signature
// fields; the signer adds them itself), even when the request already
// carries such a field: Sign fails with a *ComponentError and leaves the
// request's fields as they were.
func TestSigner_OwnFieldsRefused(t *testing.T) {
	for _, name := range []string{"signature", "signature-input", "signature-agent"} {
		t.Run(name, func(t *testing.T) {
			s := &signing.Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools", Components: []string{"@authority", name}}
			req := httptest.NewRequest(http.MethodGet, "https://example.com/", nil)
			req.Header.Set(name, "sig0=:AA==:")
			err := s.Sign(req)
			var ce *signing.ComponentError
			if !errors.As(err, &ce) || ce.Component != name {
				t.Fatalf("Sign: %v, want a ComponentError for %q", err, name)
			}
			if got := req.Header.Values(name); len(got) != 1 || got[0] != "sig0=:AA==:" {
				t.Errorf("%s after a failed Sign: %q", name, got)
			}
			if _, err := s.KeyID(); !errors.Is(err, signing.ErrComponent) {
				t.Errorf("KeyID: %v, want ErrComponent (the configuration is unusable)", err)
			}
		})
	}
}

// TestSigner_NilRequest: Sign reports a nil request or a request without a
// URL as an error, it does not panic.
func TestSigner_NilRequest(t *testing.T) {
	s := &signing.Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools"}
	for name, req := range map[string]*http.Request{"nil request": nil, "nil URL": {Method: http.MethodGet, Host: "example.com", Header: http.Header{}}} {
		t.Run(name, func(t *testing.T) {
			if err := s.Sign(req); err == nil || !strings.HasPrefix(err.Error(), "signing: ") {
				t.Errorf("Sign: %v, want an error", err)
			}
		})
	}
}

// TestTransport_FailureWithoutBody: a Transport that cannot sign fails a
// request that has no body (a GET built by hand) with the signing error,
// without a panic.
func TestTransport_FailureWithoutBody(t *testing.T) {
	u, _ := url.Parse("https://example.com/")
	for name, tr := range map[string]*signing.Transport{
		"no signer":      {},
		"unusable agent": {Signer: &signing.Signer{Key: signingtest.BothyKey(), Agent: "bothy.tools"}},
	} {
		t.Run(name, func(t *testing.T) {
			req := &http.Request{Method: http.MethodGet, URL: u, Host: "example.com", Header: http.Header{}}
			if _, err := tr.RoundTrip(req); err == nil || !strings.HasPrefix(err.Error(), "signing: ") {
				t.Errorf("RoundTrip: %v, want a signing error", err)
			}
		})
	}
}
