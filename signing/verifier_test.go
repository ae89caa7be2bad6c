package signing_test

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// recorder counts the requests a handler serves, by path (query kept).
type recorder struct {
	mu   sync.Mutex
	hits map[string]int
	h    http.Handler
}

func record(h http.Handler) *recorder { return &recorder{hits: map[string]int{}, h: h} }

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.hits[req.URL.RequestURI()]++
	r.mu.Unlock()
	r.h.ServeHTTP(w, req)
}

func (r *recorder) count(uri string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hits[uri]
}

func (r *recorder) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.hits {
		n += c
	}
	return n
}

// jwksHandler serves the public keys of keys as a plain JWKS, unsigned.
func jwksHandler(t *testing.T, keys ...ed25519.PrivateKey) http.Handler {
	var pubs []ed25519.PublicKey
	for _, k := range keys {
		pubs = append(pubs, pub(k))
	}
	body, err := signing.MarshalJWKS(pubs...)
	must(t, err)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Write(body)
	})
}

// signedBy signs a request to site.example for agent (in form) with key.
func signedBy(t *testing.T, key ed25519.PrivateKey, agent string, form signing.AgentForm) *http.Request {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "https://site.example/page", nil)
	must(t, (&signing.Signer{Key: key, Agent: agent, Form: form, Nonce: true}).Sign(req))
	return req
}

func reasonOf(err error) signing.Reason {
	var ve *signing.VerifyError
	if errors.As(err, &ve) {
		return ve.Reason
	}
	return ""
}

// TestVerifier_MemberResolvedAsGiven: a member naming a JWKS URL is fetched
// as given (query kept, identifier without it) and binds no domain, and so
// is an origin with a query (https://h?q and https://h/?q alike); an origin
// or the well-known URL binds the host, and only there must the keys have
// signed the directory response.
func TestVerifier_MemberResolvedAsGiven(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		mem := newMem()
		a := record(http.NewServeMux())
		a.h.(*http.ServeMux).Handle("/keys.json", jwksHandler(t, key))
		a.h.(*http.ServeMux).Handle(signing.DirectoryPath, jwksHandler(t, key)) // unsigned at the well-known path
		a.h.(*http.ServeMux).Handle("/{$}", jwksHandler(t, key))
		mem.handle("a.test", a)
		b := record(&signing.Directory{Keys: signers(key)})
		mem.handle("b.test", b)
		for _, tc := range []struct {
			agent     string
			form      signing.AgentForm
			fetched   string // request URI expected on the host
			rec       *recorder
			directory string
			domain    string
			reason    signing.Reason
		}{
			{"https://a.test/keys.json", signing.Dictionary, "/keys.json", a, "https://a.test/keys.json", "", ""},
			{"https://a.test/keys.json?v=2", signing.Dictionary, "/keys.json?v=2", a, "https://a.test/keys.json", "", ""},
			{"https://A.test:443/keys.json", signing.QuotedString, "/keys.json", a, "https://a.test/keys.json", "", ""},
			// An origin with a query is a URL, fetched as given, however its empty path is spelt.
			{"https://a.test/?v=2", signing.Dictionary, "/?v=2", a, "https://a.test/", "", ""},
			{"https://a.test?v=2", signing.Dictionary, "/?v=2", a, "https://a.test/", "", ""},
			{"https://b.test", signing.Dictionary, signing.DirectoryPath, b, "https://b.test" + signing.DirectoryPath, "b.test", ""},
			{"https://b.test/", signing.Dictionary, signing.DirectoryPath, b, "https://b.test" + signing.DirectoryPath, "b.test", ""},
			{"https://b.test" + signing.DirectoryPath, signing.BareURL, signing.DirectoryPath, b, "https://b.test" + signing.DirectoryPath, "b.test", ""},
			// The well-known path of a.test serves keys that did not sign it.
			{"https://a.test", signing.Dictionary, signing.DirectoryPath, a, "", "", signing.ReasonDirectory},
		} {
			v := &signing.Verifier{Client: &http.Client{Transport: mem}}
			before := tc.rec.count(tc.fetched)
			res, err := v.Verify(signedBy(t, key, tc.agent, tc.form))
			if got := tc.rec.count(tc.fetched) - before; got != 1 {
				t.Errorf("%s: %s fetched %d times, want 1", tc.agent, tc.fetched, got)
			}
			if tc.reason != "" {
				if reasonOf(err) != tc.reason || !errors.Is(err, signing.ErrUnverified) {
					t.Errorf("%s: %v, want %s", tc.agent, err, tc.reason)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", tc.agent, err)
				continue
			}
			if res.Agent != tc.agent || res.Directory != tc.directory || res.Domain != tc.domain {
				t.Errorf("%s: agent %q directory %q domain %q, want %q %q", tc.agent, res.Agent, res.Directory, res.Domain, tc.directory, tc.domain)
			}
		}
	})
}

