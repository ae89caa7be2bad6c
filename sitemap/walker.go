package sitemap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/goodbot-go/goodbot/internal/sitekey"
)

// Walker defaults.
const (
	// DefaultMaxDepth is how many index levels are followed below the
	// sitemaps given (an index of indexes of sitemaps is depth 2).
	DefaultMaxDepth = 3
	// DefaultMaxSitemaps is the most sitemap files fetched in one walk.
	DefaultMaxSitemaps = 1000
	// DefaultMaxSiteURLs is the most page URLs taken from one site in one walk.
	DefaultMaxSiteURLs = 1_000_000
)

// Walker fetches a site's sitemaps through a caller-supplied client,
// follows sitemap indexes, and hands over the page entries. It never
// fetches the same sitemap twice in one walk (self-references and cycles
// such as A to B to A are skipped), follows at most MaxDepth index
// levels, and stops at MaxSitemaps files or MaxURLs pages.
//
// Bounds. A walk makes at most MaxSitemaps requests and reads each file
// within Options (by default the sitemaps.org 50 MiB and 50,000 URLs), in
// constant memory per file; an index keeps at most MaxSitemaps children
// (the most a walk can fetch: the rest are counted as skipped, and such an
// index is read in full each time). [Walker.Walk] holds one entry at a
// time. [Walker.Check] holds, diffs and stores every page entry it takes
// (a few hundred bytes of memory each at its peak, and its URL plus about
// 40 bytes in the Store), and it takes at most MaxURLs of them: at the
// default, 1,000,000, one read was measured at about 520 MiB of heap and a
// 66 MB state file. A caller that will crawl N pages sets MaxURLs to N,
// and Keep to the pages it would crawl at all, so that what is kept is
// bounded by what will be crawled. A [Report] holds one
// FileReport per file requested and lists at most MaxReportedSkips
// skipped files.
//
// The zero Walker is usable: http.DefaultClient, an in-memory Store,
// polite limits. Set Client to the bot's client so its User-Agent,
// pacing, robots.txt rules and signatures apply to sitemap requests.
// A Walker is safe for concurrent use when its Store is; do not change
// its fields during a walk.
type Walker struct {
	// Client makes the requests; nil means http.DefaultClient.
	Client *http.Client
	// Store keeps the state between Check calls; nil means a MemoryStore
	// private to this Walker (created on first use).
	Store Store
	// MaxDepth, MaxSitemaps and MaxURLs bound one walk; zero means
	// DefaultMaxDepth, DefaultMaxSitemaps and DefaultMaxSiteURLs. MaxURLs
	// counts the page entries taken (passed to fn, or kept by Check,
	// including those a 304 carries over from the last read); the walk
	// stops reading when it is reached (see FileCut).
	MaxDepth    int
	MaxSitemaps int
	MaxURLs     int
	// Keep, when set, chooses the page entries a walk takes: an entry it
	// rejects is read and counted (Report.Filtered) but not passed to fn,
	// not kept by Check, and not counted against MaxURLs. Child sitemaps
	// are not filtered. It is called from the walking goroutine.
	Keep func(Entry) bool
	// Options bounds each file (MaxURLs, MaxBytes, MaxLocBytes); nil means
	// the sitemaps.org limits. Location and CrossHost are set per file by
	// the Walker.
	Options *Options
	// CrossHost, for Walk, says the sitemap URLs were declared in
	// robots.txt: the location rule is not applied to them or their
	// children. Check sets it by itself.
	CrossHost bool
	// Logger receives skipped sitemaps, per-file errors and the number of
	// entries dropped by the location rule or invalid; nil is silent.
	Logger *slog.Logger

	mem MemoryStore
}

// MaxReportedSkips is how many sitemaps skipped for a limit a [Report]
// lists (in Files and Skipped); SkippedCount counts them all.
const MaxReportedSkips = 100

// MaxReportedErrors is how many per-file errors a *[WalkError] carries;
// Count says how many there were.
const MaxReportedErrors = 10

// FileOutcome says what a walk did with one sitemap file. The values are
// stable strings, fit for logs and reports.
type FileOutcome string

