package robots

import (
	"bytes"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/goodbot-go/goodbot/internal/urinorm"

	"github.com/jimsmart/grobotstxt"
)

// MaxParseBytes is how much of a robots.txt file [Parse] reads. RFC 9309 §2.5
// asks crawlers to parse at least 500 KiB; the rest is ignored.
const MaxParseBytes = 512 << 10

// Agent names a bot for robots.txt matching.
//
// The zero Agent has no name of its own, so only the "*" group applies to
// it. An Agent is plain data: share it freely, but do not modify Former while
// another goroutine uses it.
type Agent struct {
	// Token is the product token, such as "ExampleBot". White space around
	// it is ignored, and so is anything from the first character that RFC
	// 9309 §2.2.1 does not allow in a token (letters, "-" and "_") on, as it
	// is in the file's user-agent lines: " ExampleBot/1.0" is ExampleBot, and
	// so is "ExampleBot2". Matching is case-insensitive.
	Token string
	// Former lists the names the bot used before. A robots.txt group written
	// for any of them still applies.
	Former []string
	// PurposeTokens are control-only product tokens that speak for one
	// purpose each (a site writes "User-agent: Example-Extended" and
	// "Disallow: /" to refuse one use without refusing the crawl). They are
	// read by [Robots.Usage] only; they never change [Robots.Allowed].
	PurposeTokens []PurposeToken
}

// Robots is a compiled robots.txt file. It is immutable and safe for
// concurrent use. A nil *Robots and the zero value allow everything, as an
// empty file does.
type Robots struct {
	groups      []group
	m           matcher
	um          matcher            // the Content-Usage rules, compiled as m is
	uses        []Usage            // uses[i] is the statement of um.rules[i]
	signal      Usage              // Content-Signal lines outside any group
	hasUsage    bool               // the file has a Content-Usage rule or a Content-Signal in a group
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

// group is one robots.txt group: its rules are rules[r0:r1] of the matcher,
// with their trie at nodes[root] (-1 if the group has no rules), and its
// Content-Usage rules are the same in the usage matcher.
type group struct {
	root, r0, r1    int32
	uroot, ur0, ur1 int32
	delay           time.Duration
	hasDelay        bool
	uties           bool  // two Content-Usage rules of the group have the same length
	signal          Usage // the group's Content-Signal lines, combined
}

// matcher holds the compiled rules of all groups, in shared arrays.
type matcher struct {
	text  string // the normalised patterns of all rules, back to back
	rules []rule
	segs  []span  // wildcard segments of all rules
	nodes []node  // per group, a path-compressed trie over the rules' literal prefixes
	edges []edge  //
	order []int32 // rule indices, grouped by node, longest first, Allow first
}

// rule is one Allow or Disallow line, normalised.
type rule struct {
	off, n     int32 // the pattern is text[off:off+n]; n is its length in octets (RFC 9309 §2.2.2)
	lit        int32 // length of the literal prefix, up to the first '*' or the final '$'
	seg0, nseg int32 // segs[seg0:seg0+nseg]: literal pieces after the first '*'; the last one follows the last '*'
	allow      bool
	star       bool   // the pattern has a '*'
	anchored   bool   // the pattern ends in '$'
	mask       uint64 // byteMask of the segments: octets a match must contain
}

type span struct{ off, n int32 }

type node struct {
	depth        int32 // length of the prefix this node stands for
	edge0, nedge int32 // edges[edge0 : edge0+nedge], sorted by first byte
	rule0, nrule int32 // order[rule0 : rule0+nrule]
	maxPrio      int32 // longest rule in this node's subtree, -1 if none
}

type edge struct {
	c      byte  // first byte of the label
	to     int32 // child node
	off, n int32 // label = text[off:off+n]
}

// pending holds the rules while the file is being read.
type pending struct {
	text  []byte
	rules []rule
	segs  []span
}

// Parse compiles a robots.txt body. It never fails: lines it cannot read are
// skipped, as RFC 9309 §2.2 asks. Only the first [MaxParseBytes] are read.
// body must not be modified while Parse runs; the result does not refer to
// it.
func Parse(body []byte) *Robots {
	r := &Robots{}
	body, r.truncated = cutAtLine(body, MaxParseBytes)
	p := &parser{r: r, cur: -1}
	// Size the arenas once: at most one rule per line.
	lines := bytes.Count(body, []byte{'\n'}) + 1
	if lines < 4 {
		lines = bytes.Count(body, []byte{'\r'}) + 1 // CR-only files
	}
	p.pd.text = make([]byte, 0, len(body)/2)
	p.pd.rules = make([]rule, 0, lines)
	// grobotstxt wants a string. Viewing body as one saves a copy of up to
	// 512 KiB: body is not modified during Parse, and nothing the handler
	// keeps points into it (names, sitemaps and patterns are copied).
	grobotstxt.Parse(unsafe.String(unsafe.SliceData(body), len(body)), p)
	p.finish()
	return r
}

// cutAtLine returns body cut to at most limit bytes. When it cuts, it also
// drops the partial last line, so that a cut rule cannot turn into a shorter
// and broader one ("Allow: /public/page" into "Allow: /pub").
func cutAtLine(body []byte, limit int) ([]byte, bool) {
	if len(body) <= limit {
		return body, false
	}
	body = body[:limit]
	if i := bytes.LastIndexAny(body, "\r\n"); i >= 0 {
		body = body[:i+1]
	}
	return body, true
}

// Sitemaps returns the Sitemap URLs the file lists, in file order, as written.
func (r *Robots) Sitemaps() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.sitemaps)
}

