package signing

import (
	"fmt"
	"strings"
	"testing"
)

// renderFast renders what the fast path read from a Signature-Input field:
// per member its label and @signature-params value, its components (id,
// name, key, req) and its parameters (name, kind, value).
func renderFast(sis []sigInput) string {
	var b strings.Builder
	for _, si := range sis {
		fmt.Fprintf(&b, "%s %s\n", si.label, si.raw)
		for _, c := range si.comps {
			fmt.Fprintf(&b, " c %s|%s|%s|%v\n", c.id, c.name, c.key, c.req)
		}
		for _, p := range si.fparams {
			switch p.kind {
			case 'i', 'b':
				fmt.Fprintf(&b, " p %s %c %d\n", p.name, p.kind, p.num)
			default:
				fmt.Fprintf(&b, " p %s %c %s\n", p.name, p.kind, p.str)
			}
		}
	}
	return b.String()
}

// TestFastSignatureInput_Canonical: canonical one-line Signature-Input
// fields (RFC 9651 section 4.1 serialisation) are taken by the fast path,
// which reads them as RFC 9651 section 4.2 says, and httpsfv reads them
// the same. The fields are RFC 9421's examples (Appendix B.2.1, B.2.3,
// B.2.6; req and key parameters and two signatures as in its sections
// 2.4 and 4.3), the Web Bot Auth architecture-05 Dictionary example (see
// testdata/webbotauth_ed25519.json), and fields at the edges of the RFC
// 9651 grammar: key = (lcalpha / "*") *(lcalpha / DIGIT / "_" / "-" /
// "." / "*") (3.1.2), Integers of at most 15 digits (3.3.1), Strings of
// printable ASCII (3.3.3), Tokens of (ALPHA / "*") *(tchar / ":" / "/")
// (3.3.4), Boolean ?0 (?1 serialises as the bare key, 4.1.1.2).
func TestFastSignatureInput_Canonical(t *testing.T) {
	for _, tc := range []struct{ name, field, want string }{
		{"RFC 9421 B.2.1", `sig-b21=();created=1618884473;keyid="test-key-rsa-pss";nonce="b3k2pp5k7z-50gnwp.yemd"`,
			"sig-b21 ();created=1618884473;keyid=\"test-key-rsa-pss\";nonce=\"b3k2pp5k7z-50gnwp.yemd\"\n" +
				" p created i 1618884473\n p keyid s test-key-rsa-pss\n p nonce s b3k2pp5k7z-50gnwp.yemd\n"},
		{"RFC 9421 B.2.3", `sig-b23=("date" "@method" "@path" "@query" "@authority" "content-type" "content-digest" "content-length");created=1618884473;keyid="test-key-rsa-pss"`,
			"sig-b23 (\"date\" \"@method\" \"@path\" \"@query\" \"@authority\" \"content-type\" \"content-digest\" \"content-length\");created=1618884473;keyid=\"test-key-rsa-pss\"\n" +
				" c \"date\"|date||false\n c \"@method\"|@method||false\n c \"@path\"|@path||false\n c \"@query\"|@query||false\n" +
				" c \"@authority\"|@authority||false\n c \"content-type\"|content-type||false\n c \"content-digest\"|content-digest||false\n" +
				" c \"content-length\"|content-length||false\n p created i 1618884473\n p keyid s test-key-rsa-pss\n"},
		{"RFC 9421 B.2.6", `sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`,
			"sig-b26 (\"date\" \"@method\" \"@path\" \"@authority\" \"content-type\" \"content-length\");created=1618884473;keyid=\"test-key-ed25519\"\n" +
				" c \"date\"|date||false\n c \"@method\"|@method||false\n c \"@path\"|@path||false\n c \"@authority\"|@authority||false\n" +
				" c \"content-type\"|content-type||false\n c \"content-length\"|content-length||false\n" +
				" p created i 1618884473\n p keyid s test-key-ed25519\n"},
		{"req and key (after RFC 9421 2.4)", `reqres=("@status" "content-length" "content-type" "signature";req;key="sig1" "@authority";req "@method";req);created=1618884479;keyid="test-key-ecc-p256"`,
			"reqres (\"@status\" \"content-length\" \"content-type\" \"signature\";req;key=\"sig1\" \"@authority\";req \"@method\";req);created=1618884479;keyid=\"test-key-ecc-p256\"\n" +
				" c \"@status\"|@status||false\n c \"content-length\"|content-length||false\n c \"content-type\"|content-type||false\n" +
				" c \"signature\";req;key=\"sig1\"|signature|sig1|true\n c \"@authority\";req|@authority||true\n c \"@method\";req|@method||true\n" +
				" p created i 1618884479\n p keyid s test-key-ecc-p256\n"},
		{"two signatures (after RFC 9421 4.3)", `sig1=("@method" "@authority" "@path");created=1618884475;keyid="test-key-ecc-p256", proxy_sig=("@method" "forwarded");created=1618884480;keyid="test-key-rsa";alg="rsa-v1_5-sha256";expires=1618884540`,
			"sig1 (\"@method\" \"@authority\" \"@path\");created=1618884475;keyid=\"test-key-ecc-p256\"\n" +
				" c \"@method\"|@method||false\n c \"@authority\"|@authority||false\n c \"@path\"|@path||false\n" +
				" p created i 1618884475\n p keyid s test-key-ecc-p256\n" +
				"proxy_sig (\"@method\" \"forwarded\");created=1618884480;keyid=\"test-key-rsa\";alg=\"rsa-v1_5-sha256\";expires=1618884540\n" +
				" c \"@method\"|@method||false\n c \"forwarded\"|forwarded||false\n" +
				" p created i 1618884480\n p keyid s test-key-rsa\n p alg s rsa-v1_5-sha256\n p expires i 1618884540\n"},
		{"Web Bot Auth architecture-05, Dictionary agent", `sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="XeP72svPKNiGEg3aDE7WJuTpN69H08oMFqC8NLFy1MptpENAT3WZTYwK+MYdsFMlaqHCJGo9ZAhqer1NWY9Epg==";tag="web-bot-auth"`,
			"sig2 (\"@authority\" \"signature-agent\";key=\"agent2\");created=1735689600;keyid=\"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U\";alg=\"ed25519\";expires=4889289600;nonce=\"XeP72svPKNiGEg3aDE7WJuTpN69H08oMFqC8NLFy1MptpENAT3WZTYwK+MYdsFMlaqHCJGo9ZAhqer1NWY9Epg==\";tag=\"web-bot-auth\"\n" +
				" c \"@authority\"|@authority||false\n c \"signature-agent\";key=\"agent2\"|signature-agent|agent2|false\n" +
				" p created i 1735689600\n p keyid s poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U\n p alg s ed25519\n p expires i 4889289600\n" +
				" p nonce s XeP72svPKNiGEg3aDE7WJuTpN69H08oMFqC8NLFy1MptpENAT3WZTYwK+MYdsFMlaqHCJGo9ZAhqer1NWY9Epg==\n p tag s web-bot-auth\n"},
		{"key characters", `*=(), z=(), a0_-.*z9=()`, "* ()\nz ()\na0_-.*z9 ()\n"},
		{"parameter key characters", `a=();*;z;b0_-.*z9`, "a ();*;z;b0_-.*z9\n p * b 1\n p z b 1\n p b0_-.*z9 b 1\n"},
		{"integers", `a=();b=0;c=9;f=-1`, "a ();b=0;c=9;f=-1\n p b i 0\n p c i 9\n p f i -1\n"},
		// Followed by more: httpsfv before v1.1 refused 15 digits then anything.
		{"largest integer", `a=();d=999999999999999;x`, "a ();d=999999999999999;x\n p d i 999999999999999\n p x b 1\n"},
		{"smallest integer", `a=();e=-999999999999999;x`, "a ();e=-999999999999999;x\n p e i -999999999999999\n p x b 1\n"},
		{"boolean false", `a=();b=?0;c`, "a ();b=?0;c\n p b b 0\n p c b 1\n"},
		{"string characters", `a=("x";key=" !#[]~");s=""`, "a (\"x\";key=\" !#[]~\");s=\"\"\n c \"x\";key=\" !#[]~\"|x| !#[]~|false\n p s s \n"},
		{"token characters", "a=();b=Z;c=z;d=A;e=*;f=a!#$%&'*+-.^_`|~09:/Zz",
			"a ();b=Z;c=z;d=A;e=*;f=a!#$%&'*+-.^_`|~09:/Zz\n" +
				" p b t Z\n p c t z\n p d t A\n p e t *\n p f t a!#$%&'*+-.^_`|~09:/Zz\n"},
		{"component name characters", `a=("@z" "z-a" "a0.9")`, "a (\"@z\" \"z-a\" \"a0.9\")\n c \"@z\"|@z||false\n c \"z-a\"|z-a||false\n c \"a0.9\"|a0.9||false\n"},
		{"tab after a comma", "a=(),\tb=()", "a ()\nb ()\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fast, ok := fastSignatureInput([]string{tc.field})
			if !ok {
				t.Fatalf("fast path declines %s", tc.field)
			}
			if got := renderFast(fast); got != tc.want {
				t.Errorf("fast path read\n%s\nwant\n%s", got, tc.want)
			}
			slow, err := slowSignatureInput([]string{tc.field})
			if err != nil {
				t.Fatalf("httpsfv refuses %s: %v", tc.field, err)
			}
			if got, want := describe(fast), describe(slow); got != want {
				t.Errorf("fast path\n%s\nhttpsfv\n%s", got, want)
			}
		})
	}
}

