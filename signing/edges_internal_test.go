package signing

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// TestVerify_Windows: created and expires are checked with the verifier's
// skew (60 s by default) on both sides, expires may not come before
// created, the lifetime may reach Verifier.MaxLifetime but not pass it, and
// keyid and alg must be usable. Times are fixed with Verifier.Now.
func TestVerify_Windows(t *testing.T) {
	key := signingtest.BothyKey()
	kid, _ := Thumbprint(key.Public().(ed25519.PublicKey))
	now := time.Unix(1_750_000_000, 0)
	n := now.Unix()
	comps := []component{newComponent("@authority", "", false), newComponent("signature-agent", "", false)}
	params := func(created, expires int64, extra ...param) []param {
		return append([]param{{"created", created}, {"expires", expires}, {"keyid", kid}, {"tag", TagWebBotAuth}}, extra...)
	}
	cases := []struct {
		name        string
		params      []param
		maxLifetime time.Duration
		skew        time.Duration
		want        Reason // "" verifies
	}{
		{"created 59 s ahead, in the skew", params(n+59, n+120), 0, 0, ""},
		{"created 60 s ahead, at the skew", params(n+60, n+120), 0, 0, ""},
		{"created 61 s ahead", params(n+61, n+120), 0, 0, ReasonFuture},
		{"created 10 s ahead, skew 5 s", params(n+10, n+120), 0, 5 * time.Second, ReasonFuture},
		{"expired 59 s ago, in the skew", params(n-120, n-59), 0, 0, ""},
		{"expired 60 s ago, at the skew", params(n-120, n-60), 0, 0, ""},
		{"expired 61 s ago", params(n-120, n-61), 0, 0, ReasonExpired},
		{"expired 10 s ago, skew 5 s", params(n-120, n-10), 0, 5 * time.Second, ReasonExpired},
		{"expires before created", params(n, n-1), 0, 0, ReasonMalformed},
		{"expires at created", params(n, n), 0, 0, ""},
		{"lifetime at the maximum", params(n, n+60), time.Minute, 0, ""},
		{"lifetime 1 s over the maximum", params(n, n+61), time.Minute, 0, ReasonTooLong},
		{"empty keyid", []param{{"created", n}, {"expires", n + 60}, {"keyid", ""}, {"tag", TagWebBotAuth}}, 0, 0, ReasonMissingParam},
		{"alg ed25519", params(n, n+60, param{"alg", "ed25519"}), 0, 0, ""},
		{"alg rsa-pss-sha512", params(n, n+60, param{"alg", "rsa-pss-sha512"}), 0, 0, ReasonMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "http://example.com/x", nil)
			req.Header.Set("Signature-Agent", `"https://bothy.tools"`)
			signCustom(t, req, key, comps, tc.params)
			v := &Verifier{Keys: KeySet{kid: key.Public().(ed25519.PublicKey)}, Now: func() time.Time { return now },
				MaxLifetime: tc.maxLifetime, Skew: tc.skew}
			res, err := v.Verify(req)
			if tc.want == "" {
				if err != nil || res == nil || res.KeyID != kid {
					t.Fatalf("Verify = %+v, %v; want verified", res, err)
				}
				return
			}
			var ve *VerifyError
			if !errors.As(err, &ve) || ve.Reason != tc.want {
				t.Fatalf("Verify = %+v, %v; want reason %s", res, err, tc.want)
			}
		})
	}
}

