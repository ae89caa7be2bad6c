package challenge

import (
	"errors"
	"fmt"
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
	// one marker in the examined body.
	Body [][]string
	// Not lists markers that must not occur (e.g. a login form's password
	// field for a CAPTCHA-widget rule).
	Not []string
	// MaxBody, if positive, is the largest body (in bytes, counting the
	// whole body passed to Detect) the rule applies to: "the page is little
	// more than the challenge".
	MaxBody int
}

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
	case len(r.Header) == 0 && len(r.Body) == 0 && !nonStandard(r.Status):
		return fail("no header or body evidence (a status alone only for non-standard codes such as 999)")
	}
	for _, h := range r.Header {
		if h.Name == "" {
			return fail("empty header name")
		}
	}
	for _, g := range r.Body {
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
	not          []uint16
	maxBody      int
}

type compiled struct {
	rules  []compiledRule
	m      *matcher
	labels []string // "body:<marker>" per needle
	words  int      // uint64 words in a found set
}

// compile turns a rule table into its matcher. Invalid rules are dropped.
func compile(rules Rules) *compiled {
	c := &compiled{}
	ids := map[string]uint16{}
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
		cr := compiledRule{name: r.Name, vendor: r.Vendor, kind: r.Kind, maxBody: r.MaxBody}
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
		for _, g := range r.Body {
			var cg []uint16
			for _, m := range g {
				cg = append(cg, id(m))
			}
			cr.groups = append(cr.groups, cg)
		}
		for _, m := range r.Not {
			cr.not = append(cr.not, id(m))
		}
		c.rules = append(c.rules, cr)
	}
	c.m = newMatcher(needles)
	c.words = (len(needles) + 63) / 64
	return c
}

func countMarkers(r *Rule) int {
	n := len(r.Not)
	for _, g := range r.Body {
		n += len(g)
	}
	return n
}

// stackWords is the size of the found set that lives on the stack; tables
// with more markers allocate one.
const stackWords = 8

func (c *compiled) detect(status int, header http.Header, body []byte) Verdict {
	bodyLen := len(body)
	if len(body) > MaxBytes {
		body = body[:MaxBytes]
	}
	var small [stackWords]uint64
	found := small[:]
	if c.words > stackWords {
		found = make([]uint64, c.words)
	}
	scanned, none := false, false
	for i := range c.rules {
		r := &c.rules[i]
		if r.maxBody > 0 && bodyLen > r.maxBody {
			continue
		}
		if none && len(r.groups) > 0 {
			continue // the body holds no marker at all: no group can match
		}
		si := r.statusIndex(status)
		if si == -2 || !r.headersMatch(header) {
			continue
		}
		if (len(r.groups) > 0 || len(r.not) > 0) && !scanned {
			c.m.scan(body, found)
			scanned = true
			none = !anyBit(found)
			if none && len(r.groups) > 0 {
				continue
			}
		}
		if !r.bodyMatches(found) {
			continue
		}
		return c.verdict(r, si, found)
	}
	return Verdict{}
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

// anyBit reports whether any bit of found is set.
func anyBit(found []uint64) bool {
	for _, w := range found {
		if w != 0 {
			return true
		}
	}
	return false
}

func (r *compiledRule) bodyMatches(found []uint64) bool {
	for _, id := range r.not {
		if bitSet(found, id) {
			return false
		}
	}
	for _, g := range r.groups {
		ok := false
		for _, id := range g {
			if bitSet(found, id) {
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

func (c *compiled) verdict(r *compiledRule, si int, found []uint64) Verdict {
	ev := make([]string, 0, 1+len(r.headers)+len(r.groups))
	if si >= 0 {
		ev = append(ev, r.statusLabels[si])
	}
	for i := range r.headers {
		ev = append(ev, r.headers[i].label)
	}
	for _, g := range r.groups {
		for _, id := range g {
			if bitSet(found, id) {
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