// The outcomes of a sitemap file in a walk.
const (
	// FileFetched: answered 200 and read to its end.
	FileFetched FileOutcome = "fetched"
	// FileNotModified: answered 304 to a conditional request; its last
	// read stands.
	FileNotModified FileOutcome = "not-modified"
	// FileFailed: requested, but not read to its end (network error,
	// status, syntax, encoding, a limit inside the file); Err says why.
	FileFailed FileOutcome = "failed"
	// FileCut: read until MaxURLs pages were taken; the rest of the file
	// (and the files after it) were not read. It is not a failure: the
	// file keeps its validators, and its state is the entries taken (a
	// later Check with a larger MaxURLs reads it in full again).
	FileCut FileOutcome = "cut-max-urls"
	// FileDuplicate: redirected to a sitemap already read in this walk
	// (a cycle): not read again.
	FileDuplicate FileOutcome = "duplicate"
	// FileSkippedDepth: not requested, nested deeper than MaxDepth.
	FileSkippedDepth FileOutcome = "skipped-depth"
	// FileSkippedMaxSitemaps: not requested, MaxSitemaps files reached.
	FileSkippedMaxSitemaps FileOutcome = "skipped-max-sitemaps"
	// FileSkippedMaxURLs: not requested, MaxURLs pages reached.
	FileSkippedMaxURLs FileOutcome = "skipped-max-urls"
)

// FileReport is what a walk did with one sitemap file.
//
// It is plain data.
type FileReport struct {
	URL     string
	Depth   int // 0 for the sitemaps the walk started from
	Outcome FileOutcome
	Status  int   // HTTP status; 0 when not requested or no response
	Err     error // why it failed or was skipped; nil otherwise
	// Pages, Children, Dropped and Invalid count the file's entries: page
	// entries taken, child sitemaps, entries outside the location rule,
	// entries without a usable URL.
	Pages, Children, Dropped, Invalid int
}

// Report says what a walk did. Its size is bounded by the walk's limits:
// one FileReport per file requested (at most MaxSitemaps), and at most
// MaxReportedSkips skipped files listed.
//
// It is plain data; the zero Report describes a walk that made no
// request.
type Report struct {
	Requests    int // HTTP requests made
	Fetched     int // sitemaps read (200)
	NotModified int // sitemaps answered 304
	Pages       int // page entries read
	Dropped     int // entries dropped by the location rule
	Invalid     int // entries without a usable URL
	Filtered    int // page entries Walker.Keep rejected
	// Files lists the sitemaps requested and the first MaxReportedSkips
	// skipped for a limit, in walk order.
	Files []FileReport
	// Skipped lists the URLs of the first MaxReportedSkips sitemaps not
	// fetched for a limit (depth, file count, page count); SkippedCount
	// counts them all.
	Skipped      []string
	SkippedCount int
	// Duplicates counts sitemaps met again after being read (a
	// self-reference, a cycle, a redirect to one already read): not
	// failures, and not requested again.
	Duplicates int
	// Errors lists the per-sitemap failures (status, syntax, limit), at
	// most one per file requested plus one per walk limit reached.
	Errors []error
	// Complete is true when every sitemap was read to its end.
	Complete bool
}

// Failed returns the number of files requested that could not be read to
// their end (Outcome FileFailed): a walk cut by its own limits has none.
func (r *Report) Failed() int {
	n := 0
	for _, f := range r.Files {
		if f.Outcome == FileFailed {
			n++
		}
	}
	return n
}

// Err returns nil when the walk had no failure, else a *WalkError
// carrying the first MaxReportedErrors of Errors, the first *LimitError of
// each kind among the rest (so errors.Is still finds every limit
// reached), and their count.
func (r *Report) Err() error {
	if r == nil || len(r.Errors) == 0 {
		return nil
	}
	n := min(len(r.Errors), MaxReportedErrors)
	carried := slices.Clone(r.Errors[:n])
	for _, err := range r.Errors[n:] {
		var le *LimitError
		if errors.As(err, &le) && !slices.ContainsFunc(carried, func(c error) bool { return errors.Is(c, le.Err) }) {
			carried = append(carried, err)
		}
	}
	return &WalkError{Errors: carried, Count: len(r.Errors)}
}