// TestFastSignatures_Canonical: canonical one-line Signature fields are
// taken by the fast path and decoded as RFC 9651 section 4.2.7 says; the
// Byte Sequences are RFC 8941's examples (3.2, 3.3.5) and RFC 9421
// Appendix B.2.6's signature, and one holding every base64 character class.
func TestFastSignatures_Canonical(t *testing.T) {
	for _, tc := range []struct {
		field string
		want  map[string]string
	}{
		{`da=:w4ZibGV0w6ZydGUK:`, map[string]string{"da": "Æbletærte\n"}},
		{`b=:cHJldGVuZCB0aGlzIGlzIGJpbmFyeSBjb250ZW50Lg==:`, map[string]string{"b": "pretend this is binary content."}},
		{`sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:`, map[string]string{"sig-b26": "\xc2\xa7\x00\xa9\xb9\x98\x27\x68\xe2\xda\x09\x5f\x00\xc6\x91\xcb\x88\x2b\xb9\x86\x27\xc7\x69\xc4\x14\xdd\x87\x37\xa8\xeb\x9c\x39\xd0\x08\xad\x6e\xd3\x61\x9b\xd3\x8b\xfd\x10\x38\x30\x50\xf8\xae\xe0\x0d\x30\xea\xfb\x90\xbf\x99\x48\xa7\x95\x8f\xa4\x12\x91\x0b"}},
		{`z=:AZaz09+/:`, map[string]string{"z": "\x01\x96\xb3\xd3\xdf\xbf"}},
		{`a=::, *b=:AAAA:,` + "\t" + `c=:AQID:`, map[string]string{"a": "", "*b": "\x00\x00\x00", "c": "\x01\x02\x03"}},
	} {
		got, ok := fastSignatures([]string{tc.field})
		if !ok {
			t.Errorf("fast path declines %s", tc.field)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d members, want %d", tc.field, len(got), len(tc.want))
		}
		for k, v := range tc.want {
			if b, ok := got[k]; !ok || string(b) != v {
				t.Errorf("%s: member %s = %x (%v), want %x", tc.field, k, b, ok, v)
			}
		}
	}
}

