package signing

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dunglas/httpsfv"
	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// TestRFC9421_B26_VerifyRFC9421: the RFC's B.2.6 signature verifies
// through the exported plain RFC 9421 API, and fails when tampered with or
// when a required component is not covered.
func TestRFC9421_B26_VerifyRFC9421(t *testing.T) {
	var v b26Vector
	loadJSON(t, "rfc9421_b26.json", &v)
	pub := v.key(t).Public().(ed25519.PublicKey)
	req := v.request()
	req.Header.Set("Signature-Input", v.Input)
	req.Header.Set("Signature", v.Signature)
	res, err := VerifyRFC9421(req, v.Label, pub, "@authority", "@method", "content-type")
	if err != nil {
		t.Fatal(err)
	}
	if res.KeyID != v.KeyID || res.Created.Unix() != v.Created || !res.Expires.IsZero() || len(res.Components) != 6 {
		t.Errorf("result %+v", res)
	}
	for _, tc := range []struct {
		name     string
		edit     func(r *http.Request)
		label    string
		key      ed25519.PublicKey
		required []string
		want     Reason
	}{
		{"other key", nil, v.Label, signingtest.OtherKey().Public().(ed25519.PublicKey), nil, ReasonBadSignature},
		{"tampered date", func(r *http.Request) { r.Header.Set("Date", "Wed, 21 Apr 2021 02:07:55 GMT") }, v.Label, pub, nil, ReasonBadSignature},
		{"tampered path", func(r *http.Request) { r.URL.Path = "/bar" }, v.Label, pub, nil, ReasonBadSignature},
		{"not covered", nil, v.Label, pub, []string{"content-digest"}, ReasonComponents},
		{"no such label", nil, "sig1", pub, nil, ReasonMissing},
	} {
		r := v.request()
		r.Header.Set("Signature-Input", v.Input)
		r.Header.Set("Signature", v.Signature)
		if tc.edit != nil {
			tc.edit(r)
		}
		_, err := VerifyRFC9421(r, tc.label, tc.key, tc.required...)
		var ve *VerifyError
		if !errors.As(err, &ve) || ve.Reason != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
}

type dirResponseVector struct {
	Authority string `json:"authority"`
	Body      string `json:"body"`
	Digest    string `json:"content_digest"`
	Created   int64  `json:"created"`
	Expires   int64  `json:"expires"`
	Base      string `json:"signature_base"`
	Input     string `json:"signature_input"`
	Signature string `json:"signature"`
}

// TestDraft01_SignedDirectoryResponse reproduces the draft's signed
// directory response byte for byte (Content-Digest, base, signature) with
// the Directory's signing code, and the verifier accepts it as proof for
// that authority only.
func TestDraft01_SignedDirectoryResponse(t *testing.T) {
	var vec dirResponseVector
	loadJSON(t, "directory_response.json", &vec)
	key := signingtest.RFC9421Key()
	if got := contentDigest([]byte(vec.Body)); got != vec.Digest {
		t.Fatalf("Content-Digest %s, want %s", got, vec.Digest)
	}
	d := &Directory{Keys: []crypto.Signer{key}, SignatureLifetime: time.Unix(vec.Expires, 0).Sub(time.Unix(vec.Created, 0))}
	h := http.Header{}
	if err := d.signResponse(h, vec.Authority, []byte(vec.Body), time.Unix(vec.Created, 0)); err != nil {
		t.Fatal(err)
	}
	// Our label is sig1, the draft's "binding": the rest is identical.
	if got := strings.Replace(h.Get("Signature-Input"), "sig1=", "binding=", 1); got != vec.Input {
		t.Errorf("Signature-Input\n%s\nwant\n%s", got, vec.Input)
	}
	if got := strings.Replace(h.Get("Signature"), "sig1=", "binding=", 1); got != vec.Signature {
		t.Errorf("Signature\n%s\nwant\n%s", got, vec.Signature)
	}
	inputs, err := parseSignatureInput([]string{vec.Input})
	if err != nil {
		t.Fatal(err)
	}
	resp := &http.Response{StatusCode: 200, Header: http.Header{
		"Content-Digest": {vec.Digest}, "Signature-Input": {vec.Input}, "Signature": {vec.Signature},
	}}
	msg := &message{status: 200, header: resp.Header, req: &message{authority: vec.Authority}}
	base, err := signatureBase(msg, inputs[0].comps, inputs[0].raw)
	if err != nil || base != vec.Base {
		t.Fatalf("base\n%s\nwant\n%s (%v)", base, vec.Base, err)
	}
	ks, err := ParseJWKS([]byte(vec.Body))
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(time.Unix(vec.Created+60, 0)))
		if p := (&Verifier{}).provenKeys(resp, vec.Authority, []byte(vec.Body), ks, DefaultMaxKeys); len(p) != 1 {
			t.Fatalf("proof not accepted: %v", p)
		}
		if p := (&Verifier{}).provenKeys(resp, "mirror.test", []byte(vec.Body), ks, DefaultMaxKeys); len(p) != 0 {
			t.Fatal("proof accepted for another authority")
		}
		if p := (&Verifier{}).provenKeys(resp, vec.Authority, []byte(vec.Body+" "), ks, DefaultMaxKeys); len(p) != 0 {
			t.Fatal("proof accepted for another body")
		}
	})
}