// Names returns the product tokens the file has groups for, lower-cased and
// sorted ("*" not included).
func (r *Robots) Names() []string {
	if r == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(r.names))
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
	name = productToken(trimSpace(name))
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

// productToken returns the leading run of s that RFC 9309 §2.2.1 allows in
// a product token (identifier = 1*("-" / A-Z / "_" / a-z)): "ExampleBot/1.0",
// "examplebot*" and "ExampleBot (+https://…)" all name ExampleBot.
func productToken(s string) string {
	for i := 0; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return s[:i]
		}
	}
	return s
}

func isIdentChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_'
}

// isStar reports whether a user-agent value names every bot: "*" alone or
// followed by white space and anything (grobotstxt reads "* bots" as "*" too).
func isStar(v string) bool {
	return v != "" && v[0] == '*' && (len(v) == 1 || spaceAt(v, 1) > 0)
}

// trimSpace removes from both ends of s the white space an author may type:
// every Unicode space in UTF-8 (NBSP U+00A0 is C2 A0, NEL U+0085 is C2 85,
// and \v and \f), and the lone bytes 0x85 and 0xA0 of a Latin-1 file.
func trimSpace(s string) string {
	for s != "" {
		n := spaceAt(s, 0)
		if n == 0 {
			break
		}
		s = s[n:]
	}
	for s != "" {
		n := spaceBefore(s)
		if n == 0 {
			break
		}
		s = s[:len(s)-n]
	}
	return s
}

// spaceAt returns the length of the white space (see [trimSpace]) starting
// at s[i], or 0.
func spaceAt(s string, i int) int {
	r, n := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && n <= 1 {
		r = rune(s[i]) // a lone byte: read it as Latin-1
	}
	if unicode.IsSpace(r) {
		return n
	}
	return 0
}

// spaceBefore returns the length of the white space ending s, or 0.
func spaceBefore(s string) int {
	r, n := utf8.DecodeLastRuneInString(s)
	if r == utf8.RuneError && n <= 1 {
		r = rune(s[len(s)-1])
	}
	if unicode.IsSpace(r) {
		return n
	}
	return 0
}

// parser receives grobotstxt's callbacks and builds the groups.
//
// A group is one or more user-agent lines followed by rules (RFC 9309 §2.2):
// only a rule (Allow, Disallow, and Content-Usage, which
// draft-ietf-aipref-attach §3 adds to the rule production) closes the list
// of user-agents, so a user-agent line after a rule starts the next group.
// Every other record (Crawl-delay, Sitemap, Content-Signal, lines it does
// not know) neither starts nor ends a group (§2.2.4); one that belongs in a
// group belongs to the whole group, wherever it stands among its lines.
type parser struct {
	r         *Robots
	upd       pending      // Content-Usage rules of all groups
	uses      []Usage      // their statements, one per rule of upd
	cur       int          // current group, -1 before the first user-agent line
	inRules   bool         // a rule was seen since the last user-agent line
	names     []nameGroups // name -> groups, in first-seen order
	nameIndex map[string]int
	lowerBuf  []byte
	star      []int32
	pd        pending // rules of all groups, before compiling
}