// TestVerifier_NoRedirects: a 301 (or any 3xx) on a key set fetch is a
// failed fetch, never followed, even to keys that would verify.
func TestVerifier_NoRedirects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		for _, target := range []string{"https://keys.test/keys.json", "http://keys.test/keys.json"} {
			mem := newMem()
			mem.handle("bot.test", http.RedirectHandler(target, http.StatusMovedPermanently))
			keys := record(jwksHandler(t, key))
			mem.handle("keys.test", keys)
			v := &signing.Verifier{Client: &http.Client{Transport: mem}}
			_, err := v.Verify(signedBy(t, key, "https://bot.test/keys.json", signing.Dictionary))
			if reasonOf(err) != signing.ReasonDirectory || signing.OutcomeOf(err) != signing.Unverified {
				t.Errorf("redirect to %s: %v, want unverified directory_unavailable", target, err)
			}
			if !strings.Contains(err.Error(), "301") {
				t.Errorf("error does not say why: %v", err)
			}
			if keys.total() != 0 {
				t.Errorf("redirect to %s followed", target)
			}
		}
	})
}

// TestVerifier_KeyCount: 32 keys are accepted, 33 refused (unverified), by
// default and with MaxKeys.
func TestVerifier_KeyCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var keys []ed25519.PrivateKey
		for i := range 40 {
			keys = append(keys, signingtest.Key(fmt.Sprint("many-", i)))
		}
		for _, tc := range []struct {
			n, max int
			ok     bool
		}{{32, 0, true}, {33, 0, false}, {40, 0, false}, {5, 5, true}, {6, 5, false}} {
			mem := newMem()
			mem.handle("bot.test", jwksHandler(t, keys[:tc.n]...))
			v := &signing.Verifier{Client: &http.Client{Transport: mem}, MaxKeys: tc.max}
			_, err := v.Verify(signedBy(t, keys[0], "https://bot.test/keys.json", signing.Dictionary))
			if tc.ok != (err == nil) {
				t.Errorf("%d keys (max %d): %v", tc.n, tc.max, err)
			}
			if !tc.ok && (reasonOf(err) != signing.ReasonDirectory || !strings.Contains(err.Error(), "too many keys")) {
				t.Errorf("%d keys: %v, want directory_unavailable saying too many keys", tc.n, err)
			}
		}
	})
}

// TestVerifier_AgentCannotBorrowKeys: a key learned from agent A never
// verifies a request naming agent B, whatever order they come in and
// whether B's directory is up.
func TestVerifier_AgentCannotBorrowKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		keyA, keyB := signingtest.BothyKey(), signingtest.DirectoriesKey()
		mem := newMem()
		mem.handle("a.test", &signing.Directory{Keys: signers(keyA)})
		mem.handle("b.test", &signing.Directory{Keys: signers(keyB)})
		v := &signing.Verifier{Client: &http.Client{Transport: mem}}
		if _, err := v.Verify(signedBy(t, keyA, "https://a.test", signing.Dictionary)); err != nil {
			t.Fatal(err)
		}
		for _, agent := range []string{"https://b.test", "https://down.test", "https://b.test/keys.json"} {
			res, err := v.Verify(signedBy(t, keyA, agent, signing.Dictionary))
			if err == nil || signing.OutcomeOf(err) == signing.Verified {
				t.Errorf("agent %s verified with agent A's key: %+v", agent, res)
			}
		}
		if _, err := v.Verify(signedBy(t, keyB, "https://b.test", signing.Dictionary)); err != nil {
			t.Fatal(err)
		}
	})
}

