package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Options bounds and scopes a [Reader]. A nil *Options means all defaults.
//
// The zero Options, like a nil *Options, means every default; a Reader
// copies the Options when it is made, so they may be reused or changed
// afterwards.
type Options struct {
	// MaxURLs is the most entries read from one document (valid entries,
	// yielded or dropped by the location rule). Zero means DefaultMaxURLs
	// (50,000); negative means no limit.
	MaxURLs int
	// MaxBytes is the most bytes read from one document after
	// decompression. Zero means DefaultMaxBytes (50 MiB); negative means no
	// limit.
	MaxBytes int64
	// MaxLocBytes bounds one URL, one text line and one tag; longer ones
	// are skipped and counted as invalid. Zero means DefaultMaxLocBytes.
	MaxLocBytes int
	// Location is the absolute URL the document was fetched from. When it
	// is set and CrossHost is false, the sitemaps.org location rule
	// applies: entries whose URL does not start with the same scheme, host,
	// port and directory are dropped and counted (see [Reader.Dropped]).
	// A Location that is not an absolute http(s) URL turns the rule off.
	Location string
	// CrossHost turns the location rule off, for sitemaps declared in a
	// robots.txt (the declaration proves ownership, so the sitemap may
	// list URLs on other hosts).
	CrossHost bool
}

func (o *Options) maxURLs() int {
	if o == nil || o.MaxURLs == 0 {
		return DefaultMaxURLs
	}
	return o.MaxURLs
}

func (o *Options) maxBytes() int64 {
	if o == nil || o.MaxBytes == 0 {
		return DefaultMaxBytes
	}
	return o.MaxBytes
}

func (o *Options) maxLocBytes() int {
	if o == nil || o.MaxLocBytes <= 0 {
		return DefaultMaxLocBytes
	}
	return min(o.MaxLocBytes, 1<<20)
}

const (
	bufSize     = 64 << 10
	maxGzip     = 3  // nested gzip layers unwrapped (.xml.gz sent with Content-Encoding: gzip is 2)
	maxEntity   = 12 // longest character reference looked at: &#x10FFFF;
	maxDateText = 128
)

// What text is being captured.
const (
	fNone = iota
	fLoc
	fLastMod
	fChangeFreq
	fPriority
	fLink      // RSS <link>
	fGUID      // RSS <guid>
	fPublished // Atom <published>, lower precedence than <updated>
)

// Reader reads the entries of one sitemap, sitemap index, text sitemap or
// feed from an io.Reader, one at a time, in constant memory. It detects the
// format from the content and gzip (one to three layers) from its magic
// bytes. Use it like a bufio.Scanner (Next, Entry, Err) or range over All.
//
// A Reader is tolerant, the way crawlers must be: it accepts a missing,
// wrong or prefixed namespace, a byte order mark, white space before the
// XML declaration, CDATA, character references, mixed-case tags, comments,
// a missing </url> (a second <loc> starts a new entry) and a URL written
// as bare text inside <sitemap>. It ignores extensions (image, video, news,
// xhtml:link, PageMap, ...): their URLs are not page URLs.
//
// It is safe by construction: it is not an XML parser and never expands
// entities (only the five predefined ones and numeric character references
// are decoded; a DTD is skipped, never fetched, and a URL holding an
// undeclared &name; is skipped as invalid), never buffers more than one
// URL, and stops with a *LimitError at Options.MaxURLs entries or
// Options.MaxBytes bytes.
//
// The zero Reader has nothing to read: Next returns false and Err reports
// that it was not made by [NewReader]. A Reader is not safe for concurrent
// use.
type Reader struct {
	src      io.Reader
	in       io.Reader
	opt      Options
	maxURLs  int
	maxBytes int64
	maxLoc   int
	scope    scope
	scoped   bool

	buf      []byte
	pos, end int
	eof      bool
	srcErr   error
	nread    int64

	started bool
	done    bool
	ready   bool
	format  Format
	entry   Entry
	err     error

	count, dropped, invalid int

	// XML state.
	rootLocal  []byte
	rootPrefix []byte
	okPrefix   [][]byte // prefixes bound to a sitemap namespace
	rootClosed bool
	latin1     bool     // the XML declaration says ISO-8859-1
	utf16      bool     // the document is UTF-16, decoded to UTF-8 as it is read
	feedBase   *url.URL // feeds: Options.Location with the root's xml:base applied
	entryBase  *url.URL // Atom: feedBase with the entry's xml:base applied
	inMarkup   bool
	inEntry    bool
	foreign    int // depth inside an extension element
	field      int
	fieldNest  int    // open elements inside the field
	text       []byte // captured text of field
	textOver   bool
	textBad    bool   // a character reference in text decoded to white space or a control character
	bare       []byte // direct text of <sitemap>/<url>, for a missing <loc>
	bareOver   bool   // bare text longer than maxLoc
	bareBad    bool   // like textBad, for bare
	cur        Entry
	curBad     bool
	guid       []byte
	updated    bool   // Atom: cur.LastMod came from <updated>
	tag        []byte // the current tag, between '<' and '>'
	tagBuf     []byte // r.tag's storage when it spans buffer refills
	pfx        []byte // r.tag's namespace prefix, or nil
	lname      [32]byte
	lnameLen   int

	// Text state.
	longLine bool
}

