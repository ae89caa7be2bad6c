package robots

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goodbot-go/goodbot/internal/urinorm"
)

// sharedData returns the path of a data folder of ../shared (from the
// module root), skipping the test when it is missing on a developer machine
// and failing it when CI is set.
func sharedData(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", name)
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: test data %s missing: %v", dir, err)
		}
		t.Skipf("test data %s missing (%v): not a checkout next to ../shared", dir, err)
	}
	return dir
}

// specExpectation is one test_expectations entry of Google's
// robotstxt-spec-test, with its robots.txt.
type specExpectation struct {
	id        string // file#test.expectation, both from 1
	robotstxt string
	url       string
	agent     string
	allowed   bool
	google    bool // test_type: GOOGLE_SPECIFIC
}

// specDepartures are the expectations of Google's conformance suite this
// package answers otherwise, each with the part of RFC 9309 that decides it.
// Every other expectation must pass.
var specDepartures = map[string]string{
	// "The /robots.txt URI is implicitly allowed." The suite expects
	// DISALLOWED where a file disallows it.
	"stress/327748#1.6":  "RFC 9309 §2.2.2: /robots.txt is implicitly allowed",
	"stress/369883#1.6":  "RFC 9309 §2.2.2: /robots.txt is implicitly allowed",
	"stress/369883#1.10": "RFC 9309 §2.2.2: /robots.txt is implicitly allowed",
	"stress/860237#1.10": "RFC 9309 §2.2.2: /robots.txt is implicitly allowed",
	// "Octets in the URI ... outside the range of the ASCII coded character
	// set ... MUST be percent-encoded ... prior to comparison": a raw "ツ" in
	// the URL is "%E3%83%84", which the rule allows. The suite leaves the
	// encoding to the caller and compares raw octets.
	"correctness/non-ascii-paths#2.2": "RFC 9309 §2.2.2: the URI's non-ASCII octets are percent-encoded before comparison",
	"correctness/non-ascii-paths#3.2": "RFC 9309 §2.2.2: the URI's non-ASCII octets are percent-encoded before comparison",
	// The RFC's own table: the pattern /foo/bar/%62%61%7A matches
	// /foo/bar/baz (escapes of unreserved characters are decoded).
	"correctness/non-ascii-paths#4.1": "RFC 9309 §2.2.2 (table): /foo/bar/%62%61%7A matches /foo/bar/baz",
	// The bot's own token is cut where the RFC's token grammar ends, as the
	// file's names are: "Foo Bar" is Foo, whose group allows /x/y; AB42bot is
	// AB, whose group disallows everything.
	"correctness/user-agent-name#1.2": "RFC 9309 §2.2.1: product-token = identifier; the token of \"Foo Bar\" is Foo",
	"stress/369883#1.7":               "RFC 9309 §2.2.1: product-token = identifier (no digits); the token of AB42bot is AB",
	"stress/369883#1.8":               "RFC 9309 §2.2.1: product-token = identifier (no digits); the token of AB42bot is AB",
	// Google's "Allow: /dir/index.html also allows /dir/" is no RFC rule;
	// without it the answer is the more restrictive one.
	"correctness/index-page#1.1": "RFC 9309 §2.2.2 has no index.html rule; ours is more restrictive",
}

func TestSpecSuite(t *testing.T) {
	dir := sharedData(t, "robots-spec-test")
	var all []specExpectation
	for _, sub := range []string{"correctness", "stress"} {
		files, err := filepath.Glob(filepath.Join(dir, sub, "*.textproto"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no textproto files in %s/%s: %v", dir, sub, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			exps, err := readSpecFile(sub+"/"+strings.TrimSuffix(filepath.Base(f), ".textproto"), string(b))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			all = append(all, exps...)
		}
	}
	if len(all) != 400 {
		t.Fatalf("read %d expectations, the suite has 400", len(all))
	}
	pass, departed := 0, 0
	seen := map[string]bool{}
	for _, e := range all {
		got := Parse([]byte(e.robotstxt)).Allowed(Agent{Token: e.agent}, e.url)
		why, listed := specDepartures[e.id]
		seen[e.id] = true
		switch {
		case got == e.allowed && listed:
			t.Errorf("%s passes but is listed as a departure (%s): drop it from the list", e.id, why)
		case got == e.allowed:
			pass++
		case listed:
			departed++
		default:
			t.Errorf("%s: Allowed(%q, %q) = %v, suite expects %v (google-specific %v)\nrobots.txt:\n%s",
				e.id, e.agent, e.url, got, e.allowed, e.google, e.robotstxt)
		}
	}
	for id := range specDepartures {
		if !seen[id] {
			t.Errorf("departure %s names no expectation of the suite", id)
		}
	}
	t.Logf("Google's robotstxt-spec-test: %d/%d pass, %d listed departures (RFC 9309 decides)", pass, len(all), departed)
}

// readSpecFile reads the expectations of one textproto file of the suite.
func readSpecFile(name, src string) ([]specExpectation, error) {
	root, err := parseTextproto(src)
	if err != nil {
		return nil, err
	}
	var out []specExpectation
	for ti, test := range root.all("tests") {
		body := test.str("robotstxt")
		for ei, exp := range test.all("test_expectations") {
			var allowed bool
			switch o := exp.str("expected_outcome"); o {
			case "ALLOWED":
				allowed = true
			case "DISALLOWED":
			default:
				return nil, fmt.Errorf("test %d: expected_outcome %q", ti+1, o)
			}
			out = append(out, specExpectation{
				id:        fmt.Sprintf("%s#%d.%d", name, ti+1, ei+1),
				robotstxt: body,
				url:       exp.str("testurl"),
				agent:     exp.str("useragent"),
				allowed:   allowed,
				google:    exp.str("test_type") == "GOOGLE_SPECIFIC",
			})
		}
	}
	return out, nil
}

// tpMessage is a protobuf text-format message: its fields in order, each a
// scalar (strings concatenated, enum names as written) or a message.
type tpMessage struct{ fields []tpField }

type tpField struct {
	name string
	str  string
	msg  *tpMessage
}

func (m *tpMessage) str(name string) string {
	for _, f := range m.fields {
		if f.name == name {
			return f.str
		}
	}
	return ""
}

func (m *tpMessage) all(name string) []*tpMessage {
	var out []*tpMessage
	for _, f := range m.fields {
		if f.name == name && f.msg != nil {
			out = append(out, f.msg)
		}
	}
	return out
}

// parseTextproto reads the subset of protobuf text format the suite uses:
// fields "name: value" or "name { … }", list values "[a, b]", string
// literals with C escapes (adjacent ones concatenated), enum names, and
// "#" comments.
func parseTextproto(src string) (*tpMessage, error) {
	p := &tpParser{s: src}
	m, err := p.message(false)
	if err != nil {
		return nil, fmt.Errorf("offset %d: %w", p.i, err)
	}
	return m, nil
}

type tpParser struct {
	s string
	i int
}

func (p *tpParser) skip() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *tpParser) peek() byte {
	p.skip()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *tpParser) message(inner bool) (*tpMessage, error) {
	m := &tpMessage{}
	for {
		c := p.peek()
		if c == 0 && !inner {
			return m, nil
		}
		if c == '}' && inner {
			p.i++
			return m, nil
		}
		name := p.ident()
		if name == "" {
			return nil, fmt.Errorf("want a field name, have %q", c)
		}
		if p.peek() == ':' {
			p.i++
		}
		if p.peek() == '[' {
			p.i++
			for p.peek() != ']' {
				f, err := p.value(name)
				if err != nil {
					return nil, err
				}
				m.fields = append(m.fields, f)
				if p.peek() == ',' {
					p.i++
				}
			}
			p.i++
			continue
		}
		f, err := p.value(name)
		if err != nil {
			return nil, err
		}
		m.fields = append(m.fields, f)
	}
}