type nameGroups struct {
	name   string
	groups []int32
}

// record is a kind of line other than User-agent, Allow and Disallow that
// the parser reads (RFC 9309 §2.2.4). Such lines neither start nor end a
// group. A new kind is one entry in [records].
type record struct {
	key string // the record's name, matched case-insensitively
	// rule: the record is a rule of its group, which closes the group's
	// list of user-agents as Allow and Disallow do.
	rule bool
	// file applies a value that stands for the whole file, wherever it
	// stands; nil if none.
	file func(r *Robots, value string)
	// group applies a value to the group being read (p.cur); nil if none.
	// Lines before the first user-agent line belong to no group.
	group func(p *parser, value string)
	// outside applies a value that stands before the first user-agent line,
	// outside any group; nil if none.
	outside func(r *Robots, value string)
}

// records are the other records the parser reads. grobotstxt reports lines
// whose key begins with "sitemap" or "site-map" as Sitemap lines.
var records = [...]record{
	{key: "sitemap", file: (*Robots).addSitemap},
	{key: "crawl-delay", group: (*parser).addDelay},
	{key: "content-usage", rule: true, group: (*parser).addUsage},
	{key: "content-signal", group: (*parser).addSignal, outside: (*Robots).addSignal},
	{key: "content-signals", group: (*parser).addSignal, outside: (*Robots).addSignal},
}

func (p *parser) HandleRobotsStart() {}
func (p *parser) HandleRobotsEnd()   {}