// TestVerify_AgentForms: which Signature-Agent URL a signature covering
// "signature-agent" (without a key) speaks for: the string; in the
// Dictionary form the member named by the signature's label, or the only
// member; a member with parameters is refused. A directory verifier (no
// Keys) needs the signature to cover the Signature-Agent.
func TestVerify_AgentForms(t *testing.T) {
	key := signingtest.BothyKey()
	kid, _ := Thumbprint(key.Public().(ed25519.PublicKey))
	n := time.Now().Unix()
	params := []param{{"created", n}, {"expires", n + 60}, {"keyid", kid}, {"tag", TagWebBotAuth}}
	auth, agent := newComponent("@authority", "", false), newComponent("signature-agent", "", false)
	cases := []struct {
		name, header string
		comps        []component
		keys         bool
		wantAgent    string
		want         Reason
	}{
		{"string", `"https://bothy.tools"`, []component{auth, agent}, true, "https://bothy.tools", ""},
		{"member of the label", `other="https://other.example", sig1="https://bothy.tools"`, []component{auth, agent}, true, "https://bothy.tools", ""},
		{"only member, another label", `other="https://bothy.tools"`, []component{auth, agent}, true, "https://bothy.tools", ""},
		{"two members, none the label", `a="https://bothy.tools", b="https://other.example"`, []component{auth, agent}, true, "", ReasonAgent},
		{"member with parameters", `sig1="https://bothy.tools";x=1`, []component{auth, agent}, true, "", ReasonAgent},
		{"not covered, directory verifier", `"https://bothy.tools"`, []component{auth}, false, "", ReasonComponents},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "http://example.com/x", nil)
			req.Header.Set("Signature-Agent", tc.header)
			signCustom(t, req, key, tc.comps, params)
			v := &Verifier{}
			if tc.keys {
				v.Keys = KeySet{kid: key.Public().(ed25519.PublicKey)}
			}
			res, err := v.Verify(req)
			if tc.want == "" {
				if err != nil || res.Agent != tc.wantAgent {
					t.Fatalf("Verify = %+v, %v; want verified for %s", res, err, tc.wantAgent)
				}
				return
			}
			var ve *VerifyError
			if !errors.As(err, &ve) || ve.Reason != tc.want {
				t.Fatalf("Verify = %+v, %v; want reason %s", res, err, tc.want)
			}
		})
	}
}

// TestVerify_ReplayInsideTheSkew: a signature is accepted up to the skew
// (60 s) after its expires, so its nonce is remembered that long too: a
// replay 30 s after expires is refused.
func TestVerify_ReplayInsideTheSkew(t *testing.T) {
	key := signingtest.BothyKey()
	kid, _ := Thumbprint(key.Public().(ed25519.PublicKey))
	t0 := time.Unix(1_750_000_000, 0)
	now := t0
	n := t0.Unix()
	req := httptest.NewRequest(http.MethodGet, "http://example.com/x", nil)
	req.Header.Set("Signature-Agent", `"https://bothy.tools"`)
	signCustom(t, req, key, []component{newComponent("@authority", "", false), newComponent("signature-agent", "", false)},
		[]param{{"created", n}, {"expires", n + 60}, {"keyid", kid}, {"tag", TagWebBotAuth}, {"nonce", "n1"}})
	v := &Verifier{Keys: KeySet{kid: key.Public().(ed25519.PublicKey)}, Nonces: &NonceCache{}, Now: func() time.Time { return now }}
	if _, err := v.Verify(req); err != nil {
		t.Fatalf("first use: %v", err)
	}
	now = t0.Add(90 * time.Second)
	var ve *VerifyError
	if _, err := v.Verify(req); !errors.As(err, &ve) || ve.Reason != ReasonReplayed {
		t.Fatalf("replay 30 s after expires: %v, want %s", err, ReasonReplayed)
	}
}

// countingTransport counts requests and fails them all.
type countingTransport struct{ n int }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n++
	return nil, errors.New("no network in this test")
}

// TestVerify_ReqComponentsAreNotTheRequests: a request signature whose
// @authority or signature-agent carries ";req" (a component of another
// message) does not cover the request's own: it is refused for its
// components, and no key directory is fetched for it.
func TestVerify_ReqComponentsAreNotTheRequests(t *testing.T) {
	key := signingtest.BothyKey()
	kid, _ := Thumbprint(key.Public().(ed25519.PublicKey))
	n := time.Now().Unix()
	sig := ":" + strings.Repeat("A", 86) + "==:"
	params := fmt.Sprintf(`;created=%d;expires=%d;keyid="%s";tag="web-bot-auth"`, n, n+60, kid)
	for _, comps := range []string{
		`("@authority";req "signature-agent")`,
		`("@target-uri";req "signature-agent")`,
		`("@authority" "signature-agent";req)`,
	} {
		tr := &countingTransport{}
		req := httptest.NewRequest(http.MethodGet, "https://example.com/x", nil)
		req.Header.Set("Signature-Agent", `"https://bothy.tools"`)
		req.Header.Set("Signature-Input", "sig1="+comps+params)
		req.Header.Set("Signature", "sig1="+sig)
		v := &Verifier{Client: &http.Client{Transport: tr}}
		_, err := v.Verify(req)
		var ve *VerifyError
		if !errors.As(err, &ve) || ve.Reason != ReasonComponents || tr.n != 0 {
			t.Errorf("%s: %v after %d fetches; want %s after none", comps, err, tr.n, ReasonComponents)
		}
	}
}

