package signing

import (
	"net/http"
	"net/url"
	"testing"
)

// TestParseSignatureInput_Refuses: Signature-Input members whose covered
// components are not RFC 9421 component identifiers are refused, whether
// the field is in canonical form (the fast path) or not: an identifier is
// a String (2.1, 2.2), a lowercase field name (a token: never empty) or a
// derived component name, with the parameters of 2.1 that this package
// supports (key on a dictionary field, req).
func TestParseSignatureInput_Refuses(t *testing.T) {
	for _, tc := range []struct{ name, field string }{
		{"empty name", `sig1=("");created=1`},
		{"empty name, not canonical", `sig1=( "");created=1`},
		{"empty name with req", `sig1=("";req);created=1`},
		{"uppercase name", `sig1=("X-A");created=1`},
		{"token, not a string", `sig1=(x-a);created=1`},
		{"integer, not a string", `sig1=(1);created=1`},
		{"req false", `sig1=("x-a";req=?0);created=1`},
		{"unknown parameter", `sig1=("x-a";sf);created=1`},
		{"key not a string", `sig1=("x-a";key=a);created=1`},
		{"key on a derived component", `sig1=("@path";key="a");created=1`},
		{"member not an inner list", `sig1="x";created=1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := parseSignatureInput([]string{tc.field}); err == nil {
				t.Errorf("%s parsed: %+v", tc.field, got)
			}
		})
	}
}

// TestSignatureBase_Status: @status is the status code of a response (RFC
// 9421 2.2.9); a request has none, so covering it is an error.
func TestSignatureBase_Status(t *testing.T) {
	status := []component{newComponent("@status", "", false)}
	req := requestMessage(http.MethodGet, "https", "example.com", &url.URL{Path: "/"}, http.Header{})
	if base, err := signatureBase(req, status, "()"); err == nil {
		t.Errorf("@status of a request: %q, want an error", base)
	}
	resp := &message{status: http.StatusOK, header: http.Header{}, req: req}
	base, err := signatureBase(resp, status, "()")
	if want := "\"@status\": 200\n\"@signature-params\": ()"; err != nil || base != want {
		t.Errorf("@status of a response: %q, %v; want %q", base, err, want)
	}
}

// TestSigInput_ParamsSameOnBothPaths: the parameters of a Signature-Input
// member read the same whether the fast path or httpsfv parsed it: an
// absent parameter is not present, a present one of the wrong type is
// present with an error, and values are the parsed Integers and Strings
// (RFC 9421 2.3: created and expires are Integers, keyid, nonce, alg and
// tag Strings).
func TestSigInput_ParamsSameOnBothPaths(t *testing.T) {
	type got struct {
		i       int64
		s       string
		ok, bad bool
	}
	field := `sig1=("@authority");created=1735689600;expires=1735689660;keyid="k1";nonce=7;alg=ed25519;tag="web-bot-auth"`
	fast, ok := fastSignatureInput([]string{field})
	if !ok {
		t.Fatalf("fast path declines %s", field)
	}
	slow, err := slowSignatureInput([]string{field})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		int, str got
	}{
		{"created", got{i: 1735689600, ok: true}, got{ok: true, bad: true}},
		{"expires", got{i: 1735689660, ok: true}, got{ok: true, bad: true}},
		{"keyid", got{ok: true, bad: true}, got{s: "k1", ok: true}},
		{"tag", got{ok: true, bad: true}, got{s: "web-bot-auth", ok: true}},
		{"nonce", got{i: 7, ok: true}, got{ok: true, bad: true}},    // an Integer, not a String
		{"alg", got{ok: true, bad: true}, got{ok: true, bad: true}}, // a Token, not a String
		{"absent", got{}, got{}},
	} {
		for path, si := range map[string]*sigInput{"fast": &fast[0], "httpsfv": &slow[0]} {
			t.Run(tc.name+"/"+path, func(t *testing.T) {
				i, ok, err := si.intParam(tc.name)
				if g := (got{i: i, ok: ok, bad: err != nil}); g != tc.int {
					t.Errorf("intParam = %+v, want %+v", g, tc.int)
				}
				s, ok, err := si.stringParam(tc.name)
				if g := (got{s: s, ok: ok, bad: err != nil}); g != tc.str {
					t.Errorf("stringParam = %+v, want %+v", g, tc.str)
				}
			})
		}
	}
}

// TestParse_SeveralFieldLines: a field sent as several field lines is one
// field, the lines joined with commas (RFC 9110 5.3; RFC 8941 4.2 parses
// the combined value): every member of every line is read.
func TestParse_SeveralFieldLines(t *testing.T) {
	sigs, err := parseSignatures([]string{"a=:AAAA:", "b=:AQID:"})
	if err != nil || len(sigs) != 2 || len(sigs["a"]) != 3 || len(sigs["b"]) != 3 {
		t.Errorf("Signature: %v, %v; want members a and b", sigs, err)
	}
	inputs, err := parseSignatureInput([]string{`a=("@authority");created=1`, `b=("@path");created=2`})
	if err != nil || len(inputs) != 2 || inputs[0].label != "a" || inputs[1].label != "b" {
		t.Errorf("Signature-Input: %+v, %v; want members a and b", inputs, err)
	}
	agent, err := ParseSignatureAgent([]string{`a="https://a.test"`, `b="https://b.test"`})
	if err != nil || len(agent.Members) != 2 {
		t.Errorf("Signature-Agent: %+v, %v; want members a and b", agent, err)
	}
}