// TestVerifier_ETagRevalidation: a stale key set with an ETag is
// revalidated with If-None-Match; 304 keeps the keys for another max-age.
func TestVerifier_ETagRevalidation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		dir := &signing.Directory{Keys: signers(key), MaxAge: 10 * time.Minute}
		var full, notModified atomic.Int64
		var inm []string
		mem := newMem()
		mem.handle("bot.test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inm = append(inm, r.Header.Get("If-None-Match"))
			if r.Header.Get("If-None-Match") == `"v1"` {
				notModified.Add(1)
				w.Header().Set("Cache-Control", "max-age=600")
				w.WriteHeader(http.StatusNotModified)
				return
			}
			full.Add(1)
			w.Header().Set("ETag", `"v1"`)
			dir.ServeHTTP(w, r)
		}))
		v := &signing.Verifier{Client: &http.Client{Transport: mem}}
		verify := func() {
			t.Helper()
			if _, err := v.Verify(signedBy(t, key, "https://bot.test", signing.Dictionary)); err != nil {
				t.Fatal(err)
			}
		}
		verify()
		verify()
		time.Sleep(10*time.Minute + time.Second)
		verify() // revalidated: 304
		verify() // fresh again
		time.Sleep(10*time.Minute + time.Second)
		verify() // 304 again
		if full.Load() != 1 || notModified.Load() != 2 {
			t.Fatalf("full fetches %d, 304s %d, want 1 and 2 (If-None-Match sent: %q)", full.Load(), notModified.Load(), inm)
		}
	})
}

// forgedFlood sends n forged requests, each naming its own agent: half of
// them unreachable, half serving a real directory that does not list the
// forger's key.
func forgedFlood(t *testing.T, v *signing.Verifier, n int) {
	t.Helper()
	forger := signingtest.OtherKey()
	for i := range n {
		agent := fmt.Sprintf("https://forged-%d.test", i)
		if i%2 == 1 {
			agent = fmt.Sprintf("https://listed-%d.test", i)
		}
		if _, err := v.Verify(signedBy(t, forger, agent, signing.Dictionary)); err == nil {
			t.Fatalf("forged request %d verified", i)
		}
	}
}

// TestVerifier_FloodCannotEvictKnownAgent: 1,100 forged requests naming
// distinct agents neither lock a known bot out nor force its directory to
// be fetched again.
func TestVerifier_FloodCannotEvictKnownAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		real := record(&signing.Directory{Keys: signers(key)})
		decoy := &signing.Directory{Keys: signers(signingtest.NextKey())}
		client := &http.Client{Transport: rtFunc(func(r *http.Request) (*http.Response, error) {
			rec := httptest.NewRecorder()
			sr := r.Clone(r.Context())
			sr.TLS = fakeTLS()
			switch {
			case r.URL.Host == "bothy.tools":
				real.ServeHTTP(rec, sr)
			case strings.HasPrefix(r.URL.Host, "listed-"):
				decoy.ServeHTTP(rec, sr)
			default:
				return nil, &netError{host: r.URL.Host}
			}
			return rec.Result(), nil
		})}
		v := &signing.Verifier{Client: client}
		if _, err := v.Verify(signedBy(t, key, "https://bothy.tools", signing.Dictionary)); err != nil {
			t.Fatal(err)
		}
		forgedFlood(t, v, 1100)
		if _, err := v.Verify(signedBy(t, key, "https://bothy.tools", signing.Dictionary)); err != nil {
			t.Fatalf("the real bot after the flood: %v", err)
		}
		if n := real.total(); n != 1 {
			t.Errorf("real directory fetched %d times, want 1 (still cached)", n)
		}
		// A real bot first seen after the flood is not locked out either.
		v2 := &signing.Verifier{Client: client}
		forgedFlood(t, v2, 1100)
		if _, err := v2.Verify(signedBy(t, key, "https://bothy.tools", signing.Dictionary)); err != nil {
			t.Fatalf("a bot first seen after the flood: %v", err)
		}
	})
}

