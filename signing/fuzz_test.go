package signing

import (
	"crypto/ed25519"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// FuzzParseSignatureAgent: never panics, fails only with *VerifyError, and
// what it accepts renders back to a field it parses the same way.
func FuzzParseSignatureAgent(f *testing.F) {
	for _, s := range []string{
		`https://bothy.tools`, `"https://directories.prosvita.io"`, `sig1="https://bothy.tools"`,
		`sig1="https://a.example";type=jwks_uri, sig2="https://b.example"`, `"https://x`, `sig1=?1`, ``, `https://a b`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseSignatureAgent([]string{s})
		if err != nil {
			var ve *VerifyError
			if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidSignature) {
				t.Fatalf("untyped error %T %v", err, err)
			}
			return
		}
		switch a.Form {
		case BareURL, QuotedString:
			field, err := agentField(a.URL, a.Form, "sig1")
			if err != nil {
				t.Fatalf("accepted %q but cannot render %q: %v", s, a.URL, err)
			}
			b, err := ParseSignatureAgent([]string{field})
			if err != nil || b.URL != a.URL || b.Form != a.Form {
				t.Fatalf("round trip %q -> %q: %+v %v", s, field, b, err)
			}
		case Dictionary:
			if len(a.Members) == 0 {
				t.Fatalf("empty dictionary accepted from %q", s)
			}
		}
	})
}

// FuzzParseSignatureInput: the Signature-Input parser and the verifier
// behind it never panic and fail only with *VerifyError.
func FuzzParseSignatureInput(f *testing.F) {
	for _, s := range []string{
		`sig1=("@authority" "signature-agent");created=1;expires=2;keyid="k";tag="web-bot-auth"`,
		`sig1=("@authority" "signature-agent";key="sig1");created=1735689600;expires=4889289600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";tag="web-bot-auth"`,
		`sig1=("@authority";req "@method" "x";bs);created=1`, `sig1=()`, `a=(`, `sig1="x"`, ` `, `,`,
	} {
		f.Add(s, `sig1=:AAAA:`, `"https://signature-agent.test"`)
	}
	pub := signingtest.RFC9421Key().Public()
	v := &Verifier{Keys: KeySet{signingtest.RFC9421Thumbprint: pub.(ed25519.PublicKey)}}
	f.Fuzz(func(t *testing.T, input, sig, agent string) {
		req := httptest.NewRequest(http.MethodGet, "https://example.com/", nil)
		req.Header["Signature-Input"] = []string{input}
		req.Header["Signature"] = []string{sig}
		req.Header["Signature-Agent"] = []string{agent}
		res, err := v.Verify(req)
		var ve *VerifyError
		if err != nil && !errors.As(err, &ve) {
			t.Fatalf("untyped error %T %v", err, err)
		}
		if (err == nil) == (res == nil) {
			t.Fatalf("Verify = %v, %v", res, err)
		}
	})
}
