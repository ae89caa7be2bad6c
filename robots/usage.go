package robots

import (
	"net/http"
	"strconv"
	"strings"
	"unsafe"

	"github.com/dunglas/httpsfv"
)

// Purpose is a category of use that a site can state a preference about
// (the three categories of draft-ietf-aipref-vocab-08 §4; Cloudflare's
// Content Signals name the same three).
type Purpose uint8

const (
	// Search: selecting pages and sending users to them, with excerpts that
	// help judge relevance (AIPREF "search", Content Signals "search").
	Search Purpose = iota
	// AIInput: feeding a page to a generative AI model as input, as an
	// assistant answering a question does (AIPREF "AI Use", label "ai-use":
	// input the user did not provide directly; Content Signals "ai-input").
	AIInput
	// TrainAI: changing a generative AI model's parameters with the page
	// (AIPREF "train-ai", Content Signals "ai-train").
	TrainAI

	numPurposes
)

var purposeNames = [numPurposes]string{"search", "ai-input", "train-ai"}

// String returns "search", "ai-input" or "train-ai".
func (p Purpose) String() string {
	if p < numPurposes {
		return purposeNames[p]
	}
	return "purpose(" + strconv.Itoa(int(p)) + ")"
}

// ParsePurpose returns the Purpose that String would name s, or false.
func ParsePurpose(s string) (Purpose, bool) {
	for p, n := range purposeNames {
		if n == s {
			return Purpose(p), true
		}
	}
	return 0, false
}

// Purposes returns every Purpose, in order.
func Purposes() []Purpose { return []Purpose{Search, AIInput, TrainAI} }

// Verdict is a site's preference about one [Purpose].
//
// The zero Verdict is [Unknown].
type Verdict uint8

const (
	// Unknown: nothing was said (or nothing this package understands).
	Unknown Verdict = iota
	// Allowed: the site allows the use.
	Allowed
	// Disallowed: the site asks that the content not be used so.
	Disallowed
	// NotApplicable: the path may not be crawled at all, so no usage
	// preference applies to it (draft-ietf-aipref-attach §3.1).
	NotApplicable
)

var verdictNames = [...]string{"unknown", "allow", "disallow", "n/a"}

// String returns "unknown", "allow", "disallow" or "n/a".
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "verdict(?)"
}

// Usage is one statement of preference: a [Verdict] for each [Purpose].
// The zero Usage says nothing (every purpose Unknown).
//
// It is a small value; compare with ==.
type Usage struct {
	v [numPurposes]Verdict
}

// Get returns the verdict for p (Unknown for a Purpose this package does not
// define).
func (u Usage) Get(p Purpose) Verdict {
	if p >= numPurposes {
		return Unknown
	}
	return u.v[p]
}

// With returns u with p set to v.
func (u Usage) With(p Purpose, v Verdict) Usage {
	if p < numPurposes {
		u.v[p] = v
	}
	return u
}

// Disallows returns the first of ps that u disallows (Disallowed or
// NotApplicable), if any.
func (u Usage) Disallows(ps []Purpose) (Purpose, bool) {
	for _, p := range ps {
		if v := u.Get(p); v == Disallowed || v == NotApplicable {
			return p, true
		}
	}
	return 0, false
}

// IsZero reports whether u says nothing.
func (u Usage) IsZero() bool { return u == Usage{} }

// Combine returns the most restrictive combination of u and o, purpose by
// purpose (draft-ietf-aipref-vocab §5.1): NotApplicable over Disallowed over
// Allowed over Unknown.
func (u Usage) Combine(o Usage) Usage {
	for i := range u.v {
		u.v[i] = max(u.v[i], o.v[i])
	}
	return u
}