// TestVerifier_NoFetchForHopelessSignatures: a signature that is malformed,
// expired, from the future (beyond skew), of another tag, without agent or
// with an agent member carrying parameters never causes a fetch.
func TestVerifier_NoFetchForHopelessSignatures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		mem := newMem()
		dir := record(&signing.Directory{Keys: signers(key)})
		mem.handle("bot.test", dir)
		fresh := func() *http.Request { return signedBy(t, key, "https://bot.test", signing.Dictionary) }
		old := fresh()
		time.Sleep(2 * time.Hour)
		v := &signing.Verifier{Client: &http.Client{Transport: mem}}
		edit := func(f func(r *http.Request)) *http.Request { r := fresh(); f(r); return r }
		for _, tc := range []struct {
			name string
			req  *http.Request
			want signing.Reason
		}{
			{"expired", old, signing.ReasonExpired},
			{"future", edit(func(r *http.Request) {}), signing.ReasonFuture}, // judged an hour earlier
			{"malformed input", edit(func(r *http.Request) { r.Header.Set("Signature-Input", "sig1=(") }), signing.ReasonMalformed},
			{"malformed signature", edit(func(r *http.Request) { r.Header.Set("Signature", "sig1=:%%%:") }), signing.ReasonMalformed},
			{"wrong tag", edit(func(r *http.Request) {
				r.Header.Set("Signature-Input", strings.Replace(r.Header.Get("Signature-Input"), "web-bot-auth", "other", 1))
			}), signing.ReasonWrongTag},
			{"no agent", edit(func(r *http.Request) { r.Header.Del("Signature-Agent") }), signing.ReasonAgent},
			{"member with parameters", edit(func(r *http.Request) {
				r.Header.Set("Signature-Agent", r.Header.Get("Signature-Agent")+";type=jwks_uri")
			}), signing.ReasonAgent},
			{"http agent", edit(func(r *http.Request) { r.Header.Set("Signature-Agent", `sig1="http://bot.test"`) }), signing.ReasonAgent},
		} {
			if tc.want == signing.ReasonFuture {
				v.Now = func() time.Time { return time.Now().Add(-time.Hour) }
			}
			_, err := v.Verify(tc.req)
			v.Now = nil
			if reasonOf(err) != tc.want || signing.OutcomeOf(err) != signing.Invalid {
				t.Errorf("%s: %v, want invalid %s", tc.name, err, tc.want)
			}
		}
		if dir.total() != 0 {
			t.Fatalf("%d directory fetches for hopeless signatures", dir.total())
		}
		if _, err := v.Verify(fresh()); err != nil || dir.total() != 1 {
			t.Fatalf("a good signature: %v, %d fetches", err, dir.total())
		}
	})
}

