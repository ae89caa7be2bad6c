package challenge

import "bytes"

// The layout pass decides where each marker occurrence sits, so that a page
// that talks about a challenge is not taken for one. It runs only when the
// marker scan found something, walks the examined bytes once as an HTML
// tokenizer would (tags, attributes, comments, raw-text elements; no tree,
// no allocation), and reports:
//
//   - the place of every recorded occurrence: markup (a tag, an attribute, a
//     script or style), visible text, or quoted;
//   - how much visible text the page has, how many forms, and how many
//     fields a person fills in (text, e-mail, password, search and other
//     inputs, select, textarea; not hidden inputs and buttons).
//
// Quoted means the page shows the marker as an example rather than running
// it: inside pre, code, kbd, samp, blockquote, q, listing, xmp, template or
// textarea, in a table cell other than the first of its table or a header
// cell, in a comment, in a data script (JSON, JSON-LD, templates), in an
// attribute that holds text (alt, title, placeholder, aria-label, and the
// content of a named meta tag), or in text between quotation marks. An
// escaped code sample never matches a markup marker in the first place (its
// "<" is "&lt;"), which is why markup outside comments and data always
// counts.

// place is where an occurrence of a marker sits.
type place uint8

const (
	placeQuoted place = iota // shown as an example: never evidence
	placeText                // visible text: evidence on a notice page only
	placeCode                // a tag, an attribute, a script or a style
)

// occurrence is one verified match of a marker.
type occurrence struct {
	start  int32
	needle uint16
	place  place
}

// maxOccurrences bounds the occurrences recorded per Detect call (on the
// stack). Occurrences beyond it still count for Not markers but are not
// evidence: a page that quotes a marker hundreds of times is an article.
const maxOccurrences = 256

// maxTables is the table nesting depth tracked for cells; deeper cells are
// quoted.
const maxTables = 32

// quoteWindow is how far before a text occurrence the quotation marks are
// counted.
const quoteWindow = 256

type walker struct {
	b     []byte
	occ   []occurrence // sorted by start
	k     int          // occ[:k] have their place
	quote int          // open quoting elements
	ntab  int          // open tables (may exceed maxTables)
	cells [maxTables]uint8
	cellQ uint32 // bit l: the current cell of table level l is quoted
	facts pageFacts
}

// pageFacts is what the layout pass counts.
type pageFacts struct {
	visible  int // bytes other than white space of visible text
	elements int // start tags
	forms    int // form elements
	fields   int // fields a person fills in
}

// layout sets the place of every occurrence in occ (sorted by start) and
// counts the page facts; the visible text is the bytes other than white
// space of text outside tags, comments, scripts, styles, the title and
// other raw-text elements. It stops early once every occurrence has its
// place, the visible text exceeds enough and an element was seen (the
// forms and fields are then counted up to there only).
func layout(b []byte, occ []occurrence, enough int) pageFacts {
	w := walker{b: b, occ: occ}
	n := len(b)
	for i := 0; i < n; {
		lt := bytes.IndexByte(b[i:], '<')
		if lt < 0 {
			w.text(i, n, true)
			break
		}
		w.text(i, i+lt, true)
		i = w.markup(i + lt)
		if w.k == len(occ) && w.facts.visible > enough && w.facts.elements > 0 {
			break
		}
	}
	return w.facts
}

// mark gives place p to the occurrences that start before end.
func (w *walker) mark(end int, p place) {
	for w.k < len(w.occ) && int(w.occ[w.k].start) < end {
		w.occ[w.k].place = p
		w.k++
	}
}

func (w *walker) quoted() bool { return w.quote > 0 || w.cellQ != 0 || w.ntab > maxTables }

