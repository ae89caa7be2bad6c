package signing_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"

	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// TestVerifier_NotModifiedWithoutValidator: a 304 to a request that sent no
// If-None-Match (the verifier had no copy) is not a key set: the directory
// is unavailable, not a set without the key.
func TestVerifier_NotModifiedWithoutValidator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		mem := newMem()
		dir := record(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotModified)
		}))
		mem.handle("bot.test", dir)
		v := &signing.Verifier{Client: &http.Client{Transport: mem}}
		_, err := v.Verify(signedBy(t, key, "https://bot.test", signing.Dictionary))
		if dir.total() != 1 || reasonOf(err) != signing.ReasonDirectory || signing.OutcomeOf(err) != signing.Unverified {
			t.Fatalf("%v after %d fetches; want unverified %s after 1", err, dir.total(), signing.ReasonDirectory)
		}
	})
}

// TestVerifier_DirectorySizeBound: a key set of exactly MaxDirectoryBytes
// is read; one byte more (a trailing newline that leaves valid JSON) is
// refused, not cut to fit.
func TestVerifier_DirectorySizeBound(t *testing.T) {
	key := signingtest.BothyKey()
	body, err := signing.MarshalJWKS(pub(key))
	must(t, err)
	for _, tc := range []struct {
		name string
		body []byte
		ok   bool
	}{
		{"at the bound", body, true},
		{"one byte over", append(append([]byte(nil), body...), '\n'), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem := newMem()
				dir := record(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/jwk-set+json")
					w.Write(tc.body)
				}))
				mem.handle("a.test", dir)
				v := &signing.Verifier{Client: &http.Client{Transport: mem}, MaxDirectoryBytes: int64(len(body))}
				_, err := v.Verify(signedBy(t, key, "https://a.test/keys.json", signing.Dictionary))
				if dir.total() != 1 {
					t.Fatalf("%d fetches, want 1", dir.total())
				}
				if tc.ok && err != nil {
					t.Fatalf("%d-byte key set with MaxDirectoryBytes %d: %v", len(tc.body), len(body), err)
				}
				if !tc.ok && reasonOf(err) != signing.ReasonDirectory {
					t.Fatalf("%d-byte key set with MaxDirectoryBytes %d: %v, want %s", len(tc.body), len(body), err, signing.ReasonDirectory)
				}
			})
		})
	}
}

// TestVerifier_EmptyWellKnownDirectory: an empty key set at the well-known
// path proves nothing (no key signed it): the directory is refused, not
// taken as a set that lacks the key.
func TestVerifier_EmptyWellKnownDirectory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMem()
		dir := record(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", signing.DirectoryMediaType)
			w.Write([]byte(`{"keys":[]}`))
		}))
		mem.handle("bot.test", dir)
		v := &signing.Verifier{Client: &http.Client{Transport: mem}}
		_, err := v.Verify(signedBy(t, signingtest.BothyKey(), "https://bot.test", signing.Dictionary))
		if dir.total() != 1 || reasonOf(err) != signing.ReasonDirectory {
			t.Fatalf("%v after %d fetches; want %s after 1", err, dir.total(), signing.ReasonDirectory)
		}
	})
}

// TestSignRequested_NonceAndDictionaryAgent: a requested nonce must be
// printable ASCII (0x20 to 0x7E); a Dictionary-form signer honours a
// request for the whole Signature-Agent field ("signature-agent" without a
// key) as well as for its own member.
func TestSignRequested_NonceAndDictionaryAgent(t *testing.T) {
	key := signingtest.BothyKey()
	ks, _ := signing.NewKeySet(pub(key))
	s := &signing.Signer{Key: key, Agent: "https://bothy.tools", Form: signing.Dictionary}
	for _, nonce := range []string{"caf\u00e9", "a\x7fb", "a\x1fb", "a\nb"} {
		r := httptest.NewRequest(http.MethodGet, "https://site.example/p", nil)
		var ce *signing.ComponentError
		if err := s.SignRequested(r, &signing.Requested{Nonce: nonce}); !errors.As(err, &ce) || ce.Component != "nonce" {
			t.Errorf("nonce %q: %v, want a ComponentError on nonce", nonce, err)
		}
	}
	for _, field := range []string{
		`sig1=("@authority" "signature-agent");nonce="~ !"`,
		`sig1=("@authority" "signature-agent";key="sig1")`,
	} {
		rs, err := signing.ParseAcceptSignature([]string{field})
		must(t, err)
		r := httptest.NewRequest(http.MethodGet, "https://site.example/p", nil)
		if err := s.SignRequested(r, &rs[0]); err != nil {
			t.Fatalf("%s: %v", field, err)
		}
		if _, err := (&signing.Verifier{Keys: ks}).Verify(r); err != nil {
			t.Errorf("%s: signed request does not verify: %v", field, err)
		}
	}
}

// TestParseSignatureAgent_OneURL: a Signature-Agent names one URL: a comma
// inside a string, or two bare lines, are refused.
func TestParseSignatureAgent_OneURL(t *testing.T) {
	for _, lines := range [][]string{
		{`"https://bot.test/a,b"`},
		{`https://a.test`, `https://b.test`},
		{`https://a.test/x`, `y`},
	} {
		if a, err := signing.ParseSignatureAgent(lines); err == nil {
			t.Errorf("ParseSignatureAgent(%q) = %+v, want an error", lines, a)
		}
	}
	if a, err := signing.ParseSignatureAgent([]string{`https://a.test/x`}); err != nil || a.URL != "https://a.test/x" || a.Form != signing.BareURL {
		t.Errorf("one bare line: %+v, %v", a, err)
	}
}
