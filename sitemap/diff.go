package sitemap

import (
	"slices"
	"time"
)

// Snapshot is what one read of a site's sitemaps said: each page URL with
// its lastmod (the zero time when the entry had none).
//
// A Snapshot is plain data; [Diff] only reads it, so one Snapshot may be
// diffed from several goroutines at once.
type Snapshot struct {
	// Read is when the sitemaps were read, by the server's clock (its Date
	// header) when known. Diff uses it to spot lastmods in the future
	// (zero: Diff uses the time it runs).
	Read time.Time
	// Pages maps page URLs to their lastmod; the zero time means none
	// given. A lastmod written as the zero instant itself
	// (0001-01-01T00:00:00Z) is a date, and is kept as [ZeroInstant].
	Pages map[string]time.Time
	// Complete is true when every sitemap was read to its end (no error,
	// no limit reached). Only then can a page be known to be gone.
	Complete bool
}

// ZeroInstant is how [Snapshot] and [SitemapState] keep a lastmod written
// as 0001-01-01T00:00:00Z, the zero time.Time that otherwise means "no
// lastmod": one nanosecond later, so it stays a date (and a page listed
// with it and later with a real date has moved forward).
var ZeroInstant = time.Time{}.Add(time.Nanosecond)

// LastModOf returns what a [Snapshot] keeps for e: its lastmod in UTC,
// [ZeroInstant] for a lastmod at the zero instant, or the zero time when e
// has none.
func LastModOf(e Entry) time.Time {
	switch {
	case !e.HasLastMod:
		return time.Time{}
	case e.LastMod.IsZero():
		return ZeroInstant
	}
	return e.LastMod.UTC()
}

// Change says why [Diff] put a page where it did. The values are stable
// strings, fit for logs and reports.
type Change string

// The reasons of a Diff, per page.
const (
	// ChangeNew: in the current read only (New).
	ChangeNew Change = "new"
	// ChangeGone: in the previous read only, and the current read is
	// Complete (Gone).
	ChangeGone Change = "gone"
	// ChangeMoved: the lastmod went forward (Moved).
	ChangeMoved Change = "moved"
	// ChangeGainedLastMod: the page had no lastmod in the previous read
	// and has one now (Moved).
	ChangeGainedLastMod Change = "gained-lastmod"
	// ChangeUnchanged: the same lastmod in both reads (Unchanged).
	ChangeUnchanged Change = "unchanged"
	// ChangeBackwards: the lastmod went back in time: no evidence of a
	// change (Unknown).
	ChangeBackwards Change = "lastmod-backwards"
	// ChangeFuture: the new lastmod lies more than FutureSlack past the
	// read: no evidence of a change (Unknown).
	ChangeFuture Change = "lastmod-in-future"
	// ChangeNoLastMod: the current read gives no lastmod (Unknown).
	ChangeNoLastMod Change = "no-lastmod"
)

// DiffResult is the difference between two reads of a site's sitemaps.
// Every list is sorted.
//
// It is plain data; the zero value means "nothing changed", with no
// pages.
type DiffResult struct {
	// New lists pages in the current read that the previous one lacked.
	New []string
	// Moved lists pages whose lastmod differs between the two reads.
	Moved []string
	// Gone lists pages of the previous read that the current one lacks.
	// It is empty when the current read is not Complete.
	Gone []string
	// Unknown lists pages present in both reads whose lastmods are no
	// evidence either way: none now, one that went backwards, or one in
	// the future. The sitemap cannot tell whether they changed, so the
	// caller asks the page itself with If-Modified-Since (and
	// If-None-Match), which costs a 304 when it did not.
	Unknown []string
	// Unchanged counts pages present in both reads with the same lastmod.
	Unchanged int
	// Untrusted is true when the current read's lastmods look generated
	// rather than real (see Diff); Reason says why. The caller should then
	// treat Moved like Unknown: use conditional requests, not refetches.
	Untrusted bool
	Reason    string
	// Changes gives the reason of every page of both reads (Gone ones
	// only when the current read is Complete).
	Changes map[string]Change
}

// Thresholds of the untrusted-lastmod rule (see Diff).
const (
	// StampMinMoved is the fewest moved pages for the build-stamp rule.
	StampMinMoved = 10
	// StampShare is the share of the moved pages that must carry the very
	// same new lastmod for the build-stamp rule.
	StampShare = 0.9
	// StampWindow is how close to the read time the moved lastmods of a
	// sitemap generated on request ("lastmod = now") lie.
	StampWindow = 5 * time.Minute
	// FutureSlack is how far past the read time a lastmod may lie (time
	// zones, clock skew) before it counts as being in the future.
	FutureSlack = 24 * time.Hour
	// FutureShare is the share of dated pages that may lie in the future
	// before the read's lastmods are untrusted.
	FutureShare = 0.01
)

