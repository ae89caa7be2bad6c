package challenge

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/textproto"
)

// Rule is one row of a rule table: a vendor, a kind and the evidence that
// must all be present. Every condition that is set must hold; the body
// markers are matched ASCII case-insensitively as plain substrings of the
// examined bytes. A rule must name strong evidence: a header that the vendor
// documents as a challenge signal, or a combination (status and body
// markers, or several body markers); a marker that also appears on served
// pages (a CDN's server header, a sensor script) belongs in a combination,
// never alone.
//
// The zero Rule is invalid ([Rule.Validate] rejects it, and [Detector]
// never matches it). A Rule is plain data: a [Detector] compiles it once, so
// do not modify it afterwards.
type Rule struct {
	Name   string // identifies the rule in a Verdict, e.g. "cloudflare/managed"
	Vendor string // lower-case vendor name reported in the Verdict
	Kind   Kind   // kind reported in the Verdict; must not be None

	// Status, if not empty, lists the status codes the rule applies to.
	// Status 0 (unknown) matches no list.
	Status []int
	// Header conditions must all hold.
	Header []HeaderMatch
	// Body is a conjunction of alternatives: every group must have at least
	// one marker in the examined body, where it counts (see NoticeText).
	Body [][]string
	// Markup is more groups like Body, whose markers count only in markup
	// or a script, never in text: a challenge's machinery (a widget's
	// element or script, an API call), which a page shows in its text only
	// to talk about it.
	Markup [][]string
	// Not lists markers that must not occur (e.g. a login form's password
	// field for a CAPTCHA-widget rule).
	Not []string
	// MaxBody, if positive, is the largest body (in bytes, counting the
	// whole body passed to Detect) the rule applies to.
	MaxBody int
	// MaxText, if positive, is the most visible text (bytes other than
	// white space of the text outside tags, scripts, styles, comments and
	// the title, in the examined bytes) the rule applies to: "the page is
	// little more than the challenge", whatever its markup weighs.
	MaxText int
	// BareForm requires the page to have a form and no field a person
	// fills in (no text, e-mail, password, search or other input, select
	// or textarea; hidden inputs and buttons do not count): a form that
	// only submits a challenge widget's answer.
	BareForm bool
	// HTML requires the body to be an HTML page (it has an element), not
	// plain text such as a robots.txt whose comments may use the same
	// words.
	HTML bool
}

// NoticeText is the most visible text (bytes other than white space) a
// page may have for a Body marker in its text to be evidence: a page whose
// main content is the notice. A Body marker counts where the page uses it
// rather than shows it: in markup (a tag, an attribute, a script or a
// style), or in visible text that is not quoted on such a notice page (see
// the package documentation, "Content is content"); Not markers count
// wherever they occur. The real block and challenge pages in the project's
// samples whose verdict rests on their text have at most 464 such bytes
// (this package's own fixtures 503): the bound leaves a threefold margin,
// while an article, a documentation page or a forum thread has more.
const NoticeText = 1536

// HeaderMatch is a header condition: the header Name is present and, when
// Value is not empty, one of its values contains Value (ASCII
// case-insensitive).
//
// The zero HeaderMatch (no Name) is invalid: [Rule.Validate] rejects it.
// It is plain data.
type HeaderMatch struct {
	Name  string
	Value string
}

// ErrInvalidRule is wrapped by the errors [Rule.Validate] returns.
var ErrInvalidRule = errors.New("challenge: invalid rule")