// errNoSource is the Err of a Reader with no io.Reader to read.
var errNoSource = errors.New("sitemap: Reader has no source (use NewReader with a non-nil io.Reader)")

// NewReader returns a Reader that reads from r. opt may be nil.
func NewReader(r io.Reader, opt *Options) *Reader {
	rd := &Reader{src: r}
	if opt != nil {
		rd.opt = *opt
	}
	rd.maxURLs = opt.maxURLs()
	rd.maxBytes = opt.maxBytes()
	rd.maxLoc = opt.maxLocBytes()
	return rd
}

// Read is shorthand for NewReader(r, opt).All().
func Read(r io.Reader, opt *Options) iter.Seq2[Entry, error] {
	return NewReader(r, opt).All()
}

// Next reads the next entry, which is then available through Entry. It
// returns false at the end of the document or on an error (see Err).
func (r *Reader) Next() bool {
	r.ready = false
	for !r.ready && !r.done {
		r.step()
	}
	return r.ready
}

// Entry returns the entry read by the last successful call to Next.
func (r *Reader) Entry() Entry { return r.entry }

// Err returns the error that ended the reading, or nil at a clean end. It
// is a *LimitError at a limit, a *SyntaxError for a truncated or unknown
// document, an *EncodingError for a character encoding it cannot decode,
// or the error of the underlying reader (gzip, network). The entries read
// before it are valid.
func (r *Reader) Err() error { return r.err }

// All returns an iterator over the entries. At the end, if reading failed,
// it yields one last zero Entry with the error. Breaking out of the loop
// stops reading.
func (r *Reader) All() iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		for r.Next() {
			if !yield(r.entry, nil) {
				return
			}
		}
		if r.err != nil {
			yield(Entry{}, r.err)
		}
	}
}

// Format returns the detected format (FormatUnknown before the first Next).
func (r *Reader) Format() Format { return r.format }

// Count returns the number of entries yielded so far.
func (r *Reader) Count() int { return r.count }

// Dropped returns the number of entries dropped by the location rule.
func (r *Reader) Dropped() int { return r.dropped }

// Invalid returns the number of entries skipped because they had no URL,
// a URL that is not absolute http(s), or one longer than MaxLocBytes.
func (r *Reader) Invalid() int { return r.invalid }

// Offset returns the number of uncompressed bytes consumed so far.
func (r *Reader) Offset() int64 { return r.nread - int64(r.end-r.pos) }

// open unwraps gzip layers and sets up the buffer.
func (r *Reader) open() {
	r.started = true
	r.buf = make([]byte, max(bufSize, 2*r.maxLoc+1024))
	if r.opt.Location != "" && !r.opt.CrossHost {
		r.scope, r.scoped = newScope(r.opt.Location)
	}
	if u, err := url.Parse(strings.TrimSpace(r.opt.Location)); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
		r.feedBase = u
	}
	br := bufio.NewReaderSize(r.src, 512)
	var in io.Reader = br
	for range maxGzip {
		magic, _ := br.Peek(2)
		if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
			break
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			r.srcErr = fmt.Errorf("sitemap: gzipped body: %w", err) // gzip's own errors say "gzip: ..."
			r.eof = true
			break
		}
		br = bufio.NewReaderSize(zr, 512)
		in = br
	}
	if !r.eof {
		dec, err := detectUTF16(br)
		if err != nil {
			r.srcErr, r.eof = err, true
		} else if dec != io.Reader(br) {
			in, r.utf16 = dec, true
		}
	}
	r.in = in
}

