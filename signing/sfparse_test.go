package signing

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/dunglas/httpsfv"
)

// sfSeeds are fields the fast path accepts, and near misses it must
// decline or agree on.
var sfSeeds = []string{
	`sig1=("@method" "@authority" "@path" "signature-agent";key="sig1");created=1735689600;expires=1735689660;nonce="abc+/=";tag="web-bot-auth";keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"`,
	`sig1=("@authority";req "content-digest");created=1;expires=2;keyid="k";tag="http-message-signatures-directory", sig2=("@authority");created=3`,
	`a=();b=?0;c=tok:en/x;d=-5`, `a=();b=?1`, `a=();b=007`, `a=();b=-0`, `a=();b=1.5`, `a=();b=:AA==:`,
	`a=("x"  "y")`, `a=( "x")`, `a=("x" )`, `a=("X")`, `a=("x";key="k";key="j")`, `a=("@path";key="k")`,
	`a=("x";req=?0)`, `a=("x";other)`, `a=("a\"b")`, `a=()`, `a=(), a=()`, `a=(),b=()`, `a=(),`, ` a=()`, `A=()`,
	`sig1=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:`,
	`sig1="https://bothy.tools"`, `sig1="https://a.test", sig2="https://b.test"`, `a="x";type=jwks_uri`, `a="x", a="y"`,
	`=()`, `1a=()`, `sig1`, `sig1=("x");created`, `sig1=("x";req);a`, `a=("x")` + "\t", `zz=("z";key="z");z=z`,
	`a=`, `a="abc`, `a=("abc`, `a="x\\"`, `a="é"`, "a=\"\x01\"", "a=(\"x\";n=\"\t\")", `a=();`, `a=();b=-`, `a=();b=?`,
	`a=();b=123456789012345`, `a=();b=123456789012345;c`, `a=();b=-123456789012345;c`, `a=();b=1234567890123456`, `a=();b=-123456789012345`, `a=();b=0`, `a=("a";key="~ ")`,
	`a=();b=%x`, `a=();b=.5`, "a=();b=x\x7f", `a=();b=x y`, `a=();b=x `, `a=();b=Tok`, `a=();b=*t`, `a=();b=zz`,
	`a=();b=`, `a=()b=()`, `a="x"b="y"`, `a=:AAAA:b=:AAAA:`, `a=(), `,
	`a=("x""y")`, `a=("x"`, `a=("Z")`, `a=("A")`, `a=("x-Z")`,
	`=:AAAA:`, `=""`, `a:AAAA:`,
	`a=:AAAA:, b=::`, `a=:AAA:`, `a=:AAAA:;x=1`, `a=:AAAA`, `a=:AA==:, a=:AA==:`,
}

// describe renders parsed Signature-Input members for comparison.
func describe(sis []sigInput) string {
	var b bytes.Buffer
	for _, si := range sis {
		fmt.Fprintf(&b, "%s raw=%s comps=[", si.label, si.raw)
		for _, c := range si.comps {
			fmt.Fprintf(&b, "%s|%s|%s|%v ", c.id, c.name, c.key, c.req)
		}
		b.WriteString("] params=")
		for _, name := range []string{"created", "expires", "keyid", "tag", "nonce", "alg", "b", "c", "d"} {
			v, ok := si.param(name)
			fmt.Fprintf(&b, "%s:%v:%T:%v ", name, ok, v, v)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// FuzzFastStructuredFields: wherever the fast path accepts a
// Signature-Input or Signature field, httpsfv accepts it too and the
// results are the same (labels, @signature-params, component identifiers,
// parameters, signature bytes).
func FuzzFastStructuredFields(f *testing.F) {
	for _, s := range sfSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if fast, ok := fastSignatureInput([]string{s}); ok {
			slow, err := slowSignatureInput([]string{s})
			if err != nil {
				t.Fatalf("fast path accepted %q, httpsfv refuses: %v", s, err)
			}
			if got, want := describe(fast), describe(slow); got != want {
				t.Fatalf("%q:\nfast %s\nslow %s", s, got, want)
			}
		}
		if fast, ok := fastAgentMembers([]string{s}); ok {
			d, err := httpsfv.UnmarshalDictionary([]string{s})
			if err != nil || len(d.Names()) != len(fast) {
				t.Fatalf("fast path accepted agent %q, httpsfv: %v", s, err)
			}
			for i, name := range d.Names() {
				m, _ := d.Get(name)
				it, ok := m.(httpsfv.Item)
				if !ok || fast[i].Key != name || it.Value != fast[i].URL || (it.Params != nil && len(it.Params.Names()) > 0) {
					t.Fatalf("agent %q: member %d %+v, httpsfv %s=%v", s, i, fast[i], name, m)
				}
			}
		}
		if fast, ok := fastSignatures([]string{s}); ok {
			slow, err := slowSignatures([]string{s})
			if err != nil {
				t.Fatalf("fast path accepted %q, httpsfv refuses: %v", s, err)
			}
			if len(fast) != len(slow) {
				t.Fatalf("%q: %d members, httpsfv %d", s, len(fast), len(slow))
			}
			for k, v := range slow {
				if !bytes.Equal(fast[k], v) {
					t.Fatalf("%q: member %s differs", s, k)
				}
			}
		}
	})
}

// TestFastStructuredFields_Taken: the fast path does take the fields
// signers emit (else the benchmark gain would be lost silently).
func TestFastStructuredFields_Taken(t *testing.T) {
	for _, s := range sfSeeds[:2] {
		if _, ok := fastSignatureInput([]string{s}); !ok {
			t.Errorf("fast path declines %q", s)
		}
	}
	if _, ok := fastSignatures([]string{`sig1=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:`}); !ok {
		t.Error("fast path declines a Signature field")
	}
	if _, ok := fastAgentMembers([]string{`sig1="https://bothy.tools"`}); !ok {
		t.Error("fast path declines a Signature-Agent field")
	}
	if _, ok := fastSignatureInput([]string{sfSeeds[0], sfSeeds[1]}); ok {
		t.Error("fast path takes two field lines")
	}
}