// Validate reports whether r can be used: it needs a name, a kind, and at
// least one header or body condition (a status alone is not evidence), and
// no empty marker or empty group.
func (r *Rule) Validate() error {
	fail := func(why string) error { return fmt.Errorf("%w %q: %s", ErrInvalidRule, r.Name, why) }
	switch {
	case r.Name == "":
		return fail("no name")
	case r.Kind <= None || int(r.Kind) >= len(kindNames):
		return fail("no kind")
	case len(r.Header) == 0 && len(r.Body) == 0 && len(r.Markup) == 0 && !nonStandard(r.Status):
		return fail("no header or body evidence (a status alone only for non-standard codes such as 999)")
	}
	for _, h := range r.Header {
		if h.Name == "" {
			return fail("empty header name")
		}
	}
	for _, g := range append(r.Body[:len(r.Body):len(r.Body)], r.Markup...) {
		if len(g) == 0 {
			return fail("empty body group")
		}
		for _, m := range g {
			if m == "" {
				return fail("empty body marker")
			}
		}
	}
	for _, m := range r.Not {
		if m == "" {
			return fail("empty Not marker")
		}
	}
	return nil
}

// Rules is a rule table: rules are tried in order and the first that
// matches gives the verdict. It is plain data; build your own or extend
// [DefaultRules] with append.
//
// A nil Rules in a [Detector] means [DefaultRules]; a non-nil empty table
// matches nothing. Do not modify a table a Detector is using.
type Rules []Rule