// fill moves unread bytes to the front of the buffer and reads more. It
// reports whether new bytes arrived.
func (r *Reader) fill() bool {
	if r.eof {
		return false
	}
	if r.pos > 0 {
		r.end = copy(r.buf, r.buf[r.pos:r.end])
		r.pos = 0
	}
	p := r.buf[r.end:]
	if len(p) == 0 {
		return false
	}
	if r.maxBytes >= 0 {
		if rem := r.maxBytes - r.nread + 1; int64(len(p)) > rem {
			p = p[:rem]
		}
	}
	for tries := 0; ; tries++ {
		n, err := r.in.Read(p)
		r.nread += int64(n)
		r.end += n
		if r.maxBytes >= 0 && r.nread > r.maxBytes {
			r.end -= int(r.nread - r.maxBytes)
			r.nread = r.maxBytes
			r.eof = true
			r.srcErr = &LimitError{Err: ErrTooLarge, Limit: r.maxBytes, Bytes: r.maxBytes}
			return n > 1
		}
		if err != nil {
			r.eof = true
			if err != io.EOF {
				r.srcErr = fmt.Errorf("sitemap: reading: %w", err)
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
		if tries > 100 {
			r.eof = true
			r.srcErr = fmt.Errorf("sitemap: reading: %w", io.ErrNoProgress)
			return false
		}
	}
}

// ensure tries to have n unread bytes buffered; it reports whether it has.
func (r *Reader) ensure(n int) bool {
	for r.end-r.pos < n {
		if !r.fill() {
			return false
		}
	}
	return true
}

func (r *Reader) step() {
	if !r.started {
		if r.src == nil { // a zero Reader, or NewReader(nil, ...)
			r.started, r.done, r.err = true, true, errNoSource
			return
		}
		r.open()
		r.detect()
		return
	}
	if r.format == FormatText {
		r.textStep()
	} else {
		r.xmlStep()
	}
}

// detect skips a byte order mark and white space, then tells XML from text.
func (r *Reader) detect() {
	if r.ensure(3) || r.end-r.pos > 0 {
		if bytes.HasPrefix(r.buf[r.pos:r.end], []byte("\xef\xbb\xbf")) {
			r.pos += 3
		}
	}
	for {
		for r.pos < r.end && isSpace(r.buf[r.pos]) {
			r.pos++
		}
		if r.pos < r.end {
			break
		}
		if !r.fill() {
			r.finish()
			return
		}
	}
	if r.buf[r.pos] != '<' {
		r.format = FormatText
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// finish ends the document: it flushes a complete pending entry and sets
// the final error.
func (r *Reader) finish() {
	r.done = true
	if r.srcErr != nil {
		if le, ok := r.srcErr.(*LimitError); ok {
			le.URLs = r.count
		}
		r.err = r.srcErr
		return
	}
	switch r.format {
	case FormatText:
		return
	case FormatUnknown:
		if r.started && r.rootLocal == nil {
			r.err = &SyntaxError{Offset: r.Offset(), Msg: "no root element (empty document?)", Err: io.ErrUnexpectedEOF}
		}
		return
	}
	if r.inEntry && (r.field == fNone || r.inMarkup) {
		// The document stops between tokens, or inside a tag after the
		// text of a field: what was read of the entry is complete.
		r.endField()
		r.closeEntry()
	}
	if r.err == nil && !r.rootClosed {
		r.err = &SyntaxError{Offset: r.Offset(), Msg: "unexpected end of document (truncated?)", Err: io.ErrUnexpectedEOF}
	}
}

// ---- text sitemaps ----

func (r *Reader) textStep() {
	for {
		b := r.buf[r.pos:r.end]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			r.pos += i + 1
			if r.longLine {
				r.longLine = false
				r.invalid++
				continue
			}
			r.textLine(b[:i])
			if r.ready || r.done {
				return
			}
			continue
		}
		if len(b) > r.maxLoc {
			r.longLine = true
			r.pos = r.end
		}
		if !r.fill() {
			if r.srcErr == nil && !r.longLine {
				r.textLine(r.buf[r.pos:r.end])
			} else if r.longLine {
				r.invalid++
			}
			r.pos = r.end
			r.finish()
			return
		}
	}
}

func (r *Reader) textLine(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	if len(line) > r.maxLoc {
		r.invalid++
		return
	}
	r.emit(Entry{Loc: string(line), Priority: 0.5})
}

// ---- XML ----

func (r *Reader) capturing() bool {
	return r.foreign == 0 && (r.field != fNone || (r.inEntry && r.cur.Loc == "" && (r.format == FormatIndex || r.format == FormatURLSet)))
}

func (r *Reader) xmlStep() {
	for {
		b := r.buf[r.pos:r.end]
		if i := bytes.IndexByte(b, '<'); i >= 0 {
			if i > 0 && r.capturing() {
				r.addText(b[:i], false)
			}
			r.pos += i + 1
			break
		}
		if r.capturing() {
			// Keep a character reference cut by the buffer end for the next round.
			if j := bytes.LastIndexByte(b, '&'); j >= 0 && len(b)-j < maxEntity && !r.eof {
				b = b[:j]
			}
			r.addText(b, false)
		}
		r.pos += len(b)
		if !r.fill() {
			r.inMarkup = false
			if r.pos < r.end && r.capturing() {
				r.addText(r.buf[r.pos:r.end], false)
			}
			r.pos = r.end
			r.finish()
			return
		}
	}
	r.inMarkup = true
	ok := r.markup()
	if !ok {
		r.finish()
		return
	}
	r.inMarkup = false
}

var (
	cdataOpen    = []byte("![CDATA[")
	cdataClose   = []byte("]]>")
	commentOpen  = []byte("!--")
	commentClose = []byte("-->")
	piClose      = []byte("?>")
)

// markup handles what follows a '<'. It returns false at the end of input.
func (r *Reader) markup() bool {
	if r.end-r.pos < len(cdataOpen) {
		r.ensure(len(cdataOpen))
	}
	b := r.buf[r.pos:r.end]
	if len(b) == 0 {
		return false
	}
	switch b[0] {
	case '!':
		switch {
		case bytes.HasPrefix(b, commentOpen):
			r.pos += len(commentOpen)
			return r.skipPast(commentClose, false)
		case bytes.HasPrefix(b, cdataOpen):
			r.pos += len(cdataOpen)
			return r.skipPast(cdataClose, true)
		default:
			return r.skipDecl()
		}
	case '?':
		if r.format == FormatUnknown && bytes.HasPrefix(b, []byte("?xml ")) {
			return r.xmlDecl()
		}
		r.pos++
		return r.skipPast(piClose, false)
	case '/':
		r.pos++
		if !r.readTag() {
			return false
		}
		r.endTag()
	default:
		if !r.readTag() {
			return false
		}
		r.startTag()
	}
	return true
}

// skipPast consumes input through term. With cdata, the bytes before term
// are captured text.
func (r *Reader) skipPast(term []byte, cdata bool) bool {
	for {
		b := r.buf[r.pos:r.end]
		if i := bytes.Index(b, term); i >= 0 {
			if cdata && r.capturing() {
				r.addText(b[:i], true)
			}
			r.pos += i + len(term)
			return true
		}
		keep := min(len(b), len(term)-1)
		if cdata && r.capturing() {
			r.addText(b[:len(b)-keep], true)
		}
		r.pos = r.end - keep
		if !r.fill() {
			if cdata {
				// The document stops inside the text of a CDATA section,
				// not in a tag after it: a field's text is cut, not whole.
				r.inMarkup = false
			}
			return false
		}
	}
}

// skipDecl skips <!DOCTYPE ...> and other declarations, including an
// internal subset in brackets. Nothing in it is interpreted.
func (r *Reader) skipDecl() bool {
	depth := 0
	var quote byte
	for {
		b := r.buf[r.pos:r.end]
		for i, c := range b {
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				}
			case c == '"' || c == '\'':
				quote = c
			case c == '[':
				depth++
			case c == ']':
				depth--
			case c == '>' && depth <= 0:
				r.pos += i + 1
				return true
			}
		}
		r.pos = r.end
		if !r.fill() {
			return false
		}
	}
}

// readTag reads the rest of a tag up to '>' into r.tag (at most maxLoc
// bytes kept) and sets its name. r.tag may alias the buffer: it is valid
// until the next fill.
func (r *Reader) readTag() bool {
	b := r.buf[r.pos:r.end]
	if i := bytes.IndexByte(b, '>'); i >= 0 {
		r.tag = b[:min(i, r.maxLoc)]
		r.pos += i + 1
		r.setName()
		return true
	}
	r.tagBuf = r.tagBuf[:0]
	for {
		b := r.buf[r.pos:r.end]
		if i := bytes.IndexByte(b, '>'); i >= 0 {
			r.appendTag(b[:i])
			r.pos += i + 1
			r.tag = r.tagBuf
			r.setName()
			return true
		}
		r.appendTag(b)
		r.pos = r.end
		if !r.fill() {
			return false
		}
	}
}

func (r *Reader) appendTag(b []byte) {
	if room := r.maxLoc - len(r.tagBuf); room > 0 {
		r.tagBuf = append(r.tagBuf, b[:min(len(b), room)]...)
	}
}

// setName finds r.tag's name, splits off its prefix and lower-cases the
// local part into r.lname.
func (r *Reader) setName() {
	tag := r.tag
	n, colon := len(tag), -1
	for i, c := range tag {
		if c == ':' {
			colon = i
		} else if c <= ' ' || c == '/' {
			n = i
			break
		}
	}
	r.pfx = nil
	if colon >= 0 && colon < n {
		r.pfx = tag[:colon]
	}
	name := tag[colon+1 : n]
	if len(name) > len(r.lname) {
		name = name[:0] // no name we care about is that long
	}
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		r.lname[i] = c
	}
	r.lnameLen = len(name)
}

