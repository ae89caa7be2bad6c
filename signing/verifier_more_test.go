package signing_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// labelled signs a request to site.example with key under label, for agent
// (Dictionary form, so the member is keyed by label).
func labelled(t *testing.T, key ed25519.PrivateKey, label, agent string) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "https://site.example/page", nil)
	must(t, (&signing.Signer{Key: key, Agent: agent, Label: label}).Sign(r))
	return r
}

// joined is a request carrying the signatures of reqs, in order.
func joined(reqs ...*http.Request) *http.Request {
	out := httptest.NewRequest(http.MethodGet, "https://site.example/page", nil)
	for _, h := range []string{"Signature-Agent", "Signature-Input", "Signature"} {
		var vals []string
		for _, r := range reqs {
			vals = append(vals, r.Header.Get(h))
		}
		out.Header.Set(h, strings.Join(vals, ", "))
	}
	return out
}

// TestVerify_FirstSignatureError: when no signature verifies, Verify
// reports the first signature's failure, not a later one's: both when the
// signatures fail checks that need no key and when both fail on their key.
func TestVerify_FirstSignatureError(t *testing.T) {
	key, other := signingtest.BothyKey(), signingtest.OtherKey()
	ks, _ := signing.NewKeySet(pub(key))
	now := time.Now()
	wrongTag := labelled(t, key, "a", "https://bot.test")
	wrongTag.Header.Set("Signature-Input", strings.Replace(wrongTag.Header.Get("Signature-Input"), "web-bot-auth", "other", 1))
	unknown := labelled(t, other, "a", "https://bot.test")
	wrongTagB := labelled(t, key, "b", "https://bot.test")
	wrongTagB.Header.Set("Signature-Input", strings.Replace(wrongTagB.Header.Get("Signature-Input"), "web-bot-auth", "other", 1))
	// b names the known key but carries a's signature bytes: it does not verify.
	forged := labelled(t, key, "b", "https://bot.test")
	sigA := strings.TrimPrefix(unknown.Header.Get("Signature"), "a=")
	forged.Header.Set("Signature", "b="+sigA)
	for _, tc := range []struct {
		name   string
		req    *http.Request
		now    time.Time
		reason signing.Reason
	}{
		{"wrong tag, then expired", joined(wrongTag, labelled(t, key, "b", "https://bot.test")), now.Add(time.Hour), signing.ReasonWrongTag},
		{"expired, then wrong tag", joined(labelled(t, key, "b", "https://bot.test"), wrongTag), now.Add(time.Hour), signing.ReasonExpired},
		{"unknown key, then bad signature", joined(unknown, forged), now, signing.ReasonUnknownKey},
		{"bad signature, then unknown key", joined(forged, unknown), now, signing.ReasonBadSignature},
		// The first signature's error although the second fails a check made earlier (needing no key).
		{"unknown key, then wrong tag", joined(unknown, wrongTagB), now, signing.ReasonUnknownKey},
	} {
		v := &signing.Verifier{Keys: ks, Now: func() time.Time { return tc.now }}
		res, err := v.Verify(tc.req)
		if err == nil || reasonOf(err) != tc.reason {
			t.Errorf("%s: %+v, %v; want %s (the first signature's)", tc.name, res, err, tc.reason)
		}
	}
}

// TestVerifier_NoSignatureMemberNoFetch: a Signature-Input member without
// its Signature member is a missing signature, decided before any fetch.
func TestVerifier_NoSignatureMemberNoFetch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		mem := newMem()
		dir := record(&signing.Directory{Keys: signers(key)})
		mem.handle("bot.test", dir)
		req := signedBy(t, key, "https://bot.test", signing.Dictionary)
		req.Header.Set("Signature", strings.Replace(req.Header.Get("Signature"), "sig1=", "gone=", 1))
		v := &signing.Verifier{Client: &http.Client{Transport: mem}}
		_, err := v.Verify(req)
		var ve *signing.VerifyError
		if !errors.As(err, &ve) || ve.Reason != signing.ReasonMissing || ve.Label != "sig1" || dir.total() != 0 {
			t.Fatalf("%v after %d fetches; want %s for sig1 after none", err, dir.total(), signing.ReasonMissing)
		}
	})
}

// TestVerifier_ErrorNamesSignature: a failure decided on the key names the
// signature's label, keyid and agent.
func TestVerifier_ErrorNamesSignature(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMem()
		mem.handle("bot.test", &signing.Directory{Keys: signers(signingtest.BothyKey())})
		mem.handle("keys.test", http.NotFoundHandler())
		impostor := signingtest.OtherKey()
		kid, _ := signing.Thumbprint(pub(impostor))
		for _, tc := range []struct {
			agent  string
			reason signing.Reason
		}{
			{"https://bot.test", signing.ReasonUnknownKey},
			{"https://keys.test/k.json", signing.ReasonDirectory},
		} {
			v := &signing.Verifier{Client: &http.Client{Transport: mem}}
			_, err := v.Verify(labelled(t, impostor, "mine", tc.agent))
			var ve *signing.VerifyError
			if !errors.As(err, &ve) || ve.Reason != tc.reason || ve.Label != "mine" || ve.KeyID != kid || ve.Agent != tc.agent {
				t.Errorf("%s: %#v, want %s naming label mine, keyid %s and the agent", tc.agent, ve, tc.reason, kid)
			}
		}
	})
}