// WalkError reports the per-file failures of a walk, bounded: the first
// MaxReportedErrors of them (and one of each kind of limit reached), and
// how many there were. errors.Is and
// errors.As see the errors it carries (*StatusError, *LimitError,
// *SyntaxError, *EncodingError, a network error).
//
// It is plain data; a WalkError with no Errors is never returned.
type WalkError struct {
	Errors []error // the first failures, in walk order
	Count  int     // all failures, Errors included
}

func (e *WalkError) Error() string {
	var b strings.Builder
	b.WriteString("sitemap: ")
	b.WriteString(strconv.Itoa(e.Count))
	if e.Count == 1 {
		b.WriteString(" sitemap failed: ")
	} else {
		b.WriteString(" sitemaps failed: ")
	}
	for i, err := range e.Errors {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(strings.TrimPrefix(err.Error(), "sitemap: "))
	}
	if more := e.Count - len(e.Errors); more > 0 {
		fmt.Fprintf(&b, "; and %d more", more)
	}
	return b.String()
}

func (e *WalkError) Unwrap() []error { return e.Errors }

// CheckResult is the outcome of [Walker.Check].
//
// It is plain data; the zero value describes a check that read nothing.
type CheckResult struct {
	DiffResult
	Report
	// First is true when the Store held nothing for the site: every page
	// is New.
	First bool
	// Listed is the number of distinct pages the site's sitemaps list in
	// this read, those of files answered 304 included (Report.Pages counts
	// only the entries actually read).
	Listed int
	// StateErr is the Store's error (errors.Is ErrBadState) when the
	// site's stored state did not decode: the site was read as never read
	// (First) and this read's state replaced it. Nil otherwise.
	StateErr error
}

func (w *Walker) client() *http.Client {
	if w.Client == nil {
		return http.DefaultClient
	}
	return w.Client
}

func (w *Walker) store() Store {
	if w.Store == nil {
		return &w.mem
	}
	return w.Store
}

