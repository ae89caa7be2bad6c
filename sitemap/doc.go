// Package sitemap reads sitemaps, sitemap indexes, text sitemaps and
// RSS/Atom feeds in constant memory, walks a site's sitemaps, and tells
// which pages changed since the last read, so a bot can re-read only what
// moved: on a site that published nothing, a freshness check is one
// conditional request.
//
// # Reading
//
// [Reader] (and its shorthand [Read]) yields one [Entry] at a time from an
// io.Reader. The format is detected from the content (<urlset>,
// <sitemapindex>, <rss>, <rdf:RDF>, <feed>, or one URL per line), gzip from
// its magic bytes, up to three layers deep. The sitemaps.org limits apply
// by default and are never silent: past 50,000 URLs or 50 MiB uncompressed
// the reader stops with a *[LimitError] that says how far it got, and the
// entries already read stay usable; a gzip bomb stops at the byte limit.
//
// The reader is a hand-written tolerant tokenizer, not encoding/xml:
// encoding/xml would cost several times the time and allocations (see
// BENCHMARKS.md) and is strict where real sitemaps are not (undeclared
// prefixes, stray end tags, truncated files). It decodes only the five
// predefined entities and numeric character references; it skips DTDs
// without reading them, never expands a declared entity and never fetches
// anything, so entity-expansion attacks ("billion laughs") and external
// entities have no effect.
//
// Real-world deviations accepted: a missing, wrong (Google's legacy) or
// prefixed namespace, a byte order mark and white space before the XML
// declaration, white space and line breaks around and inside <loc>
// (U+00A0 included), CDATA, mixed-case tags, comments, a missing </url>
// (a second <loc> starts a new entry, with a fresh lastmod), a URL written
// as bare text in <sitemap>, and <loc><url>...</url></loc>. Extension
// elements (image, video, news, xhtml:link, mobile, PageMap) are skipped:
// their URLs are never page URLs. A truncated document yields the entries
// that were complete and then a *[SyntaxError] (errors.Is
// io.ErrUnexpectedEOF).
//
// Documents are read as UTF-8 (the protocol requires it); one whose XML
// declaration says ISO-8859-1 or windows-1252 has its text converted, and
// one in UTF-16 (either byte order, recognised by its byte order mark or,
// without one, by its zero bytes) is decoded to UTF-8 as it is read, in
// fixed memory; the byte limit applies to the UTF-8, so at most twice as
// many UTF-16 bytes are read. A document in any other encoding (UTF-32, or an XML
// declaration naming, say, Shift_JIS) stops with an *[EncodingError]
// before any entry: it is never read as an empty sitemap.
//
// A sitemap's <loc> must be absolute, and a relative one is skipped as
// invalid. A feed's relative link is resolved: an Atom href against the
// xml:base of the link, its entry and the feed (each relative to the one
// above) and the document URL (Options.Location); an RSS <link> against
// the channel's xml:base and the document URL. A loc that still holds an
// entity reference ("&nbsp;", or "&amp;" escaped twice), or whose
// character references decode to white space or a control character, is
// markup, not a URL: it is skipped and counted ([Reader.Invalid]). A
// <sitemap> element inside a <urlset> is read as a child sitemap
// (Entry.IsSitemap), never as a page.
//
// Dates: see [ParseLastMod]. A date that cannot be parsed is reported on
// its entry (Entry.LastModErr); it never stops the reader.
//
// The location rule of sitemaps.org (a sitemap at /catalog/sitemap.xml may
// only list URLs under http://same-host/catalog/) applies when
// Options.Location is set; the entries outside are dropped and counted
// ([Reader.Dropped]). Paths are compared after their dot segments are
// resolved, raw or percent-encoded (see [InScope]), so "/blog/../admin" and
// "/blog/%2e%2e/admin" are outside "/blog/". Options.CrossHost turns the
// rule off for sitemaps declared in robots.txt, which may list other hosts.
//
// # Walking and checking a site
//
// [Walker] fetches sitemaps through the caller's *http.Client (so the
// bot's User-Agent, pacing, robots.txt and signatures apply), follows
// indexes up to a depth, reads each sitemap once per walk (self-references
// and cycles are skipped), and caps the number of files and pages per
// site. [Walker.Walk] streams the page entries and returns the failures
// as one bounded *[WalkError]; [Walker.WalkReport] also returns a [Report]
// saying, file by file, what was fetched, answered 304, failed or skipped,
// and why. [Walker.Check] is the
// freshness check: conditional requests from the validators kept in a
// [Store], then [Diff] against the previous read. What a walk takes, and
// so what Check holds and stores, is bounded by Walker.MaxURLs and chosen
// by Walker.Keep: set them to what the bot will crawl (see [Walker] for
// every bound).
//
// # Lastmod and what moved
//
// [Diff] reports the pages that are new, whose lastmod moved forward (or
// that gained one), and that are gone, with a reason per page
// (DiffResult.Changes). A lastmod that went backwards or lies in the
// future is no evidence of a change, and pages without one say nothing:
// these are reported as Unknown, and the caller asks them with
// If-Modified-Since. Within one file a URL listed twice keeps its latest
// lastmod; a lastmod written as 0001-01-01 is a date like any other. When a read's lastmods look generated
// (build-time stamping, or dates in the future) the result is Untrusted,
// and the caller should fall back to conditional requests instead of
// refetching every page. The rule is documented on [Diff].
//
// # State
//
// [Store] keeps each site's last read: per sitemap, its ETag and
// Last-Modified and the lastmod of each page. [MemoryStore] keeps it in
// memory; the subpackage sitemap/boltstore keeps it in a bbolt database the
// bot already has open (so all of its state is one file). This package
// itself imports only the standard library and golang.org/x/net: idna, for
// the site key that makes every spelling of a host one site (the location
// rule, cycle detection and the Store key), as politeness.HostKey does,
// and http/httpguts, which tells a stored ETag or Last-Modified net/http
// would refuse to send (a damaged record): such a value is left out of the
// conditional request.
package sitemap