// text handles the character data b[i:end].
func (w *walker) text(i, end int, visible bool) {
	q := w.quoted()
	for w.k < len(w.occ) && int(w.occ[w.k].start) < end {
		o := &w.occ[w.k]
		o.place = placeText
		if q || inQuotation(w.b, int(o.start)) {
			o.place = placeQuoted
		}
		w.k++
	}
	if visible {
		for _, c := range w.b[i:end] {
			if !isSpace(c) {
				w.facts.visible++
			}
		}
	}
}

// markup handles the construct that starts with the '<' at b[at] and
// returns the index after it.
func (w *walker) markup(at int) int {
	b := w.b
	n := len(b)
	if at+1 >= n {
		w.text(at, n, true)
		return n
	}
	switch c := b[at+1]; {
	case c == '!' && bytes.HasPrefix(b[at:], []byte("<!--")):
		end := n
		if e := bytes.Index(b[at+4:], []byte("-->")); e >= 0 {
			end = at + 4 + e + 3
		}
		w.mark(end, placeQuoted)
		return end
	case c == '!' || c == '?':
		end := tagEnd(b, at+2)
		w.mark(end, placeCode)
		return end
	case c == '/' && at+2 < n && isLetter(b[at+2]):
		j := nameEnd(b, at+2)
		w.endTag(b[at+2 : j])
		end := tagEnd(b, j)
		w.mark(end, placeCode)
		return end
	case isLetter(c):
		return w.startTag(at)
	default: // a '<' in text
		w.text(at, at+1, true)
		return at + 1
	}
}

// startTag handles a start tag at b[at] and, for raw-text elements, their
// content and end tag.
func (w *walker) startTag(at int) int {
	b := w.b
	j := nameEnd(b, at+1)
	name := b[at+1 : j]
	// A named meta tag (description, og:*, twitter:*) holds text in its
	// content attribute; a meta http-equiv (refresh) holds a URL.
	metaText := false
	if eqFold(name, "meta") {
		for a := nextAttr(b, j); a.ns >= 0; a = nextAttr(b, a.next) {
			an := b[a.ns:a.ne]
			if eqFold(an, "name") || eqFold(an, "property") || eqFold(an, "itemprop") {
				metaText = true
			}
		}
	}
	dataScript, field := false, eqFold(name, "input")
	a := nextAttr(b, j)
	for ; a.ns >= 0; a = nextAttr(b, a.next) {
		if a.vs < 0 {
			continue
		}
		an := b[a.ns:a.ne]
		if textAttr(an) || metaText && eqFold(an, "content") {
			w.mark(a.vs, placeCode)
			w.mark(a.ve, placeQuoted)
		}
		if eqFold(an, "type") {
			v := b[a.vs:a.ve]
			dataScript = !scriptType(v)
			field = field && !buttonType(v)
		}
	}
	end := a.next
	w.facts.elements++
	if field || eqFold(name, "select") || eqFold(name, "textarea") {
		w.facts.fields++
	}
	if eqFold(name, "form") {
		w.facts.forms++
	}
	w.mark(end, placeCode)
	switch {
	case eqFold(name, "script"):
		p := placeCode
		if dataScript {
			p = placeQuoted
		}
		return w.raw(end, "script", p)
	case eqFold(name, "style"):
		return w.raw(end, "style", placeCode)
	case eqFold(name, "title"):
		return w.raw(end, "title", placeText)
	case rawQuoted(name) != "":
		return w.raw(end, rawQuoted(name), placeQuoted)
	case eqFold(name, "plaintext"):
		w.mark(len(b)+1, placeQuoted)
		return len(b)
	case quoting(name): // "<code/>" opens one too, as in HTML
		w.quote++
	case eqFold(name, "table"):
		if w.ntab < maxTables {
			w.cells[w.ntab] = 0
			w.cellQ &^= 1 << w.ntab
		}
		w.ntab++
	case eqFold(name, "td"), eqFold(name, "th"):
		if l := w.ntab - 1; l >= 0 && l < maxTables {
			if w.cells[l] < 255 {
				w.cells[l]++
			}
			if w.cells[l] > 1 || eqFold(name, "th") {
				w.cellQ |= 1 << l
			} else {
				w.cellQ &^= 1 << l
			}
		}
	case eqFold(name, "tr"):
		w.endCell()
	}
	return end
}

