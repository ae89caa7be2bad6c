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

// FuzzParseAcceptSignature: the Accept-Signature parser never panics and
// fails only with *VerifyError; what it accepts is either signed (and then
// verifies) or refused with a *ComponentError or *ConfigError.
func FuzzParseAcceptSignature(f *testing.F) {
	for _, s := range []string{
		`sig1=("@method" "@target-uri" "signature-agent";key="sig1");nonce="n";tag="web-bot-auth"`,
		`sig1=("@authority" "x-price");keyid="k"`, `sig1=("@authority";req)`, `a=()`, `a=(`, `a="x"`, ``,
	} {
		f.Add(s)
	}
	key := signingtest.BothyKey()
	ks, _ := NewKeySet(key.Public().(ed25519.PublicKey))
	s := &Signer{Key: key, Agent: "https://bothy.tools"}
	f.Fuzz(func(t *testing.T, field string) {
		rs, err := ParseAcceptSignature([]string{field})
		if err != nil {
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("untyped error %T %v", err, err)
			}
			return
		}
		for i := range rs {
			req := httptest.NewRequest(http.MethodGet, "https://example.com/p?q=1", nil)
			req.Header.Set("X-Price", "1")
			if err := s.SignRequested(req, &rs[i]); err != nil {
				var ce *ComponentError
				var cfg *ConfigError
				if !errors.As(err, &ce) && !errors.As(err, &cfg) {
					t.Fatalf("%q: untyped refusal %T %v", field, err, err)
				}
				continue
			}
			if _, err := (&Verifier{Keys: ks}).Verify(req); err != nil {
				t.Fatalf("%q: our own requested signature does not verify: %v\n%v", field, err, req.Header)
			}
		}
	})
}