func (r *Reader) local() []byte { return r.lname[:r.lnameLen] }

func (r *Reader) prefix() []byte { return r.pfx }

func (r *Reader) selfClosing() bool {
	return len(r.tag) > 0 && r.tag[len(r.tag)-1] == '/'
}

// isSitemapNS reports whether a namespace URI is a sitemap namespace
// (sitemaps.org 0.9 over http or https, Google's legacy 0.84 and 0.9).
func isSitemapNS(uri []byte) bool {
	return bytes.Contains(uri, []byte("/schemas/sitemap/"))
}

// root handles the first element.
func (r *Reader) root() {
	switch string(r.local()) {
	case "urlset":
		r.format = FormatURLSet
	case "sitemapindex":
		r.format = FormatIndex
	case "rss":
		r.format = FormatRSS
	case "rdf":
		r.format = FormatRDF
	case "feed":
		r.format = FormatAtom
	}
	r.rootLocal = append([]byte(nil), r.local()...)
	if r.format == FormatUnknown {
		r.done = true
		r.err = &SyntaxError{Offset: r.Offset(), Msg: "root element <" + string(r.rootLocal) + "> is not a sitemap, index or feed", Err: ErrFormat}
		return
	}
	if p := r.prefix(); p != nil {
		r.rootPrefix = append([]byte(nil), p...)
		r.okPrefix = append(r.okPrefix, r.rootPrefix)
	}
	eachAttr(r.tag, func(name, val []byte) {
		if p, ok := bytes.CutPrefix(name, []byte("xmlns:")); ok && isSitemapNS(val) {
			r.okPrefix = append(r.okPrefix, append([]byte(nil), p...))
		}
	})
	if r.format == FormatAtom || r.format == FormatRSS || r.format == FormatRDF {
		r.feedBase = r.xmlBase(r.feedBase)
	}
	if r.selfClosing() {
		r.rootClosed = true
	}
}

