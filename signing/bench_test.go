package signing

import (
	"crypto"
	"crypto/ed25519"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// benchRequest returns a request signed by s and the signature base and
// signature of that request, so the raw baselines work on the same bytes.
func benchRequest(b *testing.B, s *Signer) (*http.Request, []byte, []byte) {
	req := httptest.NewRequest(http.MethodGet, "https://example.com/some/page?x=1", nil)
	req.Header.Set("User-Agent", "BothyBot/1.0 (+https://bothy.tools/bot)")
	req.Header.Set("Accept", "text/html")
	if err := s.Sign(req); err != nil {
		b.Fatal(err)
	}
	inputs, err := parseSignatureInput(req.Header.Values("Signature-Input"))
	if err != nil {
		b.Fatal(err)
	}
	sigs, _ := parseSignatures(req.Header.Values("Signature"))
	msg := requestMessage(req.Method, "https", "example.com", req.URL, req.Header)
	base, err := signatureBase(msg, inputs[0].comps, inputs[0].raw)
	if err != nil {
		b.Fatal(err)
	}
	return req, []byte(base), sigs[inputs[0].label]
}

func benchSigner() *Signer {
	return &Signer{Key: signingtest.BothyKey(), Agent: "https://bothy.tools", Expires: time.Hour}
}

// BenchmarkSign: Signer.Sign per request (Signature-Agent, Signature-Input,
// Signature), to compare with BenchmarkSignRawEd25519.
func BenchmarkSign(b *testing.B) {
	s := benchSigner()
	req, _, _ := benchRequest(b, s)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Sign(req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignRawEd25519 is the baseline: ed25519.Sign of the same
// signature base.
func BenchmarkSignRawEd25519(b *testing.B) {
	s := benchSigner()
	_, base, _ := benchRequest(b, s)
	key := signingtest.BothyKey()
	b.ReportAllocs()
	for b.Loop() {
		_ = ed25519.Sign(key, base)
	}
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// BenchmarkVerifyCached: Verifier.Verify with the agent's directory already
// fetched and cached, to compare with BenchmarkVerifyRawEd25519.
func BenchmarkVerifyCached(b *testing.B) {
	s := benchSigner()
	req, _, _ := benchRequest(b, s)
	v := cachedVerifier(b, s, req)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(req); err != nil {
			b.Fatal(err)
		}
	}
}

// cachedVerifier returns a Verifier that has fetched (in memory) and cached
// the directory listing s's key, by verifying req once.
func cachedVerifier(b *testing.B, s *Signer, req *http.Request) *Verifier {
	dir := &Directory{Keys: signers(s.Key)}
	client := &http.Client{Transport: rtFunc(func(r *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		sr := r.Clone(r.Context())
		sr.TLS = tlsState
		dir.ServeHTTP(rec, sr)
		return rec.Result(), nil
	})}
	v := &Verifier{Client: client}
	if _, err := v.Verify(req); err != nil {
		b.Fatal(err)
	}
	return v
}

// BenchmarkVerifyRawEd25519 is the baseline: ed25519.Verify of the same
// signature base and signature.
func BenchmarkVerifyRawEd25519(b *testing.B) {
	s := benchSigner()
	_, base, sig := benchRequest(b, s)
	pub := s.Key.Public().(ed25519.PublicKey)
	b.ReportAllocs()
	for b.Loop() {
		if !ed25519.Verify(pub, base, sig) {
			b.Fatal("does not verify")
		}
	}
}

var tlsState = &tls.ConnectionState{HandshakeComplete: true}

func signers(keys ...crypto.Signer) []crypto.Signer { return keys }

// BenchmarkSignRatio interleaves Signer.Sign and the raw ed25519.Sign of the
// same base in every iteration, so both run under the same machine load, and
// reports their time ratio as "x-raw" (goal: at most 1.5).
func BenchmarkSignRatio(b *testing.B) {
	s := benchSigner()
	req, base, _ := benchRequest(b, s)
	key := signingtest.BothyKey()
	var ours, raw time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := s.Sign(req); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		_ = ed25519.Sign(key, base)
		raw += time.Since(t1)
		ours += t1.Sub(t0)
	}
	b.ReportMetric(float64(ours)/float64(raw), "x-raw")
}

// BenchmarkVerifyRatio does the same for Verifier.Verify (directory cached)
// against ed25519.Verify.
func BenchmarkVerifyRatio(b *testing.B) {
	s := benchSigner()
	req, base, sig := benchRequest(b, s)
	v := cachedVerifier(b, s, req)
	pub := s.Key.Public().(ed25519.PublicKey)
	var ours, raw time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := v.Verify(req); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if !ed25519.Verify(pub, base, sig) {
			b.Fatal("does not verify")
		}
		raw += time.Since(t1)
		ours += t1.Sub(t0)
	}
	b.ReportMetric(float64(ours)/float64(raw), "x-raw")
}
