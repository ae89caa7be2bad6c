package signing

import (
	"crypto/ed25519"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/signing/signingtest"
)

// TestSignatureBase_RFC9421Components: component values of RFC 9421's own
// examples, each line of the signature base being `identifier: value`
// (section 2.5). Derived components (2.2.1 to 2.2.7) of
// `POST /path?param=value` to www.example.com over https and of the
// other targets of 2.2.7; HTTP fields (2.1: values trimmed, field lines
// joined with ", ", a field's inner spacing kept) and dictionary members
// (2.1.2, key parameter: the member re-serialised) of the headers of
// sections 2.1 and 2.1.2.
func TestSignatureBase_RFC9421Components(t *testing.T) {
	header := http.Header{
		"Host":          {"www.example.com"},
		"Date":          {"Tue, 20 Apr 2021 02:07:56 GMT"},
		"X-Ows-Header":  {"   Leading and trailing whitespace.   "},
		"Cache-Control": {"max-age=60", "   must-revalidate"},
		"Example-Dict":  {" a=1,    b=2;x=1;y=2,   c=(a   b   c), d"},
	}
	for _, tc := range []struct {
		target, comps, want string
	}{
		{"/path?param=value", `("@method")`, `"@method": POST`},
		{"/path?param=value", `("@target-uri")`, `"@target-uri": https://www.example.com/path?param=value`},
		{"/path?param=value", `("@authority")`, `"@authority": www.example.com`},
		{"/path?param=value", `("@scheme")`, `"@scheme": https`},
		{"/path?param=value", `("@request-target")`, `"@request-target": /path?param=value`},
		{"/path?param=value", `("@path")`, `"@path": /path`},
		{"/path?param=value", `("@query")`, `"@query": ?param=value`},
		{"/path?param=value&foo=bar&baz=batman", `("@query")`, `"@query": ?param=value&foo=bar&baz=batman`},
		{"/path?queryString", `("@query")`, `"@query": ?queryString`},
		{"/path", `("@query")`, `"@query": ?`},
		{"/path", `("@request-target")`, `"@request-target": /path`},
		{"/path", `("@target-uri")`, `"@target-uri": https://www.example.com/path`},
		{"/path?param=value", `("date" "@method" "@path")`,
			"\"date\": Tue, 20 Apr 2021 02:07:56 GMT\n\"@method\": POST\n\"@path\": /path"},
		{"/", `("x-ows-header")`, `"x-ows-header": Leading and trailing whitespace.`},
		{"/", `("cache-control")`, `"cache-control": max-age=60, must-revalidate`},
		{"/", `("example-dict")`, `"example-dict": a=1,    b=2;x=1;y=2,   c=(a   b   c), d`},
		{"/", `("example-dict";key="a")`, `"example-dict";key="a": 1`},
		{"/", `("example-dict";key="d")`, `"example-dict";key="d": ?1`},
		{"/", `("example-dict";key="b")`, `"example-dict";key="b": 2;x=1;y=2`},
		{"/", `("example-dict";key="c")`, `"example-dict";key="c": (a b c)`},
		{"/", `("example-dict";key="e")`, ""},  // no such member
		{"/", `("x-absent")`, ""},              // no such field
		{"/", `("date" "@method" "date")`, ""}, // a component twice
		{"/", `("@status")`, ""},               // a request has no status
		{"/", `("@method";req)`, ""},           // a request answers no request
		{"/", `("@unknown")`, ""},
	} {
		t.Run(tc.target+" "+tc.comps, func(t *testing.T) {
			inputs, err := parseSignatureInput([]string{"sig1=" + tc.comps})
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.ParseRequestURI(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			msg := requestMessage(http.MethodPost, "https", "www.example.com", u, header)
			base, err := signatureBase(msg, inputs[0].comps, inputs[0].raw)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("base %q, want an error", base)
				}
				return
			}
			want := tc.want + "\n\"@signature-params\": " + tc.comps
			if err != nil || base != want {
				t.Fatalf("base %q (%v), want %q", base, err, want)
			}
			if strings.Count(base, "\n") != len(inputs[0].comps) {
				t.Fatalf("base %q: not one line per component", base)
			}
		})
	}
}

// TestVerify_KeyedAgentMemberAbsent: a signature covering
// "signature-agent";key="other" speaks for that Dictionary member
// (draft-ietf-webbotauth-httpsig-protocol); when the request's
// Signature-Agent has no such member, or is not a Dictionary, the
// signature is refused for its agent (ReasonAgent), before any key is
// looked up or fetched.
func TestVerify_KeyedAgentMemberAbsent(t *testing.T) {
	key := signingtest.BothyKey()
	kid, _ := Thumbprint(key.Public().(ed25519.PublicKey))
	n := time.Now().Unix()
	params := []param{{"created", n}, {"expires", n + 60}, {"keyid", kid}, {"tag", TagWebBotAuth}}
	comps := []component{newComponent("@authority", "", false), newComponent("signature-agent", "other", false)}
	for _, tc := range []struct {
		name, header string
		keys         bool
	}{
		{"dictionary without the member", `sig1="https://bothy.tools"`, true},
		{"dictionary without the member, directory verifier", `sig1="https://bothy.tools"`, false},
		{"string", `"https://bothy.tools"`, true},
		{"string, directory verifier", `"https://bothy.tools"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "http://example.com/x", nil)
			req.Header.Set("Signature-Agent", `other="https://bothy.tools"`)
			signCustom(t, req, key, comps, params)
			req.Header.Set("Signature-Agent", tc.header)
			v := &Verifier{}
			if tc.keys {
				v.Keys = KeySet{kid: key.Public().(ed25519.PublicKey)}
			}
			res, err := v.Verify(req)
			var ve *VerifyError
			if !errors.As(err, &ve) || ve.Reason != ReasonAgent {
				t.Fatalf("Verify = %+v, %v; want reason %s", res, err, ReasonAgent)
			}
		})
	}
}