// TestProvenKeys_WorkBounded: a directory response listing the same key in
// a thousand signatures costs one verification for that key: a bad first
// signature is not followed by 999 more attempts, so the good one after
// them is not reached either.
func TestProvenKeys_WorkBounded(t *testing.T) {
	key := signingtest.BothyKey()
	d := &Directory{Keys: []crypto.Signer{key}}
	body, _ := d.JWKS()
	good := http.Header{}
	now := time.Now()
	if err := d.signResponse(good, "bot.test", body, now); err != nil {
		t.Fatal(err)
	}
	in := strings.TrimPrefix(good.Get("Signature-Input"), "sig1=")
	bad := bytes.Repeat([]byte{1}, ed25519.SignatureSize)
	badSig, _ := httpsfv.Marshal(httpsfv.NewItem(bad))
	ks, _ := ParseJWKS(body)
	// 10 bad signatures before the good one: one attempt per key stops at
	// the first; 1000: the first 2*MaxKeys inputs only are read.
	for _, n := range []int{10, 1000} {
		var inputs, sigs []string
		for i := range n {
			inputs = append(inputs, fmt.Sprintf("s%d=%s", i, in))
			sigs = append(sigs, fmt.Sprintf("s%d=%s", i, badSig))
		}
		inputs = append(inputs, "last="+in)
		sigs = append(sigs, "last="+strings.TrimPrefix(good.Get("Signature"), "sig1="))
		resp := &http.Response{StatusCode: 200, Header: http.Header{
			"Content-Digest":  {good.Get("Content-Digest")},
			"Signature-Input": {strings.Join(inputs, ", ")},
			"Signature":       {strings.Join(sigs, ", ")},
		}}
		if p := (&Verifier{}).provenKeys(resp, "bot.test", body, ks, DefaultMaxKeys); len(p) != 0 {
			t.Fatalf("%d bad signatures: more than one attempt for the key", n)
		}
	}
	resp := &http.Response{StatusCode: 200}
	// The good signature alone proves the key.
	resp.Header = good
	if p := (&Verifier{}).provenKeys(resp, "bot.test", body, ks, DefaultMaxKeys); len(p) != 1 {
		t.Fatal("good signature not accepted")
	}
}