// TestVerifier_KnownAgentKeepsBinding: a key set that has verified keeps
// its binding on every later verification: a JWKS URL binds no Domain the
// second time either, a well-known directory binds its host each time.
func TestVerifier_KnownAgentKeepsBinding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		mem := newMem()
		mem.handle("a.test", jwksHandler(t, key))
		mem.handle("b.test", &signing.Directory{Keys: signers(key)})
		v := &signing.Verifier{Client: &http.Client{Transport: mem}}
		for _, tc := range []struct{ agent, domain string }{
			{"https://a.test/keys.json", ""},
			{"https://b.test", "b.test"},
		} {
			for i := range 3 {
				res, err := v.Verify(signedBy(t, key, tc.agent, signing.Dictionary))
				if err != nil || res.Domain != tc.domain {
					t.Fatalf("%s, verification %d: %+v, %v; want domain %q", tc.agent, i+1, res, err, tc.domain)
				}
			}
		}
		if n := mem.count("a.test") + mem.count("b.test"); n != 2 {
			t.Errorf("%d fetches, want 2 (one per agent)", n)
		}
	})
}

// TestVerifier_CanceledRequestKeepsDirectory: a request whose context is
// canceled (its client went away) does not fail the agent's key set fetch
// for everyone: the next request naming the agent verifies without a
// negative-cache lockout.
func TestVerifier_CanceledRequestKeepsDirectory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		mem := newMem()
		mem.handle("bot.test", &signing.Directory{Keys: signers(key)})
		// Like net/http's own transport, this one gives up on a done context.
		client := &http.Client{Transport: rtFunc(func(r *http.Request) (*http.Response, error) {
			if err := r.Context().Err(); err != nil {
				return nil, err
			}
			return mem.RoundTrip(r)
		})}
		v := &signing.Verifier{Client: client}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		v.Verify(signedBy(t, key, "https://bot.test", signing.Dictionary).WithContext(ctx))
		if res, err := v.Verify(signedBy(t, key, "https://bot.test", signing.Dictionary)); err != nil {
			t.Fatalf("after a canceled request: %+v, %v; want verified", res, err)
		}
	})
}

// TestVerifier_PartiallySignedDirectory: at the well-known path only the
// keys that signed the response are used; a key listed beside them that did
// not sign is unknown, not bound to the host.
func TestVerifier_PartiallySignedDirectory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		signer, silent := signingtest.BothyKey(), signingtest.NextKey()
		dir := &signing.Directory{Keys: signers(signer, silent)}
		mem := newMem()
		mem.handle("bot.test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			dir.ServeHTTP(rec, r)
			for k, vv := range rec.Header() {
				w.Header()[k] = vv
			}
			// Drop the second key's signature (sig2): only the first signed.
			for _, h := range []string{"Signature-Input", "Signature"} {
				v := w.Header().Get(h)
				i := strings.Index(v, ", sig2=")
				if i < 0 {
					t.Errorf("%s has no sig2: %s", h, v)
					return
				}
				w.Header().Set(h, v[:i])
			}
			w.Write(rec.Body.Bytes())
		}))
		v := &signing.Verifier{Client: &http.Client{Transport: mem}}
		res, err := v.Verify(signedBy(t, signer, "https://bot.test", signing.Dictionary))
		if err != nil || res.Domain != "bot.test" {
			t.Fatalf("the key that signed: %+v, %v; want verified for bot.test", res, err)
		}
		if res, err := v.Verify(signedBy(t, silent, "https://bot.test", signing.Dictionary)); err == nil || reasonOf(err) != signing.ReasonUnknownKey {
			t.Fatalf("the key that did not sign: %+v, %v; want %s", res, err, signing.ReasonUnknownKey)
		}
	})
}

// TestVerifier_DirectoryBodyMustMatchDigest: a signed directory response
// whose body is not the one its Content-Digest (and so its signatures)
// covers proves no key.
func TestVerifier_DirectoryBodyMustMatchDigest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		dir := &signing.Directory{Keys: signers(key)}
		mem := newMem()
		mem.handle("bot.test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			dir.ServeHTTP(rec, r)
			for k, vv := range rec.Header() {
				if k != "Content-Length" {
					w.Header()[k] = vv
				}
			}
			w.Write(append(rec.Body.Bytes(), ' ')) // still the same JWKS, another body
		}))
		v := &signing.Verifier{Client: &http.Client{Transport: mem}}
		if res, err := v.Verify(signedBy(t, key, "https://bot.test", signing.Dictionary)); err == nil || reasonOf(err) != signing.ReasonDirectory {
			t.Fatalf("%+v, %v; want %s", res, err, signing.ReasonDirectory)
		}
	})
}

