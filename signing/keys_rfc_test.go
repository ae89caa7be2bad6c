package signing_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"reflect"
	"testing"

	"github.com/goodbot-go/goodbot/signing"
)

// RFC 8037 appendix A: the Ed25519 key of RFC 8032 §7.1 test 1 as a JWK
// (A.1 private, A.2 public) and its RFC 7638 thumbprint (A.3).
const (
	rfc8037D          = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
	rfc8037X          = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
	rfc8037Thumbprint = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
	rfc8037Private    = `{"kty":"OKP","crv":"Ed25519","d":"` + rfc8037D + `","x":"` + rfc8037X + `"}`
	rfc8037Public     = `{"kty":"OKP","crv":"Ed25519","x":"` + rfc8037X + `"}`
	// RFC 7638 §3.1: an RSA key, which a JWKS of Ed25519 keys skips.
	rfc7638RSA = `{"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","alg":"RS256","kid":"2011-04-29"}`
)

func b64url(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	must(t, err)
	return b
}

// TestKeys_RFC8037Vectors: thumbprint, JWK writing and JWK reading against
// the RFC 8037 appendix A values.
func TestKeys_RFC8037Vectors(t *testing.T) {
	key := ed25519.NewKeyFromSeed(b64url(t, rfc8037D))
	x := ed25519.PublicKey(b64url(t, rfc8037X))
	if !x.Equal(key.Public()) {
		t.Fatalf("public key %x, want %x (RFC 8037 A.2)", key.Public(), x)
	}
	if kid, err := signing.Thumbprint(x); err != nil || kid != rfc8037Thumbprint {
		t.Errorf("Thumbprint = %q, %v; want %q (RFC 8037 A.3)", kid, err, rfc8037Thumbprint)
	}

	// Written JWKs: the private one with d, both with kid = the thumbprint
	// of the public half, the public one with use "sig" and no d.
	for _, tc := range []struct {
		name  string
		write func() ([]byte, error)
		want  map[string]string
	}{
		{"private", func() ([]byte, error) { return signing.MarshalPrivateKeyJWK(key) },
			map[string]string{"kty": "OKP", "crv": "Ed25519", "d": rfc8037D, "x": rfc8037X, "kid": rfc8037Thumbprint}},
		{"public", func() ([]byte, error) { return signing.MarshalPublicKeyJWK(x) },
			map[string]string{"kty": "OKP", "crv": "Ed25519", "x": rfc8037X, "kid": rfc8037Thumbprint, "use": "sig"}},
	} {
		data, err := tc.write()
		must(t, err)
		var got map[string]string
		must(t, json.Unmarshal(data, &got))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s JWK %s, want %v", tc.name, data, tc.want)
		}
	}

	// Read JWKs.
	if priv, err := signing.ParsePrivateKeyJWK([]byte(rfc8037Private)); err != nil || !priv.Equal(key) {
		t.Errorf("ParsePrivateKeyJWK(A.1) = %x, %v", priv, err)
	}
	for _, in := range []string{rfc8037Public, rfc8037Private} {
		if p, err := signing.ParsePublicKeyJWK([]byte(in)); err != nil || !p.Equal(x) {
			t.Errorf("ParsePublicKeyJWK(%s) = %x, %v", in, p, err)
		}
	}
	// A JWKS is indexed by the thumbprint, not the kid it claims; keys of
	// other types are skipped.
	lying := `{"kty":"OKP","crv":"Ed25519","x":"` + rfc8037X + `","kid":"someone-else"}`
	ks, err := signing.ParseJWKS([]byte(`{"keys":[` + rfc7638RSA + `,` + lying + `]}`))
	if err != nil || !reflect.DeepEqual(ks, signing.KeySet{rfc8037Thumbprint: x}) {
		t.Errorf("ParseJWKS = %v, %v; want the A.2 key under %s only", ks, err, rfc8037Thumbprint)
	}
}

// TestParsePublicKeyJWK_Length: an OKP Ed25519 JWK whose x is not 32 bytes
// (RFC 8037 §2: the public key is the 32-byte Ed25519 encoding) is refused.
func TestParsePublicKeyJWK_Length(t *testing.T) {
	x := b64url(t, rfc8037X)
	for _, n := range []int{0, 1, 31, 33, 64} {
		raw := make([]byte, n)
		copy(raw, x)
		in := `{"kty":"OKP","crv":"Ed25519","x":"` + base64.RawURLEncoding.EncodeToString(raw) + `"}`
		if p, err := signing.ParsePublicKeyJWK([]byte(in)); !errors.Is(err, signing.ErrKey) {
			t.Errorf("x of %d bytes: %x, %v; want ErrKey", n, p, err)
		}
	}
}

// TestParsePrivateKeyPEM_RFC8410: the RFC 8410 §10.3 private key parses to
// the public key of §10.1, and only from a "PRIVATE KEY" block (PKCS#8,
// RFC 5958 as RFC 8410 §7 uses it): the same bytes under another label are
// refused.
func TestParsePrivateKeyPEM_RFC8410(t *testing.T) {
	const pemKey = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n-----END PRIVATE KEY-----\n"
	want, _ := hex.DecodeString("19bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1")
	priv, err := signing.ParsePrivateKeyPEM([]byte(pemKey))
	if err != nil || !ed25519.PublicKey(want).Equal(priv.Public()) {
		t.Fatalf("ParsePrivateKeyPEM(RFC 8410 §10.3) = %x, %v; want the public key %x", priv, err, want)
	}
	block, _ := pem.Decode([]byte(pemKey))
	for _, label := range []string{"ED25519 PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "OPENSSH PRIVATE KEY", "PUBLIC KEY", "private key"} {
		data := pem.EncodeToMemory(&pem.Block{Type: label, Bytes: block.Bytes})
		if _, err := signing.ParsePrivateKeyPEM(data); !errors.Is(err, signing.ErrKey) {
			t.Errorf("%q block: %v, want ErrKey", label, err)
		}
	}
}
