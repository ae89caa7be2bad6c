package signing_test

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

func TestKeys_PEMAndJWKRoundTrip(t *testing.T) {
	key, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	p, err := signing.MarshalPrivateKeyPEM(key)
	if err != nil || !bytes.HasPrefix(p, []byte("-----BEGIN PRIVATE KEY-----")) {
		t.Fatalf("%s %v", p, err)
	}
	back, err := signing.ParsePrivateKeyPEM(p)
	if err != nil || !bytes.Equal(back, key) {
		t.Fatalf("PEM round trip: %v", err)
	}
	j, err := signing.MarshalPrivateKeyJWK(key)
	if err != nil {
		t.Fatal(err)
	}
	back, err = signing.ParsePrivateKeyJWK(j)
	if err != nil || !bytes.Equal(back, key) {
		t.Fatalf("JWK round trip: %v", err)
	}
	pj, err := signing.MarshalPublicKeyJWK(pub(key))
	if err != nil || bytes.Contains(pj, []byte(`"d"`)) {
		t.Fatalf("public JWK %s %v", pj, err)
	}
	p2, err := signing.ParsePublicKeyJWK(pj)
	if err != nil || !bytes.Equal(p2, pub(key)) {
		t.Fatalf("public JWK round trip: %v", err)
	}
	for _, bad := range []string{"", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"} {
		if _, err := signing.ParsePrivateKeyPEM([]byte(bad)); !errors.Is(err, signing.ErrKey) {
			t.Errorf("ParsePrivateKeyPEM(%q) = %v", bad, err)
		}
	}
	if _, err := signing.ParsePrivateKeyJWK(pj); !errors.Is(err, signing.ErrKey) {
		t.Errorf("public JWK accepted as private: %v", err)
	}
}

// TestThumbprint_D2: keyid is the RFC 7638 thumbprint (the drafts' value for
// the RFC 9421 test key).
func TestThumbprint_D2(t *testing.T) {
	kid, err := signing.Thumbprint(pub(signingtest.RFC9421Key()))
	if err != nil || kid != signingtest.RFC9421Thumbprint {
		t.Fatalf("%s %v", kid, err)
	}
	if _, err := signing.Thumbprint(ed25519.PublicKey{1, 2}); !errors.Is(err, signing.ErrKey) {
		t.Fatal(err)
	}
}

// TestJWKS_D2_NoPrivateMembers: the directory built from private keys lists
// public members only.
func TestJWKS_D2_NoPrivateMembers(t *testing.T) {
	d := &signing.Directory{Keys: signers(signingtest.BothyKey(), signingtest.NextKey())}
	b, err := d.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(b, &set); err != nil || len(set.Keys) != 2 {
		t.Fatalf("%s %v", b, err)
	}
	for _, k := range set.Keys {
		for _, private := range []string{"d", "p", "q", "dp", "dq", "qi", "k"} {
			if _, ok := k[private]; ok {
				t.Errorf("private member %q in %v", private, k)
			}
		}
		if k["kty"] != "OKP" || k["crv"] != "Ed25519" || k["x"] == nil || k["kid"] == nil {
			t.Errorf("key %v", k)
		}
	}
	ks, err := signing.ParseJWKS(b)
	if err != nil || len(ks) != 2 {
		t.Fatalf("ParseJWKS: %v %v", ks, err)
	}
}

type readCloseCounter struct {
	reads, closes int
}

func (r *readCloseCounter) Read(p []byte) (int, error) { r.reads++; return 0, io.EOF }
func (r *readCloseCounter) Close() error               { r.closes++; return nil }

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type idleCloser struct {
	rtFunc
	closed *int
}

func (c idleCloser) CloseIdleConnections() { *c.closed++ }