// TestVerifier_SignaturesTriedBound: a request carrying many web-bot-auth
// signatures, each naming its own agent, costs at most MaxSignatures
// fetches and verifications.
func TestVerifier_SignaturesTriedBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		var fetches atomic.Int64
		client := &http.Client{Transport: rtFunc(func(r *http.Request) (*http.Response, error) {
			fetches.Add(1)
			return nil, &netError{host: r.URL.Host}
		})}
		req := httptest.NewRequest(http.MethodGet, "https://site.example/", nil)
		var agents, inputs, sigs []string
		for i := range 200 {
			label := fmt.Sprint("s", i)
			s := &signing.Signer{Key: key, Agent: fmt.Sprintf("https://a%d.test", i), Label: label}
			r := httptest.NewRequest(http.MethodGet, "https://site.example/", nil)
			must(t, s.Sign(r))
			agents = append(agents, r.Header.Get("Signature-Agent"))
			inputs = append(inputs, r.Header.Get("Signature-Input"))
			sigs = append(sigs, r.Header.Get("Signature"))
		}
		req.Header.Set("Signature-Agent", strings.Join(agents, ", "))
		req.Header.Set("Signature-Input", strings.Join(inputs, ", "))
		req.Header.Set("Signature", strings.Join(sigs, ", "))
		for _, tc := range []struct{ max, want int }{{0, 4}, {2, 2}, {300, 200}} {
			fetches.Store(0)
			v := &signing.Verifier{Client: client, MaxSignatures: tc.max}
			if _, err := v.Verify(req); signing.OutcomeOf(err) != signing.Unverified {
				t.Fatalf("max %d: %v", tc.max, err)
			}
			if n := fetches.Load(); n != int64(tc.want) {
				t.Errorf("MaxSignatures %d: %d fetches, want %d", tc.max, n, tc.want)
			}
		}
	})
}

