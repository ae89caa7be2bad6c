package signing

import (
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/dunglas/httpsfv"
)

const (
	// DirectoryPath is the well-known path of a key directory.
	DirectoryPath = "/.well-known/http-message-signatures-directory"
	// DirectoryMediaType is the media type a key directory is served with.
	DirectoryMediaType = "application/http-message-signatures-directory+json"
	// DefaultDirectoryMaxAge is the Cache-Control max-age of a Directory when
	// MaxAge is zero.
	DefaultDirectoryMaxAge = time.Hour
	// DefaultDirectorySignatureLifetime is the expires of directory response
	// signatures when SignatureLifetime is zero.
	DefaultDirectorySignatureLifetime = 24 * time.Hour
)

// Directory publishes the public keys of a bot as the JWKS a verifier fetches
// from DirectoryPath, and is the http.Handler that serves it.
//
// Every key in Keys is listed (kid = thumbprint, public members only) and
// signs each response once (tag="http-message-signatures-directory",
// covering "@authority";req and Content-Digest, with created, expires and
// keyid), proving possession of every listed key for the authority it is
// served from. Rotation: list the old and the new key together, sign
// requests with one of them, drop the old key once its last signature has
// expired and MaxAge has passed.
//
// The zero value serves an empty key set. Safe for concurrent use; do not
// change the fields while it serves.
type Directory struct {
	Keys []crypto.Signer // Ed25519 keys, all published, each signs the response
	// MaxAge is the Cache-Control max-age. Zero means one hour: removing a
	// key takes effect at verifiers within that time.
	MaxAge time.Duration
	// SignatureLifetime is how long a response signature stays valid. Zero
	// means 24 hours (the draft advises lifetimes well beyond any
	// republication interval).
	SignatureLifetime time.Duration
}

func (d *Directory) maxAge() time.Duration {
	if d.MaxAge <= 0 {
		return DefaultDirectoryMaxAge
	}
	return d.MaxAge
}

func (d *Directory) lifetime() time.Duration {
	if d.SignatureLifetime <= 0 {
		return DefaultDirectorySignatureLifetime
	}
	return d.SignatureLifetime
}

// JWKS returns the key set document: the public half of each key in Keys.
func (d *Directory) JWKS() ([]byte, error) {
	pubs := make([]ed25519.PublicKey, 0, len(d.Keys))
	for _, k := range d.Keys {
		pub, err := ed25519Public(k)
		if err != nil {
			return nil, err
		}
		pubs = append(pubs, pub)
	}
	return MarshalJWKS(pubs...)
}

// ServeHTTP serves the key set for GET and HEAD with DirectoryMediaType,
// Cache-Control, Content-Digest and one signature per key.
func (d *Directory) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "signing: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := d.JWKS()
	if err != nil {
		http.Error(w, "signing: directory unavailable", http.StatusInternalServerError)
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	h := w.Header()
	h.Set("Content-Type", DirectoryMediaType)
	h.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(d.maxAge()/time.Second)))
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if err := d.signResponse(h, normaliseAuthority(r.Host, scheme), body, time.Now()); err != nil {
		http.Error(w, "signing: directory unavailable", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

// contentDigest returns the RFC 9530 Content-Digest value (sha-256) of body.
func contentDigest(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
}

// signResponse sets Content-Digest, Signature-Input and Signature on h, one
// signature per key, labelled sig1, sig2, ...
func (d *Directory) signResponse(h http.Header, authority string, body []byte, now time.Time) error {
	h.Set("Content-Digest", contentDigest(body))
	msg := &message{status: http.StatusOK, header: h, req: &message{authority: authority}}
	comps := []component{newComponent("@authority", "", true), newComponent("content-digest", "", false)}
	inputs := httpsfv.NewDictionary()
	sigs := httpsfv.NewDictionary()
	for i, k := range d.Keys {
		pub, err := ed25519Public(k)
		if err != nil {
			return err
		}
		kid, err := Thumbprint(pub)
		if err != nil {
			return err
		}
		p := httpsfv.NewParams()
		p.Add("created", now.Unix())
		p.Add("expires", now.Add(d.lifetime()).Unix())
		p.Add("keyid", kid)
		p.Add("tag", TagDirectory)
		params, err := signParams(comps, p)
		if err != nil {
			return err
		}
		base, err := signatureBase(msg, comps, params)
		if err != nil {
			return err
		}
		sig, err := k.Sign(nil, []byte(base), crypto.Hash(0))
		if err != nil {
			return fmt.Errorf("signing: directory signature: %w", err)
		}
		label := "sig" + strconv.Itoa(i+1)
		il := httpsfv.InnerList{Params: p}
		for _, c := range comps {
			il.Items = append(il.Items, c.item)
		}
		inputs.Add(label, il)
		sigs.Add(label, httpsfv.NewItem(sig))
	}
	if len(d.Keys) == 0 {
		return nil
	}
	si, err := httpsfv.Marshal(inputs)
	if err != nil {
		return err
	}
	sv, err := httpsfv.Marshal(sigs)
	if err != nil {
		return err
	}
	h.Set("Signature-Input", si)
	h.Set("Signature", sv)
	return nil
}
