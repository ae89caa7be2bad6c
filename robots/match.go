package robots

import (
	"strings"
	"unsafe"

	"github.com/goodbot-go/goodbot/internal/urinorm"
)

// Allowed reports whether a may fetch target. The target is a path with an
// optional query ("/a/b?x=1"; "//a" is the path "//a", not a host) or an
// absolute URL ("https://host/a/b?x=1"); a fragment is ignored. See the
// package documentation for the matching rules and for which groups apply.
//
// Allowed does not allocate for targets whose normalised path and query fit
// in 2 KiB and agents with at most seven former names; a target already in
// normal form (the usual case) is not copied.
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
		return ok, "Allow: " + r.m.pattern(ru)
	}
	return ok, "Disallow: " + r.m.pattern(ru)
}

func (r *Robots) decide(a Agent, target string) (bool, *rule) {
	pq := pathAndQuery(target)
	if needsNormalizing(pq) {
		// The normalised target lives in a stack buffer for the duration of
		// this call; p only aliases it and does not outlive it.
		var buf [2048]byte
		b := normalizeTarget(buf[:0], target)
		return r.decidePath(a, unsafe.String(unsafe.SliceData(b), len(b)))
	}
	return r.decidePath(a, pq)
}

// needsNormalizing reports whether pq is not already its own normal form.
func needsNormalizing(pq string) bool {
	if pq == "" || pq[0] != '/' {
		return true
	}
	for i := 0; i < len(pq); i++ {
		if c := pq[i]; !plain[c] && c != '?' {
			return true
		}
	}
	return false
}

func (r *Robots) decidePath(a Agent, p string) (bool, *rule) {
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
	var buf [maxNames][]int32
	t := subject{p: p}
	return r.decideGroups(r.agentGroups(a, buf[:0]), &t)
}

// maxNames is how many names of an agent are resolved without allocating.
const maxNames = 8

// agentGroups appends to dst the merged groups of each of a's names that has
// any (none: the "*" groups apply).
func (r *Robots) agentGroups(a Agent, dst [][]int32) [][]int32 {
	r.eachName(a, func(gs []int32) bool {
		dst = append(dst, gs)
		return true
	})
	return dst
}

// decideGroups decides for the groups of an agent's names (named, from
// agentGroups): disallowed if the groups of any one name disallow; the "*"
// groups when no name has any.
func (r *Robots) decideGroups(named [][]int32, t *subject) (bool, *rule) {
	var allow *rule
	for _, gs := range named {
		if best := r.best(gs, t); best != nil {
			if !best.allow {
				return false, best
			}
			allow = best
		}
	}
	if len(named) > 0 {
		return true, allow
	}
	if best := r.best(r.star, t); best != nil {
		return best.allow, best
	}
	return true, nil
}

func isRobotsTxt(p string) bool {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p == "/robots.txt"
}

// subject is a normalised path and query being matched, with the set of
// octets it contains (computed on first need) to rule out wildcard rules
// cheaply.
type subject struct {
	p      string
	mask   uint64 // bit c&63 is set for every octet c in p
	masked bool
}

// byteMask returns the set of octets in s, folded into 64 bits.
func byteMask(s string) uint64 {
	var m uint64
	for i := 0; i < len(s); i++ {
		m |= 1 << (s[i] & 63)
	}
	return m
}

// best returns the deciding rule among the merged groups gs for the
// subject, or nil if none matches.
func (r *Robots) best(gs []int32, t *subject) *rule {
	var best *rule
	for _, gi := range gs {
		if root := r.groups[gi].root; root >= 0 {
			best = r.m.best(root, t, best)
		}
	}
	return best
}

// beaten reports whether a rule or subtree of length prio, Allow or not,
// cannot beat best.
func beaten(prio int32, allow bool, best *rule) bool {
	return best != nil && (prio < best.n || (prio == best.n && (best.allow || !allow)))
}

