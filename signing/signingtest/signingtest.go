// Package signingtest provides deterministic Ed25519 keys for tests and
// examples of package signing, on the model of net/http/httptest. The keys
// are public knowledge: never use them to sign anything real.
package signingtest

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
)

// Key returns the deterministic Ed25519 key named name: its seed is
// SHA-256("goodbot signingtest " + name). The same name always gives the
// same key.
func Key(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("goodbot signingtest " + name))
	return ed25519.NewKeyFromSeed(seed[:])
}

// BothyKey is Key("bothy"), the test key published for the agent
// https://bothy.tools.
func BothyKey() ed25519.PrivateKey { return Key("bothy") }

// DirectoriesKey is Key("directories"), the test key published for the
// agent https://directories.prosvita.io.
func DirectoriesKey() ed25519.PrivateKey { return Key("directories") }

// NextKey is a second key for rotation tests: published beside the current
// key before it starts signing.
func NextKey() ed25519.PrivateKey { return Key("next") }

// OtherKey belongs to nobody: an impostor's key.
func OtherKey() ed25519.PrivateKey { return Key("other") }

// RFC 9421 Appendix B.1.4 "test-key-ed25519", also used by the Web Bot Auth
// drafts' examples.
const (
	// RFC9421KeyID is the keyid RFC 9421 uses for the key.
	RFC9421KeyID = "test-key-ed25519"
	// RFC9421Thumbprint is the key's RFC 7638 thumbprint, the keyid the Web
	// Bot Auth drafts use for it.
	RFC9421Thumbprint = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"
	rfc9421Seed       = "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU" // JWK "d"
)

// RFC9421Key returns the RFC 9421 test-key-ed25519 private key.
func RFC9421Key() ed25519.PrivateKey {
	seed, err := base64.RawURLEncoding.DecodeString(rfc9421Seed)
	if err != nil || len(seed) != ed25519.SeedSize {
		panic("signingtest: bad built-in seed") // constant input: cannot happen
	}
	return ed25519.NewKeyFromSeed(seed)
}