// TestVerifier_CacheBoundaries: a key set is stale from the instant its
// max-age has passed (RFC 9111 §4.2: fresh while its age is below the
// lifetime), and an unknown key is looked for again from the instant
// NegativeTTL has passed; within it the key stays unknown (not "directory
// unavailable").
func TestVerifier_CacheBoundaries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		mem := newMem()
		mem.handle("bot.test", &signing.Directory{Keys: signers(key), MaxAge: 10 * time.Minute})
		v := &signing.Verifier{Client: &http.Client{Transport: mem}}
		verify := func(k ed25519.PrivateKey) error {
			_, err := v.Verify(signedBy(t, k, "https://bot.test", signing.Dictionary))
			return err
		}
		must(t, verify(key))
		time.Sleep(10*time.Minute - time.Second)
		must(t, verify(key))
		if n := mem.count("bot.test"); n != 1 {
			t.Fatalf("%d fetches 1 s before max-age, want 1", n)
		}
		time.Sleep(time.Second)
		must(t, verify(key))
		if n := mem.count("bot.test"); n != 2 {
			t.Fatalf("%d fetches at max-age, want 2", n)
		}
		impostor := signingtest.OtherKey()
		if err := verify(impostor); reasonOf(err) != signing.ReasonUnknownKey {
			t.Fatalf("impostor: %v", err)
		}
		n := mem.count("bot.test")
		time.Sleep(signing.DefaultNegativeTTL - time.Second)
		if err := verify(impostor); reasonOf(err) != signing.ReasonUnknownKey || mem.count("bot.test") != n {
			t.Fatalf("impostor within the negative TTL: %v after %d more fetches; want %s after none", err, mem.count("bot.test")-n, signing.ReasonUnknownKey)
		}
		time.Sleep(time.Second)
		verify(impostor)
		if mem.count("bot.test") != n+1 {
			t.Fatalf("impostor at the negative TTL: %d more fetches, want 1", mem.count("bot.test")-n)
		}
	})
}

// TestVerifier_GuardWithoutClientDial: the guard holds for the transports
// that dial on their own account: no Client, a Client without a
// Transport, an *http.Transport without a dial function. A loopback
// directory is refused before connecting, and reached once allowed.
func TestVerifier_GuardWithoutClientDial(t *testing.T) {
	key := signingtest.BothyKey()
	dir := record(&signing.Directory{Keys: signers(key)})
	srv := httptest.NewTLSServer(dir)
	defer srv.Close()
	tlsConf := srv.Client().Transport.(*http.Transport).TLSClientConfig
	plain := func() *http.Client {
		return &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf, DisableKeepAlives: true}}
	}
	for name, client := range map[string]*http.Client{"no Client": nil, "no Transport": {}, "plain Transport": plain()} {
		v := &signing.Verifier{Client: client}
		_, err := v.Verify(signedBy(t, key, srv.URL, signing.Dictionary))
		if !errors.Is(err, signing.ErrAddressRefused) {
			t.Errorf("%s: %v, want ErrAddressRefused", name, err)
		}
	}
	if dir.total() != 0 {
		t.Fatalf("the loopback directory was reached %d times", dir.total())
	}
	v := &signing.Verifier{Client: plain(), AllowInternal: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	if _, err := v.Verify(signedBy(t, key, srv.URL, signing.Dictionary)); err != nil || dir.total() != 1 {
		t.Fatalf("loopback allowed: %v after %d fetches", err, dir.total())
	}
}

// TestVerifier_NoProxy: key sets are fetched directly, never through the
// client transport's proxy (the guard would judge the proxy's address, not
// the directory's).
func TestVerifier_NoProxy(t *testing.T) {
	var asked, dialled atomic.Int64
	tr := &http.Transport{
		Proxy: func(*http.Request) (*url.URL, error) { asked.Add(1); return url.Parse("http://proxy.test:3128") },
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dialled.Add(1)
			if addr != "bot.test:443" {
				t.Errorf("dialled %s, want bot.test:443", addr)
			}
			return nil, errors.New("no network in this test")
		},
	}
	v := &signing.Verifier{Client: &http.Client{Transport: tr}}
	_, err := v.Verify(signedBy(t, signingtest.BothyKey(), "https://bot.test", signing.Dictionary))
	if reasonOf(err) != signing.ReasonDirectory || asked.Load() != 0 || dialled.Load() != 1 {
		t.Fatalf("%v; proxy asked %d times, %d dials; want %s, no proxy, 1 dial", err, asked.Load(), dialled.Load(), signing.ReasonDirectory)
	}
}