// endTag updates the state for the end tag </name>.
func (w *walker) endTag(name []byte) {
	switch {
	case quoting(name):
		if w.quote > 0 {
			w.quote--
		}
	case eqFold(name, "td"), eqFold(name, "th"), eqFold(name, "tr"):
		w.endCell()
	case eqFold(name, "table"):
		if w.ntab > 0 {
			w.ntab--
			if w.ntab < maxTables {
				w.cellQ &^= 1 << w.ntab
			}
		}
	}
}

func (w *walker) endCell() {
	if l := w.ntab - 1; l >= 0 && l < maxTables {
		w.cellQ &^= 1 << l
	}
}

// raw handles the content of a raw-text element that starts at i and ends
// with </name (or the end of b), and the end tag; it returns the index
// after the end tag.
func (w *walker) raw(i int, name string, p place) int {
	b := w.b
	end := len(b)
	for j := i; j < len(b); {
		k := bytes.Index(b[j:], []byte("</"))
		if k < 0 {
			break
		}
		j += k + 2
		if j+len(name) <= len(b) && eqFold(b[j:j+len(name)], name) &&
			(j+len(name) == len(b) || isTagBreak(b[j+len(name)])) {
			end = j - 2
			break
		}
	}
	if p == placeText {
		w.text(i, end, false)
	} else {
		w.mark(end, p)
	}
	if end == len(b) {
		return end
	}
	close := tagEnd(b, end+2)
	w.mark(close, placeCode)
	return close
}

// attr is one attribute of a tag: name b[ns:ne], value b[vs:ve] (vs < 0
// when there is none), and where the next one starts. ns < 0 means the tag
// ended; next is then the index after it.
type attr struct{ ns, ne, vs, ve, next int }

func nextAttr(b []byte, j int) attr {
	n := len(b)
	for j < n && (isSpace(b[j]) || b[j] == '/') {
		j++
	}
	if j >= n {
		return attr{ns: -1, next: n}
	}
	if b[j] == '>' {
		return attr{ns: -1, next: j + 1}
	}
	a := attr{ns: j, vs: -1, ve: -1}
	j++
	for j < n && !isSpace(b[j]) && b[j] != '=' && b[j] != '>' && b[j] != '/' {
		j++
	}
	a.ne = j
	k := j
	for k < n && isSpace(b[k]) {
		k++
	}
	if k >= n || b[k] != '=' {
		a.next = j
		return a
	}
	k++
	for k < n && isSpace(b[k]) {
		k++
	}
	switch {
	case k >= n:
		a.vs, a.ve, a.next = n, n, n
	case b[k] == '"' || b[k] == '\'':
		a.vs = k + 1
		if e := bytes.IndexByte(b[k+1:], b[k]); e >= 0 {
			a.ve, a.next = k+1+e, k+2+e
		} else {
			a.ve, a.next = n, n
		}
	default:
		a.vs = k
		for k < n && !isSpace(b[k]) && b[k] != '>' {
			k++
		}
		a.ve, a.next = k, k
	}
	return a
}

// tagEnd returns the index after the '>' that closes a tag whose attributes
// start at j (quoted values may hold '>'), or len(b).
func tagEnd(b []byte, j int) int {
	for {
		a := nextAttr(b, j)
		if a.ns < 0 {
			return a.next
		}
		j = a.next
	}
}

func nameEnd(b []byte, j int) int {
	for j < len(b) && !isSpace(b[j]) && b[j] != '/' && b[j] != '>' {
		j++
	}
	return j
}