// TestInternalRange: the dial guard refuses every internal range, in the
// IPv4-mapped, NAT64 and IPv4-compatible forms too (as the fetcher does:
// both judge with internal/ipguard), and AllowInternal opens them.
func TestInternalRange(t *testing.T) {
	for _, tc := range []struct {
		addr, kind string
	}{
		{"127.0.0.1", "loopback"}, {"127.255.0.9", "loopback"}, {"::1", "loopback"}, {"::ffff:127.0.0.1", "loopback"},
		{"64:ff9b::7f00:1", "loopback"},
		{"0.0.0.0", "unspecified"}, {"0.1.2.3", "unspecified"}, {"::", "unspecified"}, {"::ffff:0.0.0.0", "unspecified"},
		{"10.0.0.1", "private"}, {"172.16.5.4", "private"}, {"192.168.1.1", "private"}, {"fc00::1", "private"}, {"::ffff:10.1.2.3", "private"},
		{"169.254.169.254", "link-local"}, {"fe80::1", "link-local"},
		{"64:ff9b::a9fe:a9fe", "link-local"}, {"::a9fe:a9fe", "link-local"}, // the metadata service through NAT64, and IPv4-compatible
		{"224.0.0.1", "multicast"}, {"ff02::1", "multicast"}, {"ff01::1", "multicast"},
		{"100.64.0.1", "shared"}, {"255.255.255.255", "broadcast"},
		{"2002:a9fe:a9fe::1", "link-local"}, {"2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"}, // 6to4 and Teredo
		{"192.0.2.10", "reserved"}, {"198.18.0.1", "reserved"}, {"240.0.0.1", "reserved"}, {"2001:db8::1", "reserved"}, {"64:ff9b:1::7f00:1", "reserved"},
		{"8.8.8.8", ""}, {"172.32.0.1", ""}, {"2001:4860:4860::8888", ""}, {"::ffff:8.8.8.8", ""}, {"64:ff9b::808:808", ""},
	} {
		err := dialGuard{}.check(netip.AddrPortFrom(netip.MustParseAddr(tc.addr), 443).String())
		if (err != nil) != (tc.kind != "") || (err != nil && (!errors.Is(err, ErrAddressRefused) || !strings.HasSuffix(err.Error(), " is "+tc.kind))) {
			t.Errorf("%s: check %v, want refused as %q", tc.addr, err, tc.kind)
		}
	}
	g := newDialGuard([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::ffff:127.0.0.1/128")})
	for addr, ok := range map[string]bool{"10.9.9.9:80": true, "[::ffff:10.0.0.1]:80": true, "127.0.0.1:80": true, "127.0.0.2:80": false, "192.168.0.1:80": false, "name:80": false} {
		if err := g.check(addr); (err == nil) != ok {
			t.Errorf("allow-list check %s: %v", addr, err)
		}
	}
}

// TestVerifyRFC9421_SchemeAndLabel: the scheme a signature covers is https
// when the request came over TLS or its URL says https, http otherwise; a
// label missing from either header is no signature, whichever it is.
func TestVerifyRFC9421_SchemeAndLabel(t *testing.T) {
	key := signingtest.BothyKey()
	pub := key.Public().(ed25519.PublicKey)
	comps := []component{newComponent("@scheme", "", false), newComponent("@authority", "", false)}
	sign := func(r *http.Request, scheme string) {
		t.Helper()
		sp, err := signParams(comps, httpsfvParams([]param{{"created", int64(1)}}))
		if err != nil {
			t.Fatal(err)
		}
		base, err := signatureBase(requestMessage(r.Method, scheme, normaliseAuthority(r.Host, scheme), r.URL, r.Header), comps, sp)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Signature-Input", "sig1="+sp)
		sig, _ := dictMember("sig1", httpsfv.NewItem(ed25519.Sign(key, []byte(base))))
		r.Header.Set("Signature", sig)
	}
	request := func(target string, overTLS bool) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, target, nil)
		if overTLS {
			r.TLS = &tls.ConnectionState{HandshakeComplete: true}
		}
		return r
	}
	for _, tc := range []struct {
		name     string
		req      *http.Request
		signedAs string
		ok       bool
	}{
		{"https URL", request("https://site.example/", false), "https", true},
		{"over TLS, URL without scheme", request("/", true), "https", true},
		{"http URL", request("http://site.example/", false), "http", true},
		{"http URL signed as https", request("http://site.example/", false), "https", false},
		{"https URL signed as http", request("https://site.example/", false), "http", false},
		{"no Host: the URL's", request("https://site.example/", false), "https", true},
	} {
		if tc.req.Host == "" {
			tc.req.Host = "site.example"
		}
		sign(tc.req, tc.signedAs)
		if strings.HasPrefix(tc.name, "no Host") {
			tc.req.Host = ""
		}
		_, err := VerifyRFC9421(tc.req, "sig1", pub, "@scheme")
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want verified %v", tc.name, err, tc.ok)
		}
	}
	for _, drop := range []string{"Signature", "Signature-Input"} {
		r := request("https://site.example/", false)
		sign(r, "https")
		r.Header.Set(drop, strings.Replace(r.Header.Get(drop), "sig1=", "other=", 1))
		_, err := VerifyRFC9421(r, "sig1", pub)
		var ve *VerifyError
		if !errors.As(err, &ve) || ve.Reason != ReasonMissing {
			t.Errorf("sig1 missing from %s: %v, want %s", drop, err, ReasonMissing)
		}
	}
}
