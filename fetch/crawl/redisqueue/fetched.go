package redisqueue

import (
	"context"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
)

// Fetched is the fleet-wide fetched-once set of a crawl, for
// fetch.Bot.Fetched (with Bot.Once): a URL counts as fetched once its
// outcome is recorded by a Finish (its key in the step's Done), and while a
// fetch of it runs anywhere in the fleet it is claimed, so that no other
// worker fetches it meanwhile (a redirect target, say). A claim ends when
// the item's lease is taken back (its worker died mid-fetch), so that the
// worker that leases the item next fetches it, and in any case after the
// TTL given to [Queue.Fetched] (a redirect target claimed by a dead
// worker). A plain Redis set marked before the fetch, as
// politeness/redisgate.FetchedSet, would keep a dead worker's mark for
// ever: the page would never be fetched.
//
// Get it from [Queue.Fetched]; it is safe for concurrent use.
type Fetched struct {
	q   *Queue
	ttl time.Duration
}

var _ fetch.FetchedRemover = (*Fetched)(nil)

// Fetched returns the crawl's fetched-once set, whose claims last ttl
// (ttl <= 0: the crawl package's DefaultLeaseTTL). Use the lease TTL of the
// crawl.
func (q *Queue) Fetched(ttl time.Duration) *Fetched {
	if ttl <= 0 {
		ttl = defaultTTL
	}
	return &Fetched{q: q, ttl: ttl}
}

// Add claims url for a fetch: it reports true unless url's outcome is
// recorded or another fetch holds a claim.
func (f *Fetched) Add(ctx context.Context, url string) (bool, error) {
	res, err := f.q.run(ctx, "fetched-add", "", claimScript, url, max(f.ttl.Milliseconds(), 1))
	return res == int64(1), err
}

// Has reports whether url's outcome is recorded.
func (f *Fetched) Has(ctx context.Context, url string) (bool, error) {
	res, err := f.q.run(ctx, "fetched-has", "", doneScript, url)
	return res == int64(1), err
}

// Remove gives back the claim of a fetch that ended without a definitive
// answer, so that the URL may be fetched again.
func (f *Fetched) Remove(ctx context.Context, url string) error {
	_, err := f.q.run(ctx, "fetched-remove", "", unclaimScript, url)
	return err
}