func (p *tpParser) value(name string) (tpField, error) {
	switch c := p.peek(); {
	case c == '{':
		p.i++
		m, err := p.message(true)
		return tpField{name: name, msg: m}, err
	case c == '"' || c == '\'':
		var b strings.Builder
		for p.peek() == '"' || p.peek() == '\'' {
			s, err := p.quoted()
			if err != nil {
				return tpField{}, err
			}
			b.WriteString(s)
		}
		return tpField{name: name, str: b.String()}, nil
	default:
		if id := p.ident(); id != "" {
			return tpField{name: name, str: id}, nil
		}
		return tpField{}, fmt.Errorf("field %s: bad value starting %q", name, c)
	}
}

func (p *tpParser) ident() string {
	p.skip()
	j := p.i
	for j < len(p.s) {
		c := p.s[j]
		if !(c == '_' || c == '-' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			break
		}
		j++
	}
	id := p.s[p.i:j]
	p.i = j
	return id
}

// quoted reads one string literal with C escapes (\n \r \t \" \' \\ \xHH
// \NNN).
func (p *tpParser) quoted() (string, error) {
	q := p.s[p.i]
	p.i++
	var b []byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == q:
			return string(b), nil
		case c == '\n':
			return "", fmt.Errorf("newline in string")
		case c != '\\':
			b = append(b, c)
			continue
		}
		if p.i >= len(p.s) {
			break
		}
		e := p.s[p.i]
		p.i++
		switch e {
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'x':
			j := p.i
			for j < len(p.s) && j < p.i+2 && urinorm.IsHex(p.s[j]) {
				j++
			}
			v, err := strconv.ParseUint(p.s[p.i:j], 16, 8)
			if err != nil {
				return "", fmt.Errorf("bad \\x escape")
			}
			b = append(b, byte(v))
			p.i = j
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := p.i - 1
			for j < len(p.s) && j < p.i+2 && '0' <= p.s[j] && p.s[j] <= '7' {
				j++
			}
			v, err := strconv.ParseUint(p.s[p.i-1:j], 8, 8)
			if err != nil {
				return "", fmt.Errorf("bad octal escape")
			}
			b = append(b, byte(v))
			p.i = j
		default:
			b = append(b, e) // \" \' \\ and the like
		}
	}
	return "", fmt.Errorf("unterminated string")
}

// The textproto reader itself, on the forms the suite uses.
func TestParseTextproto(t *testing.T) {
	m, err := parseTextproto(`# comment
tests: [
  { robotstxt: "a\xEF\n" 'b\"c' "\101"
    test_expectations: [ { testurl: "u" expected_outcome: ALLOWED }, { testurl: "v" } ] },
  { robotstxt: "" }
]`)
	if err != nil {
		t.Fatal(err)
	}
	tests := m.all("tests")
	if len(tests) != 2 {
		t.Fatalf("%d tests", len(tests))
	}
	if got := tests[0].str("robotstxt"); got != "a\xEF\nb\"cA" {
		t.Errorf("robotstxt = %q", got)
	}
	exps := tests[0].all("test_expectations")
	if len(exps) != 2 || exps[0].str("expected_outcome") != "ALLOWED" || exps[1].str("testurl") != "v" {
		t.Errorf("expectations = %+v", exps)
	}
	for _, bad := range []string{`a: "x`, `a: {`, `a: [ "x" `, `a: "\xZZ"`, `: 1`} {
		if _, err := parseTextproto(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
