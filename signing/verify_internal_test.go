package signing

import (
	"crypto/ed25519"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

type param struct {
	name string
	val  any
}

// signCustom signs req over comps with the given parameters, correctly, so
// only the verifier's policy can reject it.
func signCustom(t *testing.T, req *http.Request, key ed25519.PrivateKey, comps []component, params []param) {
	t.Helper()
	sp, err := signParams(comps, httpsfvParams(params))
	if err != nil {
		t.Fatal(err)
	}
	msg := requestMessage(req.Method, "http", normaliseAuthority(req.Host, ""), req.URL, req.Header)
	base, err := signatureBase(msg, comps, sp)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Signature-Input", "sig1="+sp)
	sig, _ := dictMember("sig1", httpsfv.NewItem(ed25519.Sign(key, []byte(base))))
	req.Header.Set("Signature", sig)
}

// TestVerify_B2_D2_Rejects: the verifier refuses every signature the Web Bot
// Auth profile does not allow, each with its own Reason.
func TestVerify_B2_D2_Rejects(t *testing.T) {
	key := signingtest.BothyKey()
	pub := key.Public().(ed25519.PublicKey)
	kid, _ := Thumbprint(pub)
	other := signingtest.OtherKey()
	otherKid, _ := Thumbprint(other.Public().(ed25519.PublicKey))
	now := time.Now().Unix()
	auth := newComponent("@authority", "", false)
	agent := newComponent("signature-agent", "", false)
	good := func() []param {
		return []param{{"created", now}, {"expires", now + 60}, {"keyid", kid}, {"tag", TagWebBotAuth}}
	}
	without := func(name string) []param {
		var out []param
		for _, p := range good() {
			if p.name != name {
				out = append(out, p)
			}
		}
		return out
	}
	with := func(name string, v any) []param {
		out := without(name)
		return append(out, param{name, v})
	}
	cases := []struct {
		name   string
		key    ed25519.PrivateKey
		comps  []component
		params []param
		after  func(r *http.Request)
		want   Reason
	}{
		{"ok", key, []component{auth, agent}, good(), nil, ""},
		{"no Host: the URL's", key, []component{auth, agent}, good(), func(r *http.Request) { r.Host = "" }, ""},
		{"no created", key, []component{auth, agent}, without("created"), nil, ReasonMissingParam},
		{"no expires", key, []component{auth, agent}, without("expires"), nil, ReasonMissingParam},
		{"no keyid", key, []component{auth, agent}, without("keyid"), nil, ReasonMissingParam},
		{"no tag", key, []component{auth, agent}, without("tag"), nil, ReasonMissingParam},
		{"wrong tag", key, []component{auth, agent}, with("tag", "http-message-signatures-directory"), nil, ReasonWrongTag},
		{"tag not a string", key, []component{auth, agent}, with("tag", int64(1)), nil, ReasonMalformed},
		{"created not integer", key, []component{auth, agent}, with("created", "now"), nil, ReasonMalformed},
		{"expired", key, []component{auth, agent}, with("expires", now-120), nil, ReasonExpired},
		{"future", key, []component{auth, agent}, append(with("created", now+600), param{"x", 1}), nil, ReasonFuture},
		{"no authority", key, []component{agent}, good(), nil, ReasonComponents},
		{"unknown key", other, []component{auth, agent}, with("keyid", otherKid), nil, ReasonUnknownKey},
		{"wrong key for keyid", other, []component{auth, agent}, good(), nil, ReasonBadSignature},
		{"tampered agent", key, []component{auth, agent}, good(), func(r *http.Request) {
			r.Header.Set("Signature-Agent", `"https://evil.example"`)
		}, ReasonBadSignature},
		{"tampered authority", key, []component{auth, agent}, good(), func(r *http.Request) { r.Host = "other.example" }, ReasonBadSignature},
		{"tampered params", key, []component{auth, agent}, good(), func(r *http.Request) {
			r.Header.Set("Signature-Input", r.Header.Get("Signature-Input")+`;nonce="x"`)
		}, ReasonBadSignature},
		{"no signature", key, []component{auth, agent}, good(), func(r *http.Request) { r.Header.Del("Signature") }, ReasonMissing},
		{"empty input", key, []component{auth, agent}, good(), func(r *http.Request) { r.Header.Set("Signature-Input", "") }, ReasonMissing},
		{"garbage input", key, []component{auth, agent}, good(), func(r *http.Request) { r.Header.Set("Signature-Input", "sig1=((") }, ReasonMalformed},
		{"garbage agent", key, []component{auth, agent}, good(), func(r *http.Request) { r.Header.Set("Signature-Agent", `"no url"`) }, ReasonAgent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "http://example.com/x", nil)
			req.Header.Set("Signature-Agent", `"https://bothy.tools"`)
			signCustom(t, req, tc.key, tc.comps, tc.params)
			if tc.after != nil {
				tc.after(req)
			}
			before := req.Clone(req.Context())
			v := &Verifier{Keys: KeySet{kid: pub}}
			res, err := v.Verify(req)
			if !reflect.DeepEqual(before.Header, req.Header) || before.Host != req.Host || *before.URL != *req.URL {
				t.Error("Verify modified the request")
			}
			if tc.want == "" {
				if err != nil || res.KeyID != kid || res.Agent != "https://bothy.tools" || res.Form != QuotedString {
					t.Fatalf("Verify = %+v, %v", res, err)
				}
				return
			}
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want *VerifyError", err)
			}
			// unknown_key and no signature are "unverified", the rest "invalid".
			wantOutcome := ErrInvalidSignature
			if tc.want == ReasonUnknownKey || tc.want == ReasonMissing {
				wantOutcome = ErrUnverified
			}
			if !errors.Is(err, wantOutcome) || errors.Is(err, ErrInvalidSignature) == errors.Is(err, ErrUnverified) {
				t.Fatalf("err = %v, want it to match %v only", err, wantOutcome)
			}
			if ve.Reason != tc.want {
				t.Fatalf("reason %s, want %s (%v)", ve.Reason, tc.want, err)
			}
		})
	}
}