// TestVerifier_LoopbackRefusedByDefault: a directory on loopback (named by
// address, by [::1], by 0.0.0.0, by a name resolving to 127.0.0.1, in the
// IPv4-mapped or NAT64 form) or on the metadata address through NAT64 is
// never connected to unless AllowInternal lists it.
func TestVerifier_LoopbackRefusedByDefault(t *testing.T) {
	key := signingtest.BothyKey()
	dir := record(&signing.Directory{Keys: signers(key)})
	srv := httptest.NewTLSServer(dir)
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	for _, agent := range []string{
		srv.URL,
		fmt.Sprintf("https://localhost:%d", port),
		fmt.Sprintf("https://[::1]:%d", port),
		fmt.Sprintf("https://0.0.0.0:%d", port),
		fmt.Sprintf("https://[::ffff:127.0.0.1]:%d", port),
		fmt.Sprintf("https://[64:ff9b::7f00:1]:%d", port), // NAT64: refused before any dial, not merely unreachable
		fmt.Sprintf("https://[64:ff9b::a9fe:a9fe]:%d", port),
	} {
		v := &signing.Verifier{Client: srv.Client()}
		_, err := v.Verify(signedBy(t, key, agent, signing.Dictionary))
		if !errors.Is(err, signing.ErrAddressRefused) || signing.OutcomeOf(err) != signing.Unverified {
			t.Errorf("%s: %v, want unverified, ErrAddressRefused", agent, err)
		}
		srv.Client().CloseIdleConnections()
	}
	if dir.total() != 0 {
		t.Fatalf("the loopback directory was reached %d times", dir.total())
	}
	for _, allow := range []string{"127.0.0.0/8", "::ffff:127.0.0.0/104"} {
		v := &signing.Verifier{Client: srv.Client(), AllowInternal: []netip.Prefix{netip.MustParsePrefix(allow)}}
		if _, err := v.Verify(signedBy(t, key, srv.URL, signing.Dictionary)); err != nil {
			t.Fatalf("allowed %s: %v", allow, err)
		}
	}
	srv.Client().CloseIdleConnections()
	// A transport that dials on its own (httptest's client takes
	// example.com to the server) keeps its dial, and the address it reached
	// is judged: loopback, refused unless allowed.
	n := dir.total()
	v := &signing.Verifier{Client: srv.Client()}
	if _, err := v.Verify(signedBy(t, key, "https://example.com", signing.Dictionary)); !errors.Is(err, signing.ErrAddressRefused) {
		t.Errorf("example.com reached on loopback by the client's own dial: %v, want ErrAddressRefused", err)
	}
	v = &signing.Verifier{Client: srv.Client(), AllowInternal: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	if _, err := v.Verify(signedBy(t, key, "https://example.com", signing.Dictionary)); err != nil {
		t.Errorf("example.com through the client's own dial, loopback allowed: %v", err)
	}
	if dir.total() != n+1 {
		t.Errorf("the directory was reached %d times through the client's own dial, want 1", dir.total()-n)
	}
	srv.Client().CloseIdleConnections()
}

// TestVerifier_Middleware: Annotate passes everything with the verdict in
// the context; Enforce lets only verified requests through.
func TestVerifier_Middleware(t *testing.T) {
	key := signingtest.BothyKey()
	ks, _ := signing.NewKeySet(pub(key))
	signed := func() *http.Request { return signedBy(t, key, "https://bot.test", signing.Dictionary) }
	forged := func() *http.Request {
		return signedBy(t, signingtest.OtherKey(), "https://bot.test", signing.Dictionary)
	}
	tampered := func() *http.Request { r := signed(); r.URL.Path = "/other"; return r }
	unsigned := func() *http.Request { return httptest.NewRequest(http.MethodGet, "https://site.example/", nil) }
	for _, tc := range []struct {
		mode    signing.MiddlewareMode
		req     func() *http.Request
		code    int
		outcome signing.Outcome
	}{
		{signing.Annotate, signed, 200, signing.Verified},
		{signing.Annotate, unsigned, 200, signing.Unverified},
		{signing.Annotate, forged, 200, signing.Unverified},
		{signing.Annotate, tampered, 200, signing.Invalid},
		{signing.Enforce, signed, 200, signing.Verified},
		{signing.Enforce, unsigned, 401, 0},
		{signing.Enforce, tampered, 401, 0},
	} {
		v := &signing.Verifier{Keys: ks, Mode: tc.mode}
		called := false
		h := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			called = true
			o, res, err, ok := signing.VerdictFromContext(r.Context())
			if !ok || o != tc.outcome || (o == signing.Verified) != (res != nil && err == nil) {
				t.Errorf("%v: verdict %v %v %v %v", tc.mode, o, res, err, ok)
			}
			_, hasRes := signing.ResultFromContext(r.Context())
			if hasRes != (o == signing.Verified) {
				t.Errorf("ResultFromContext %v for %v", hasRes, o)
			}
		}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, tc.req())
		if rec.Code != tc.code || called != (tc.code == 200) {
			t.Errorf("mode %d outcome %v: code %d called %v", tc.mode, tc.outcome, rec.Code, called)
		}
	}
	// A request that passed no Middleware has no verdict.
	if o, res, err, ok := signing.VerdictFromContext(signed().Context()); ok || o != signing.Unverified || res != nil || err != nil {
		t.Errorf("no Middleware: verdict %v %v %v %v, want none", o, res, err, ok)
	}
	if _, ok := signing.ResultFromContext(signed().Context()); ok {
		t.Error("no Middleware: a Result")
	}
}

// TestVerifier_Replay: with a NonceCache, a replayed signature is invalid,
// one without a nonce is refused, and a full cache gives unverified until
// entries expire.
func TestVerifier_Replay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		ks, _ := signing.NewKeySet(pub(key))
		v := &signing.Verifier{Keys: ks, Nonces: &signing.NonceCache{Max: 2}, Skew: time.Second}
		r1 := signedBy(t, key, "https://bot.test", signing.Dictionary)
		if _, err := v.Verify(r1); err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(r1); reasonOf(err) != signing.ReasonReplayed || signing.OutcomeOf(err) != signing.Invalid {
			t.Fatalf("replay: %v", err)
		}
		noNonce := httptest.NewRequest(http.MethodGet, "https://site.example/", nil)
		must(t, (&signing.Signer{Key: key, Agent: "https://bot.test"}).Sign(noNonce))
		if _, err := v.Verify(noNonce); reasonOf(err) != signing.ReasonMissingParam {
			t.Fatalf("no nonce: %v", err)
		}
		if _, err := v.Verify(signedBy(t, key, "https://bot.test", signing.Dictionary)); err != nil {
			t.Fatal(err)
		}
		// Two live nonces: the cache is full.
		if _, err := v.Verify(signedBy(t, key, "https://bot.test", signing.Dictionary)); reasonOf(err) != signing.ReasonReplayState || signing.OutcomeOf(err) != signing.Unverified {
			t.Fatalf("full cache: %v", err)
		}
		time.Sleep(signing.DefaultExpires + 2*time.Second) // both expired
		if _, err := v.Verify(signedBy(t, key, "https://bot.test", signing.Dictionary)); err != nil {
			t.Fatalf("after expiry: %v", err)
		}
	})
}

