package robots

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jimsmart/grobotstxt"
)

// MaxParseBytes is how much of a robots.txt file [Parse] reads. RFC 9309 §2.5
// asks crawlers to parse at least 500 KiB; the rest is ignored.
const MaxParseBytes = 512 << 10

// Agent names a bot for robots.txt matching.
type Agent struct {
	// Token is the product token, such as "BothyBot". Anything from the first
	// character that may not appear in a token on ("/1.0" and so on) is
	// ignored. Matching is case-insensitive.
	Token string
	// Former lists the names the bot used before. A robots.txt group written
	// for any of them still applies.
	Former []string
}

// Robots is a compiled robots.txt file. It is immutable and safe for
// concurrent use. A nil *Robots and the zero value allow everything, as an
// empty file does.
type Robots struct {
	groups      []group
	names       map[string][]int32 // lower-cased product token -> its groups
	star        []int32            // groups for "*"
	sitemaps    []string
	mode        mode
	truncated   bool
	unreachable bool
}

type mode uint8

const (
	modeParsed mode = iota
	modeAllowAll
	modeDisallowAll
)

type group struct {
	rules    []rule
	nodes    []node // trie over the rules' literal prefixes; nodes[0] is the root
	edges    []edge
	order    []int32 // rule indices, grouped by node, longest first
	delay    time.Duration
	hasDelay bool
}

// rule is one Allow or Disallow line, normalised.
type rule struct {
	pattern  string   // normalised pattern, as matched (and shown in errors)
	prio     int32    // octets of the normalised pattern
	allow    bool     //
	lit      int32    // length of the literal prefix, up to the first '*'
	star     bool     // the pattern has a '*'
	anchored bool     // the pattern ends in '$'
	segs     [][]byte // literal pieces after the first '*'; the last one is after the last '*'
}

type node struct {
	edge0, nedge int32 // edges[edge0 : edge0+nedge], sorted by byte
	rule0, nrule int32 // order[rule0 : rule0+nrule]
	maxPrio      int32 // largest prio of a rule in this node's subtree
}

type edge struct {
	c  byte
	to int32
}

// Parse compiles a robots.txt body. It never fails: lines it cannot read are
// skipped, as RFC 9309 §2.2 asks. Only the first [MaxParseBytes] are read.
func Parse(body []byte) *Robots {
	r := &Robots{}
	if len(body) > MaxParseBytes {
		body = body[:MaxParseBytes]
		// Drop the partial last line, so that a cut rule cannot turn into a
		// shorter and broader one.
		if i := bytes.LastIndexAny(body, "\r\n"); i >= 0 {
			body = body[:i+1]
		}
		r.truncated = true
	}
	p := &parser{r: r, cur: -1}
	grobotstxt.Parse(string(body), p)
	p.finish()
	return r
}

// Sitemaps returns the Sitemap URLs the file lists, in file order, as written.
func (r *Robots) Sitemaps() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.sitemaps)
}

// Truncated reports whether the file was longer than [MaxParseBytes] and its
// tail was ignored.
func (r *Robots) Truncated() bool { return r != nil && r.truncated }

// Unreachable reports whether r stands for a robots.txt that could not be
// fetched (server error, network error, timeout): everything but /robots.txt
// is disallowed, and a caller can tell that from a rule that disallows.
func (r *Robots) Unreachable() bool { return r != nil && r.unreachable }

// CrawlDelay returns the Crawl-delay for a, read from the groups [Robots.Allowed]
// would use: the largest value any of them gives. Values are decimal seconds
// ("10", "0.5"); anything else is ignored. Capping the delay is the caller's
// policy.
func (r *Robots) CrawlDelay(a Agent) (time.Duration, bool) {
	if r == nil || r.mode != modeParsed {
		return 0, false
	}
	var d time.Duration
	found := false
	take := func(gs []int32) {
		for _, gi := range gs {
			if g := &r.groups[gi]; g.hasDelay && (!found || g.delay > d) {
				d, found = g.delay, true
			}
		}
	}
	named := false
	r.eachName(a, func(gs []int32) bool {
		named = true
		take(gs)
		return true
	})
	if !named {
		take(r.star)
	}
	return d, found
}

// eachName calls fn with the groups of each of a's names that has any, until
// fn returns false.
func (r *Robots) eachName(a Agent, fn func([]int32) bool) {
	if len(r.names) == 0 {
		return
	}
	if gs := r.lookup(a.Token); gs != nil && !fn(gs) {
		return
	}
	for _, n := range a.Former {
		if gs := r.lookup(n); gs != nil && !fn(gs) {
			return
		}
	}
}