// best walks the trie at root along p and returns the longest matching rule, or best
// if none beats it.
func (m *matcher) best(root int32, t *subject, best *rule) *rule {
	p := t.p
	n := &m.nodes[root]
	for {
		if n.maxPrio < 0 || beaten(n.maxPrio, true, best) {
			return best // nothing below can win
		}
		for _, ri := range m.order[n.rule0 : n.rule0+n.nrule] {
			ru := &m.rules[ri]
			if beaten(ru.n, ru.allow, best) {
				break // rules are longest first, Allow first
			}
			if m.matchRest(ru, t) {
				best = ru
				break
			}
		}
		d := int(n.depth)
		if d >= len(p) {
			return best
		}
		e := m.child(n, p[d])
		if e == nil || !strings.HasPrefix(p[d:], m.text[e.off:e.off+e.n]) {
			return best
		}
		n = &m.nodes[e.to]
	}
}

func (m *matcher) child(n *node, c byte) *edge {
	es := m.edges[n.edge0 : n.edge0+n.nedge]
	if len(es) <= 8 {
		for i := range es {
			if es[i].c == c {
				return &es[i]
			}
		}
		return nil
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
		return &es[lo]
	}
	return nil
}

// matches reports whether ru matches the subject.
func (m *matcher) matches(ru *rule, t *subject) bool {
	return strings.HasPrefix(t.p, m.lit(ru)) && m.matchRest(ru, t)
}

// index returns the index in m.rules of ru, which points into it.
func (m *matcher) index(ru *rule) int {
	return int((uintptr(unsafe.Pointer(ru)) - uintptr(unsafe.Pointer(unsafe.SliceData(m.rules)))) / unsafe.Sizeof(rule{}))
}

// matchRest reports whether ru matches p, given that p starts with ru's
// literal prefix.
func (m *matcher) matchRest(ru *rule, t *subject) bool {
	p := t.p
	if !ru.star {
		return !ru.anchored || len(p) == int(ru.lit)
	}
	if !t.masked {
		t.mask, t.masked = byteMask(p), true
	}
	if ru.mask&^t.mask != 0 {
		return false // p lacks an octet the rule needs
	}
	pos := int(ru.lit)
	segs := m.segs[ru.seg0 : ru.seg0+ru.nseg]
	last := ""
	if ru.anchored {
		l := segs[len(segs)-1]
		last = m.text[l.off : l.off+l.n]
		segs = segs[:len(segs)-1]
	}
	for _, sp := range segs {
		s := m.text[sp.off : sp.off+sp.n]
		i := strings.Index(p[pos:], s)
		if i < 0 {
			return false
		}
		pos += i + len(s)
	}
	return !ru.anchored || (len(p)-len(last) >= pos && strings.HasSuffix(p, last))
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
// A target that starts with '/' is a path, also when it starts with "//"
// (what URL.RequestURI gives for https://host//x): it is never read as a
// network-path reference with a host.
func pathAndQuery(t string) string {
	if i := strings.IndexByte(t, '#'); i >= 0 {
		t = t[:i]
	}
	if t != "" && t[0] == '/' {
		return t
	}
	i := strings.Index(t, "://")
	if i <= 0 || strings.ContainsAny(t[:i], "/?") {
		return t
	}
	start := i + 3
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
		// Copy runs of plain octets at once.
		j := i
		for j < len(s) && plain[s[j]] {
			j++
		}
		if j > i {
			dst = append(dst, s[i:j]...)
			if i = j; i == len(s) {
				break
			}
		}
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && urinorm.IsHex(s[i+1]) && urinorm.IsHex(s[i+2]):
			v := urinorm.Unhex(s[i+1])<<4 | urinorm.Unhex(s[i+2])
			if urinorm.IsUnreserved(v) || (inQuery && isQueryDelim(v)) {
				dst = append(dst, v)
			} else {
				dst = append(dst, '%', urinorm.UpperHex(s[i+1]), urinorm.UpperHex(s[i+2]))
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

// plain marks the octets normalize copies as they are.
var plain = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c != '%' && c != '?' && c != '*' && c != '$' && !needsEscape(byte(c))
	}
	return t
}()

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
