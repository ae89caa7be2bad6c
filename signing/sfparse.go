package signing

import (
	"encoding/base64"
	"strconv"
)

// A fast path for the two structured fields a verifier parses on every
// request, Signature-Input and Signature, when they are one field line in
// canonical form (RFC 9651 serialisation, which is what signers emit).
// Then the @signature-params value and every component identifier are
// substrings of the field, and nothing is re-serialised. Anything else
// (several lines, escapes, decimals, byte sequences in parameters,
// duplicate keys, non-canonical spacing or booleans) makes the fast path
// decline, and the caller parses with github.com/dunglas/httpsfv, whose
// result is the reference: a differential fuzz test holds the two to the
// same answer wherever the fast path accepts.

// sfParam is a parameter read by the fast path: a string, an integer, a
// token or a boolean.
type sfParam struct {
	name string
	kind byte // 's' string, 'i' integer, 't' token, 'b' boolean
	str  string
	num  int64
}

type sfScanner struct {
	s   string
	pos int
}

func (p *sfScanner) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func isLCAlpha(b byte) bool { return b >= 'a' && b <= 'z' }
func isDigit(b byte) bool   { return b >= '0' && b <= '9' }

// key reads a structured-field key.
func (p *sfScanner) key() (string, bool) {
	start := p.pos
	if b := p.peek(); !isLCAlpha(b) && b != '*' {
		return "", false
	}
	for p.pos++; p.pos < len(p.s); p.pos++ {
		b := p.s[p.pos]
		if !isLCAlpha(b) && !isDigit(b) && b != '_' && b != '-' && b != '.' && b != '*' {
			break
		}
	}
	return p.s[start:p.pos], true
}

// str reads a string without escapes.
func (p *sfScanner) str() (string, bool) {
	if p.peek() != '"' {
		return "", false
	}
	start := p.pos + 1
	for p.pos = start; p.pos < len(p.s); p.pos++ {
		switch b := p.s[p.pos]; {
		case b == '"':
			p.pos++
			return p.s[start : p.pos-1], true
		case b == '\\' || b < 0x20 || b > 0x7e:
			return "", false
		}
	}
	return "", false
}