func (p *parser) HandleUserAgent(_ int, value string) {
	if p.cur < 0 || p.inRules {
		p.r.groups = append(p.r.groups, group{root: -1, r0: int32(len(p.pd.rules)),
			uroot: -1, ur0: int32(len(p.upd.rules))})
		p.cur = len(p.r.groups) - 1
		p.inRules = false
	}
	gi := int32(p.cur)
	value = trimSpace(value)
	if isStar(value) {
		if n := len(p.star); n == 0 || p.star[n-1] != gi {
			p.star = append(p.star, gi)
		}
		return
	}
	tok := productToken(value)
	if tok == "" {
		return
	}
	if p.nameIndex == nil {
		p.nameIndex = make(map[string]int)
	}
	p.lowerBuf = p.lowerBuf[:0]
	for i := 0; i < len(tok); i++ {
		p.lowerBuf = append(p.lowerBuf, lower(tok[i]))
	}
	i, ok := p.nameIndex[string(p.lowerBuf)]
	if !ok {
		name := string(p.lowerBuf)
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
	p.pd.add(unmangle(value), allow)
}

func (p *parser) HandleSitemap(_ int, value string) { p.other("sitemap", value) }

func (p *parser) HandleUnknownAction(_ int, action, value string) { p.other(action, value) }

// other applies a line of one of the [records]; it ignores other keys.
func (p *parser) other(key, value string) {
	for i := range records {
		rec := &records[i]
		if !strings.EqualFold(rec.key, key) {
			continue
		}
		if rec.file != nil {
			rec.file(p.r, value)
		}
		if rec.group != nil && p.cur >= 0 {
			rec.group(p, value)
			p.inRules = p.inRules || rec.rule
		}
		if rec.outside != nil && p.cur < 0 {
			rec.outside(p.r, value)
		}
		return
	}
}

func (r *Robots) addSitemap(value string) {
	if value != "" {
		// Clone: value points into the whole body, which must not stay alive.
		r.sitemaps = append(r.sitemaps, strings.Clone(value))
	}
}

// addDelay keeps the largest valid Crawl-delay of the group.
func (p *parser) addDelay(value string) {
	g := &p.r.groups[p.cur]
	d, ok := parseDelay(value)
	if ok && (!g.hasDelay || d > g.delay) {
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
	r.m.init(&p.pd, len(r.groups))
	r.um.init(&p.upd, len(r.groups))
	r.uses = p.uses
	var scratch []int32
	for i := range r.groups {
		g := &r.groups[i]
		g.r1, g.ur1 = int32(len(r.m.rules)), int32(len(r.um.rules))
		if i+1 < len(r.groups) {
			g.r1, g.ur1 = r.groups[i+1].r0, r.groups[i+1].ur0
		}
		g.root, scratch = r.m.compileRange(g.r0, g.r1, scratch)
		g.uroot, scratch = r.um.compileRange(g.ur0, g.ur1, scratch)
		g.uties = r.um.hasTies(g.ur0, g.ur1, scratch)
		if g.uroot >= 0 || !g.signal.IsZero() {
			r.hasUsage = true
		}
	}
	r.m.fit()
	r.um.fit()
	r.star = p.star
	if len(p.names) > 0 {
		r.names = make(map[string][]int32, len(p.names))
		for _, n := range p.names {
			r.names[n.name] = n.groups
		}
	}
}

// freeze returns b as a string without copying it when little of its
// capacity is unused. b must not be modified afterwards.
func freeze(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(b)-len(b) > len(b)/2+64 {
		return string(b)
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// fit returns s without much unused capacity.
func fit[T any](s []T) []T {
	if cap(s)-len(s) > 64 && cap(s)-len(s) > len(s)/4 {
		return slices.Clone(s)
	}
	return s
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
		if (urinorm.IsHex(x) || isMangled(x)) && (urinorm.IsHex(y) || isMangled(y)) {
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

// add normalises one rule and appends it.
func (pd *pending) add(value string, allow bool) {
	off := len(pd.text)
	pd.text = normalize(pd.text, value, true)
	pat := pd.text[off:]
	ru := rule{off: int32(off), n: int32(len(pat)), allow: allow, seg0: int32(len(pd.segs))}
	body := pat
	if len(body) > 0 && body[len(body)-1] == '$' {
		ru.anchored = true
		body = body[:len(body)-1]
	}
	star := bytes.IndexByte(body, '*')
	if star < 0 {
		ru.lit = int32(len(body))
		pd.rules = append(pd.rules, ru)
		return
	}
	ru.lit = int32(star)
	ru.star = true
	start := star + 1
	for i := start; i <= len(body); i++ {
		if i < len(body) && body[i] != '*' {
			continue
		}
		if i > start || i == len(body) { // "**" is one '*'; keep the last piece even if empty
			pd.segs = append(pd.segs, span{off: int32(off + start), n: int32(i - start)})
		}
		start = i + 1
	}
	ru.nseg = int32(len(pd.segs)) - ru.seg0
	ru.mask = byteMask(string(body[star+1:]))
	ru.mask &^= 1 << ('*' & 63)
	pd.rules = append(pd.rules, ru)
}

// init takes the rules read into pd and makes room for the tries of the
// given number of groups.
func (m *matcher) init(pd *pending, groups int) {
	m.text = freeze(pd.text)
	m.rules = pd.rules
	m.segs = pd.segs
	if len(m.rules) == 0 {
		return
	}
	m.order = make([]int32, 0, len(m.rules))
	// A path-compressed trie has about one node and one edge per rule.
	m.nodes = make([]node, 0, len(m.rules)+groups)
	m.edges = make([]edge, 0, len(m.rules))
}

// compileRange builds the trie of rules[r0:r1] and returns its root (-1 if
// the range is empty), with scratch for reuse.
func (m *matcher) compileRange(r0, r1 int32, scratch []int32) (int32, []int32) {
	if r1 <= r0 {
		return -1, scratch
	}
	scratch = scratch[:0]
	for ri := r0; ri < r1; ri++ {
		scratch = append(scratch, ri)
	}
	return m.compile(scratch), scratch
}

// hasTies reports whether two of rules[r0:r1] have the same length.
func (m *matcher) hasTies(r0, r1 int32, scratch []int32) bool {
	if r1-r0 < 2 {
		return false
	}
	scratch = scratch[:0]
	for ri := r0; ri < r1; ri++ {
		scratch = append(scratch, m.rules[ri].n)
	}
	slices.Sort(scratch)
	for i := 1; i < len(scratch); i++ {
		if scratch[i] == scratch[i-1] {
			return true
		}
	}
	return false
}

// fit drops the slack of the arenas, which were sized for the worst case: a
// cached Robots should not keep it alive.
func (m *matcher) fit() {
	m.rules = fit(m.rules)
	m.nodes = fit(m.nodes)
	m.edges = fit(m.edges)
}

// pattern returns a rule's normalised pattern.
func (m *matcher) pattern(ru *rule) string { return m.text[ru.off : ru.off+ru.n] }

func (m *matcher) lit(ru *rule) string { return m.text[ru.off : ru.off+ru.lit] }

// compile builds the trie of one group's rules (idx) over their literal
// prefixes and returns its root. It works on the rules sorted by prefix, so
// time and memory stay linear in the size of the rules even for hostile
// files.
func (m *matcher) compile(idx []int32) int32 {
	if len(idx) == 1 {
		return m.build(idx, 0)
	}
	slices.SortFunc(idx, func(x, y int32) int {
		if c := strings.Compare(m.lit(&m.rules[x]), m.lit(&m.rules[y])); c != 0 {
			return c
		}
		return int(x - y)
	})
	return m.build(idx, 0)
}

// build adds the node for the prefix of length depth shared by all of idx
// (sorted by literal prefix) and returns its index.
func (m *matcher) build(idx []int32, depth int) int32 {
	rules := m.rules
	self := int32(len(m.nodes))
	m.nodes = append(m.nodes, node{})
	// Rules whose literal prefix ends here sort first.
	k := 0
	for k < len(idx) && int(rules[idx[k]].lit) == depth {
		k++
	}
	here := idx[:k]
	if k > 1 {
		m.sortLongestFirst(here)
	}
	nd := node{depth: int32(depth), rule0: int32(len(m.order)), nrule: int32(k), maxPrio: -1}
	m.order = append(m.order, here...)
	if k > 0 {
		nd.maxPrio = rules[here[0]].n
	}
	m.addChildren(&nd, idx[k:], depth)
	m.nodes[self] = nd
	return self
}

// sortLongestFirst orders the rules of one node: longest first, Allow before
// Disallow at equal length.
func (m *matcher) sortLongestFirst(here []int32) {
	rules := m.rules
	slices.SortFunc(here, func(x, y int32) int {
		rx, ry := &rules[x], &rules[y]
		if rx.n != ry.n {
			return int(ry.n - rx.n) // longest first
		}
		if rx.allow != ry.allow {
			if rx.allow {
				return -1 // Allow before Disallow at equal length
			}
			return 1
		}
		return int(x - y)
	})
}

// addChildren adds the children of nd: runs of rest (sorted by literal
// prefix, all longer than depth) with the same byte at depth. Each edge is
// labelled with the run's longest common prefix (that of its first and last,
// as the run is sorted).
func (m *matcher) addChildren(nd *node, rest []int32, depth int) {
	rules := m.rules
	nkids := 0
	for i := 0; i < len(rest); nkids++ {
		i = m.runEnd(rest, i, depth)
	}
	nd.edge0, nd.nedge = int32(len(m.edges)), int32(nkids)
	for range nkids {
		m.edges = append(m.edges, edge{})
	}
	e := nd.edge0
	for i := 0; i < len(rest); {
		j := m.runEnd(rest, i, depth)
		first, last := m.lit(&rules[rest[i]]), m.lit(&rules[rest[j-1]])
		end := depth + 1
		for end < len(first) && end < len(last) && first[end] == last[end] {
			end++
		}
		to := m.build(rest[i:j], end)
		m.edges[e] = edge{c: first[depth], to: to, off: rules[rest[i]].off + int32(depth), n: int32(end - depth)}
		e++
		if mp := m.nodes[to].maxPrio; mp > nd.maxPrio {
			nd.maxPrio = mp
		}
		i = j
	}
}

// runEnd returns the end of the run of rest[i:] whose literal prefixes have
// the same byte at depth.
func (m *matcher) runEnd(rest []int32, i, depth int) int {
	c := m.text[m.rules[rest[i]].off+int32(depth)]
	j := i + 1
	for j < len(rest) && m.text[m.rules[rest[j]].off+int32(depth)] == c {
		j++
	}
	return j
}