// lookup returns the groups of one product token, without allocating for
// tokens up to 128 bytes.
func (r *Robots) lookup(name string) []int32 {
	name = productToken(strings.TrimSpace(name))
	if name == "" {
		return nil
	}
	var buf [128]byte
	if len(name) > len(buf) {
		return r.names[strings.ToLower(name)]
	}
	b := buf[:len(name)]
	for i := 0; i < len(name); i++ {
		b[i] = lower(name[i])
	}
	return r.names[string(b)]
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// productToken returns the leading run of RFC 9110 tchar characters of s, as
// grobotstxt does for user-agent lines.
func productToken(s string) string {
	for i := 0; i < len(s); i++ {
		if !isTchar(s[i]) {
			return s[:i]
		}
	}
	return s
}

func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// parser receives grobotstxt's callbacks and builds the groups.
type parser struct {
	r         *Robots
	cur       int          // current group, -1 before the first user-agent line
	inRules   bool         // a rule or Crawl-delay was seen since the last user-agent line
	names     []nameGroups // name -> groups, in first-seen order
	nameIndex map[string]int
	star      []int32
	pending   [][]rule // rules per group, before compiling
}

type nameGroups struct {
	name   string
	groups []int32
}

func (p *parser) HandleRobotsStart() {}
func (p *parser) HandleRobotsEnd()   {}

func (p *parser) HandleUserAgent(_ int, value string) {
	if p.cur < 0 || p.inRules {
		p.r.groups = append(p.r.groups, group{})
		p.pending = append(p.pending, nil)
		p.cur = len(p.r.groups) - 1
		p.inRules = false
	}
	gi := int32(p.cur)
	// grobotstxt treats "*" followed by a space and anything as "*".
	if value != "" && value[0] == '*' && (len(value) == 1 || value[1] == ' ' || value[1] == '\t') {
		if n := len(p.star); n == 0 || p.star[n-1] != gi {
			p.star = append(p.star, gi)
		}
		return
	}
	name := strings.ToLower(productToken(value))
	if name == "" {
		return
	}
	if p.nameIndex == nil {
		p.nameIndex = make(map[string]int)
	}
	i, ok := p.nameIndex[name]
	if !ok {
		i = len(p.names)
		p.nameIndex[name] = i
		p.names = append(p.names, nameGroups{name: name})
	}
	gs := p.names[i].groups
	if n := len(gs); n == 0 || gs[n-1] != gi {
		p.names[i].groups = append(gs, gi)
	}
}

func (p *parser) HandleAllow(_ int, value string)    { p.addRule(value, true) }
func (p *parser) HandleDisallow(_ int, value string) { p.addRule(value, false) }

func (p *parser) addRule(value string, allow bool) {
	if p.cur < 0 {
		return // rules before any user-agent line belong to no group
	}
	p.inRules = true
	if value == "" {
		return // an empty rule matches nothing (RFC 9309 §2.2.2)
	}
	p.pending[p.cur] = append(p.pending[p.cur], compileRule(unmangle(value), allow))
}

func (p *parser) HandleSitemap(_ int, value string) {
	if value != "" {
		p.r.sitemaps = append(p.r.sitemaps, value)
	}
}

func (p *parser) HandleUnknownAction(_ int, action, value string) {
	if p.cur < 0 || !strings.EqualFold(action, "crawl-delay") {
		return
	}
	p.inRules = true
	d, ok := parseDelay(value)
	if !ok {
		return
	}
	g := &p.r.groups[p.cur]
	if !g.hasDelay || d > g.delay {
		g.delay, g.hasDelay = d, true
	}
}

// parseDelay reads decimal seconds: digits with an optional fraction.
func parseDelay(v string) (time.Duration, bool) {
	var whole, frac float64
	scale := 1.0
	digits, dot := 0, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
			if dot {
				scale /= 10
				frac += float64(c-'0') * scale
			} else {
				whole = whole*10 + float64(c-'0')
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 {
		return 0, false
	}
	ns := (whole + frac) * float64(time.Second)
	if ns >= math.MaxInt64 {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(ns), true
}

func (p *parser) finish() {
	r := p.r
	for i := range r.groups {
		r.groups[i].compile(p.pending[i])
	}
	r.star = p.star
	if len(p.names) > 0 {
		r.names = make(map[string][]int32, len(p.names))
		for _, n := range p.names {
			r.names[n.name] = n.groups
		}
	}
}

// unmangle undoes grobotstxt's escape normalisation, which upper-cases an
// escape's hex digits with c&0xDF and so turns the digits 0-9 into the control
// bytes 0x10-0x19 ("%2f" becomes "%\x12F"). Raw control bytes cannot appear in
// a valid rule (RFC 9309 path-pattern excludes CTLs), so the mapping back is
// unambiguous for every valid rule.
func unmangle(v string) string {
	if !strings.Contains(v, "%") {
		return v
	}
	bad := false
	for i := 0; i+2 < len(v); i++ {
		if v[i] == '%' && (isMangled(v[i+1]) || isMangled(v[i+2])) {
			bad = true
			break
		}
	}
	if !bad {
		return v
	}
	b := []byte(v)
	for i := 0; i+2 < len(b); i++ {
		if b[i] != '%' {
			continue
		}
		x, y := b[i+1], b[i+2]
		if (isHex(x) || isMangled(x)) && (isHex(y) || isMangled(y)) {
			if isMangled(x) {
				b[i+1] = x - 0x10 + '0'
			}
			if isMangled(y) {
				b[i+2] = y - 0x10 + '0'
			}
			i += 2
		}
	}
	return string(b)
}

func isMangled(c byte) bool { return c >= 0x10 && c <= 0x19 }

func compileRule(value string, allow bool) rule {
	pat := string(normalize(make([]byte, 0, len(value)+8), value, true))
	ru := rule{pattern: pat, prio: int32(len(pat)), allow: allow}
	body := pat
	if strings.HasSuffix(body, "$") {
		ru.anchored = true
		body = body[:len(body)-1]
	}
	star := strings.IndexByte(body, '*')
	if star < 0 {
		ru.lit = int32(len(body))
		return ru
	}
	ru.lit = int32(star)
	ru.star = true
	pieces := strings.Split(body[star+1:], "*")
	for i, s := range pieces {
		if s == "" && i != len(pieces)-1 {
			continue // "**" is one '*'
		}
		ru.segs = append(ru.segs, []byte(s))
	}
	return ru
}

// compile builds the trie of g's rules over their literal prefixes. It works
// on the rules sorted by prefix, so time and memory stay linear in the total
// prefix length even for hostile files.
func (g *group) compile(rules []rule) {
	if len(rules) == 0 {
		return
	}
	g.rules = rules
	idx := make([]int32, len(rules))
	for i := range idx {
		idx[i] = int32(i)
	}
	lit := func(i int32) string { return rules[i].pattern[:rules[i].lit] }
	slices.SortStableFunc(idx, func(x, y int32) int { return strings.Compare(lit(x), lit(y)) })
	g.build(idx, 0)
}

// build adds the node for the prefix of length depth shared by all of idx
// (sorted by literal prefix) and returns its index.
func (g *group) build(idx []int32, depth int) int32 {
	rules := g.rules
	self := int32(len(g.nodes))
	g.nodes = append(g.nodes, node{})
	// Rules whose literal prefix ends here sort first.
	k := 0
	for k < len(idx) && int(rules[idx[k]].lit) == depth {
		k++
	}
	here := slices.Clone(idx[:k])
	slices.SortStableFunc(here, func(x, y int32) int {
		rx, ry := &rules[x], &rules[y]
		if rx.prio != ry.prio {
			return int(ry.prio - rx.prio) // longest first
		}
		if rx.allow != ry.allow {
			if rx.allow {
				return -1 // Allow before Disallow at equal length
			}
			return 1
		}
		return 0
	})
	nd := node{rule0: int32(len(g.order)), nrule: int32(len(here)), maxPrio: -1}
	g.order = append(g.order, here...)
	if len(here) > 0 {
		nd.maxPrio = rules[here[0]].prio
	}
	// Children: runs of idx[k:] with the same byte at depth.
	rest := idx[k:]
	nkids := 0
	for i := 0; i < len(rest); {
		c := rules[rest[i]].pattern[depth]
		j := i + 1
		for j < len(rest) && rules[rest[j]].pattern[depth] == c {
			j++
		}
		nkids++
		i = j
	}
	nd.edge0, nd.nedge = int32(len(g.edges)), int32(nkids)
	for range nkids {
		g.edges = append(g.edges, edge{})
	}
	e := nd.edge0
	for i := 0; i < len(rest); {
		c := rules[rest[i]].pattern[depth]
		j := i + 1
		for j < len(rest) && rules[rest[j]].pattern[depth] == c {
			j++
		}
		to := g.build(rest[i:j], depth+1)
		g.edges[e] = edge{c: c, to: to}
		e++
		if m := g.nodes[to].maxPrio; m > nd.maxPrio {
			nd.maxPrio = m
		}
		i = j
	}
	g.nodes[self] = nd
	return self
}