func (w *Walker) logger() *slog.Logger {
	if w.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Logger
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// DefaultSitemapURL returns the conventional sitemap location of a site
// ("https://example.com" gives "https://example.com/sitemap.xml"), used
// when robots.txt declares none.
func DefaultSitemapURL(site string) string {
	u, err := url.Parse(site)
	if err != nil || u.Host == "" {
		return strings.TrimSuffix(site, "/") + "/sitemap.xml"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/sitemap.xml"}).String()
}

// DeclaredSitemaps returns the Sitemap lines of a robots.txt, as written
// in the file, resolved against the robots.txt URL (RFC 3986: "/s.xml" and
// "s.xml" become absolute), keeping only http and https URLs, without
// duplicates (the same URL after lower-casing scheme and host and
// dropping a default port and the fragment), in file order. A robotsURL
// that is not an absolute URL leaves relative lines out.
func DeclaredSitemaps(robotsURL string, lines []string) []string {
	base, err := url.Parse(strings.TrimSpace(robotsURL))
	if err != nil || !base.IsAbs() {
		base = nil
	}
	out := make([]string, 0, len(lines))
	seen := make(map[string]bool, len(lines))
	for _, l := range lines {
		l = strings.TrimSpace(l)
		ref, err := url.Parse(l)
		if err != nil || l == "" {
			continue
		}
		if !ref.IsAbs() {
			if base == nil {
				continue
			}
			ref = base.ResolveReference(ref)
		}
		if (ref.Scheme != "http" && ref.Scheme != "https") || ref.Host == "" {
			continue
		}
		u := ref.String()
		if _, err := url.Parse(u); err != nil {
			continue // resolved into something that is not a URL ("https://h::")
		}
		if k := normURL(u); !seen[k] {
			seen[k] = true
			out = append(out, u)
		}
	}
	return out
}

// robotsURL is the robots.txt URL of a site's origin.
func robotsURL(site string) string {
	u, err := url.Parse(site)
	if err != nil || u.Host == "" {
		return strings.TrimSuffix(site, "/") + "/robots.txt"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"}).String()
}

// Walk fetches the given sitemaps (usually the robots.txt Sitemap: lines)
// and their children, and calls fn for every page entry, in document
// order. It makes no conditional requests and keeps no state (see Check).
// An error from fn stops the walk and is returned. Otherwise Walk returns
// the walk's failures as one bounded *WalkError (errors.As finds
// *StatusError, *LimitError, *SyntaxError through it), or nil, after
// delivering every entry it could read. [Walker.WalkReport] says more.
func (w *Walker) Walk(ctx context.Context, sitemapURLs []string, fn func(Entry) error) error {
	rep, err := w.WalkReport(ctx, sitemapURLs, fn)
	if err != nil {
		return err
	}
	return rep.Err()
}

// WalkReport is Walk with a report of what was fetched and skipped, and
// why, file by file. Its error is only an error from fn or the end of ctx
// (the report then says how far the walk got); per-file failures are in
// the report (see [Report.Err]).
func (w *Walker) WalkReport(ctx context.Context, sitemapURLs []string, fn func(Entry) error) (*Report, error) {
	return w.walk(ctx, sitemapURLs, w.CrossHost, nil, nil, fn)
}

// Check is a freshness check: it reads the site's sitemaps with
// conditional requests (a sitemap unchanged since the last Check costs one
// 304), compares what they list with the last read kept in the Store,
// saves the new read, and returns the difference.
//
// site is the site's origin ("https://example.com"; the state is kept
// under one key for every spelling of it); declared are the Sitemap lines
// of its robots.txt as written (cross-host allowed): Check resolves
// relative ones against site's /robots.txt and drops duplicates (see
// [DeclaredSitemaps]). When none is left Check reads
// DefaultSitemapURL(site) under the location rule.
// Per-file failures do not fail the check: that file's previous state is
// kept, the result is not Complete (so nothing is Gone) and the failures
// are in Report.Errors. Check returns an error only when the Store fails
// or ctx ends, and then saves nothing. A stored state that does not decode
// (the Store's Load error matches [ErrBadState]) is no such failure: the
// site is read as never read (the result is First, with the error in
// StateErr, and a Warn line is logged) and the new read replaces it, so a
// damaged record costs one full read, not every check after it.
func (w *Walker) Check(ctx context.Context, site string, declared []string) (*CheckResult, error) {
	store := w.store()
	key := siteStoreKey(site)
	prev, err := store.Load(ctx, key)
	var stateErr error
	switch {
	case errors.Is(err, ErrBadState):
		prev, stateErr = nil, err // read as never read; the Save below replaces it
		w.logger().LogAttrs(ctx, slog.LevelWarn, "sitemap: the stored state of the site does not decode; reading it as never read",
			slog.String("site", key), slog.Any("err", err))
	case err != nil:
		return nil, err
	}
	roots, cross := DeclaredSitemaps(robotsURL(site), declared), true
	if len(roots) == 0 {
		roots, cross = []string{DefaultSitemapURL(site)}, false
	}
	cur := &State{Sitemaps: make(map[string]*SitemapState)}
	rep, err := w.walk(ctx, roots, cross, prev, cur, nil)
	if err != nil {
		return nil, err
	}
	cur.Complete = rep.Complete
	if !cur.Complete && prev != nil {
		// Keep what this read could not see, so nothing is lost, within
		// MaxURLs pages in all.
		kept := 0
		for _, sm := range cur.Sitemaps {
			kept += len(sm.Pages)
		}
		maxPages := orDefault(w.MaxURLs, DefaultMaxSiteURLs)
		for _, u := range slices.Sorted(maps.Keys(prev.Sitemaps)) {
			sm := prev.Sitemaps[u]
			if _, ok := cur.Sitemaps[u]; !ok && kept+len(sm.Pages) <= maxPages {
				cur.Sitemaps[u] = sm
				kept += len(sm.Pages)
			}
		}
	}
	res := &CheckResult{Report: *rep, First: prev == nil, StateErr: stateErr}
	snap := cur.Snapshot()
	res.Listed = len(snap.Pages)
	res.DiffResult = Diff(prev.Snapshot(), snap)
	if err := store.Save(ctx, key, cur); err != nil {
		return nil, err
	}
	return res, nil
}

// siteStoreKey is the Store key of site: its origin with the host spelled
// as the site key spells it and the default port dropped, so that every
// spelling of one site shares one state ("HTTPS://Example.COM.:0443" is
// "https://example.com"). A site that is not an absolute URL is its own key.
func siteStoreKey(site string) string {
	u, err := url.Parse(strings.TrimSpace(site))
	if err != nil || u.Host == "" {
		return site
	}
	key := string(sitekey.Append(nil, u))
	switch {
	case strings.HasPrefix(key, "http://"):
		return strings.TrimSuffix(key, ":80")
	case strings.HasPrefix(key, "https://"):
		return strings.TrimSuffix(key, ":443")
	}
	return key
}

type job struct {
	url   string
	depth int
}

// walk visits the sitemaps depth first. With cur set it records each
// file's state (and uses prev's validators); with fn set it streams the
// page entries.
func (w *Walker) walk(ctx context.Context, roots []string, cross bool, prev, cur *State, fn func(Entry) error) (*Report, error) {
	rep := &Report{Complete: true}
	maxDepth := orDefault(w.MaxDepth, DefaultMaxDepth)
	maxFiles := orDefault(w.MaxSitemaps, DefaultMaxSitemaps)
	maxPages := orDefault(w.MaxURLs, DefaultMaxSiteURLs)
	run := &walkRun{w: w, ctx: ctx, cross: cross, rep: rep, fn: fn, keep: cur != nil,
		seen: make(map[string]bool), maxPages: maxPages, maxFiles: maxFiles, limited: make(map[error]*LimitError)}
	seen := run.seen
	stack := make([]job, 0, len(roots))
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, job{url: strings.TrimSpace(roots[i])})
	}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		key := normURL(j.url)
		switch {
		case seen[key]:
			// A sitemap met twice (self-reference, cycle, duplicate) is
			// read once; that is not a failure.
			rep.Duplicates++
			continue
		case j.depth > maxDepth:
			run.skip(j, FileSkippedDepth, ErrTooDeep, maxDepth)
			continue
		case rep.Requests >= maxFiles:
			run.skip(j, FileSkippedMaxSitemaps, ErrTooManySitemaps, maxFiles)
			continue
		case run.taken >= maxPages:
			run.skip(j, FileSkippedMaxURLs, ErrTooManyURLs, maxPages)
			continue
		}
		seen[key] = true
		var old *SitemapState
		if prev != nil {
			old = prev.Sitemaps[j.url]
		}
		fr := FileReport{URL: j.url, Depth: j.depth, Outcome: FileFetched}
		at := len(rep.Files) // the file's report comes before the skips it causes
		rep.Files = append(rep.Files, fr)
		children, st, err := run.fetch(j.url, old, &fr)
		switch {
		case fr.Outcome == FileCut: // the caller's cap, not a failure
			fr.Err = err
			rep.Errors = append(rep.Errors, err)
			rep.Complete = false
		case err != nil:
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			var fe *fnError
			if errors.As(err, &fe) {
				return rep, fe.err
			}
			fr.Outcome, fr.Err = FileFailed, err
			rep.Errors = append(rep.Errors, err)
			rep.Complete = false
			w.logger().LogAttrs(ctx, slog.LevelWarn, "sitemap: read failed", slog.String("url", j.url), slog.Any("err", err))
		}
		fr.Children = len(children)
		rep.Files[at] = fr
		if cur != nil && st != nil {
			cur.Sitemaps[j.url] = &st.SitemapState
			if cur.Read.IsZero() {
				cur.Read = st.read
			}
		}
		for i := len(children) - 1; i >= 0; i-- {
			stack = append(stack, job{url: children[i], depth: j.depth + 1})
		}
	}
	if cur != nil && cur.Read.IsZero() {
		cur.Read = time.Now().UTC()
	}
	return rep, nil
}

