package robots

import (
	"bytes"
	"strings"
)

// Allowed reports whether a may fetch target. The target is a path with an
// optional query ("/a/b?x=1") or an absolute URL ("https://host/a/b?x=1"); a
// fragment is ignored. See the package documentation for the matching rules
// and for which groups apply.
//
// Allowed does not allocate for targets whose normalised path and query fit
// in 2 KiB.
func (r *Robots) Allowed(a Agent, target string) bool {
	ok, _ := r.decide(a, target)
	return ok
}

// Decide is [Robots.Allowed] that also returns the rule that decided, such
// as "Disallow: /private" ("" when no rule matched or the whole file was
// replaced by [AllowAll] or [DisallowAll]).
func (r *Robots) Decide(a Agent, target string) (allowed bool, rule string) {
	ok, ru := r.decide(a, target)
	if ru == nil {
		return ok, ""
	}
	if ru.allow {
		return ok, "Allow: " + ru.pattern
	}
	return ok, "Disallow: " + ru.pattern
}

func (r *Robots) decide(a Agent, target string) (bool, *rule) {
	var buf [2048]byte
	p := normalizeTarget(buf[:0], target)
	if isRobotsTxt(p) {
		return true, nil // RFC 9309 §2.2.2
	}
	if r == nil {
		return true, nil
	}
	switch r.mode {
	case modeAllowAll:
		return true, nil
	case modeDisallowAll:
		return false, nil
	}
	named := false
	var deny *rule
	var allowRule *rule
	r.eachName(a, func(gs []int32) bool {
		named = true
		if best := r.best(gs, p); best != nil {
			if !best.allow {
				deny = best
				return false
			}
			allowRule = best
		}
		return true
	})
	if deny != nil {
		return false, deny
	}
	if named {
		return true, allowRule
	}
	if best := r.best(r.star, p); best != nil {
		return best.allow, best
	}
	return true, nil
}

func isRobotsTxt(p []byte) bool {
	if i := bytes.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return string(p) == "/robots.txt"
}

// best returns the deciding rule among the merged groups gs for the
// normalised path p, or nil if none matches.
func (r *Robots) best(gs []int32, p []byte) *rule {
	var best *rule
	for _, gi := range gs {
		best = r.groups[gi].best(p, best)
	}
	return best
}

// better reports whether a matching rule ru beats the current best.
func better(ru, best *rule) bool {
	if best == nil {
		return true
	}
	return ru.prio > best.prio || (ru.prio == best.prio && ru.allow && !best.allow)
}

// best walks the trie along p and returns the longest matching rule, or best
// if none beats it.
func (g *group) best(p []byte, best *rule) *rule {
	if len(g.nodes) == 0 {
		return best
	}
	n := &g.nodes[0]
	depth := 0
	for {
		if n.maxPrio < 0 || (best != nil && (n.maxPrio < best.prio || (n.maxPrio == best.prio && best.allow))) {
			return best // nothing below can win
		}
		for _, ri := range g.order[n.rule0 : n.rule0+n.nrule] {
			ru := &g.rules[ri]
			if best != nil && (ru.prio < best.prio || (ru.prio == best.prio && (best.allow || !ru.allow))) {
				break // rules are longest first, Allow first
			}
			if ru.matchRest(p) {
				best = ru
				break
			}
		}
		if depth == len(p) {
			return best
		}
		next := g.child(n, p[depth])
		if next < 0 {
			return best
		}
		n = &g.nodes[next]
		depth++
	}
}

func (g *group) child(n *node, c byte) int32 {
	es := g.edges[n.edge0 : n.edge0+n.nedge]
	if len(es) <= 8 {
		for i := range es {
			if es[i].c == c {
				return es[i].to
			}
		}
		return -1
	}
	lo, hi := 0, len(es)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if es[m].c < c {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(es) && es[lo].c == c {
		return es[lo].to
	}
	return -1
}

// matchRest reports whether ru matches p, given that p starts with ru's
// literal prefix.
func (ru *rule) matchRest(p []byte) bool {
	if !ru.star {
		return !ru.anchored || len(p) == int(ru.lit)
	}
	pos := int(ru.lit)
	segs := ru.segs
	if ru.anchored {
		last := segs[len(segs)-1]
		segs = segs[:len(segs)-1]
		for _, s := range segs {
			i := bytes.Index(p[pos:], s)
			if i < 0 {
				return false
			}
			pos += i + len(s)
		}
		return len(p)-len(last) >= pos && bytes.HasSuffix(p, last)
	}
	for _, s := range segs {
		i := bytes.Index(p[pos:], s)
		if i < 0 {
			return false
		}
		pos += i + len(s)
	}
	return true
}

// normalizeTarget appends to dst the normalised path and query of target (a
// path or an absolute URL), starting with '/'.
func normalizeTarget(dst []byte, target string) []byte {
	s := pathAndQuery(target)
	if s == "" || s[0] != '/' {
		dst = append(dst, '/')
	}
	return normalize(dst, s, false)
}

// pathAndQuery returns the path and query of target, without the fragment.
func pathAndQuery(t string) string {
	if i := strings.IndexByte(t, '#'); i >= 0 {
		t = t[:i]
	}
	start := -1
	switch {
	case strings.HasPrefix(t, "//"):
		start = 2
	case t != "" && t[0] == '/':
		return t
	default:
		if i := strings.Index(t, "://"); i > 0 && !strings.ContainsAny(t[:i], "/?") {
			start = i + 3
		}
	}
	if start < 0 {
		return t
	}
	if i := strings.IndexAny(t[start:], "/?"); i >= 0 {
		return t[start+i:]
	}
	return ""
}

// normalize appends s to dst in the form both rules and targets are compared
// in (see the package documentation). In a pattern, '*' stays a wildcard and
// a final '$' stays an anchor; in a target, '*' and '$' become "%2A" and
// "%24", which is what a "%2A" or "%24" in a rule is.
func normalize(dst []byte, s string, pattern bool) []byte {
	inQuery := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(v) || (inQuery && isQueryDelim(v)) {
				dst = append(dst, v)
			} else {
				dst = append(dst, '%', upperHex(s[i+1]), upperHex(s[i+2]))
			}
			i += 2
		case c == '?':
			inQuery = true
			dst = append(dst, c)
		case c == '*':
			if pattern {
				dst = append(dst, '*')
			} else {
				dst = append(dst, "%2A"...)
			}
		case c == '$':
			if pattern && i == len(s)-1 {
				dst = append(dst, '$')
			} else {
				dst = append(dst, "%24"...)
			}
		case needsEscape(c):
			dst = append(dst, '%', hexDigits[c>>4], hexDigits[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

const hexDigits = "0123456789ABCDEF"

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

func upperHex(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

// isUnreserved reports RFC 3986 unreserved characters.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// isQueryDelim reports the delimiters a query may carry raw (RFC 3986 §3.4)
// whose escapes RFC 9309's examples treat as equal to them.
func isQueryDelim(c byte) bool {
	return c == ':' || c == '/' || c == '?' || c == '@'
}

// needsEscape reports octets that may not appear raw in a URI.
func needsEscape(c byte) bool {
	if c <= 0x20 || c >= 0x7F {
		return true
	}
	switch c {
	case '"', '<', '>', '\\', '^', '`', '{', '|', '}':
		return true
	}
	return false
}