// xmlBase returns base with the current tag's xml:base attribute applied
// (RFC 3986 resolution), or base when the tag has none. A relative
// xml:base with no base to resolve it against is ignored.
func (r *Reader) xmlBase(base *url.URL) *url.URL {
	eachAttr(r.tag, func(name, val []byte) {
		if string(name) != "xml:base" {
			return
		}
		dec, _ := appendDecoded(nil, bytes.TrimSpace(val))
		ref, err := url.Parse(string(dec))
		switch {
		case err != nil:
		case ref.IsAbs() && ref.Host != "" && (ref.Scheme == "http" || ref.Scheme == "https"):
			base = ref
		case base != nil && !ref.IsAbs():
			base = base.ResolveReference(ref)
		}
	})
	return base
}

// resolveLink makes a feed's relative link absolute against base (the
// entry's xml:base, the feed's, or the document URL). It returns loc
// unchanged when loc is already absolute, cannot be parsed, or there is
// no base (such a loc is then rejected as invalid).
func resolveLink(loc []byte, base *url.URL) []byte {
	if base == nil || hasHTTPScheme(loc) {
		return loc
	}
	ref, err := url.Parse(string(loc))
	if err != nil || ref.IsAbs() {
		return loc
	}
	return []byte(base.ResolveReference(ref).String())
}

// isForeign reports whether the current start tag belongs to an extension:
// a prefix not bound to a sitemap namespace (or the root's), or a default
// namespace redeclared to something else.
func (r *Reader) isForeign() bool {
	if p := r.prefix(); p != nil {
		for _, ok := range r.okPrefix {
			if bytes.Equal(p, ok) {
				return false
			}
		}
		return !(r.lnameLen == 4 && string(r.local()) == "date" && string(p) == "dc")
	}
	if bytes.Contains(r.tag, []byte("xmlns")) {
		foreign := false
		eachAttr(r.tag, func(name, val []byte) {
			if string(name) == "xmlns" && !isSitemapNS(val) && r.format != FormatAtom && r.format != FormatRSS && r.format != FormatRDF {
				foreign = true
			}
			if string(name) == "xmlns" && (r.format == FormatAtom || r.format == FormatRSS || r.format == FormatRDF) &&
				!bytes.Contains(val, []byte("2005/Atom")) && !bytes.Contains(val, []byte("purl.org/rss")) && !bytes.Contains(val, []byte("purl.org/atom")) {
				foreign = true
			}
		})
		return foreign
	}
	return false
}

// isEntry reports whether name (a lower-cased local name) opens or closes
// an entry. In a <urlset>, a <sitemap> element is an entry too: it names a
// child sitemap, not a page.
func (r *Reader) isEntry(name string) bool {
	return name == r.entryName() || (r.format == FormatURLSet && name == "sitemap")
}

func (r *Reader) entryName() string {
	switch r.format {
	case FormatURLSet:
		return "url"
	case FormatIndex:
		return "sitemap"
	case FormatAtom:
		return "entry"
	}
	return "item"
}

func (r *Reader) startTag() {
	if r.format == FormatUnknown {
		r.root()
		return
	}
	selfClose := r.selfClosing()
	if r.foreign > 0 {
		if !selfClose {
			r.foreign++
		}
		return
	}
	if r.field != fNone { // markup inside a field (<loc><url>...</url></loc>) is ignored
		if !selfClose {
			r.fieldNest++
		}
		return
	}
	if r.isForeign() {
		if !selfClose {
			r.foreign = 1
		}
		return
	}
	name := string(r.local()) // no allocation: used only in comparisons
	if r.isEntry(name) {
		if r.inEntry {
			r.closeEntry()
		}
		if !selfClose {
			r.beginEntry()
			r.cur.IsSitemap = r.format == FormatIndex || name == "sitemap"
			if r.format == FormatAtom {
				r.entryBase = r.xmlBase(r.feedBase)
			}
		}
		return
	}
	switch r.format {
	case FormatURLSet, FormatIndex:
		switch name {
		case "loc":
			if !r.inEntry {
				r.beginEntry()
			} else if r.cur.Loc != "" || r.curBad {
				// A second <loc>: the previous entry was not closed.
				r.closeEntry()
				r.beginEntry()
			}
			r.startField(fLoc, selfClose)
		case "lastmod":
			r.startField(fLastMod, selfClose)
		case "changefreq":
			r.startField(fChangeFreq, selfClose)
		case "priority":
			r.startField(fPriority, selfClose)
		}
	case FormatRSS, FormatRDF:
		switch name {
		case "link":
			r.startField(fLink, selfClose)
		case "guid":
			r.startField(fGUID, selfClose)
		case "pubdate", "date":
			r.startField(fLastMod, selfClose)
		}
	case FormatAtom:
		switch name {
		case "link":
			if r.inEntry && r.cur.Loc == "" {
				r.atomLink()
			}
		case "updated", "modified":
			r.startField(fLastMod, selfClose)
		case "published", "issued":
			r.startField(fPublished, selfClose)
		}
	}
}