// Diff compares the previous read of a site's sitemaps with the current
// one. With no previous read (prev.Pages empty) every page is New. Each
// page's reason is in Changes.
//
// Per page, a lastmod is evidence of a change only when it moved forward
// to a time not in the future: a page whose lastmod went forward is Moved,
// and so is one that had none before and has one now; one whose lastmod
// went backwards, or now lies more than FutureSlack past cur.Read (or past
// the time Diff runs, when cur.Read is zero), or that has no lastmod now,
// is Unknown, and the caller relies on If-Modified-Since.
//
// Lastmod trust. Many sites stamp every URL with the time the sitemap was
// built, so "lastmod moved" on every page means nothing. The current read
// is Untrusted when either:
//
//   - build stamping: of the pages dated in the current read and present
//     in both, more than half moved, at least StampMinMoved of them, and
//     at least StampShare (90%) of the moved pages now carry one identical
//     timestamp;
//   - stamped on request: the same, but with StampShare of the moved
//     pages dated within StampWindow of cur.Read (a sitemap generated with
//     "lastmod = now", whose seconds differ from page to page); or
//   - future dates: more than FutureShare (1%) of the dated pages, and at
//     least one, carry a lastmod later than cur.Read + FutureSlack.
//
// New, Moved and Gone are reported either way.
func Diff(prev, cur Snapshot) DiffResult {
	d := DiffResult{Changes: make(map[string]Change, len(cur.Pages))}
	read := cur.Read
	if read.IsZero() {
		read = time.Now()
	}
	future := read.Add(FutureSlack)
	dated, datedNow, inFuture, nearRead := 0, 0, 0, 0
	stamps := make(map[int64]int) // new lastmod (Unix ns) -> moved pages
	for u, lm := range cur.Pages {
		isFuture := !lm.IsZero() && lm.After(future)
		if !lm.IsZero() {
			datedNow++
		}
		if isFuture {
			inFuture++
		}
		old, ok := prev.Pages[u]
		var c Change
		switch {
		case !ok:
			c = ChangeNew
		case lm.IsZero():
			c = ChangeNoLastMod
		case isFuture:
			c = ChangeFuture
		case old.IsZero():
			c = ChangeGainedLastMod
		case lm.Equal(old):
			c = ChangeUnchanged
		case lm.Before(old):
			c = ChangeBackwards
		default:
			c = ChangeMoved
		}
		d.Changes[u] = c
		if ok && !lm.IsZero() {
			dated++
		}
		switch c {
		case ChangeNew:
			d.New = append(d.New, u)
		case ChangeNoLastMod, ChangeFuture, ChangeBackwards:
			d.Unknown = append(d.Unknown, u)
		case ChangeUnchanged:
			d.Unchanged++
		case ChangeMoved, ChangeGainedLastMod:
			d.Moved = append(d.Moved, u)
			stamps[lm.UnixNano()]++
			if !cur.Read.IsZero() && lm.Sub(cur.Read).Abs() <= StampWindow {
				nearRead++
			}
		}
	}
	if cur.Complete {
		for u := range prev.Pages {
			if _, ok := cur.Pages[u]; !ok {
				d.Gone = append(d.Gone, u)
				d.Changes[u] = ChangeGone
			}
		}
	}
	top := 0
	for _, n := range stamps {
		top = max(top, n)
	}
	mostMoved := len(d.Moved) >= StampMinMoved && 2*len(d.Moved) > dated
	switch {
	case mostMoved && float64(top) >= StampShare*float64(len(d.Moved)):
		d.Untrusted, d.Reason = true, "build stamp: most lastmods moved to one identical timestamp"
	case mostMoved && float64(nearRead) >= StampShare*float64(len(d.Moved)):
		d.Untrusted, d.Reason = true, "stamped on request: most lastmods moved to the time of the read"
	case inFuture > 0 && float64(inFuture) > FutureShare*float64(datedNow):
		d.Untrusted, d.Reason = true, "lastmods in the future"
	}
	slices.Sort(d.New)
	slices.Sort(d.Moved)
	slices.Sort(d.Gone)
	slices.Sort(d.Unknown)
	return d
}
