package signing

import (
	"crypto"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// FuzzDirectoryResponse: a verifier fetches the key directory from the URL a
// request's Signature-Agent names, so the directory's body and its signature
// headers are hostile input. ParseJWKS and the check of the directory's own
// signatures never panic, ParseJWKS fails only with ErrKey, and every key
// either returns is a 32-byte Ed25519 key indexed by its own thumbprint.
func FuzzDirectoryResponse(f *testing.F) {
	d := &Directory{Keys: []crypto.Signer{signingtest.BothyKey(), signingtest.NextKey()}}
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://bothy.tools"+DirectoryPath, nil))
	good := rec.Result().Header
	if ks, err := ParseJWKS(rec.Body.Bytes()); err != nil || len((&Verifier{}).provenKeys(rec.Result(), "bothy.tools", rec.Body.Bytes(), ks, DefaultMaxKeys)) != 2 {
		f.Fatalf("the seed directory does not prove its 2 keys: %v", err)
	}
	f.Add(rec.Body.String(), good.Get("Signature-Input"), good.Get("Signature"), good.Get("Content-Digest"))
	f.Add(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA"}]}`, `sig1=("@authority";req "content-digest");created=1;expires=2;keyid="k";tag="http-message-signatures-directory"`, `sig1=:AAAA:`, `sha-256=:AAAA:`)
	f.Add(`{"keys":[{"kty":"OKP","crv":"X25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},{"kty":"RSA"},null,1]}`, ``, ``, ``)
	f.Add(`{"keys":{}}`, `sig1=(`, `,`, `md5=:x:`)
	f.Fuzz(func(t *testing.T, body, input, sig, digest string) {
		ks, err := ParseJWKS([]byte(body))
		if err != nil {
			if !errors.Is(err, ErrKey) {
				t.Fatalf("untyped error %T %v", err, err)
			}
			return
		}
		check := func(what string, ks KeySet) {
			for kid, pub := range ks {
				if want, err := Thumbprint(pub); err != nil || kid != want || len(pub) != 32 {
					t.Fatalf("%s: key under %q has thumbprint %q (%v), %d bytes", what, kid, want, err, len(pub))
				}
			}
		}
		check("ParseJWKS", ks)
		h := http.Header{}
		h.Set("Signature-Input", input)
		h.Set("Signature", sig)
		h.Set("Content-Digest", digest)
		resp := &http.Response{StatusCode: http.StatusOK, Header: h}
		check("provenKeys", (&Verifier{}).provenKeys(resp, "bothy.tools", []byte(body), ks, DefaultMaxKeys))
	})
}
