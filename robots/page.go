package robots

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// PageRules are the page-level rules that apply to one bot on one page: the
// union of what the page's Robots-Tag and X-Robots-Tag header fields and its
// robots meta elements say for every bot and for the bot's own names
// (draft-illyes-repext). The zero PageRules restricts nothing.
//
// It is plain data.
type PageRules struct {
	NoIndex   bool // do not keep the page in an index (also "none", or a past unavailable_after)
	NoFollow  bool // do not follow the page's links (also "none")
	NoArchive bool // do not keep a copy to show later
	NoSnippet bool // do not quote the page
	NoAI      bool // do not use the page for AI (training or answers)
	NoImageAI bool // do not use the page's images for AI
	// UnavailableAfter, when set, is the instant after which the page is to
	// be dropped; [PageRules.At] turns a past one into NoIndex.
	UnavailableAfter time.Time
}

// IsZero reports whether r restricts nothing.
func (r PageRules) IsZero() bool { return r == PageRules{} }

// Union returns the rules of r and o together: each restriction of either,
// and the earlier UnavailableAfter.
func (r PageRules) Union(o PageRules) PageRules {
	r.NoIndex = r.NoIndex || o.NoIndex
	r.NoFollow = r.NoFollow || o.NoFollow
	r.NoArchive = r.NoArchive || o.NoArchive
	r.NoSnippet = r.NoSnippet || o.NoSnippet
	r.NoAI = r.NoAI || o.NoAI
	r.NoImageAI = r.NoImageAI || o.NoImageAI
	if !o.UnavailableAfter.IsZero() && (r.UnavailableAfter.IsZero() || o.UnavailableAfter.Before(r.UnavailableAfter)) {
		r.UnavailableAfter = o.UnavailableAfter
	}
	return r
}

// At returns r as it stands at now: NoIndex is set when UnavailableAfter has
// passed.
func (r PageRules) At(now time.Time) PageRules {
	if !r.UnavailableAfter.IsZero() && !now.Before(r.UnavailableAfter) {
		r.NoIndex = true
	}
	return r
}

// String lists the restrictions, comma-separated, in the fields' order
// ("noindex, nofollow"); "" for none.
func (r PageRules) String() string {
	var b []string
	for _, rule := range pageRuleNames {
		if rule.isSet != nil && rule.isSet(r) {
			b = append(b, rule.name)
		}
	}
	if !r.UnavailableAfter.IsZero() {
		b = append(b, "unavailable_after: "+r.UnavailableAfter.UTC().Format(time.RFC3339))
	}
	return strings.Join(b, ", ")
}

// pageRule is one rule name of the vocabulary and what it sets.
type pageRule struct {
	name  string
	set   func(*PageRules)
	isSet func(PageRules) bool
}

// pageRuleNames is the vocabulary, as data: names are matched
// case-insensitively; unknown names are ignored. "all" restricts nothing.
var pageRuleNames = []pageRule{
	{"noindex", func(r *PageRules) { r.NoIndex = true }, func(r PageRules) bool { return r.NoIndex }},
	{"nofollow", func(r *PageRules) { r.NoFollow = true }, func(r PageRules) bool { return r.NoFollow }},
	{"noarchive", func(r *PageRules) { r.NoArchive = true }, func(r PageRules) bool { return r.NoArchive }},
	{"nosnippet", func(r *PageRules) { r.NoSnippet = true }, func(r PageRules) bool { return r.NoSnippet }},
	{"noai", func(r *PageRules) { r.NoAI = true }, func(r PageRules) bool { return r.NoAI }},
	{"noimageai", func(r *PageRules) { r.NoImageAI = true }, func(r PageRules) bool { return r.NoImageAI }},
	{"none", func(r *PageRules) { r.NoIndex, r.NoFollow = true, true }, nil},
	{"noimageindex", nil, nil}, // known, not modelled
	{"all", nil, nil},
}

func (r *PageRules) apply(name string) {
	name = strings.TrimSpace(name)
	for _, rule := range pageRuleNames {
		if strings.EqualFold(rule.name, name) {
			if rule.set != nil {
				rule.set(r)
			}
			return
		}
	}
}

// MaxPageRulesField is how many bytes of each Robots-Tag or X-Robots-Tag
// field value are read (the draft asks for at least 8 KiB); a member cut by
// the limit is ignored.
const MaxPageRulesField = 8 << 10

