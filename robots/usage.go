package robots

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/dunglas/httpsfv"
)

// Purpose is a category of use that a site can state a preference about
// (draft-ietf-aipref-vocab; Cloudflare's Content Signals name the same
// three).
type Purpose uint8

const (
	// Search: selecting pages and sending users to them, with excerpts that
	// help judge relevance (AIPREF "search", Content Signals "search").
	Search Purpose = iota
	// AIInput: feeding a page to a generative AI model as input, as an
	// assistant answering a question does (AIPREF "ai-use", Content Signals
	// "ai-input").
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

// aiprefLabels are the keys of draft-ietf-aipref-vocab (case-sensitive).
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
	return parseUsageFields([]string{v})
}

func parseUsageFields(values []string) Usage {
	var u Usage
	d, err := httpsfv.UnmarshalDictionary(values)
	if err != nil {
		return u
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
	return u
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
			u = parseUsageFields(cu)
		}
	}
	if tdm := h["Tdm-Reservation"]; len(tdm) > 0 && strings.TrimSpace(tdm[0]) == "1" {
		u = u.Combine(Usage{}.With(TrainAI, Disallowed))
	}
	return u
}