// walkRun is the state of one walk that fetch shares.
type walkRun struct {
	w                  *Walker
	ctx                context.Context
	cross              bool // the location rule is off
	rep                *Report
	fn                 func(Entry) error // nil: no streaming
	keep               bool              // record each file's state (Check)
	seen               map[string]bool   // normURL of the sitemaps read
	taken              int               // page entries taken: read, or carried over by a 304
	maxPages, maxFiles int
	limited            map[error]*LimitError // the walk limits reached
}

// skip records a sitemap not fetched for a walk limit: counted, and
// listed while fewer than MaxReportedSkips are.
func (r *walkRun) skip(j job, why FileOutcome, limit error, max int) {
	r.rep.SkippedCount++
	le := r.limit(limit, max)
	if len(r.rep.Skipped) < MaxReportedSkips {
		r.rep.Skipped = append(r.rep.Skipped, j.url)
		r.rep.Files = append(r.rep.Files, FileReport{URL: j.url, Depth: j.depth, Outcome: why, Err: le})
		r.w.logger().LogAttrs(r.ctx, slog.LevelInfo, "sitemap: skipped", slog.String("url", j.url), slog.String("reason", string(why)))
	}
}

// limit records that the walk reached one of its limits: the walk is not
// Complete, and the first time, a *LimitError joins the report's Errors.
func (r *walkRun) limit(limit error, max int) *LimitError {
	r.rep.Complete = false
	le := r.limited[limit]
	if le == nil {
		le = &LimitError{Err: limit, Limit: int64(max), URLs: r.rep.Pages}
		r.limited[limit] = le
		r.rep.Errors = append(r.rep.Errors, le)
	}
	return le
}

