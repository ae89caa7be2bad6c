package crawl

import (
	"context"
	"errors"
	"time"
)

// Queue holds a crawl's queued items and the schedule of its sites: the
// storage under a [Frontier], which keeps the admission rules (URL
// normalisation, Allowed, Accept, depth, nofollow, link extraction, one
// retry). The Frontier's default is an in-memory Queue (with its Journal
// and Spill); another implementation, shared by several processes, lets
// them run one crawl. Implementations must be safe for concurrent use and
// should pass the conformance tests of package crawl/queuetest.
//
// A site has at most one item leased at a time, so a crawl driven by
// [Queue.Lease] sends each site one request at a time whatever the number
// of workers. Sites are served by ready time: after each item the site is
// due again at the instant its politeness allows its next request.
type Queue interface {
	// Add queues the items whose Key this queue never saw and whose site
	// is under maxPerSite admitted items (0: no cap), marks them seen and
	// counted, and returns those it queued, in the order given. A site new
	// to the queue is due at once.
	Add(ctx context.Context, items []Item, maxPerSite int) ([]Item, error)
	// Seen reports whether key was ever queued or marked.
	Seen(ctx context.Context, key string) (bool, error)
	// Mark marks the items' keys seen without queueing them; counted also
	// counts each newly seen one against its site's cap. Only Key and
	// Site of each item are read.
	Mark(ctx context.Context, counted bool, items ...Item) error
	// Lease takes the head item of a site that is due (ready time <= now)
	// and has no item leased, the site that has been due longest first.
	// The item stays leased until [Queue.Finish], or until ttl passes
	// (ttl <= 0: [DefaultLeaseTTL]); then it goes back to the head of its
	// site's queue for another taker. With no site due, ok is false and
	// next is when to ask again: the earliest ready time or lease expiry,
	// the zero time when nothing is queued or leased (the crawl is over).
	// It may be earlier than that (a lease finished since may still count
	// for it), never later: asking early finds nothing due and a later
	// next.
	Lease(ctx context.Context, now time.Time, ttl time.Duration) (it Item, next time.Time, ok bool, err error)
	// Finish ends the lease of it and applies step, all of it or
	// nothing:
	//   - keys in Done are marked seen and leave the queue;
	//   - Queued items are added as by Add under step.MaxPerSite, except
	//     an item with it.Key and more Tries (a retry), which goes to the
	//     end of its site's queue without being counted;
	//   - keys in Dropped (of it.Site) leave the queue;
	//   - DropSite drops every queued item of it.Site.
	// The leased item leaves the queue when step names it (Done, Dropped,
	// a retry, DropSite); otherwise it goes back to the head of its site's
	// queue. The site is then due at ready (the zero time: at once).
	// Finish of an item not leased (never, or its lease expired) applies
	// nothing and returns an error wrapping [ErrLeaseLost]; a lease that
	// expired and was taken again by another worker is that worker's, and
	// ending it is the caller's mistake to avoid (a LeaseTTL longer than
	// any fetch).
	Finish(ctx context.Context, it Item, step Step, ready time.Time) error
	// Len returns the number of items queued or leased.
	Len(ctx context.Context) (int, error)
}

// DefaultLeaseTTL is the lease time of [Queue.Lease] when its ttl is not
// positive: longer than a fetch takes with the fetch package's default
// limits, so that only a worker that died loses its lease.
const DefaultLeaseTTL = 10 * time.Minute

// ErrLeaseLost is the sentinel of the error [Queue.Finish] returns for an
// item that is not leased.
var ErrLeaseLost = errors.New("crawl: lease lost")

// LeaseError is the error [Queue.Finish] returns for an item that is not
// leased: its lease expired, or it was never leased.
type LeaseError struct {
	Site string // the item's site
}

func (e *LeaseError) Error() string {
	return "crawl: no lease on an item of " + e.Site + " (expired, or never taken)"
}

// Unwrap returns [ErrLeaseLost].
func (e *LeaseError) Unwrap() error { return ErrLeaseLost }
