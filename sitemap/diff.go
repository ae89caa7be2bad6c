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
	// header) when known. Diff uses it to spot lastmods in the future.
	Read time.Time
	// Pages maps page URLs to their lastmod; zero means none given.
	Pages map[string]time.Time
	// Complete is true when every sitemap was read to its end (no error,
	// no limit reached). Only then can a page be known to be gone.
	Complete bool
}

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
	// Unknown lists pages present in both reads where at least one of the
	// two has no lastmod: the sitemap cannot tell whether they changed, so
	// the caller asks the page itself with If-Modified-Since (and
	// If-None-Match), which costs a 304 when it did not.
	Unknown []string
	// Unchanged counts pages present in both reads with the same lastmod.
	Unchanged int
	// Untrusted is true when the current read's lastmods look generated
	// rather than real (see Diff); Reason says why. The caller should then
	// treat Moved like Unknown: use conditional requests, not refetches.
	Untrusted bool
	Reason    string
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
// one. With no previous read (prev.Pages empty) every page is New.
//
// Pages without a lastmod are never reported as Moved: they go to Unknown
// when present in both reads, and the caller relies on If-Modified-Since.
//
// Lastmod trust. Many sites stamp every URL with the time the sitemap was
// built, so "lastmod moved" on every page means nothing. The current read
// is Untrusted when either:
//
//   - build stamping: of the pages dated in both reads, more than half
//     moved, at least StampMinMoved of them, and at least StampShare (90%)
//     of the moved pages now carry one identical timestamp;
//   - stamped on request: the same, but with StampShare of the moved
//     pages dated within StampWindow of cur.Read (a sitemap generated with
//     "lastmod = now", whose seconds differ from page to page); or
//   - future dates: more than FutureShare (1%) of the dated pages, and at
//     least one, carry a lastmod later than cur.Read + FutureSlack.
//
// New, Moved and Gone are reported either way.
func Diff(prev, cur Snapshot) DiffResult {
	var d DiffResult
	dated, future, nearRead := 0, 0, 0
	stamps := make(map[int64]int) // new lastmod (Unix ns) -> moved pages
	for u, lm := range cur.Pages {
		if !lm.IsZero() && !cur.Read.IsZero() && lm.After(cur.Read.Add(FutureSlack)) {
			future++
		}
		old, ok := prev.Pages[u]
		if !ok {
			d.New = append(d.New, u)
			continue
		}
		switch {
		case lm.IsZero() || old.IsZero():
			d.Unknown = append(d.Unknown, u)
			continue
		case lm.Equal(old):
			d.Unchanged++
		default:
			d.Moved = append(d.Moved, u)
			stamps[lm.UnixNano()]++
			if !cur.Read.IsZero() && lm.Sub(cur.Read).Abs() <= StampWindow {
				nearRead++
			}
		}
		dated++
	}
	if cur.Complete {
		for u := range prev.Pages {
			if _, ok := cur.Pages[u]; !ok {
				d.Gone = append(d.Gone, u)
			}
		}
	}
	top := 0
	for _, n := range stamps {
		top = max(top, n)
	}
	datedNow := 0
	for _, lm := range cur.Pages {
		if !lm.IsZero() {
			datedNow++
		}
	}
	mostMoved := len(d.Moved) >= StampMinMoved && 2*len(d.Moved) > dated
	switch {
	case mostMoved && float64(top) >= StampShare*float64(len(d.Moved)):
		d.Untrusted, d.Reason = true, "build stamp: most lastmods moved to one identical timestamp"
	case mostMoved && float64(nearRead) >= StampShare*float64(len(d.Moved)):
		d.Untrusted, d.Reason = true, "stamped on request: most lastmods moved to the time of the read"
	case future > 0 && float64(future) > FutureShare*float64(datedNow):
		d.Untrusted, d.Reason = true, "lastmods in the future"
	}
	slices.Sort(d.New)
	slices.Sort(d.Moved)
	slices.Sort(d.Gone)
	slices.Sort(d.Unknown)
	return d
}