type fnError struct{ err error }

func (e *fnError) Error() string { return e.err.Error() }

// fetch reads one sitemap. It returns the children to visit (for an
// index), the file's new state (when keep is set; on failure, the old
// state merged with what could be read) and the file's error.
func (r *walkRun) fetch(u string, old *SitemapState, fr *FileReport) ([]string, *fileState, error) {
	w, ctx, rep, keep, maxPages := r.w, r.ctx, r.rep, r.keep, r.maxPages
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("sitemap: %w", err)
	}
	if old != nil && (old.Cut == 0 || old.Cut >= maxPages) {
		// A stored value net/http would refuse to send (a control
		// character: a damaged record) is left out: sent, it would fail
		// this file's every read, and no read would replace it.
		if old.ETag != "" && httpguts.ValidHeaderFieldValue(old.ETag) {
			req.Header.Set("If-None-Match", old.ETag)
		}
		if old.LastModified != "" && httpguts.ValidHeaderFieldValue(old.LastModified) {
			req.Header.Set("If-Modified-Since", old.LastModified)
		}
	}
	rep.Requests++
	resp, err := w.client().Do(req)
	if err != nil {
		return nil, carry(old), fmt.Errorf("sitemap: %w", err) // a *url.Error: errors.As finds it
	}
	defer func() {
		// Drain a little so the connection can be reused, then close.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
	}()
	fr.Status = resp.StatusCode
	if k := normURL(resp.Request.URL.String()); k != normURL(u) {
		// A redirect to a sitemap already read is a cycle too (another
		// spelling of u is not a redirect).
		if r.seen[k] {
			// Its pages are those of the sitemap already read: it keeps no
			// state of its own (what it listed before is no longer listed).
			rep.Duplicates++
			fr.Outcome = FileDuplicate
			return nil, nil, nil
		}
		r.seen[k] = true
	}
	read := serverTime(resp)
	switch {
	case resp.StatusCode == http.StatusNotModified && old != nil:
		fr.Outcome = FileNotModified
		rep.NotModified++
		r.taken += len(old.Pages)
		st := carry(old)
		st.read = read
		return old.Children, st, nil
	case resp.StatusCode != http.StatusOK:
		return nil, carry(old), &StatusError{URL: u, Status: resp.StatusCode}
	}
	rep.Fetched++
	opt := Options{}
	if w.Options != nil {
		opt = *w.Options
	}
	opt.Location, opt.CrossHost = resp.Request.URL.String(), r.cross
	st := &fileState{read: read}
	if keep {
		st.ETag = resp.Header.Get("ETag")
		st.LastModified = resp.Header.Get("Last-Modified")
		st.Pages = make(map[string]time.Time)
	}
	var children []string
	extra := false // children past maxFiles were skipped
	rd := NewReader(resp.Body, &opt)
	for rd.Next() {
		e := rd.Entry()
		if e.IsSitemap {
			// No walk fetches more than maxFiles sitemaps: the children
			// past that many are counted as skipped, not kept.
			if len(children) < r.maxFiles {
				children = append(children, e.Loc)
			} else {
				extra = true
				r.skip(job{url: e.Loc, depth: fr.Depth + 1}, FileSkippedMaxSitemaps, ErrTooManySitemaps, r.maxFiles)
			}
			continue
		}
		if w.Keep != nil && !w.Keep(e) {
			rep.Filtered++
			continue
		}
		if r.taken >= maxPages {
			// The caller's cap: what was taken stands, validators
			// included (a 304 next time means the same first entries).
			fr.Outcome = FileCut
			if keep {
				st.Children, st.Cut = children, maxPages
			}
			return children, st, &LimitError{Err: ErrTooManyURLs, Limit: int64(maxPages), URLs: rep.Pages, Bytes: rd.Offset()}
		}
		r.taken++
		rep.Pages++
		fr.Pages++
		if keep {
			// A URL listed twice keeps its latest lastmod (a date beats none).
			lm := LastModOf(e)
			if old, seen := st.Pages[e.Loc]; !seen || lm.After(old) {
				st.Pages[e.Loc] = lm
			}
		}
		if r.fn != nil {
			if err := r.fn(e); err != nil {
				return nil, nil, &fnError{err}
			}
		}
	}
	rep.Dropped += rd.Dropped()
	rep.Invalid += rd.Invalid()
	fr.Dropped, fr.Invalid = rd.Dropped(), rd.Invalid()
	if rd.Dropped()+rd.Invalid() > 0 {
		w.logger().LogAttrs(ctx, slog.LevelInfo, "sitemap: entries skipped", slog.String("url", u),
			slog.Int("outside_location", rd.Dropped()), slog.Int("invalid", rd.Invalid()))
	}
	if extra {
		if keep {
			// The children kept are not the whole index: read it in full
			// next time rather than trusting a 304.
			st.ETag, st.LastModified = "", ""
		}
	}
	if keep {
		st.Children = children
	}
	if err := rd.Err(); err != nil {
		return children, st.failed(old), err
	}
	return children, st, nil
}

// fileState is a SitemapState with the time the response was made.
type fileState struct {
	SitemapState
	read time.Time
}

// carry returns the old state kept as is (after a 304 or a failure).
func carry(old *SitemapState) *fileState {
	if old == nil {
		return nil
	}
	return &fileState{SitemapState: *old}
}

// failed merges a partial read with the old state and drops the
// validators, so the next check reads the file in full.
func (st *fileState) failed(old *SitemapState) *fileState {
	if st.Pages == nil {
		return carry(old)
	}
	if old != nil {
		merged := maps.Clone(old.Pages)
		if merged == nil {
			merged = make(map[string]time.Time)
		}
		maps.Copy(merged, st.Pages)
		st.Pages = merged
	}
	st.ETag, st.LastModified = "", ""
	return st
}

// serverTime is the response's Date, or now.
func serverTime(resp *http.Response) time.Time {
	if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		return d.UTC()
	}
	return time.Now().UTC()
}

// normURL is the key for cycle detection: scheme and host as in the site
// key (one spelling per site, port explicit), fragment removed.
func normURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	key := string(sitekey.Append(nil, u))
	i := strings.Index(key, "://")
	u.Scheme, u.Host = key[:i], key[i+3:]
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}
