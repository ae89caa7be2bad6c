package signing

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/lestrrat-go/jwx/v2/jwk"
)

// ErrKey reports a key that cannot be used: not Ed25519, malformed PEM or
// JWK, or a JWK that lacks the member asked for.
var ErrKey = errors.New("signing: unusable key")

func keyError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrKey}, args...)...)
}

// GenerateKey returns a new Ed25519 private key from crypto/rand.
func GenerateKey() (ed25519.PrivateKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("signing: generate key: %w", err)
	}
	return priv, nil
}

// ParsePrivateKeyPEM reads an Ed25519 private key from a PEM "PRIVATE KEY"
// block holding PKCS#8 (RFC 8410), as written by [MarshalPrivateKeyPEM] or
// `openssl genpkey -algorithm ed25519`.
func ParsePrivateKeyPEM(data []byte) (ed25519.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, keyError("no PEM block found")
	}
	if block.Type != "PRIVATE KEY" {
		return nil, keyError("PEM block is %q, want \"PRIVATE KEY\" (PKCS#8)", block.Type)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, keyError("PKCS#8: %v", err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, keyError("PKCS#8 key is %T, want Ed25519", k)
	}
	return priv, nil
}

// MarshalPrivateKeyPEM writes key as a PKCS#8 PEM "PRIVATE KEY" block.
func MarshalPrivateKeyPEM(key ed25519.PrivateKey) ([]byte, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, keyError("Ed25519 private key has %d bytes, want %d", len(key), ed25519.PrivateKeySize)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, keyError("PKCS#8: %v", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// Thumbprint returns the RFC 7638 JWK SHA-256 thumbprint of pub, base64url
// without padding. This is the keyid the Web Bot Auth profile asks for and the
// kid under which [Directory] publishes the key.
func Thumbprint(pub ed25519.PublicKey) (string, error) {
	if len(pub) != ed25519.PublicKeySize {
		return "", keyError("Ed25519 public key has %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	k, err := jwk.FromRaw(pub)
	if err != nil {
		return "", keyError("jwk: %v", err)
	}
	sum, err := k.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", keyError("jwk thumbprint: %v", err)
	}
	return base64.RawURLEncoding.EncodeToString(sum), nil
}

// PublicJWK returns pub as a JSON Web Key (kty OKP, crv Ed25519) with kid set
// to its [Thumbprint] and use "sig". It never carries a private member.
func PublicJWK(pub ed25519.PublicKey) (jwk.Key, error) {
	kid, err := Thumbprint(pub)
	if err != nil {
		return nil, err
	}
	k, err := jwkWithKID(pub, kid)
	if err != nil {
		return nil, err
	}
	if err := k.Set(jwk.KeyUsageKey, "sig"); err != nil {
		return nil, keyError("jwk use: %v", err)
	}
	return k, nil
}

func jwkWithKID(raw any, kid string) (jwk.Key, error) {
	k, err := jwk.FromRaw(raw)
	if err != nil {
		return nil, keyError("jwk: %v", err)
	}
	if err := k.Set(jwk.KeyIDKey, kid); err != nil {
		return nil, keyError("jwk kid: %v", err)
	}
	return k, nil
}

// MarshalPrivateKeyJWK writes key as a private JWK (with the "d" member) and
// kid set to the thumbprint of its public half. Keep the result secret.
func MarshalPrivateKeyJWK(key ed25519.PrivateKey) ([]byte, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, keyError("Ed25519 private key has %d bytes, want %d", len(key), ed25519.PrivateKeySize)
	}
	kid, err := Thumbprint(key.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	k, err := jwkWithKID(key, kid)
	if err != nil {
		return nil, err
	}
	return json.Marshal(k)
}

// MarshalPublicKeyJWK writes pub as a public JWK (see [PublicJWK]).
func MarshalPublicKeyJWK(pub ed25519.PublicKey) ([]byte, error) {
	k, err := PublicJWK(pub)
	if err != nil {
		return nil, err
	}
	return json.Marshal(k)
}

// ParsePrivateKeyJWK reads an Ed25519 private key from a JWK (kty OKP, crv
// Ed25519, with "d").
func ParsePrivateKeyJWK(data []byte) (ed25519.PrivateKey, error) {
	k, err := jwk.ParseKey(data)
	if err != nil {
		return nil, keyError("jwk: %v", err)
	}
	var priv ed25519.PrivateKey
	if err := k.Raw(&priv); err != nil {
		return nil, keyError("jwk is not an Ed25519 private key: %v", err)
	}
	return priv, nil
}

// ParsePublicKeyJWK reads an Ed25519 public key from a JWK. A private JWK is
// accepted too; only its public half is returned.
func ParsePublicKeyJWK(data []byte) (ed25519.PublicKey, error) {
	k, err := jwk.ParseKey(data)
	if err != nil {
		return nil, keyError("jwk: %v", err)
	}
	return publicFromJWK(k)
}

func publicFromJWK(k jwk.Key) (ed25519.PublicKey, error) {
	pk, err := k.PublicKey()
	if err != nil {
		return nil, keyError("jwk: %v", err)
	}
	var pub ed25519.PublicKey
	if err := pk.Raw(&pub); err != nil {
		return nil, keyError("jwk is not an Ed25519 key: %v", err)
	}
	if len(pub) != ed25519.PublicKeySize {
		return nil, keyError("Ed25519 public key has %d bytes", len(pub))
	}
	return pub, nil
}

// MarshalJWKS returns the JSON Web Key Set listing pubs, each with kid equal
// to its [Thumbprint]. Only public members are written, whatever is passed.
func MarshalJWKS(pubs ...ed25519.PublicKey) ([]byte, error) {
	set := jwk.NewSet()
	for _, pub := range pubs {
		k, err := PublicJWK(pub)
		if err != nil {
			return nil, err
		}
		if err := set.AddKey(k); err != nil {
			return nil, keyError("jwks: %v", err)
		}
	}
	return json.Marshal(set)
}

// ParseJWKS reads a JSON Web Key Set and returns its Ed25519 keys indexed by
// their RFC 7638 thumbprint (the kid member is not trusted: a verifier matches
// keyid against the thumbprint it computes itself). Keys of other types are
// skipped.
func ParseJWKS(data []byte) (KeySet, error) {
	set, err := jwk.Parse(data)
	if err != nil {
		return nil, keyError("jwks: %v", err)
	}
	ks := KeySet{}
	for i := 0; i < set.Len(); i++ {
		k, ok := set.Key(i)
		if !ok {
			continue
		}
		pub, err := publicFromJWK(k)
		if err != nil {
			continue
		}
		kid, err := Thumbprint(pub)
		if err != nil {
			continue
		}
		ks[kid] = pub
	}
	return ks, nil
}

// KeySet maps a keyid to the Ed25519 public key it names. [NewKeySet] indexes
// keys by thumbprint; a hand-built KeySet may use any keyid (RFC 9421's own
// examples use "test-key-ed25519").
//
// A nil KeySet holds no key. A KeySet is a map: safe for concurrent reads
// (a [Verifier] only reads it), not for a write while another goroutine
// reads.
type KeySet map[string]ed25519.PublicKey

// NewKeySet returns a KeySet holding pubs under their thumbprints.
func NewKeySet(pubs ...ed25519.PublicKey) (KeySet, error) {
	ks := make(KeySet, len(pubs))
	for _, pub := range pubs {
		kid, err := Thumbprint(pub)
		if err != nil {
			return nil, err
		}
		ks[kid] = pub
	}
	return ks, nil
}

func ed25519Public(k crypto.Signer) (ed25519.PublicKey, error) {
	if k == nil {
		return nil, keyError("no key")
	}
	pub, ok := k.Public().(ed25519.PublicKey)
	if !ok || len(pub) != ed25519.PublicKeySize {
		return nil, keyError("key is %T, want Ed25519", k.Public())
	}
	return pub, nil
}
