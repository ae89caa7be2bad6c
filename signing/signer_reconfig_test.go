package signing_test

import (
	"crypto/ed25519"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// signedFields signs a fresh request for https://example.com/p with s and
// returns its three signature fields.
func signedFields(t *testing.T, s *signing.Signer) [3]string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "https://example.com/p", nil)
	must(t, s.Sign(req))
	return [3]string{req.Header.Get("Signature-Agent"), req.Header.Get("Signature-Input"), req.Header.Get("Signature")}
}

// TestSigner_FieldChangeTakesEffect: a Signer that has signed and then has a
// field changed (between uses) signs exactly as a new Signer with the new
// fields would: nothing computed for the old configuration is reused.
func TestSigner_FieldChangeTakesEffect(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(s *signing.Signer)
		want   string // a substring the new fields must hold
	}{
		{"key", func(s *signing.Signer) { s.Key = signingtest.OtherKey() }, "keyid="},
		{"agent", func(s *signing.Signer) { s.Agent = "https://other.example" }, `sig1="https://other.example"`},
		{"form", func(s *signing.Signer) { s.Form = signing.QuotedString }, `"@method" "@authority" "@path" "signature-agent")`},
		{"label", func(s *signing.Signer) { s.Label = "bot" }, `bot=("@method" "@authority" "@path" "signature-agent";key="bot")`},
		{"components", func(s *signing.Signer) { s.Components = []string{"@authority"} }, `sig1=("@authority" "signature-agent";key="sig1")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &signing.Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools"}
				before := signedFields(t, s)
				tc.change(s)
				got := signedFields(t, s)
				fresh := &signing.Signer{Key: s.Key, Agent: s.Agent, Form: s.Form, Label: s.Label, Components: s.Components}
				if want := signedFields(t, fresh); got != want {
					t.Errorf("after the change:\n got %q\nwant %q (a new Signer)", got, want)
				}
				if got == before {
					t.Error("the change did not change the signature fields")
				}
				if all := strings.Join(got[:], "\n"); !strings.Contains(all, tc.want) {
					t.Errorf("fields %q lack %q", all, tc.want)
				}
				kid, err := s.KeyID()
				must(t, err)
				wantKid, err := signing.Thumbprint(s.Key.Public().(ed25519.PublicKey))
				must(t, err)
				if kid != wantKid {
					t.Errorf("KeyID %s, want the thumbprint of the current key %s", kid, wantKid)
				}
			})
		})
	}
}