// MaxPageRulesBody is how many bytes of an HTML body [PageRulesFromHTML]
// reads.
const MaxPageRulesBody = 64 << 10

// PageRulesFromHeader returns the rules h's Robots-Tag and X-Robots-Tag
// fields give a.
//
// Robots-Tag is a Structured Field List whose members are product tokens
// ("*" for every bot) with the rules as parameters:
// `Robots-Tag: *;noindex, examplebot;nosnippet`. A member repeated is
// merged; a field that does not parse is ignored.
//
// X-Robots-Tag has the older, looser form: comma-separated rules, each value
// optionally led by "name:" to address one bot (`X-Robots-Tag: otherbot:
// noindex, nofollow`), and `unavailable_after: DATE`. An X-Robots-Tag value
// written in the structured form is read as Robots-Tag.
//
// Rules addressed to a name that is neither a.Token nor one of a.Former are
// ignored: a rule written for a name the bot used before still binds it.
func PageRulesFromHeader(h http.Header, a Agent) PageRules {
	var r PageRules
	for _, v := range h["Robots-Tag"] {
		r = r.Union(structuredPageRules(v, a))
	}
	for _, v := range h["X-Robots-Tag"] {
		if strings.ContainsRune(v, ';') {
			r = r.Union(structuredPageRules(v, a))
			continue
		}
		r = r.Union(legacyPageRules(v, a))
	}
	return r
}

// capField cuts v at MaxPageRulesField and drops the member the cut falls
// in; a member that ends at the cut (a comma follows it) is whole and kept.
func capField(v string) string {
	if len(v) <= MaxPageRulesField {
		return v
	}
	if v[MaxPageRulesField] == ',' {
		return v[:MaxPageRulesField]
	}
	v = v[:MaxPageRulesField]
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		return v[:i]
	}
	return ""
}

func structuredPageRules(v string, a Agent) PageRules {
	var r PageRules
	l, err := httpsfv.UnmarshalList([]string{emptyParamsFixed(capField(v))})
	if err != nil {
		return r
	}
	for _, m := range l {
		it, ok := m.(httpsfv.Item)
		if !ok || it.Params == nil {
			continue
		}
		var name string
		switch v := it.Value.(type) {
		case httpsfv.Token:
			name = string(v)
		case string:
			name = v
		default:
			continue
		}
		if name != "*" && !a.isNamed(name) {
			continue
		}
		for _, rule := range it.Params.Names() {
			if b, _ := it.Params.Get(rule); b == true {
				r.apply(rule)
			}
		}
	}
	return r
}