// TestDirectory_ServedSignatures: the signatures of a Directory's response
// last SignatureLifetime (24 h when zero), Content-Digest is the RFC 9530
// sha-256 member (base64 with padding, as an RFC 8941 byte sequence), and a
// Directory without keys serves no signature fields at all.
func TestDirectory_ServedSignatures(t *testing.T) {
	created := regexp.MustCompile(`;created=(\d+)`)
	expires := regexp.MustCompile(`;expires=(\d+)`)
	for _, tc := range []struct {
		lifetime, want time.Duration
	}{{0, 24 * time.Hour}, {time.Hour, time.Hour}} {
		d := &signing.Directory{Keys: signers(signingtest.BothyKey()), SignatureLifetime: tc.lifetime}
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://bot.test"+signing.DirectoryPath, nil))
		in := rec.Header().Get("Signature-Input")
		c, e := created.FindStringSubmatch(in), expires.FindStringSubmatch(in)
		if c == nil || e == nil {
			t.Fatalf("Signature-Input %s", in)
		}
		cs, _ := strconv.ParseInt(c[1], 10, 64)
		es, _ := strconv.ParseInt(e[1], 10, 64)
		if got := time.Duration(es-cs) * time.Second; got != tc.want {
			t.Errorf("SignatureLifetime %v: signatures last %v, want %v", tc.lifetime, got, tc.want)
		}
		sum := sha256.Sum256(rec.Body.Bytes())
		if got, want := rec.Header().Get("Content-Digest"), "sha-256=:"+base64.StdEncoding.EncodeToString(sum[:])+":"; got != want {
			t.Errorf("Content-Digest %q, want %q", got, want)
		}
	}
	rec := httptest.NewRecorder()
	(&signing.Directory{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "https://bot.test"+signing.DirectoryPath, nil))
	for _, h := range []string{"Signature-Input", "Signature"} {
		if vv, ok := rec.Header()[h]; ok {
			t.Errorf("a Directory without keys serves %s: %q", h, vv)
		}
	}
}

// TestParseSignatureAgent_EveryMemberChecked: each member of a Dictionary
// field must be an absolute http(s) URL, also when the field does not take
// the one-line fast path (several field lines, a member with parameters).
func TestParseSignatureAgent_EveryMemberChecked(t *testing.T) {
	for _, lines := range [][]string{
		{`sig1="https://bot.test"`, `sig2="ftp://bot.test"`},
		{`sig1="https://bot.test"`, `sig2="not a url"`},
		{`sig1="https://bot.test";type=jwks_uri, sig2="/relative"`},
	} {
		if a, err := signing.ParseSignatureAgent(lines); err == nil || !errors.Is(err, signing.ErrInvalidSignature) {
			t.Errorf("ParseSignatureAgent(%q) = %+v, %v; want an invalid-signature error", lines, a, err)
		}
	}
	if a, err := signing.ParseSignatureAgent([]string{`sig1="https://bot.test"`, `sig2="https://b.test"`}); err != nil || len(a.Members) != 2 {
		t.Errorf("two valid lines: %+v, %v", a, err)
	}
}

// TestParseJWKS_OtherKeysSkipped: a key set may list keys of other types
// (here the EC P-256 key of RFC 7517 Appendix A.1); they are skipped, the
// Ed25519 keys kept, and a request signed by one of those verifies.
func TestParseJWKS_OtherKeysSkipped(t *testing.T) {
	key := signingtest.BothyKey()
	jwks, err := signing.MarshalJWKS(pub(key))
	must(t, err)
	ec := `{"kty":"EC","crv":"P-256","x":"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4","y":"4Etl6SRW2YilurN5XuBiGsO9TOD9x2BE4TQsS6FnDxg","use":"enc","kid":"1"}`
	mixed := []byte(`{"keys":[` + ec + `,` + strings.TrimSuffix(strings.TrimPrefix(string(jwks), `{"keys":[`), `]}`) + `]}`)
	ks, err := signing.ParseJWKS(mixed)
	kid, _ := signing.Thumbprint(pub(key))
	if err != nil || len(ks) != 1 || ks[kid] == nil {
		t.Fatalf("ParseJWKS(%s) = %v, %v; want the Ed25519 key only", mixed, ks, err)
	}
	synctest.Test(t, func(t *testing.T) {
		mem := newMem()
		mem.handle("bot.test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(mixed) }))
		v := &signing.Verifier{Client: &http.Client{Transport: mem}}
		if res, err := v.Verify(signedBy(t, key, "https://bot.test/keys.json", signing.Dictionary)); err != nil {
			t.Fatalf("key set with an EC key beside: %+v, %v", res, err)
		}
	})
}