// String lists the purposes said something about, as the AIPREF format does
// ("search=y, train-ai=n"); Unknown purposes are left out.
func (u Usage) String() string {
	var b strings.Builder
	for p, v := range u.v {
		if v == Unknown {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(purposeNames[p])
		switch v {
		case Allowed:
			b.WriteString("=y")
		case Disallowed:
			b.WriteString("=n")
		default:
			b.WriteString("=" + v.String())
		}
	}
	return b.String()
}

// A usageLabel maps one vocabulary's key to a Purpose: the vocabularies are
// data, because their labels change between draft versions.
type usageLabel struct {
	key     string
	purpose Purpose
}

// aiprefLabels are the keys of draft-ietf-aipref-vocab (-08 §6.1, Table 1;
// case-sensitive). -03 to -07 had only train-ai and search; -08 brought
// ai-use back, so a site's "ai-use=n" is read in either case.
var aiprefLabels = []usageLabel{
	{"search", Search},
	{"ai-use", AIInput},
	{"train-ai", TrainAI},
}

// contentSignalLabels are the keys of Cloudflare's Content Signals Policy.
var contentSignalLabels = []usageLabel{
	{"search", Search},
	{"ai-input", AIInput},
	{"ai-train", TrainAI},
}

// ParseUsage reads a usage preference in the AIPREF format
// (draft-ietf-aipref-vocab §6): a Structured Field Dictionary whose keys are
// category labels ("train-ai", "ai-use", "search") and whose values are the
// Tokens y or n. Any other value, an unknown key or a parameter is ignored;
// a repeated key keeps its last value; a value that does not parse says
// nothing (every purpose Unknown).
func ParseUsage(v string) Usage {
	u, _ := parseUsageFields([]string{v})
	return u
}

// parseUsageFields reads field lines in the AIPREF format; ok is false when
// they are not a Dictionary.
func parseUsageFields(values []string) (u Usage, ok bool) {
	d, err := httpsfv.UnmarshalDictionary(values)
	if err != nil {
		return u, false
	}
	for _, l := range aiprefLabels {
		m, ok := d.Get(l.key)
		if !ok {
			continue
		}
		it, ok := m.(httpsfv.Item)
		if !ok {
			continue
		}
		switch it.Value {
		case httpsfv.Token("y"):
			u.v[l.purpose] = Allowed
		case httpsfv.Token("n"):
			u.v[l.purpose] = Disallowed
		}
	}
	return u, true
}

// ParseContentSignal reads a Content-Signal value (Cloudflare's Content
// Signals Policy): comma-separated key=value pairs such as
// "search=yes, ai-input=yes, ai-train=no". Values are yes or no (case
// ignored); absent or other keys and values neither grant nor restrict.
func ParseContentSignal(v string) Usage {
	var u Usage
	for v != "" {
		var part string
		part, v, _ = strings.Cut(v, ",")
		key, val, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		for _, l := range contentSignalLabels {
			if !strings.EqualFold(l.key, key) {
				continue
			}
			switch {
			case strings.EqualFold(val, "yes"):
				u.v[l.purpose] = Allowed
			case strings.EqualFold(val, "no"):
				u.v[l.purpose] = Disallowed
			}
		}
	}
	return u
}

// MaxUsageField is how many bytes of the Content-Usage fields of one
// response are read; longer fields say nothing.
const MaxUsageField = 8 << 10

// UsageFromHeader returns what a response's header says about the use of its
// content: the Content-Usage field (draft-ietf-aipref-attach §2, in the format
// of [ParseUsage]; several field lines form one Dictionary, as RFC 9651 says)
// combined, most restrictively, with a TDMRep reservation ("tdm-reservation:
// 1", W3C TDMRep), which disallows TrainAI. A response without either field
// costs two map lookups and no allocation.
func UsageFromHeader(h http.Header) Usage {
	var u Usage
	if cu := h["Content-Usage"]; len(cu) > 0 {
		n := 0
		for _, v := range cu {
			n += len(v)
		}
		if n <= MaxUsageField {
			u, _ = parseUsageFields(cu)
		}
	}
	if tdm := h["Tdm-Reservation"]; len(tdm) > 0 && strings.TrimSpace(tdm[0]) == "1" {
		u = u.Combine(Usage{}.With(TrainAI, Disallowed))
	}
	return u
}

// PurposeToken is a control-only product token: a name that no crawler sends
// in its User-Agent, which sites address in robots.txt to state a preference
// about one purpose (for instance a "-Extended" token for AI uses of what a
// search crawler fetched). A group for Token that disallows a path means
// Disallowed for Purpose there; a group that does not disallow it means
// Allowed; no group for Token means Unknown. The "*" group never speaks for
// a purpose token.
type PurposeToken struct {
	Purpose Purpose
	Token   string
}

// Usage returns what the file says about the use of target by a: the
// statements of the groups [Robots.Allowed] would use for a (its token, its
// former names, else "*"), combined most restrictively (draft-ietf-aipref-vocab
// §5.1) with the Content-Signal lines outside any group and the verdicts of
// a's [PurposeToken]s. When a may not fetch target, every purpose is
// NotApplicable (draft-ietf-aipref-attach: preferences apply only to paths a
// crawler may fetch).
//
// In a group, a Content-Usage rule ("Content-Usage: /path train-ai=n") is
// chosen as Allow and Disallow are: the longest pattern that matches target,
// counted in octets of the normalised pattern, with the same wildcards and
// percent-encoding equivalence. A rule without a path ("Content-Usage:
// train-ai=n") matches every path with length 0, so any rule with a path
// that matches is longer. Rules of that same length that match combine most
// restrictively, as do the groups of one name (RFC 9309 §2.2.1 merges them)
// and the names of a. A Content-Signal line in a group applies to every
// path of the group. Where the file says nothing about a purpose, it is
// Unknown.
//
// Usage costs about what Allowed costs plus a walk of the (usually tiny)
// Content-Usage tries, and allocates no more than Allowed does.
func (r *Robots) Usage(a Agent, target string) Usage {
	return r.usage(a, target, true)
}

// Statement is [Robots.Usage] without the crawl decision: what the file
// states about the use of target by a, also where a may not fetch it (so
// never NotApplicable). Comparing it with [Robots.Allowed] finds a file that
// contradicts itself, such as "Disallow: /" with "search=yes".
func (r *Robots) Statement(a Agent, target string) Usage {
	return r.usage(a, target, false)
}

func (r *Robots) usage(a Agent, target string, crawl bool) Usage {
	pq := pathAndQuery(target)
	if needsNormalizing(pq) {
		var buf [2048]byte
		b := normalizeTarget(buf[:0], target)
		return r.usagePath(a, unsafe.String(unsafe.SliceData(b), len(b)), crawl)
	}
	return r.usagePath(a, pq, crawl)
}

// notApplicable is the Usage of a path that may not be fetched.
func notApplicable() Usage {
	var u Usage
	for i := range u.v {
		u.v[i] = NotApplicable
	}
	return u
}

// usagePath answers for a normalised target; with crawl, a target a may not
// fetch is NotApplicable.
func (r *Robots) usagePath(a Agent, p string, crawl bool) Usage {
	if r == nil || r.mode != modeParsed {
		if ok, _ := r.decidePath(a, p); !ok && crawl {
			return notApplicable()
		}
		return Usage{}
	}
	t := subject{p: p}
	var buf [maxNames][]int32
	named := r.agentGroups(a, buf[:0])
	if crawl && !isRobotsTxt(p) {
		if ok, _ := r.decideGroups(named, &t); !ok {
			return notApplicable()
		}
	}
	u := r.signal
	if r.hasUsage {
		if len(named) == 0 {
			named = append(named, r.star)
		}
		for _, gs := range named {
			u = u.Combine(r.groupsUsage(gs, &t))
		}
	}
	for _, pt := range a.PurposeTokens {
		gs := r.lookup(pt.Token)
		if gs == nil {
			continue
		}
		v := Allowed
		if best := r.best(gs, &t); best != nil && !best.allow {
			v = Disallowed
		}
		u = u.Combine(Usage{}.With(pt.Purpose, v))
	}
	return u
}

// groupsUsage is the statement of the merged groups gs for the subject: the
// longest matching Content-Usage rules, combined with the groups'
// Content-Signal lines.
func (r *Robots) groupsUsage(gs []int32, t *subject) Usage {
	var u, sig Usage
	longest := int32(-1)
	for _, gi := range gs {
		g := &r.groups[gi]
		sig = sig.Combine(g.signal)
		if g.uroot < 0 {
			continue
		}
		ru := r.um.best(g.uroot, t, nil)
		if ru == nil || ru.n < longest {
			continue
		}
		var gu Usage
		if g.uties {
			// Other rules of the same length may match too: all of them count.
			for i := g.ur0; i < g.ur1; i++ {
				if o := &r.um.rules[i]; o.n == ru.n && r.um.matches(o, t) {
					gu = gu.Combine(r.uses[i])
				}
			}
		} else {
			gu = r.uses[r.um.index(ru)]
		}
		if ru.n > longest {
			longest, u = ru.n, gu
		} else {
			u = u.Combine(gu)
		}
	}
	return u.Combine(sig)
}

// addUsage reads a Content-Usage rule of the group being read
// (draft-ietf-aipref-attach §3.2): an optional path pattern, which starts
// with "/" and ends at the first space or tab, then a preference in the
// format of [ParseUsage]. A rule without a path has the empty pattern, which
// matches every path. A rule whose preference is empty or not a Dictionary
// is still a rule, of preferences unknown (draft-ietf-aipref-vocab: "If the
// parsing of the Dictionary fails, preferences are unknown"): it is chosen
// by its path as any other, so a shorter rule does not speak for its paths.
func (p *parser) addUsage(value string) {
	path, pref := "", value
	if strings.HasPrefix(value, "/") {
		path, pref = value, ""
		if i := strings.IndexAny(value, " \t"); i >= 0 {
			path, pref = value[:i], value[i+1:]
		}
	}
	u, _ := parseUsageFields([]string{strings.TrimSpace(pref)})
	p.upd.add(unmangle(path), false)
	p.uses = append(p.uses, u)
}

// addSignal reads a Content-Signal line of the group being read.
func (p *parser) addSignal(value string) {
	g := &p.r.groups[p.cur]
	g.signal = g.signal.Combine(ParseContentSignal(value))
}

// addSignal reads a Content-Signal line outside any group: it applies to
// every agent.
func (r *Robots) addSignal(value string) {
	r.signal = r.signal.Combine(ParseContentSignal(value))
}