// emptyParamsFixed drops one ";" that ends a member ("ExampleBot;", as the
// draft's own example writes a member without rules), which RFC 9651 would
// refuse; anything else malformed still fails the parse.
func emptyParamsFixed(v string) string {
	if !strings.Contains(v, ";") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == ';' && (i > 0 && v[i-1] != ';') {
			j := i + 1
			for j < len(v) && (v[j] == ' ' || v[j] == '\t') {
				j++
			}
			if j == len(v) || v[j] == ',' {
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// valueRules are rules written "name: value"; a leading "name:" that is one
// of them does not address a bot.
var valueRules = []string{"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}

// legacyPageRules reads one X-Robots-Tag value: "[name:] rule, rule, …".
func legacyPageRules(v string, a Agent) PageRules {
	v = capField(v)
	// A leading "name:" (not a rule) addresses the rest of the value.
	if i := strings.IndexByte(v, ':'); i >= 0 {
		lead := strings.TrimSpace(v[:i])
		if !strings.ContainsAny(lead, ", ") && !slices.ContainsFunc(valueRules, func(n string) bool { return strings.EqualFold(n, lead) }) {
			if !a.isNamed(lead) {
				return PageRules{}
			}
			v = v[i+1:]
		}
	}
	return pageRuleList(v)
}

// pageRuleList reads comma-separated rules, where a rule may be
// "unavailable_after: DATE".
func pageRuleList(v string) PageRules {
	var r PageRules
	for v != "" {
		part, rest, _ := strings.Cut(v, ",")
		name, arg, hasArg := strings.Cut(part, ":")
		if hasArg && strings.EqualFold(strings.TrimSpace(name), "unavailable_after") {
			// The date may itself hold commas ("Friday, 25-Jun-10 …"): take
			// the shortest run of parts that parses.
			at, left, ok := parseUnavailableAfter(arg, rest)
			if ok {
				r = r.Union(PageRules{UnavailableAfter: at})
			}
			v = left
			continue
		}
		r.apply(part)
		v = rest
	}
	return r
}

var unavailableAfterLayouts = []string{
	time.RFC3339, "2006-01-02T15:04:05", "2006-01-02", time.RFC1123, time.RFC1123Z,
	time.RFC850, time.RFC822, time.RFC822Z, "2 Jan 2006 15:04:05 MST", "02 Jan 2006 15:04:05 MST",
	"Monday, 02-Jan-2006 15:04:05 MST", time.ANSIC,
}

// parseUnavailableAfter parses the date that starts with first and may
// continue over up to two more comma-separated parts of rest; it returns what
// is left after the date, or rest unchanged when no date parses.
func parseUnavailableAfter(first, rest string) (time.Time, string, bool) {
	s, left := first, rest
	for range 3 {
		if t, ok := parseHTTPishDate(strings.TrimSpace(s)); ok {
			return t, left, true
		}
		if left == "" {
			break
		}
		var next string
		next, left, _ = strings.Cut(left, ",")
		s += "," + next
	}
	return time.Time{}, rest, false
}

func parseHTTPishDate(s string) (time.Time, bool) {
	for _, layout := range unavailableAfterLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// isNamed reports whether name is a's token or one of its former names
// (case-insensitively).
func (a Agent) isNamed(name string) bool {
	name = strings.TrimSpace(name)
	if name == "" {
		return false
	}
	if strings.EqualFold(productToken(a.Token), name) {
		return true
	}
	for _, f := range a.Former {
		if strings.EqualFold(productToken(f), name) {
			return true
		}
	}
	return false
}

// hasMetaTag reports whether body contains "<meta" in any case, without
// allocating (most pages have no robots meta; they cost one scan).
func hasMetaTag(body []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(body[i:], '<')
		if j < 0 {
			return false
		}
		i += j + 1
		if len(body)-i >= 4 && bytes.EqualFold(body[i:i+4], []byte("meta")) {
			return true
		}
	}
}

// PageRulesFromHTML returns the rules that the robots meta elements of an
// HTML document give a: `<meta name="robots" content="…">` for every bot and
// `<meta name="TOKEN" content="…">` for a's token or a former name. Only meta
// elements in the document's head count (the head ends at the first element
// or text that belongs to the body), within the first [MaxPageRulesBody]
// bytes; the contents of title, script, style, noscript and template
// elements are skipped.
func PageRulesFromHTML(body []byte, a Agent) PageRules {
	var r PageRules
	if len(body) > MaxPageRulesBody {
		body = body[:MaxPageRulesBody]
	}
	if !hasMetaTag(body) {
		return r
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return r
		case html.TextToken:
			if len(bytes.TrimSpace(z.Text())) > 0 {
				return r // text: the body has begun
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch el := atom.Lookup(name); el {
			case atom.Html, atom.Head, atom.Link, atom.Base:
			case atom.Title, atom.Noscript, atom.Script, atom.Style, atom.Template:
				// The tokenizer reads the contents of the first four as
				// text, which is not the body beginning; a template may
				// hold tags. Skip to the element's end.
				skipTo(z, el)
			case atom.Meta:
				if hasAttr {
					r = r.Union(metaPageRules(z, a))
				}
			default:
				return r // an element of the body
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if a := atom.Lookup(name); a == atom.Head || a == atom.Html {
				return r
			}
		}
	}
}

func skipTo(z *html.Tokenizer, end atom.Atom) {
	for {
		switch z.Next() {
		case html.ErrorToken:
			return
		case html.EndTagToken:
			if name, _ := z.TagName(); atom.Lookup(name) == end {
				return
			}
		}
	}
}

func metaPageRules(z *html.Tokenizer, a Agent) PageRules {
	var name, content string
	for {
		k, v, more := z.TagAttr()
		switch string(bytes.ToLower(k)) {
		case "name":
			name = string(v)
		case "content":
			content = string(v)
		}
		if !more {
			break
		}
	}
	if !strings.EqualFold(strings.TrimSpace(name), "robots") && !a.isNamed(name) {
		return PageRules{}
	}
	return pageRuleList(capField(content))
}