// atomLink takes the first <link> with no rel or rel="alternate". A
// relative href is resolved against the link's own xml:base, the entry's,
// the feed's and the document URL (Options.Location), in that order.
func (r *Reader) atomLink() {
	var href []byte
	alternate := true
	eachAttr(r.tag, func(name, val []byte) {
		switch string(name) {
		case "href":
			href = val
		case "rel":
			alternate = string(bytes.TrimSpace(val)) == "alternate"
		}
	})
	if alternate && href != nil {
		r.text, r.textBad = appendDecoded(r.text[:0], href)
		r.textOver = false
		r.setLocBase(r.xmlBase(r.entryBase))
	}
}

func (r *Reader) startField(f int, selfClose bool) {
	if !r.inEntry || selfClose {
		return
	}
	r.field = f
	r.fieldNest = 0
	r.text = r.text[:0]
	r.textOver, r.textBad = false, false
}

func (r *Reader) endTag() {
	name := string(r.local())
	entry := r.isEntry(name) && r.prefixOK()
	if r.foreign > 0 {
		if !entry {
			r.foreign--
			return
		}
		r.foreign = 0
	}
	if r.field != fNone && !r.fieldEnds(name) && (r.fieldNest > 0 || !entry) {
		// An end tag inside a field (</url> in <loc><url>...</url></loc>).
		r.fieldNest = max(0, r.fieldNest-1)
		return
	}
	r.endField()
	if entry {
		if r.inEntry {
			r.closeEntry()
		}
		return
	}
	if r.prefixOK() && bytes.Equal(r.local(), r.rootLocal) {
		if r.inEntry {
			r.closeEntry()
		}
		r.rootClosed = true
	}
}

func (r *Reader) prefixOK() bool {
	p := r.prefix()
	if p == nil {
		return true
	}
	for _, ok := range r.okPrefix {
		if bytes.Equal(p, ok) {
			return true
		}
	}
	return false
}

func (r *Reader) fieldEnds(name string) bool {
	switch r.field {
	case fLoc:
		return name == "loc"
	case fLastMod:
		return name == "lastmod" || name == "pubdate" || name == "date" || name == "updated" || name == "modified"
	case fChangeFreq:
		return name == "changefreq"
	case fPriority:
		return name == "priority"
	case fLink:
		return name == "link"
	case fGUID:
		return name == "guid"
	case fPublished:
		return name == "published" || name == "issued"
	}
	return false
}

func (r *Reader) addText(b []byte, cdata bool) {
	if r.foreign > 0 {
		return
	}
	dst, over := &r.text, &r.textOver
	limit := r.maxLoc
	if r.field == fNone {
		dst, over = &r.bare, &r.bareOver
	} else if r.field != fLoc && r.field != fLink && r.field != fGUID {
		limit = maxDateText
	}
	if *over {
		return
	}
	if r.latin1 && !isASCII(b) {
		b = latin1ToUTF8(b)
	}
	if cdata {
		*dst = append(*dst, b...)
	} else {
		var bad bool
		*dst, bad = appendDecoded(*dst, b)
		if r.field == fNone {
			r.bareBad = r.bareBad || bad
		} else {
			r.textBad = r.textBad || bad
		}
	}
	if len(*dst) > limit {
		*over = true
		*dst = (*dst)[:0]
	}
}

func (r *Reader) beginEntry() {
	r.inEntry = true
	r.cur = Entry{Priority: 0.5, IsSitemap: r.format == FormatIndex}
	r.curBad = false
	r.field = fNone
	r.bare = r.bare[:0]
	r.bareOver, r.bareBad = false, false
	r.guid = r.guid[:0]
	r.updated = false
}

// setLoc stores r.text as the entry's URL.
func (r *Reader) setLoc() { r.setLocBase(nil) }

// setLocBase stores r.text as the entry's URL, resolved against base when
// it is relative and base is not nil.
func (r *Reader) setLocBase(base *url.URL) {
	if r.textOver || r.textBad {
		r.curBad = true
		return
	}
	loc := resolveLink(cleanLoc(r.text), base)
	if len(loc) > r.maxLoc {
		r.curBad = true
		return
	}
	if len(loc) > 0 {
		r.cur.Loc = string(loc)
		r.curBad = false
	}
}

