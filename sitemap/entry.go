package sitemap

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Format is the kind of document a [Reader] found, detected from the content.
//
// The zero value is [FormatUnknown].
type Format int

// The formats a [Reader] recognises.
const (
	FormatUnknown Format = iota // nothing recognised (yet)
	FormatURLSet                // <urlset>: a sitemap of pages
	FormatIndex                 // <sitemapindex>: a sitemap of sitemaps
	FormatText                  // one URL per line
	FormatRSS                   // RSS 2.0 (<rss>)
	FormatRDF                   // RSS 1.0 (<rdf:RDF>)
	FormatAtom                  // Atom 0.3 and 1.0 (<feed>)
)

// String returns a short lower-case name ("urlset", "sitemapindex", "text", "rss", "rdf", "atom"),
// or "" for FormatUnknown.
func (f Format) String() string {
	switch f {
	case FormatURLSet:
		return "urlset"
	case FormatIndex:
		return "sitemapindex"
	case FormatText:
		return "text"
	case FormatRSS:
		return "rss"
	case FormatRDF:
		return "rdf"
	case FormatAtom:
		return "atom"
	}
	return ""
}

// Entry is one URL read from a sitemap, index or feed.
//
// An Entry is plain data returned by value; the zero Entry (no Loc) is
// never yielded except with an error by [Reader.All].
type Entry struct {
	// Loc is the absolute http or https URL, with surrounding white space
	// (including U+00A0) and embedded tabs and newlines removed, entities and
	// CDATA resolved.
	Loc string
	// LastMod is the entry's <lastmod> (<pubDate> in RSS, <updated> in Atom)
	// in UTC. It is meaningful only when HasLastMod is true.
	LastMod    time.Time
	HasLastMod bool
	// LastModErr is non-nil (a *DateError, errors.Is ErrBadDate) when the
	// entry had a date that could not be parsed; HasLastMod is then false.
	// A bad date never stops the reader.
	LastModErr error
	// ChangeFreq is one of "always", "hourly", "daily", "weekly", "monthly",
	// "yearly", "never", or "" when absent or not one of those.
	ChangeFreq string
	// Priority is the entry's <priority>, or 0.5 (the protocol's default)
	// when absent, unparseable or outside 0.0 to 1.0.
	Priority float64
	// IsSitemap is true for the children of a <sitemapindex>: Loc names
	// another sitemap, not a page.
	IsSitemap bool
}

// Default limits, from sitemaps.org.
const (
	DefaultMaxURLs  = 50_000
	DefaultMaxBytes = 50 << 20 // 50 MiB, uncompressed
	// DefaultMaxLocBytes bounds one URL (or one text line). The protocol
	// asks for fewer than 2,048 characters.
	DefaultMaxLocBytes = 8 << 10
)

// Errors. Each is returned wrapped in a typed error with the details;
// test with errors.Is.
var (
	// ErrTooManyURLs: the document holds more entries than Options.MaxURLs.
	ErrTooManyURLs = errors.New("sitemap: too many URLs")
	// ErrTooManySitemaps: a walk reached Walker.MaxSitemaps files.
	ErrTooManySitemaps = errors.New("sitemap: too many sitemaps")
	// ErrTooDeep: a walk met indexes nested deeper than Walker.MaxDepth.
	ErrTooDeep = errors.New("sitemap: sitemap indexes nested too deep")
	// ErrTooLarge: the document (uncompressed) is larger than Options.MaxBytes.
	ErrTooLarge = errors.New("sitemap: too large")
	// ErrSyntax: the document is cut short or is not a sitemap at all.
	ErrSyntax = errors.New("sitemap: syntax error")
	// ErrFormat: the document is XML but not a sitemap, index or feed.
	ErrFormat = errors.New("sitemap: unknown format")
	// ErrBadDate: a lastmod that could not be parsed (per entry, see Entry.LastModErr).
	ErrBadDate = errors.New("sitemap: bad date")
	// ErrEncoding: the document is in a character encoding the reader
	// cannot decode (see EncodingError).
	ErrEncoding = errors.New("sitemap: unsupported character encoding")
	// ErrStatus: a sitemap request answered with a status other than 200 or 304.
	ErrStatus = errors.New("sitemap: unexpected HTTP status")
)

// LimitError reports that a reader or a walk stopped at a limit.
// Everything yielded before it stays valid. It matches ErrTooManyURLs,
// ErrTooLarge, or (for a walk) ErrTooManySitemaps or ErrTooDeep.
//
// It is plain data; a zero LimitError (no Err) is never returned.
type LimitError struct {
	Err   error // ErrTooManyURLs, ErrTooLarge, ErrTooManySitemaps or ErrTooDeep
	Limit int64 // the limit that was reached
	URLs  int   // entries yielded before the stop
	Bytes int64 // uncompressed bytes read before the stop
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v: stopped at limit %d after %d URLs and %d bytes", e.Err, e.Limit, e.URLs, e.Bytes)
}

func (e *LimitError) Unwrap() error { return e.Err }

// SyntaxError reports a document that ends in the middle of its markup
// (truncated), or whose root element is not a sitemap, index or feed.
// It matches ErrSyntax, and io.ErrUnexpectedEOF when truncated, or ErrFormat.
//
// It is plain data; a zero SyntaxError is never returned.
type SyntaxError struct {
	Offset int64  // uncompressed byte offset
	Msg    string // what was wrong
	Err    error  // io.ErrUnexpectedEOF, ErrFormat or nil
}

func (e *SyntaxError) Error() string {
	return "sitemap: syntax error at byte " + strconv.FormatInt(e.Offset, 10) + ": " + e.Msg
}

func (e *SyntaxError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrSyntax}
	}
	return []error{ErrSyntax, e.Err}
}

// DateError reports a lastmod value that no supported layout matches.
//
// It is plain data; the zero value reports an empty date.
type DateError struct {
	Value string // as written, trimmed (at most 64 bytes kept)
}

func (e *DateError) Error() string { return "sitemap: bad date " + strconv.Quote(e.Value) }

func (e *DateError) Unwrap() error { return ErrBadDate }

// StatusError reports a sitemap request answered with an unexpected status.
//
// It is plain data; a zero StatusError (status 0) is never returned.
type StatusError struct {
	URL    string
	Status int
}

func (e *StatusError) Error() string {
	return "sitemap: " + e.URL + ": HTTP status " + strconv.Itoa(e.Status)
}

func (e *StatusError) Unwrap() error { return ErrStatus }