// TestVerify_AgentMemberOfTheLabel: a signature covering several
// Signature-Agent members speaks for the one keyed by its own label.
func TestVerify_AgentMemberOfTheLabel(t *testing.T) {
	key := signingtest.BothyKey()
	kid, _ := Thumbprint(key.Public().(ed25519.PublicKey))
	n := time.Now().Unix()
	req := httptest.NewRequest(http.MethodGet, "http://example.com/x", nil)
	req.Header.Set("Signature-Agent", `other="https://other.example", sig1="https://bothy.tools"`)
	signCustom(t, req, key, []component{newComponent("@authority", "", false),
		newComponent("signature-agent", "other", false), newComponent("signature-agent", "sig1", false)},
		[]param{{"created", n}, {"expires", n + 60}, {"keyid", kid}, {"tag", TagWebBotAuth}})
	v := &Verifier{Keys: KeySet{kid: key.Public().(ed25519.PublicKey)}}
	if res, err := v.Verify(req); err != nil || res.Agent != "https://bothy.tools" {
		t.Fatalf("Verify = %+v, %v; want verified for https://bothy.tools", res, err)
	}
}

// TestProvenKeys_WhatAProofNeeds: a directory response proves a key only
// with a signature tagged for directories, with created and expires inside
// the skew, covering the request's @authority (";req") and the
// Content-Digest of the body it came with.
func TestProvenKeys_WhatAProofNeeds(t *testing.T) {
	key := signingtest.BothyKey()
	pub := key.Public().(ed25519.PublicKey)
	kid, _ := Thumbprint(pub)
	ks := KeySet{kid: pub}
	body := []byte(`{"keys":[]}`)
	now := time.Unix(1_750_000_000, 0)
	n := now.Unix()
	authReq, auth := newComponent("@authority", "", true), newComponent("@authority", "", false)
	digest := newComponent("content-digest", "", false)
	good := func() []param {
		return []param{{"created", n}, {"expires", n + 300}, {"keyid", kid}, {"tag", TagDirectory}}
	}
	set := func(name string, v any) []param {
		var out []param
		for _, p := range good() {
			if p.name != name {
				out = append(out, p)
			}
		}
		if v != nil {
			out = append(out, param{name, v})
		}
		return out
	}
	cases := []struct {
		name   string
		comps  []component
		params []param
		proven bool
	}{
		{"good", []component{authReq, digest}, good(), true},
		{"created 59 s ahead", []component{authReq, digest}, set("created", n+59), true},
		{"created 120 s ahead", []component{authReq, digest}, set("created", n+120), false},
		{"expired 120 s ago", []component{authReq, digest}, set("expires", n-120), false},
		{"no created", []component{authReq, digest}, set("created", nil), false},
		{"no expires", []component{authReq, digest}, set("expires", nil), false},
		{"request tag", []component{authReq, digest}, set("tag", TagWebBotAuth), false},
		{"@authority without req", []component{auth, digest}, good(), false},
		{"no content-digest", []component{authReq}, good(), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Content-Digest": {contentDigest(body)}}
			if got := provenBy(t, key, h, tc.comps, tc.params, body, ks, now); (got == 1) != tc.proven {
				t.Fatalf("proven keys %d, want proven %v", got, tc.proven)
			}
		})
	}
}

// provenBy signs a directory's answer for bot.test with key (its header h,
// the components comps, the parameters params) and returns how many keys of
// ks a Verifier whose clock reads now takes as proven by it for body.
func provenBy(t *testing.T, key ed25519.PrivateKey, h http.Header, comps []component, params []param, body []byte, ks KeySet, now time.Time) int {
	t.Helper()
	sp, err := signParams(comps, httpsfvParams(params))
	if err != nil {
		t.Fatal(err)
	}
	base, err := signatureBase(&message{status: http.StatusOK, header: h, req: &message{authority: "bot.test"}}, comps, sp)
	if err != nil {
		t.Fatal(err)
	}
	h.Set("Signature-Input", "sig1="+sp)
	sig, _ := dictMember("sig1", httpsfv.NewItem(ed25519.Sign(key, []byte(base))))
	h.Set("Signature", sig)
	v := &Verifier{Now: func() time.Time { return now }}
	return len(v.provenKeys(&http.Response{StatusCode: http.StatusOK, Header: h}, "bot.test", body, ks, DefaultMaxKeys))
}