// xmlDecl reads the XML declaration for its encoding. Documents are read
// as UTF-8 (which covers US-ASCII); in one declared as ISO-8859-1 (or
// windows-1252, read as ISO-8859-1) the captured text is converted to
// UTF-8; UTF-16 was recognised from its byte order mark (or zero bytes)
// and is already decoded (a declaration saying UTF-16 on a document with
// no zero bytes is read as the UTF-8 it is). Any other declared encoding
// stops the reader with an *EncodingError: reading it as UTF-8 would
// yield wrong URLs.
func (r *Reader) xmlDecl() bool {
	if !r.readTag() {
		return false
	}
	eachAttr(r.tag, func(name, val []byte) {
		if string(name) != "encoding" || r.done {
			return
		}
		switch encodingKind(string(val)) {
		case "latin1":
			r.latin1 = !r.utf16
		case "bad":
			r.done, r.err = true, newEncodingError(string(val))
		}
	})
	return true
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func latin1ToUTF8(b []byte) []byte {
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = utf8.AppendRune(out, rune(c))
	}
	return out
}

// endField stores the captured text of the current field.
func (r *Reader) endField() {
	f := r.field
	r.field = fNone
	if f == fNone || !r.inEntry {
		return
	}
	switch f {
	case fLoc:
		r.setLoc()
	case fLink:
		if r.cur.Loc == "" {
			r.setLocBase(r.feedBase)
		}
	case fGUID:
		if !r.textOver && !r.textBad {
			r.guid = append(r.guid[:0], r.text...)
		}
	case fLastMod, fPublished:
		if f == fPublished && r.updated {
			return
		}
		text := bytes.TrimSpace(r.text)
		if r.textOver {
			r.cur.LastModErr = newDateError(string(r.text[:min(len(r.text), 64)]))
			r.cur.HasLastMod = false
			return
		}
		if len(text) == 0 {
			return
		}
		t, err := parseLastModBytes(text)
		if err != nil {
			r.cur.LastModErr, r.cur.HasLastMod = err, false
			return
		}
		r.cur.LastMod, r.cur.HasLastMod, r.cur.LastModErr = t, true, nil
		r.updated = f == fLastMod
	case fChangeFreq:
		r.cur.ChangeFreq = changeFreq(bytes.TrimSpace(r.text))
	case fPriority:
		r.cur.Priority = priority(bytes.TrimSpace(r.text))
	}
}

// closeEntry ends the current entry and emits it if it has a URL.
func (r *Reader) closeEntry() {
	r.endField()
	r.inEntry = false
	r.foreign = 0
	e := r.cur
	if e.Loc == "" && len(r.guid) > 0 {
		if loc := cleanLoc(r.guid); hasHTTPScheme(loc) {
			e.Loc = string(loc)
		}
	}
	if e.Loc == "" && !r.curBad && !r.bareOver && !r.bareBad && len(r.bare) > 0 {
		if loc := cleanLoc(r.bare); hasHTTPScheme(loc) {
			e.Loc = string(loc)
		}
	}
	if e.Loc == "" {
		r.invalid++
		return
	}
	r.emit(e)
}

// emit checks an entry's URL against validity, the location rule and the
// URL limit, and hands it to Next.
func (r *Reader) emit(e Entry) {
	if !validLoc(e.Loc) {
		r.invalid++
		return
	}
	if r.maxURLs >= 0 && r.count+r.dropped >= r.maxURLs {
		r.done = true
		r.err = &LimitError{Err: ErrTooManyURLs, Limit: int64(r.maxURLs), URLs: r.count, Bytes: r.Offset()}
		return
	}
	if r.scoped && !r.scope.contains(e.Loc) {
		r.dropped++
		return
	}
	r.count++
	r.entry = e
	r.ready = true
}

// ---- helpers ----

// cleanLoc trims white space (Unicode, so U+00A0 too) and removes tabs and
// line breaks inside the URL.
func cleanLoc(b []byte) []byte {
	b = bytes.TrimSpace(b)
	clean := true
	for _, c := range b {
		if c == '\t' || c == '\r' || c == '\n' {
			clean = false
			break
		}
	}
	if clean {
		return b
	}
	out := b[:0:0]
	for _, c := range b {
		if c != '\t' && c != '\r' && c != '\n' {
			out = append(out, c)
		}
	}
	return out
}

// hasHTTPScheme reports whether b starts with http:// or https:// (any
// case) and has something after it, as validLoc requires.
func hasHTTPScheme(b []byte) bool {
	return len(b) > 7 && bytes.EqualFold(b[:7], []byte("http://")) ||
		len(b) > 8 && bytes.EqualFold(b[:8], []byte("https://"))
}

// validLoc accepts absolute http and https URLs with a host, no control
// characters or spaces, and no entity reference left unexpanded ("&nbsp;",
// "&amp;" from double escaping): such a string is markup, not a URL.
func validLoc(s string) bool {
	var rest string
	switch {
	case len(s) > 7 && equalFoldASCII(s[:7], "http://"):
		rest = s[7:]
	case len(s) > 8 && equalFoldASCII(s[:8], "https://"):
		rest = s[8:]
	default:
		return false
	}
	if rest == "" || rest[0] == '/' || rest[0] == '?' || rest[0] == '#' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return false
		}
	}
	return !hasEntityRef(s)
}

