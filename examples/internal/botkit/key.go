package botkit

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/goodbot-go/goodbot/signing"
)

// ErrNoKey is returned by [LoadKey] when a signing bot has no -key.
var ErrNoKey = errors.New("no signing key")

// KeyHelp says how to make and publish a key for the bot named name whose key
// directory is at directory.
func KeyHelp(name, directory string) string {
	return fmt.Sprintf("%s signs every request and needs an Ed25519 key.\n"+
		"Make one with:   go run ./examples/%s -genkey %s.pem\n"+
		"publish the JWKS it prints at %s,\n"+
		"then run with:   go run ./examples/%s -key %s.pem ...", name, name, name, directory, name, name)
}

// LoadKey reads the PKCS#8 PEM key at path, at most MaxKeyBytes of it: a
// larger file is not a key (say -key /dev/zero) and fails with
// ErrInputTooLarge without being read further. An empty path is ErrNoKey.
func LoadKey(path string) (ed25519.PrivateKey, error) {
	if path == "" {
		return nil, ErrNoKey
	}
	f, err := OpenBounded(path, MaxKeyBytes)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w: not a PEM private key", path, err)
	}
	k, err := signing.ParsePrivateKeyPEM(b)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	return k, nil
}

// GenKey writes a new key to path (never over an existing file, mode 0600)
// and prints to w the JWKS to publish at the bot's key directory.
func GenKey(path string, w io.Writer) (ed25519.PrivateKey, error) {
	k, err := signing.GenerateKey()
	if err != nil {
		return nil, err
	}
	pemBytes, err := signing.MarshalPrivateKeyPEM(k)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("genkey: %w (not overwriting an existing key)", err)
	}
	if _, err := f.Write(pemBytes); err != nil {
		f.Close()
		return nil, fmt.Errorf("genkey: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("genkey: %w", err)
	}
	jwks, err := JWKS(k.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "%s\n", jwks)
	return k, nil
}

// JWKS returns the key set to publish for pub, indented.
func JWKS(pub ed25519.PublicKey) ([]byte, error) {
	b, err := signing.MarshalJWKS(pub)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