// rawQuoted returns the lower-case name of a raw-text element whose content
// is not shown as part of the page (textarea, xmp, iframe, noembed,
// noframes), or "".
func rawQuoted(name []byte) string {
	for _, r := range [...]string{"textarea", "xmp", "iframe", "noembed", "noframes"} {
		if eqFold(name, r) {
			return r
		}
	}
	return ""
}

// quoting reports whether an element shows its content as an example.
func quoting(name []byte) bool {
	switch len(name) {
	case 1:
		return name[0]|0x20 == 'q'
	case 3:
		return eqFold(name, "pre") || eqFold(name, "kbd")
	case 4:
		return eqFold(name, "code") || eqFold(name, "samp")
	case 7:
		return eqFold(name, "listing")
	case 8:
		return eqFold(name, "template")
	case 10:
		return eqFold(name, "blockquote")
	}
	return false
}

// textAttr reports whether an attribute holds text shown to people.
func textAttr(name []byte) bool {
	return eqFold(name, "alt") || eqFold(name, "title") || eqFold(name, "placeholder") ||
		eqFold(name, "aria-label") || eqFold(name, "aria-description") || eqFold(name, "label")
}

// scriptType reports whether a script type attribute names JavaScript (the
// script runs) rather than data (JSON, JSON-LD, templates).
func scriptType(v []byte) bool {
	v = bytes.TrimSpace(v)
	return len(v) == 0 || eqFold(v, "module") || indexFold(v, []byte("javascript")) >= 0 ||
		indexFold(v, []byte("ecmascript")) >= 0 || indexFold(v, []byte("jscript")) >= 0
}

// buttonType reports whether an input type is one a person does not fill
// in: hidden, or a button.
func buttonType(v []byte) bool {
	v = bytes.TrimSpace(v)
	return eqFold(v, "hidden") || eqFold(v, "submit") || eqFold(v, "button") || eqFold(v, "image") || eqFold(v, "reset")
}

// inQuotation reports whether the text occurrence at s follows an odd
// number of quotation marks within quoteWindow bytes, counted from the end
// of the first tag in that window (attribute values come in pairs and keep
// the parity).
func inQuotation(b []byte, s int) bool {
	from := max(0, s-quoteWindow)
	if from > 0 {
		if gt := bytes.IndexByte(b[from:s], '>'); gt >= 0 {
			from += gt + 1
		}
	}
	marks := 0
	for i := from; i < s; i++ {
		switch c := b[i]; c {
		case '"':
			marks++
		case 0xC2: // « »
			if i+1 < s && (b[i+1] == 0xAB || b[i+1] == 0xBB) {
				marks++
			}
		case 0xE2: // “ ” „ ‟
			if i+2 < s && b[i+1] == 0x80 && b[i+2] >= 0x9C && b[i+2] <= 0x9F {
				marks++
			}
		case 0xE3: // 「 」 『 』
			if i+2 < s && b[i+1] == 0x80 && b[i+2] >= 0x8C && b[i+2] <= 0x8F {
				marks++
			}
		case '&':
			if quoteEntity(b[i+1 : min(s, i+10)]) {
				marks++
			}
		}
	}
	return marks%2 == 1
}

// quoteEntities are the character references of quotation marks.
var quoteEntities = [...]string{"quot;", "ldquo;", "rdquo;", "bdquo;", "laquo;", "raquo;",
	"#34;", "#x22;", "#171;", "#187;", "#8220;", "#8221;", "#8222;", "#xab;", "#xbb;", "#x201c;", "#x201d;", "#x201e;"}

func quoteEntity(b []byte) bool {
	for _, e := range quoteEntities {
		if len(b) >= len(e) && eqFold(b[:len(e)], e) {
			return true
		}
	}
	return false
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f'
}

func isTagBreak(c byte) bool { return isSpace(c) || c == '/' || c == '>' }

// eqFold reports whether b equals the lower-case ASCII word s, ignoring case.
func eqFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(s) {
		if lower(b[i]) != s[i] {
			return false
		}
	}
	return true
}