// TestTransport_B2: clones, never reads the body, signs each request,
// forwards CloseIdleConnections, closes the body on early errors, and its
// errors are typed through *url.Error.
func TestTransport_B2(t *testing.T) {
	body := &readCloseCounter{}
	req := httptest.NewRequest(http.MethodPost, "https://bothy.example/x", nil)
	req.Body = body
	req.Header.Set("X-Caller", "1")
	before := req.Header.Clone()
	var sent *http.Request
	closed := 0
	base := idleCloser{rtFunc(func(r *http.Request) (*http.Response, error) {
		sent = r
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	}), &closed}
	tr := &signing.Transport{Base: base, Signer: &signing.Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools"}}
	if _, err := tr.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(req.Header, before) {
		t.Error("caller's request modified")
	}
	if sent == req || sent.Header.Get("Signature") == "" || sent.Header.Get("X-Caller") != "1" {
		t.Errorf("sent %v", sent.Header)
	}
	if sent.Header.Get("Signature-Agent") != `sig1="https://bothy.tools"` {
		t.Errorf("Signature-Agent %q", sent.Header.Get("Signature-Agent"))
	}
	if body.reads != 0 {
		t.Error("body read")
	}
	(&http.Client{Transport: tr}).CloseIdleConnections()
	if closed != 1 {
		t.Error("CloseIdleConnections not forwarded")
	}

	// No signer: the request fails, the body is closed, the error is typed.
	body = &readCloseCounter{}
	req2, _ := http.NewRequest(http.MethodPost, "https://bothy.example/x", body)
	_, err := (&http.Client{Transport: &signing.Transport{Base: base}}).Do(req2)
	var ue *url.Error
	if !errors.As(err, &ue) || !errors.Is(err, signing.ErrNoKey) || body.closes == 0 {
		t.Fatalf("err %v closes %d", err, body.closes)
	}
	// A bad agent is reported before anything is sent.
	bad := &signing.Transport{Base: base, Signer: &signing.Signer{Key: signingtest.BothyKey(), Agent: "bothy.tools"}}
	if _, err := bad.RoundTrip(httptest.NewRequest(http.MethodGet, "https://a.example/", nil)); err == nil || !strings.HasPrefix(err.Error(), "signing: ") {
		t.Fatalf("bad agent: %v", err)
	}
}

// TestSigner_Forms_B2_D2: the three Signature-Agent forms on the wire, as
// the seed pages show them, and the covered components.
func TestSigner_Forms_B2_D2(t *testing.T) {
	for _, tc := range []struct {
		form       signing.AgentForm
		agent      string
		wantHeader string
		wantComps  string
	}{
		{signing.BareURL, "https://bothy.tools", "https://bothy.tools", `("@method" "@authority" "@path" "signature-agent")`},
		{signing.QuotedString, "https://directories.prosvita.io", `"https://directories.prosvita.io"`, `("@method" "@authority" "@path" "signature-agent")`},
		{signing.Dictionary, "https://bothy.tools", `sig1="https://bothy.tools"`, `("@method" "@authority" "@path" "signature-agent";key="sig1")`},
	} {
		s := &signing.Signer{Key: signingtest.BothyKey(), Agent: tc.agent, Form: tc.form, Nonce: true}
		req := httptest.NewRequest(http.MethodGet, "https://Example.com:443/", nil)
		if err := s.Sign(req); err != nil {
			t.Fatal(err)
		}
		kid, _ := s.KeyID()
		in := req.Header.Get("Signature-Input")
		if got := req.Header.Get("Signature-Agent"); got != tc.wantHeader {
			t.Errorf("%v: Signature-Agent %q, want %q", tc.form, got, tc.wantHeader)
		}
		for _, want := range []string{"sig1=" + tc.wantComps, ";created=", ";expires=", `;keyid="` + kid + `"`, `;tag="web-bot-auth"`, `;nonce="`} {
			if !strings.Contains(in, want) {
				t.Errorf("%v: Signature-Input %s lacks %s", tc.form, in, want)
			}
		}
	}
}

// opaqueSigner stands for an HSM or KMS handle: a crypto.Signer that is not
// an ed25519.PrivateKey.
type opaqueSigner struct{ k ed25519.PrivateKey }

func (o opaqueSigner) Public() crypto.PublicKey { return o.k.Public() }
func (o opaqueSigner) Sign(r io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	return o.k.Sign(r, msg, opts)
}

func TestSigner_OpaqueCryptoSigner(t *testing.T) {
	key := signingtest.BothyKey()
	s := &signing.Signer{Key: opaqueSigner{key}, Agent: "https://bothy.tools"}
	req := httptest.NewRequest(http.MethodGet, "https://example.com/", nil)
	must(t, s.Sign(req))
	ks, _ := signing.NewKeySet(pub(key))
	if _, err := (&signing.Verifier{Keys: ks}).Verify(req); err != nil {
		t.Fatal(err)
	}
	// A non-Ed25519 key is refused with ErrNoKey.
	if err := (&signing.Signer{Key: notEd{}, Agent: "https://bothy.tools"}).Sign(req); !errors.Is(err, signing.ErrNoKey) {
		t.Fatalf("non-Ed25519 key: %v", err)
	}
}

type notEd struct{ crypto.Signer }

func (notEd) Public() crypto.PublicKey { return []byte("rsa?") }

// shortEd is a crypto.Signer whose public key has the Ed25519 type but not
// its 32 bytes.
type shortEd struct{ crypto.Signer }

func (shortEd) Public() crypto.PublicKey { return make(ed25519.PublicKey, ed25519.PublicKeySize-1) }

// TestUnusableKeys: a Signer whose key is not a 32-byte Ed25519 public key
// fails with ErrNoKey (wrapping ErrKey), and a Directory listing it cannot
// build its key set (ErrKey).
func TestUnusableKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  crypto.Signer
	}{
		{"not Ed25519", notEd{}},
		{"31-byte Ed25519 public key", shortEd{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "https://example.com/", nil)
			err := (&signing.Signer{Key: tc.key, Agent: "https://bothy.tools"}).Sign(req)
			if !errors.Is(err, signing.ErrNoKey) || !errors.Is(err, signing.ErrKey) {
				t.Errorf("Sign: %v, want ErrNoKey and ErrKey", err)
			}
			if req.Header.Get("Signature") != "" {
				t.Error("signed anyway")
			}
			if _, err := (&signing.Directory{Keys: []crypto.Signer{tc.key}}).JWKS(); !errors.Is(err, signing.ErrKey) {
				t.Errorf("JWKS: %v, want ErrKey", err)
			}
		})
	}
}