// Validate validates every rule of the table and joins the errors.
func (rs Rules) Validate() error {
	var errs []error
	for i := range rs {
		if err := rs[i].Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

type compiledHeader struct {
	key   string // canonical header key
	value string // lower case
	label string
}

type compiledRule struct {
	name, vendor string
	kind         Kind
	status       []int
	statusLabels []string
	headers      []compiledHeader
	groups       [][]uint16
	markupOnly   []bool // per group: its markers count in markup only
	not          []uint16
	maxBody      int
	maxText      int
	bareForm     bool
	html         bool
}

type compiled struct {
	rules  []compiledRule
	m      *matcher
	labels []string // "body:<marker>" per needle
	words  int      // uint64 words in a found set
	enough int      // the layout pass may stop above this much visible text
	notice int      // NoticeText (tests lower it to see what rests on text)
	// vendorOf is, per needle, 1 + the index of the one vendor whose Body
	// groups use it, or 0 (no vendor, or several).
	vendorOf []uint16
}

// compile turns a rule table into its matcher. Invalid rules are dropped.
func compile(rules Rules) *compiled {
	c := &compiled{}
	ids := map[string]uint16{}
	vendors := map[string]uint16{}
	ambiguous := map[uint16]bool{}
	var needles [][]byte
	id := func(marker string) uint16 {
		k := string(lowerASCII(marker))
		if i, ok := ids[k]; ok {
			return i
		}
		i := uint16(len(needles))
		ids[k] = i
		needles = append(needles, []byte(k))
		c.labels = append(c.labels, "body:"+marker)
		return i
	}
	for i := range rules {
		r := &rules[i]
		if r.Validate() != nil || len(needles)+countMarkers(r) > 1<<16-1 {
			continue
		}
		cr := compiledRule{name: r.Name, vendor: r.Vendor, kind: r.Kind, maxBody: r.MaxBody, maxText: r.MaxText, bareForm: r.BareForm, html: r.HTML}
		c.enough = max(c.enough, r.MaxText)
		if r.BareForm && r.MaxText <= 0 {
			c.enough = math.MaxInt // its form is looked for in the whole page
		}
		cr.status = append([]int(nil), r.Status...)
		for _, s := range r.Status {
			cr.statusLabels = append(cr.statusLabels, statusLabel(s))
		}
		for _, h := range r.Header {
			label := "header:" + textproto.CanonicalMIMEHeaderKey(h.Name)
			if h.Value != "" {
				label += ": " + h.Value
			}
			cr.headers = append(cr.headers, compiledHeader{
				key:   textproto.CanonicalMIMEHeaderKey(h.Name),
				value: string(lowerASCII(h.Value)),
				label: label,
			})
		}
		for gi, g := range append(r.Body[:len(r.Body):len(r.Body)], r.Markup...) {
			var cg []uint16
			for _, m := range g {
				i := id(m)
				cg = append(cg, i)
				if gi >= len(r.Body) {
					continue
				}
				v := uint16(0)
				if r.Vendor != "" {
					if vendors[r.Vendor] == 0 {
						vendors[r.Vendor] = uint16(len(vendors) + 1)
					}
					v = vendors[r.Vendor]
				}
				for len(c.vendorOf) <= int(i) {
					c.vendorOf = append(c.vendorOf, 0)
				}
				switch {
				case ambiguous[i]:
				case c.vendorOf[i] == 0 && v != 0:
					c.vendorOf[i] = v
				case c.vendorOf[i] != v:
					c.vendorOf[i], ambiguous[i] = 0, true
				}
			}
			cr.groups = append(cr.groups, cg)
			cr.markupOnly = append(cr.markupOnly, gi >= len(r.Body))
		}
		for _, m := range r.Not {
			cr.not = append(cr.not, id(m))
		}
		c.rules = append(c.rules, cr)
	}
	c.notice = NoticeText
	c.enough = max(c.enough, c.notice)
	for len(c.vendorOf) < len(needles) {
		c.vendorOf = append(c.vendorOf, 0)
	}
	c.m = newMatcher(needles)
	c.words = (len(needles) + 63) / 64
	return c
}

func countMarkers(r *Rule) int {
	n := len(r.Not)
	for _, g := range append(r.Body[:len(r.Body):len(r.Body)], r.Markup...) {
		n += len(g)
	}
	return n
}

// stackWords is the size of the marker sets that live on the stack; tables
// with more markers allocate them.
const stackWords = 8

// examined is what Detect learnt about the body: every marker found
// anywhere, the markers found where they count, and the page facts. The
// layout pass runs only for a rule that could match on the markers found
// anywhere, so that a page without a near match pays for the scan alone.
type examined struct {
	found, live, code []uint64
	occ               [maxOccurrences]occurrence
	nocc              int
	page              pageFacts
	scanned           bool
	laidOut           bool
}

// scan runs the marker scan once.
func (e *examined) scan(c *compiled, body []byte) {
	if !e.scanned {
		e.scanned = true
		e.nocc = c.m.scan(body, e.found, e.occ[:])
	}
}

// layout runs the layout pass once and fills live.
func (e *examined) layout(c *compiled, body []byte) {
	if e.laidOut {
		return
	}
	e.laidOut = true
	occ := e.occ[:e.nocc]
	// The scan meets occurrences nearly in order (each one at most a
	// marker's length late): insertion sort.
	for i := 1; i < len(occ); i++ {
		for j := i; j > 0 && occ[j].start < occ[j-1].start; j-- {
			occ[j], occ[j-1] = occ[j-1], occ[j]
		}
	}
	e.page = layout(body, occ, c.enough)
	// Text counts on a notice page that speaks for one vendor at most: a
	// page whose text has the markers of several vendors is about them.
	text := e.page.visible <= c.notice
	for first, i := uint16(0), 0; text && i < len(occ); i++ {
		if v := c.vendorOf[occ[i].needle]; occ[i].place == placeText && v != 0 {
			if first != 0 && v != first {
				text = false
			}
			first = v
		}
	}
	for _, o := range occ {
		bit := uint64(1) << (o.needle & 63)
		switch {
		case o.place == placeCode:
			e.code[o.needle>>6] |= bit
			e.live[o.needle>>6] |= bit
		case o.place == placeText && text:
			e.live[o.needle>>6] |= bit
		}
	}
}

func (c *compiled) detect(status int, header http.Header, body []byte) Verdict {
	if priced(status, header) {
		return Verdict{}
	}
	bodyLen := len(body)
	if len(body) > MaxBytes {
		body = body[:MaxBytes]
	}
	var e examined
	var found, live, code [stackWords]uint64
	e.found, e.live, e.code = found[:], live[:], code[:]
	if c.words > stackWords {
		e.found, e.live, e.code = make([]uint64, c.words), make([]uint64, c.words), make([]uint64, c.words)
	}
	for i := range c.rules {
		r := &c.rules[i]
		if r.maxBody > 0 && bodyLen > r.maxBody {
			continue
		}
		if e.scanned && len(r.groups) > 0 && e.nocc == 0 {
			continue // no marker at all: no group can match
		}
		si := r.statusIndex(status)
		if si == -2 || !r.headersMatch(header) {
			continue
		}
		needLayout := len(r.groups) > 0 || r.maxText > 0 || r.bareForm || r.html
		if needLayout || len(r.not) > 0 {
			e.scan(c, body)
			// A rule that cannot match on every marker found anywhere
			// cannot match on those that count.
			if !r.bodyMatches(e.found, e.found, e.found) {
				continue
			}
		}
		if needLayout {
			e.layout(c, body)
			if r.maxText > 0 && e.page.visible > r.maxText || r.bareForm && (e.page.forms == 0 || e.page.fields > 0) ||
				r.html && e.page.elements == 0 ||
				!r.bodyMatches(e.found, e.live, e.code) {
				continue
			}
		}
		return c.verdict(r, si, e.live, e.code)
	}
	return Verdict{}
}

// priced reports whether the response is a price for the page rather than
// a challenge: a 402 with a crawler-price header (pay per crawl) or a
// Payment-Required header (x402). That is the fetcher's business, never a
// challenge, whatever the rules say.
func priced(status int, h http.Header) bool {
	if status != http.StatusPaymentRequired {
		return false
	}
	_, price := h["Crawler-Price"]
	_, x402 := h["Payment-Required"]
	return price || x402
}

// statusIndex returns the index of status in r.status, -1 when r has no
// status condition, or -2 when the condition fails.
func (r *compiledRule) statusIndex(status int) int {
	if len(r.status) == 0 {
		return -1
	}
	for i, s := range r.status {
		if s == status && status != 0 {
			return i
		}
	}
	return -2
}

func (r *compiledRule) headersMatch(h http.Header) bool {
	for i := range r.headers {
		if !headerMatches(h, &r.headers[i]) {
			return false
		}
	}
	return true
}

func headerMatches(h http.Header, ch *compiledHeader) bool {
	vs, ok := h[ch.key]
	if !ok {
		return false
	}
	if ch.value == "" {
		return true
	}
	for _, v := range vs {
		if containsFoldString(v, ch.value) {
			return true
		}
	}
	return false
}

// bodyMatches reports whether no Not marker occurs anywhere and every
// group has a marker where it counts: in live, or in code for a Markup
// group.
func (r *compiledRule) bodyMatches(found, live, code []uint64) bool {
	for _, id := range r.not {
		if bitSet(found, id) {
			return false
		}
	}
	for gi, g := range r.groups {
		set, ok := live, false
		if r.markupOnly[gi] {
			set = code
		}
		for _, id := range g {
			if bitSet(set, id) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func (c *compiled) verdict(r *compiledRule, si int, live, code []uint64) Verdict {
	ev := make([]string, 0, 1+len(r.headers)+len(r.groups))
	if si >= 0 {
		ev = append(ev, r.statusLabels[si])
	}
	for i := range r.headers {
		ev = append(ev, r.headers[i].label)
	}
	for gi, g := range r.groups {
		set := live
		if r.markupOnly[gi] {
			set = code
		}
		for _, id := range g {
			if bitSet(set, id) {
				ev = append(ev, c.labels[id])
				break
			}
		}
	}
	return Verdict{Blocked: true, Vendor: r.vendor, Kind: r.kind, Rule: r.name, Evidence: ev}
}

// nonStandard reports whether codes is not empty and has no status code that
// net/http knows.
func nonStandard(codes []int) bool {
	for _, c := range codes {
		if http.StatusText(c) != "" {
			return false
		}
	}
	return len(codes) > 0
}