// TestVerifier_Now: the Now hook is the verifier's clock.
func TestVerifier_Now(t *testing.T) {
	key := signingtest.BothyKey()
	ks, _ := signing.NewKeySet(pub(key))
	req := signedBy(t, key, "https://bot.test", signing.Dictionary)
	v := &signing.Verifier{Keys: ks, Now: func() time.Time { return time.Now().Add(time.Hour) }}
	if _, err := v.Verify(req); reasonOf(err) != signing.ReasonExpired {
		t.Fatalf("an hour later: %v", err)
	}
	v.Now = func() time.Time { return time.Now().Add(-time.Hour) }
	if _, err := v.Verify(req); reasonOf(err) != signing.ReasonFuture {
		t.Fatalf("an hour earlier: %v", err)
	}
}

// TestVerifier_FetchBounds: a key set larger than MaxDirectoryBytes (256
// KiB by default) is refused, and a fetch that does not answer is given up
// after FetchTimeout (10 s by default): both unverified.
func TestVerifier_FetchBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		jwks, err := signing.MarshalJWKS(pub(key))
		must(t, err)
		padded := append([]byte(`{"pad":"`+strings.Repeat("x", 256<<10)+`",`), jwks[1:]...)
		mem := newMem()
		mem.handle("big.test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(padded) }))
		mem.handle("small.test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(jwks) }))
		mem.handle("slow.test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Hour):
			}
		}))
		for _, tc := range []struct {
			agent   string
			v       *signing.Verifier
			ok      bool
			elapsed time.Duration
		}{
			{"https://small.test/k.json", &signing.Verifier{}, true, 0},
			{"https://big.test/k.json", &signing.Verifier{}, false, 0},
			{"https://big.test/k.json", &signing.Verifier{MaxDirectoryBytes: 1 << 20}, true, 0},
			{"https://slow.test/k.json", &signing.Verifier{}, false, 10 * time.Second},
			{"https://slow.test/k.json", &signing.Verifier{FetchTimeout: 2 * time.Second}, false, 2 * time.Second},
		} {
			tc.v.Client = &http.Client{Transport: mem}
			start := time.Now()
			_, err := tc.v.Verify(signedBy(t, key, tc.agent, signing.Dictionary))
			if tc.ok != (err == nil) || (!tc.ok && reasonOf(err) != signing.ReasonDirectory) {
				t.Errorf("%s (max %d bytes, timeout %v): %v", tc.agent, tc.v.MaxDirectoryBytes, tc.v.FetchTimeout, err)
			}
			if d := time.Since(start); d != tc.elapsed {
				t.Errorf("%s: took %v, want %v", tc.agent, d, tc.elapsed)
			}
		}
	})
}

