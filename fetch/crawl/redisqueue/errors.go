package redisqueue

import (
	"errors"

	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/politeness/redisgate"
)

var (
	// ErrUnavailable reports that Redis could not be reached or did not
	// answer. It is redisgate's sentinel, so that one errors.Is check
	// covers the whole fleet's Redis. The queue fails closed: no item is
	// leased, and a Finish that fails this way may not have been applied
	// (its lease then runs out and the item is leased again).
	ErrUnavailable = redisgate.ErrUnavailable

	// ErrRedis reports any other error answer from Redis (a wrong key type
	// under the crawl's prefix, out of memory, no permission).
	ErrRedis = redisgate.ErrRedis

	// ErrLeaseLost reports a Finish for an item this Queue does not hold:
	// never leased here, already finished, or leased for longer than the
	// lease TTL, so that its lease ran out and the item went back to its
	// site's queue (some worker fetches it again). Nothing was applied. It
	// is crawl's sentinel, as every crawl.Queue reports it.
	ErrLeaseLost = crawl.ErrLeaseLost

	// ErrBadItem reports a stored item that cannot be read back (not
	// written by this package, or damaged). The entry is moved aside to
	// the crawl's "bad" list and the site goes on with its next item.
	ErrBadItem = errors.New("redisqueue: damaged item")

	// ErrClosed is returned after [Queue.Close].
	ErrClosed = errors.New("redisqueue: queue closed")
)

var errNoClient = errors.New("no redis client")

// Error is the error of one queue operation. errors.Is matches Kind (one of
// the Err* sentinels) and the underlying cause (for example a *net.OpError).
type Error struct {
	Op   string // "add", "lease", "finish", "mark", "seen", "len"
	Site string // the site concerned, if any
	Kind error  // ErrUnavailable, ErrRedis, ErrLeaseLost, ErrBadItem or ErrClosed
	Err  error  // the cause, if any
}

func (e *Error) Error() string {
	msg := "redisqueue: " + e.Op
	if e.Site != "" {
		msg += " " + e.Site
	}
	msg += ": " + e.Kind.Error()
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns Kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// opError wraps a Redis client error.
func opError(op, site string, err error) *Error {
	return &Error{Op: op, Site: site, Kind: redisgate.Classify(err), Err: err}
}