// param reads one ";key[=value]" parameter, in canonical form.
func (p *sfScanner) param() (sfParam, bool) {
	p.pos++ // ';'
	name, ok := p.key()
	if !ok {
		return sfParam{}, false
	}
	if p.peek() != '=' {
		return sfParam{name: name, kind: 'b', num: 1}, true
	}
	p.pos++
	switch b := p.peek(); {
	case b == '"':
		s, ok := p.str()
		return sfParam{name: name, kind: 's', str: s}, ok
	case b == '-' || isDigit(b):
		start := p.pos
		if b == '-' {
			p.pos++
		}
		digits := p.pos
		for p.pos < len(p.s) && isDigit(p.s[p.pos]) {
			p.pos++
		}
		n := p.pos - digits
		if n == 0 || n > 15 || (p.s[digits] == '0' && (n > 1 || b == '-')) || p.peek() == '.' {
			return sfParam{}, false // empty, too long, not canonical, or a decimal
		}
		v, err := strconv.ParseInt(p.s[start:p.pos], 10, 64)
		return sfParam{name: name, kind: 'i', num: v}, err == nil
	case b == '?':
		if p.pos+1 < len(p.s) && p.s[p.pos+1] == '0' { // ?1 serialises without a value
			p.pos += 2
			return sfParam{name: name, kind: 'b'}, true
		}
		return sfParam{}, false
	case (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b == '*':
		start := p.pos
		for p.pos++; p.pos < len(p.s); p.pos++ {
			c := p.s[p.pos]
			if !(c > 0x20 && c < 0x7f) || isTokenDelim(c) {
				break
			}
		}
		return sfParam{name: name, kind: 't', str: p.s[start:p.pos]}, true
	}
	return sfParam{}, false
}

// isTokenDelim reports the visible characters a token cannot hold.
func isTokenDelim(c byte) bool {
	switch c {
	case '"', '(', ')', ',', ';', '<', '=', '>', '?', '@', '[', '\\', ']', '{', '}':
		return true
	}
	return false
}

// params reads parameters until none follows, refusing a repeated name.
func (p *sfScanner) params() ([]sfParam, bool) {
	if p.peek() != ';' {
		return nil, true
	}
	out := make([]sfParam, 0, 6)
	for p.peek() == ';' {
		pr, ok := p.param()
		if !ok {
			return nil, false
		}
		for _, q := range out {
			if q.name == pr.name {
				return nil, false
			}
		}
		out = append(out, pr)
	}
	return out, true
}

// next moves past the separator after a dictionary member; done is true at
// the end of the field.
func (p *sfScanner) next() (done, ok bool) {
	if p.pos == len(p.s) {
		return true, true
	}
	if p.peek() != ',' {
		return false, false
	}
	p.pos++
	for p.peek() == ' ' || p.peek() == '\t' {
		p.pos++
	}
	return false, p.pos < len(p.s)
}

// fastSignatureInput parses a canonical one-line Signature-Input; ok is
// false when the fast path declines.
func fastSignatureInput(lines []string) (out []sigInput, ok bool) {
	if len(lines) != 1 {
		return nil, false
	}
	p := &sfScanner{s: lines[0]}
	for {
		label, ok := p.key()
		if !ok || p.peek() != '=' {
			return nil, false
		}
		for _, prev := range out {
			if prev.label == label {
				return nil, false
			}
		}
		p.pos++
		rawStart := p.pos
		if p.peek() != '(' {
			return nil, false
		}
		p.pos++
		si := sigInput{label: label, comps: make([]component, 0, 6)}
		for p.peek() != ')' {
			if len(si.comps) > 0 {
				if p.peek() != ' ' {
					return nil, false
				}
				p.pos++
			}
			start := p.pos
			name, ok := p.str()
			if !ok {
				return nil, false
			}
			cps, ok := p.params()
			if !ok {
				return nil, false
			}
			c, ok := fastComponent(name, cps)
			if !ok {
				return nil, false
			}
			c.id = p.s[start:p.pos]
			si.comps = append(si.comps, c)
		}
		p.pos++
		if si.fparams, ok = p.params(); !ok {
			return nil, false
		}
		si.raw = p.s[rawStart:p.pos]
		out = append(out, si)
		done, ok := p.next()
		if !ok {
			return nil, false
		}
		if done {
			return out, true
		}
	}
}

// fastComponent is parseComponent for the fast path: it declines whatever
// parseComponent would refuse, so the error comes from the reference path.
func fastComponent(name string, ps []sfParam) (component, bool) {
	if name == "" {
		return component{}, false
	}
	for i := 0; i < len(name); i++ {
		if name[i] >= 'A' && name[i] <= 'Z' {
			return component{}, false
		}
	}
	c := component{name: name}
	for _, pr := range ps {
		switch {
		case pr.name == "key" && pr.kind == 's' && name[0] != '@':
			c.key = pr.str
		case pr.name == "req" && pr.kind == 'b' && pr.num == 1:
			c.req = true
		default:
			return component{}, false
		}
	}
	return c, true
}

// fastSignatures parses a canonical one-line Signature field of byte
// sequences without parameters; ok is false when the fast path declines.
func fastSignatures(lines []string) (map[string][]byte, bool) {
	if len(lines) != 1 {
		return nil, false
	}
	p := &sfScanner{s: lines[0]}
	out := make(map[string][]byte, 1)
	for {
		label, ok := p.key()
		if !ok || p.peek() != '=' {
			return nil, false
		}
		if _, dup := out[label]; dup {
			return nil, false
		}
		p.pos++
		if p.peek() != ':' {
			return nil, false
		}
		start := p.pos + 1
		end := start
		for end < len(p.s) && p.s[end] != ':' {
			if c := p.s[end]; !isLCAlpha(c) && !isDigit(c) && !(c >= 'A' && c <= 'Z') && c != '+' && c != '/' && c != '=' {
				return nil, false // base64 decoding would skip \r and \n
			}
			end++
		}
		if end == len(p.s) {
			return nil, false
		}
		b, err := base64.StdEncoding.DecodeString(p.s[start:end])
		if err != nil {
			return nil, false
		}
		out[label] = b
		p.pos = end + 1
		done, ok := p.next()
		if !ok {
			return nil, false
		}
		if done {
			return out, true
		}
	}
}

// fastAgentMembers parses a canonical one-line Signature-Agent dictionary
// of strings without parameters; ok is false when the fast path declines.
func fastAgentMembers(lines []string) ([]AgentMember, bool) {
	if len(lines) != 1 {
		return nil, false
	}
	p := &sfScanner{s: lines[0]}
	var out []AgentMember
	for {
		key, ok := p.key()
		if !ok || p.peek() != '=' {
			return nil, false
		}
		for _, m := range out {
			if m.Key == key {
				return nil, false
			}
		}
		p.pos++
		url, ok := p.str()
		if !ok || p.peek() == ';' {
			return nil, false
		}
		out = append(out, AgentMember{Key: key, URL: url})
		done, ok := p.next()
		if !ok {
			return nil, false
		}
		if done {
			return out, true
		}
	}
}