// TestFastAgentMembers_Canonical: canonical one-line Signature-Agent
// dictionaries of Strings (draft-ietf-webbotauth-httpsig-protocol) are
// taken by the fast path, members in order.
func TestFastAgentMembers_Canonical(t *testing.T) {
	for _, tc := range []struct {
		field string
		want  []AgentMember
	}{
		{`sig1="https://signature-agent.test"`, []AgentMember{{Key: "sig1", URL: "https://signature-agent.test"}}},
		{`z="https://a.test", *9="https://b.test",` + "\t" + `a="https://c.test/~x"`,
			[]AgentMember{{Key: "z", URL: "https://a.test"}, {Key: "*9", URL: "https://b.test"}, {Key: "a", URL: "https://c.test/~x"}}},
	} {
		got, ok := fastAgentMembers([]string{tc.field})
		if !ok {
			t.Errorf("fast path declines %s", tc.field)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.field, got, tc.want)
		}
	}
}

// TestParseStructuredFields_Invalid: fields RFC 9651 section 4.2 says fail
// to parse are refused, whichever path reads them.
func TestParseStructuredFields_Invalid(t *testing.T) {
	inputs := []struct{ name, field string }{
		{"integer of 16 digits (4.2.4)", `a=();b=1234567890123456`},
		{"negative integer of 16 digits (4.2.4)", `a=();b=-1234567890123456`},
		{"minus alone (4.2.4)", `a=();b=-`},
		{"minus then a letter (4.2.4)", `a=();b=-x`},
		{"decimal ending in a dot (4.2.4)", `a=();b=1.`},
		{"boolean ?2 (4.2.8)", `a=();b=?2`},
		{"boolean ? alone (4.2.8)", `a=();b=?`},
		{"control character in a string (4.2.5)", "a=(\"x\";key=\"\x1f\")"},
		{"DEL in a string (4.2.5)", "a=(\"x\";key=\"\x7f\")"},
		{"non-ASCII in a string (4.2.5)", "a=(\"x\";key=\"\xc3\xa9\")"},
		{"unterminated string (4.2.5)", `a=("x`},
		{"escaped ordinary character (4.2.5)", `a=("x";key="\a")`},
		{"key starting with a digit (4.2.3.3)", `1a=()`},
		{"key starting with an uppercase letter (4.2.3.3)", `A=()`},
		{"parameter key starting with a digit (4.2.3.3)", `a=();1b`},
		{"token starting with a digit (4.2.1)", `a=();b=1x`},
		{"character after a token (4.2.2)", `a=();b=x"`},
		{"DEL after a token (4.2.2)", "a=();b=x\x7f"},
		{"unterminated inner list (4.2.1.2)", `a=("x"`},
		{"no space between items (4.2.1.2)", `a=("x""y")`},
		{"trailing comma (4.2.2)", `a=(),`},
		{"trailing comma and space (4.2.2)", `a=(), `},
		{"no comma between members (4.2.2)", `a=()b=()`},
		{"trailing semicolon (4.2.3.2)", `a=();`},
		{"empty value (4.2.2)", `a=`},
		{"member value of a space (4.2.2)", `a= ()`},
	}
	for _, tc := range inputs {
		if got, err := parseSignatureInput([]string{tc.field}); err == nil {
			t.Errorf("Signature-Input %s: %q parsed: %+v", tc.name, tc.field, got)
		}
	}
	for _, tc := range []struct{ name, field string }{
		{"byte sequence without its closing colon (4.2.7)", `a=:AAAA`},
		{"byte sequence with a space (4.2.7)", `a=:AA AA:`},
		{"byte sequence with a line feed (4.2.7)", "a=:AA\nAA:"},
		{"byte sequence with a dash (4.2.7)", `a=:AA-A:`},
		{"byte sequence with a backslash (4.2.7)", `a=:AA\A:`},
		{"trailing comma (4.2.2)", `a=:AAAA:,`},
		{"no comma between members (4.2.2)", `a=:AAAA:b=:AAAA:`},
	} {
		if got, err := parseSignatures([]string{tc.field}); err == nil {
			t.Errorf("Signature %s: %q parsed: %v", tc.name, tc.field, got)
		}
	}
}
