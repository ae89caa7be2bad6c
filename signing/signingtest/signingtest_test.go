package signingtest_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/goodbot-go/goodbot/signing/signingtest"
)

func TestKeysAreDeterministicAndDistinct(t *testing.T) {
	keys := map[string]ed25519.PrivateKey{
		"bothy": signingtest.BothyKey(), "directories": signingtest.DirectoriesKey(),
		"next": signingtest.NextKey(), "other": signingtest.OtherKey(), "rfc": signingtest.RFC9421Key(),
	}
	seen := map[string]string{}
	for name, k := range keys {
		if prev, ok := seen[string(k)]; ok {
			t.Errorf("%s and %s are the same key", name, prev)
		}
		seen[string(k)] = name
	}
	if !bytes.Equal(signingtest.Key("bothy"), signingtest.BothyKey()) {
		t.Error("Key(\"bothy\") differs from BothyKey")
	}
}

// The RFC 9421 test key's public half and thumbprint are the published ones
// (RFC 7638 thumbprint of an OKP key, computed here by hand).
func TestRFC9421Key(t *testing.T) {
	pub := signingtest.RFC9421Key().Public().(ed25519.PublicKey)
	x := base64.RawURLEncoding.EncodeToString(pub)
	if x != "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs" {
		t.Fatalf("x = %s", x)
	}
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	if got := base64.RawURLEncoding.EncodeToString(sum[:]); got != signingtest.RFC9421Thumbprint {
		t.Fatalf("thumbprint %s", got)
	}
}

func ExampleRFC9421Key() {
	pub := signingtest.RFC9421Key().Public().(ed25519.PublicKey)
	fmt.Println(base64.RawURLEncoding.EncodeToString(pub))
	// Output: JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs
}