// hasEntityRef reports whether s holds an XML entity or character
// reference: '&', a name (or '#' and digits), ';'.
func hasEntityRef(s string) bool {
	for {
		i := strings.IndexByte(s, '&')
		if i < 0 {
			return false
		}
		s = s[i+1:]
		j := 0
		if j < len(s) && s[j] == '#' {
			j++
		}
		start := j
		for j < len(s) && (isNameByte(s[j]) || (j > start && (s[j] == '-' || s[j] == '.' || ('0' <= s[j] && s[j] <= '9')))) {
			j++
		}
		if j > start && j < len(s) && s[j] == ';' {
			return true
		}
	}
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == ':' || ('0' <= c && c <= '9')
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

var changeFreqs = [...]string{"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"}

func changeFreq(b []byte) string {
	for _, f := range changeFreqs {
		if bytes.EqualFold(b, []byte(f)) {
			return f
		}
	}
	return ""
}

func priority(b []byte) float64 {
	// Fast path: "0.x", "1.0", "0", "1".
	switch {
	case len(b) == 1 && (b[0] == '0' || b[0] == '1'):
		return float64(b[0] - '0')
	case len(b) == 3 && b[1] == '.' && b[2] >= '0' && b[2] <= '9':
		if b[0] == '0' {
			return float64(b[2]-'0') / 10
		}
		if b[0] == '1' && b[2] == '0' {
			return 1
		}
		return 0.5
	}
	p, err := strconv.ParseFloat(string(b), 64)
	if err != nil || p < 0 || p > 1 || p != p {
		return 0.5
	}
	return p
}

// appendDecoded appends b with the five predefined entities and numeric
// character references decoded. Anything else (an undeclared &name;, a
// reference to an invalid code point) is kept as written: nothing is
// ever expanded from a DTD. ws reports a reference that decoded to white
// space or a control character, which no URL holds.
func appendDecoded(dst, b []byte) (out []byte, ws bool) {
	for {
		i := bytes.IndexByte(b, '&')
		if i < 0 {
			return append(dst, b...), ws
		}
		dst = append(dst, b[:i]...)
		b = b[i:]
		j := bytes.IndexByte(b[:min(len(b), maxEntity)], ';')
		if j < 0 {
			dst = append(dst, '&')
			b = b[1:]
			continue
		}
		if c, ok := charRef(b[1:j]); ok {
			ws = ws || unicode.IsSpace(c) || unicode.IsControl(c)
			dst = utf8.AppendRune(dst, c)
		} else {
			dst = append(dst, b[:j+1]...)
		}
		b = b[j+1:]
	}
}

func charRef(ref []byte) (rune, bool) {
	switch string(ref) {
	case "amp":
		return '&', true
	case "lt":
		return '<', true
	case "gt":
		return '>', true
	case "quot":
		return '"', true
	case "apos":
		return '\'', true
	}
	if len(ref) < 2 || ref[0] != '#' {
		return 0, false
	}
	base, digits := 10, ref[1:]
	if digits[0] == 'x' || digits[0] == 'X' {
		base, digits = 16, digits[1:]
	}
	n, err := strconv.ParseUint(string(digits), base, 32)
	if err != nil || n == 0 || !utf8.ValidRune(rune(n)) {
		return 0, false
	}
	return rune(n), true
}

// eachAttr calls fn for each name="value" attribute of a tag (the bytes
// between '<' and '>'). Values are raw (not entity-decoded).
func eachAttr(tag []byte, fn func(name, val []byte)) {
	i := 0
	for i < len(tag) && !isSpace(tag[i]) && tag[i] != '/' {
		i++
	}
	for i < len(tag) {
		for i < len(tag) && (isSpace(tag[i]) || tag[i] == '/') {
			i++
		}
		start := i
		for i < len(tag) && tag[i] != '=' && !isSpace(tag[i]) && tag[i] != '/' {
			i++
		}
		name := tag[start:i]
		for i < len(tag) && isSpace(tag[i]) {
			i++
		}
		if i >= len(tag) || tag[i] != '=' {
			if i == start {
				i++
			}
			continue
		}
		i++
		for i < len(tag) && isSpace(tag[i]) {
			i++
		}
		if i >= len(tag) {
			return
		}
		var val []byte
		if q := tag[i]; q == '"' || q == '\'' {
			end := bytes.IndexByte(tag[i+1:], q)
			if end < 0 {
				val, i = tag[i+1:], len(tag)
			} else {
				val, i = tag[i+1:i+1+end], i+2+end
			}
		} else {
			start := i
			for i < len(tag) && !isSpace(tag[i]) {
				i++
			}
			val = tag[start:i]
		}
		fn(name, val)
	}
}
