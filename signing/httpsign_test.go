package signing

import (
	"crypto"
	"crypto/ed25519"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/signing/signingtest"
	"github.com/yaronf/httpsign"
)

// httpsignSign signs as Signer.Sign did before it built signatures itself:
// through httpsign, fed a minimal request with the normalised authority and
// Signature-Agent only. It is the reference Sign is checked against.
func httpsignSign(t *testing.T, s *Signer, req *http.Request, nonce string) (input, sig string) {
	t.Helper()
	c, err := s.prepared()
	if err != nil {
		t.Fatal(err)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	authority := normaliseAuthority(host, req.URL.Scheme)
	minimal := &http.Request{
		Method: req.Method,
		URL:    &url.URL{Scheme: req.URL.Scheme, Host: authority, Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery},
		Host:   authority,
		Header: req.Header.Clone(),
	}
	minimal.Header.Set("Signature-Agent", c.field)
	fields := httpsign.NewFields()
	for _, name := range s.components() {
		fields.AddHeader(name)
	}
	if s.Form == Dictionary {
		fields.AddDictHeader("signature-agent", c.label)
	} else {
		fields.AddHeader("signature-agent")
	}
	cfg := httpsign.NewSignConfig().SignAlg(false).SetKeyID(c.kid).SetTag(TagWebBotAuth).
		SetExpires(time.Now().Add(s.expires()).Unix())
	if nonce != "" {
		cfg.SetNonce(nonce)
	}
	var hs *httpsign.Signer
	if priv, ok := s.Key.(ed25519.PrivateKey); ok {
		hs, err = httpsign.NewEd25519Signer(priv, cfg, *fields)
	} else {
		t.Fatal("reference signing needs an ed25519.PrivateKey")
	}
	if err != nil {
		t.Fatal(err)
	}
	input, sig, err = httpsign.SignRequest(c.label, *hs, minimal)
	if err != nil {
		t.Fatal(err)
	}
	return input, sig
}

// nonceOf returns the nonce parameter of a Signature-Input field.
func nonceOf(t *testing.T, input string) string {
	t.Helper()
	sis, err := parseSignatureInput([]string{input})
	if err != nil || len(sis) != 1 {
		t.Fatalf("parse %q: %v", input, err)
	}
	n, _, err := sis[0].stringParam("nonce")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Sign builds its signatures itself; in fake time (one created for both)
// they are byte for byte what httpsign's signer makes of the same request,
// in every form, with and without a nonce, for odd authorities too.
func TestSign_SameAsHttpsign(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		for _, form := range []AgentForm{QuotedString, BareURL, Dictionary} {
			for _, nonce := range []bool{false, true} {
				for _, target := range []string{"https://Example.COM:443/a?b=c", "http://example.com:8080/", "https://[2001:db8::1]/x%20y/z?q=%C3%A9"} {
					for _, comps := range [][]string{nil, {"@authority"}, {"@target-uri", "@query", "x-price", "@method"}} {
						s := &Signer{Key: key, Agent: "https://bothy.tools", Form: form, Nonce: nonce, Label: "bot", Components: comps}
						req := httptest.NewRequest(http.MethodPost, target, nil)
						req.Header.Set("X-Price", " 0.01 USD ")
						if err := s.Sign(req); err != nil {
							t.Fatal(err)
						}
						input, sig := req.Header.Get("Signature-Input"), req.Header.Get("Signature")
						n := ""
						if nonce {
							n = nonceOf(t, input)
						}
						wantInput, wantSig := httpsignSign(t, s, req, n)
						if input != wantInput || sig != wantSig {
							t.Errorf("%v %s %v nonce=%v:\n got %s\n     %s\nwant %s\n     %s", form, target, comps, nonce, input, sig, wantInput, wantSig)
						}
					}
				}
			}
		}
	})
}

// opaqueSigner hides the ed25519.PrivateKey type, as an HSM or KMS handle
// would.
type opaqueSigner struct{ k ed25519.PrivateKey }

func (o opaqueSigner) Public() crypto.PublicKey { return o.k.Public() }
func (o opaqueSigner) Sign(r io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	return o.k.Sign(r, msg, opts)
}

// A crypto.Signer that is not an ed25519.PrivateKey signs the same bytes.
func TestSign_OpaqueSigner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		a := &Signer{Key: key, Agent: "https://bothy.tools"}
		b := &Signer{Key: opaqueSigner{key}, Agent: "https://bothy.tools"}
		ra := httptest.NewRequest(http.MethodGet, "https://example.com/", nil)
		rb := httptest.NewRequest(http.MethodGet, "https://example.com/", nil)
		if err := a.Sign(ra); err != nil {
			t.Fatal(err)
		}
		if err := b.Sign(rb); err != nil {
			t.Fatal(err)
		}
		if ra.Header.Get("Signature") != rb.Header.Get("Signature") {
			t.Errorf("opaque signer differs:\n%s\n%s", ra.Header, rb.Header)
		}
	})
}