func TestNormaliseAuthority(t *testing.T) {
	for _, tc := range []struct{ host, scheme, want string }{
		{"Example.COM", "https", "example.com"},
		{"example.com:443", "https", "example.com"},
		{"example.com:443", "http", "example.com:443"},
		{"example.com:80", "http", "example.com"},
		{"example.com:8443", "https", "example.com:8443"},
		{"[::1]:443", "https", "[::1]"},
		{"[::1]:8080", "https", "[::1]:8080"},
		{"example.com:80", "", "example.com"},
		{"example.com:443", "", "example.com"},
		{"example.com:443", "wss", "example.com:443"}, // no default port known for the scheme: kept
		{"example.com:80", "ftp", "example.com:80"},
		{":443", "https", ""}, // the port is dropped even when the host is empty
	} {
		if got := normaliseAuthority(tc.host, tc.scheme); got != tc.want {
			t.Errorf("normaliseAuthority(%q, %q) = %q, want %q", tc.host, tc.scheme, got, tc.want)
		}
	}
}

// TestResolve_IdentifierNormalised: draft-ietf-webbotauth-httpsig-protocol-01
// section 5.5 compares identifiers after the normalisation of RFC 3986
// sections 6.2.2 (case of percent-encodings, percent-encoded unreserved
// characters decoded, dot segments removed) and 6.2.3 (empty path is "/",
// default or empty port dropped), so spellings of one key set URL are one
// identifier (one cache entry, one Result.Directory), and the URL fetched
// is that identifier (with the query): the keys cached under it are the
// ones its own path serves, not those of a spelling a server routes
// elsewhere.
func TestResolve_IdentifierNormalised(t *testing.T) {
	const wk = "https://a.test" + DirectoryPath
	for _, tc := range []struct {
		agent, id, query string
		wellKnown        bool
	}{
		{"https://a.test/jwks.json", "https://a.test/jwks.json", "", false},
		{"https://A.test:443/jwks.json", "https://a.test/jwks.json", "", false},
		{"https://a.test:/jwks.json", "https://a.test/jwks.json", "", false},
		{"https://a.test/%7ebot/jwks.json", "https://a.test/~bot/jwks.json", "", false},
		{"https://a.test/%7Ebot/jwks.json", "https://a.test/~bot/jwks.json", "", false},
		{"https://a.test/%6Awks.json", "https://a.test/jwks.json", "", false},
		{"https://a.test/x%7E", "https://a.test/x~", "", false},         // the last three bytes
		{"https://a.test/x%c3%a9", "https://a.test/x%C3%A9", "", false}, // not unreserved: kept, hex upper-cased
		{"https://a.test/a%2fb", "https://a.test/a%2Fb", "", false},     // reserved: kept encoded, hex upper-cased
		{"https://a.test/a%2E%2E/b", "https://a.test/a../b", "", false},
		{"https://a.test/x/../jwks.json", "https://a.test/jwks.json", "", false},
		{"https://a.test/./x/./jwks.json", "https://a.test/x/jwks.json", "", false},
		{"https://a.test/../jwks.json", "https://a.test/jwks.json", "", false},
		{"https://a.test/a/b/../../c/./d/.", "https://a.test/c/d/", "", false},
		{"https://a.test/a/b/..", "https://a.test/a/", "", false},
		{"https://a.test/a/.../b/..x/.y", "https://a.test/a/.../b/..x/.y", "", false}, // not dot segments
		{"https://a.test/a//b/../c", "https://a.test/a//c", "", false},                // an empty segment is a segment
		{"https://a.test/x/%2E%2E/jwks.json", "https://a.test/jwks.json", "", false},  // an encoded dot is a dot
		{"https://a.test/jwks.json?v=2", "https://a.test/jwks.json", "?v=2", false},
		{"https://a.test/x/../jwks.json?v=%7e", "https://a.test/jwks.json", "?v=%7e", false},
		{"https://a.test", wk, "", true},
		{"https://a.test/", wk, "", true},
		{"https://a.test/x/..", wk, "", true}, // normalises to a bare origin
		{"https://a.test/?q", "https://a.test/", "?q", false},
		{wk, wk, "", true},
		{"https://a.test/.well-known/x/.." + DirectoryPath[len("/.well-known"):], wk, "", true},
		{"https://a.test/files/%2E%2E" + DirectoryPath, wk, "", true}, // fetched as the well-known path, never as sent
		{"https://a.test/.well-known/http-message-signatures-%64irectory", wk, "", true},
		{"https://a.test/files%2F..%2F.well-known%2Fhttp-message-signatures-directory",
			"https://a.test/files%2F..%2F.well-known%2Fhttp-message-signatures-directory", "", false}, // encoded slashes: one segment
	} {
		loc, err := (&Verifier{}).resolve(tc.agent)
		if err != nil {
			t.Errorf("resolve(%q): %v", tc.agent, err)
			continue
		}
		if fetch := tc.id + tc.query; loc.id != tc.id || loc.fetch != fetch || loc.wellKnown != tc.wellKnown {
			t.Errorf("resolve(%q) = id %q fetch %q well-known %v, want id %q fetch %q well-known %v",
				tc.agent, loc.id, loc.fetch, loc.wellKnown, tc.id, fetch, tc.wellKnown)
		}
	}
}

// FuzzNormalisePath: the normalisation of a URL's path (as resolve gets
// it: url.Parse's escaped path) is a fixed point (a normalised identifier
// normalises to itself, so every spelling of one URL meets at one
// identifier), keeps the path rooted, and never panics.
func FuzzNormalisePath(f *testing.F) {
	for _, p := range []string{"/", "/a/../b", "/%7e/%2f/%2E%2E/x", "/./.././", "/a%41", "/%2%44", "//..//", "/%2E%2E%2F", "/é/ü%20"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		u, err := url.Parse("https://h/" + p)
		if err != nil {
			return // resolve never sees it
		}
		p = u.EscapedPath()
		n := normalisePath(p)
		if n == "" || n[0] != '/' {
			t.Fatalf("normalisePath(%q) = %q: not rooted", p, n)
		}
		if again := normalisePath(n); again != n {
			t.Fatalf("normalisePath(%q) = %q, and again %q", p, n, again)
		}
	})
}