func httpsfvParams(ps []param) *httpsfv.Params {
	p := httpsfv.NewParams()
	for _, pp := range ps {
		p.Add(pp.name, pp.val)
	}
	return p
}

// TestVerifier_TTL: how long a fetched key set stays fresh, from
// Cache-Control max-age (no-store and no-cache: not at all; a negative or
// unreadable max-age is ignored), else Expires against Date (or now), else
// Verifier.DirectoryTTL (1 h by default); never beyond 24 h.
func TestVerifier_TTL(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	date := now.Add(-10 * time.Minute)
	cases := []struct {
		name string
		h    http.Header
		def  time.Duration
		want time.Duration
	}{
		{"nothing", http.Header{}, 0, time.Hour},
		{"nothing, DirectoryTTL", http.Header{}, 5 * time.Minute, 5 * time.Minute},
		{"max-age", http.Header{"Cache-Control": {"public, max-age=600"}}, 0, 10 * time.Minute},
		{"quoted max-age", http.Header{"Cache-Control": {`max-age="60"`}}, 0, time.Minute},
		{"max-age 0", http.Header{"Cache-Control": {"max-age=0"}}, 0, 0},
		{"max-age over a day", http.Header{"Cache-Control": {"max-age=172800"}}, 0, 24 * time.Hour},
		{"max-age exactly a day", http.Header{"Cache-Control": {"max-age=86400"}}, 0, 24 * time.Hour},
		{"negative max-age ignored", http.Header{"Cache-Control": {"max-age=-5"}}, 0, time.Hour},
		{"no-store", http.Header{"Cache-Control": {"no-store"}}, 0, 0},
		{"no-cache", http.Header{"Cache-Control": {"No-Cache"}}, 0, 0},
		{"Expires after Date", http.Header{"Date": {date.Format(http.TimeFormat)}, "Expires": {date.Add(30 * time.Minute).Format(http.TimeFormat)}}, 0, 30 * time.Minute},
		{"Expires without Date", http.Header{"Expires": {now.Add(2 * time.Hour).Format(http.TimeFormat)}}, 0, 2 * time.Hour},
		{"Expires two days on", http.Header{"Date": {date.Format(http.TimeFormat)}, "Expires": {date.Add(48 * time.Hour).Format(http.TimeFormat)}}, 0, 24 * time.Hour},
		{"Expires in the past", http.Header{"Date": {date.Format(http.TimeFormat)}, "Expires": {date.Add(-time.Minute).Format(http.TimeFormat)}}, 0, 0},
		{"Expires unreadable", http.Header{"Expires": {"0"}}, 0, 0},
	}
	for _, tc := range cases {
		v := &Verifier{DirectoryTTL: tc.def}
		if got := v.ttl(tc.h, now); got != tc.want {
			t.Errorf("%s: ttl = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestNonceCache_Record: a key is seen while its entry lasts and free again
// from the instant the entry ends; at Max live entries there is no room,
// and entries that have ended make room again.
func TestNonceCache_Record(t *testing.T) {
	t0 := time.Unix(1_750_000_000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type step struct {
		key        string
		until, now int
		seen, full bool
	}
	cases := []struct {
		name  string
		max   int
		steps []step
	}{
		{"seen while it lasts", 0, []step{{"a", 60, 0, false, false}, {"a", 70, 59, true, false}}},
		{"free at its end", 0, []step{{"a", 60, 0, false, false}, {"a", 200, 60, false, false}, {"a", 200, 150, true, false}}},
		{"free after its end", 0, []step{{"a", 60, 0, false, false}, {"a", 200, 130, false, false}}},
		{"full at Max", 2, []step{{"a", 60, 0, false, false}, {"b", 60, 0, false, false}, {"c", 60, 1, false, true}}},
		{"room once an entry ends", 2, []step{{"a", 10, 0, false, false}, {"b", 60, 0, false, false}, {"c", 60, 10, false, false}, {"d", 60, 11, false, true}}},
		{"room once the earliest ends", 2, []step{{"a", 60, 0, false, false}, {"b", 10, 0, false, false}, {"c", 60, 9, false, true}, {"c", 60, 10, false, false}}},
	}
	for _, tc := range cases {
		c := &NonceCache{Max: tc.max}
		for i, s := range tc.steps {
			seen, full := c.record(s.key, at(s.until), at(s.now))
			if seen != s.seen || full != s.full {
				t.Errorf("%s: step %d (%s until %d at %d): seen, full = %v, %v; want %v, %v", tc.name, i, s.key, s.until, s.now, seen, full, s.seen, s.full)
			}
		}
	}
}

// TestSignatureBase_Components: the component lines of the signature base
// (RFC 9421 §2.5) for one request, and the component lists that have no
// base.
func TestSignatureBase_Components(t *testing.T) {
	agent, err := ParseSignatureAgent([]string{`sig1="https://bot.test", sig2="https://b.test";x=1`})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, target, input string
		header              http.Header
		want                string // the lines before "@signature-params"; "" for an error
	}{
		{"path of an empty path", "https://example.com", `("@path")`, nil, `"@path": /` + "\n"},
		{"request-target of an empty path", "https://example.com", `("@request-target")`, nil, `"@request-target": /` + "\n"},
		{"request-target without query", "https://example.com/a/b", `("@request-target")`, nil, `"@request-target": /a/b` + "\n"},
		{"request-target with query", "https://example.com/a?x=1", `("@request-target")`, nil, `"@request-target": /a?x=1` + "\n"},
		{"query of no query", "https://example.com/a", `("@query")`, nil, `"@query": ?` + "\n"},
		{"field lines joined", "https://example.com/", `("x-list")`, http.Header{"X-List": {"a", "b"}}, `"x-list": a, b` + "\n"},
		{"field values trimmed", "https://example.com/", `("x-list")`, http.Header{"X-List": {"  a \t", " b"}}, `"x-list": a, b` + "\n"},
		{"agent member", "https://example.com/", `("signature-agent";key="sig1")`,
			http.Header{"Signature-Agent": {`sig1="https://bot.test", sig2="https://b.test";x=1`}}, `"signature-agent";key="sig1": "https://bot.test"` + "\n"},
		{"agent member with parameters", "https://example.com/", `("signature-agent";key="sig2")`,
			http.Header{"Signature-Agent": {`sig1="https://bot.test", sig2="https://b.test";x=1`}}, `"signature-agent";key="sig2": "https://b.test";x=1` + "\n"},
		{"dictionary member of another field", "https://example.com/", `("x-dict";key="sig1")`,
			http.Header{"Signature-Agent": {`sig1="https://bot.test"`}, "X-Dict": {`sig1="https://other.test"`}}, `"x-dict";key="sig1": "https://other.test"` + "\n"},
		{"agent member of the request", "https://example.com/", `("signature-agent";key="sig1";req)`,
			http.Header{"Signature-Agent": {`sig1="https://bot.test"`}}, ""},
		{"component twice", "https://example.com/", `("@path" "@path")`, nil, ""},
		{"line break in a value", "https://example.com/", `("x-a")`, http.Header{"X-A": {"a\nb"}}, ""},
		{"carriage return in a value", "https://example.com/", `("x-a")`, http.Header{"X-A": {"a\rb"}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inputs, err := parseSignatureInput([]string{"sig1=" + tc.input})
			if err != nil {
				t.Fatal(err)
			}
			u, _ := url.Parse(tc.target)
			h := tc.header
			if h == nil {
				h = http.Header{}
			}
			msg := requestMessage(http.MethodGet, "https", "example.com", u, h)
			msg.agent = agent
			base, err := signatureBase(msg, inputs[0].comps, inputs[0].raw)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("base %q, want an error", base)
				}
				return
			}
			lines, _, _ := strings.Cut(base, `"@signature-params": `)
			if err != nil || lines != tc.want {
				t.Fatalf("base lines %q (%v), want %q", lines, err, tc.want)
			}
		})
	}
}

// TestParseSignatureInput_KeyOnDerived: a key parameter belongs to a
// dictionary field, never to a derived component.
func TestParseSignatureInput_KeyOnDerived(t *testing.T) {
	if _, err := parseSignatureInput([]string{`sig1=("@authority";key="a");created=1`}); err == nil {
		t.Error(`("@authority";key="a") parsed`)
	}
	if _, err := parseSignatureInput([]string{`sig1=("signature-agent";key="a");created=1`}); err != nil {
		t.Errorf(`("signature-agent";key="a"): %v`, err)
	}
}

// TestParseSignatureAgent_Userinfo: an agent URL with user information is
// refused in every form, and the error does not repeat it (it may be a
// secret). The message failed before the fix: it quoted the URL.
func TestParseSignatureAgent_Userinfo(t *testing.T) {
	for _, v := range []string{`"https://user:s3cret@bot.test"`, `sig1="https://s3cret@bot.test"`, `https://user:s3cret@bot.test`,
		`"https://user:s3cret@bot.test/a b"`, `"https://user:s3cret@bot test"`} {
		a, err := ParseSignatureAgent([]string{v})
		if err == nil {
			t.Errorf("ParseSignatureAgent(%s) = %+v, want an error", v, a)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("ParseSignatureAgent(%s): error %q shows the user information", v, err)
		}
	}
}

// TestDialGuard_MappedPrefixes: an AllowInternal prefix written in the
// IPv4-mapped IPv6 form allows the IPv4 addresses it maps, /96 (every IPv4
// address) included.
func TestDialGuard_MappedPrefixes(t *testing.T) {
	cases := []struct {
		prefix, addr string
		allowed      bool
	}{
		{"::ffff:0.0.0.0/96", "127.0.0.1:443", true},
		{"::ffff:0.0.0.0/96", "10.1.2.3:443", true},
		{"::ffff:127.0.0.0/104", "127.0.0.1:443", true},
		{"::ffff:127.0.0.0/104", "10.1.2.3:443", false},
		{"::ffff:10.0.0.0/104", "[::ffff:10.9.9.9]:443", true},
		{"127.0.0.0/8", "[::ffff:127.0.0.1]:443", true},
		{"::1/128", "127.0.0.1:443", false},
		// An IPv6 prefix of 96 bits or more that maps no IPv4 address is
		// taken as written, not widened.
		{"fd00::/112", "[fd00::1]:443", true},
		{"fd00::/112", "[fd00::1:0:1]:443", false},
		{"fd00::/96", "[fd00:0:0:1::1]:443", false},
	}
	for _, tc := range cases {
		g := newDialGuard([]netip.Prefix{netip.MustParsePrefix(tc.prefix)})
		if err := g.check(tc.addr); (err == nil) != tc.allowed {
			t.Errorf("allow %s, %s: %v, want allowed %v", tc.prefix, tc.addr, err, tc.allowed)
		}
	}
}

// TestVerifier_AgentsAllowList: an entry of Verifier.Agents allows agent
// URLs of its scheme and authority (default port and case aside).
func TestVerifier_AgentsAllowList(t *testing.T) {
	u, _ := url.Parse("https://bot.test/keys.json")
	for agents, want := range map[string]bool{
		"https://bot.test":         true,
		"HTTPS://BOT.test:443/x":   true,
		"http://bot.test":          false,
		"https://bot.test:8443":    false,
		"https://other.test":       false,
		"%zz, https://bot.test/ok": true,
	} {
		v := &Verifier{Agents: strings.Split(agents, ", ")}
		if got := v.agentAllowed(u); got != want {
			t.Errorf("Agents %q: agentAllowed(%s) = %v, want %v", agents, u, got, want)
		}
	}
}

// TestVerifier_AdmitEvictsLeastRecentlyUsed: with MaxDirectories key sets
// known, admitting one more forgets the one used longest ago.
func TestVerifier_AdmitEvictsLeastRecentlyUsed(t *testing.T) {
	t0 := time.Unix(1_750_000_000, 0)
	v := &Verifier{known: map[string]*dirEntry{}, probation: map[string]*dirEntry{}}
	for i := range MaxDirectories {
		// k0 is the oldest; the map order does not matter.
		v.known[fmt.Sprint("k", i)] = &dirEntry{lastUsed: t0.Add(time.Duration(i) * time.Second)}
	}
	e := &dirEntry{bound: true}
	v.probation["new"] = e
	if !v.admit("new", e, t0.Add(time.Hour)) {
		t.Error("admit lost the entry's binding")
	}
	_, old := v.known["k0"]
	_, kept := v.known[fmt.Sprint("k", MaxDirectories-1)]
	if len(v.known) != MaxDirectories || old || !kept || v.known["new"] != e || v.probation["new"] != nil {
		t.Errorf("after admit: %d known, k0 kept %v, newest kept %v, new known %v", len(v.known), old, kept, v.known["new"] == e)
	}
}