// TestVerifier_LaterSignatureVerifies: a signature that fails a check (its
// tag malformed or another's, expired, no Signature member) does not stop
// the verifier from trying the next one: a request carrying a hopeless
// signature before a good one verifies by the good one.
func TestVerifier_LaterSignatureVerifies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := signingtest.BothyKey()
		mem := newMem()
		mem.handle("bot.test", &signing.Directory{Keys: signers(key)})
		sign := func(label string) *http.Request {
			r := httptest.NewRequest(http.MethodGet, "https://site.example/page", nil)
			must(t, (&signing.Signer{Key: key, Agent: "https://bot.test", Label: label}).Sign(r))
			return r
		}
		old := sign("bad")
		time.Sleep(2 * time.Hour) // old's signature has expired
		for _, tc := range []struct {
			name string
			bad  func() *http.Request
		}{
			{"malformed tag", func() *http.Request {
				r := sign("bad")
				r.Header.Set("Signature-Input", strings.Replace(r.Header.Get("Signature-Input"), `tag="web-bot-auth"`, "tag=1", 1))
				return r
			}},
			{"other tag", func() *http.Request {
				r := sign("bad")
				r.Header.Set("Signature-Input", strings.Replace(r.Header.Get("Signature-Input"), "web-bot-auth", "other", 1))
				return r
			}},
			{"expired", func() *http.Request { return old }},
			{"no signature member", func() *http.Request {
				r := sign("bad")
				r.Header.Set("Signature", strings.Replace(r.Header.Get("Signature"), "bad=", "gone=", 1))
				return r
			}},
		} {
			bad, good := tc.bad(), sign("good")
			req := httptest.NewRequest(http.MethodGet, "https://site.example/page", nil)
			for _, h := range []string{"Signature-Agent", "Signature-Input", "Signature"} {
				req.Header.Set(h, bad.Header.Get(h)+", "+good.Header.Get(h))
			}
			if _, err := (&signing.Verifier{Client: &http.Client{Transport: mem}}).Verify(bad); err == nil {
				t.Fatalf("%s: the bad signature alone verifies", tc.name)
			}
			res, err := (&signing.Verifier{Client: &http.Client{Transport: mem}}).Verify(req)
			if err != nil || res.Label != "good" {
				t.Errorf("%s, then a good signature: %+v, %v; want verified by \"good\"", tc.name, res, err)
			}
		}
	})
}

// TestVerifier_MissingHeaders: without either header there is nothing to
// verify, whatever the other holds.
func TestVerifier_MissingHeaders(t *testing.T) {
	signed := signedBy(t, signingtest.BothyKey(), "https://bot.test", signing.Dictionary)
	for _, drop := range [][]string{{"Signature"}, {"Signature-Input"}, {"Signature", "Signature-Input"}} {
		req := signed.Clone(t.Context())
		for _, h := range drop {
			req.Header.Del(h)
		}
		_, err := (&signing.Verifier{}).Verify(req)
		var ve *signing.VerifyError
		if !errors.As(err, &ve) || ve.Reason != signing.ReasonMissing || ve.Label != "" {
			t.Errorf("without %v: %v, want %s for no signature in particular", drop, err, signing.ReasonMissing)
		}
	}
}

// TestVerifier_DefaultNegativeTTL: with NegativeTTL unset, a key its
// directory does not list is looked for again after one minute, not
// before.
func TestVerifier_DefaultNegativeTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMem()
		dir := record(&signing.Directory{Keys: signers(signingtest.BothyKey())})
		mem.handle("bot.test", dir)
		v := &signing.Verifier{Client: &http.Client{Transport: mem}}
		impostor := func() error {
			_, err := v.Verify(signedBy(t, signingtest.OtherKey(), "https://bot.test", signing.Dictionary))
			return err
		}
		if err := impostor(); reasonOf(err) != signing.ReasonUnknownKey {
			t.Fatalf("an unknown key: %v, want %s", err, signing.ReasonUnknownKey)
		}
		n := dir.total()
		if n == 0 {
			t.Fatal("no fetch of the directory")
		}
		time.Sleep(time.Minute - time.Second)
		impostor()
		if dir.total() != n {
			t.Errorf("the directory fetched again 59 s after an unknown key, want not before 60 s")
		}
		time.Sleep(2 * time.Second)
		impostor()
		if dir.total() != n+1 {
			t.Errorf("%d fetches 61 s after an unknown key, want %d", dir.total(), n+1)
		}
	})
}
