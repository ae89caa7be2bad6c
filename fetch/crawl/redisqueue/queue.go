package redisqueue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/redis/go-redis/v9"
)

// Options configures a [Queue]. A nil *Options, and every zero field, means
// the default.
type Options struct {
	// Owner names this worker (for example host/pid) in its lease tokens,
	// so that an operator (or a test) reading the crawl's "held" hash sees
	// which worker holds which site. Empty means anonymous tokens.
	Owner string
	// Logger receives damaged entries moved aside and lost leases. Nil
	// means silent.
	Logger *slog.Logger
}

var _ crawl.Queue = (*Queue)(nil)

// Queue is a [crawl.Queue] in Redis: any number of processes that make a
// Queue of the same name on the same Redis share one frontier. Create it
// with [New]; a zero Queue has no Redis and fails closed with
// [ErrUnavailable]. It is safe for concurrent use.
//
// A Queue remembers the tokens of the leases it granted, in memory: an
// item is finished through the Queue that leased it. While it holds a lease
// it renews it every ttl/3 (wall clock), so a live worker keeps its item
// however long the fetch takes, and a dead one's item comes back within one
// TTL. Call Close when done.
type Queue struct {
	rdb    redis.Scripter
	prefix string
	keys   []string
	owner  string
	log    *slog.Logger

	mu     sync.Mutex        // guards leases, closed
	leases map[string]*lease // item key -> its lease, while held
	closed bool
	wg     sync.WaitGroup // the renewal goroutines
}

// lease is one item leased by this Queue. While it is held a goroutine
// renews it every ttl/3, so an item may take longer than the TTL while a
// dead worker's item still comes back within one TTL.
type lease struct {
	token string
	stop  chan struct{} // closed to end the renewals
}

// New returns the Queue of the crawl called name on rdb. Every key of the
// crawl starts with "goodbot:crawl:{name}:", so that on Redis Cluster the
// whole crawl lives in one hash slot (see the package doc). The caller keeps
// ownership of rdb.
func New(rdb redis.Scripter, name string, opts *Options) *Queue {
	var o Options
	if opts != nil {
		o = *opts
	}
	q := &Queue{rdb: rdb, prefix: "goodbot:crawl:{" + name + "}:", owner: strings.ReplaceAll(o.Owner, "\n", " "), log: o.Logger}
	for _, k := range []string{"sched", "leases", "held", "items", "seen", "count", "ready", "done", "bad", "order"} {
		q.keys = append(q.keys, q.prefix+k)
	}
	if q.log == nil {
		q.log = slog.New(slog.DiscardHandler)
	}
	return q
}

// Prefix returns the prefix of every key of the crawl.
func (q *Queue) Prefix() string { return q.prefix }

// run runs script with the crawl's keys and the prefix before args.
func (q *Queue) run(ctx context.Context, op, site string, script *redis.Script, args ...any) (any, error) {
	if q.rdb == nil {
		return nil, &Error{Op: op, Site: site, Kind: ErrUnavailable, Err: errNoClient}
	}
	q.mu.Lock()
	closed := q.closed
	q.mu.Unlock()
	if closed {
		return nil, &Error{Op: op, Site: site, Kind: ErrClosed}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := script.Run(ctx, q.rdb, q.keys, append([]any{q.prefix}, args...)...).Result()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, opError(op, site, err)
	}
	return res, nil
}

// Add queues the items that were never seen and whose site is under
// maxPerSite admitted items (0: no cap), marking them seen, all in one
// step. It returns the items queued, in order. A site with no item leased
// becomes due at the ready time of its last Finish (at once if none).
func (q *Queue) Add(ctx context.Context, items []crawl.Item, maxPerSite int) ([]crawl.Item, error) {
	if len(items) == 0 {
		return nil, nil
	}
	args := []any{maxPerSite}
	for _, it := range items {
		args = append(args, it.Key, it.Site, encodeItem(it))
	}
	res, err := q.run(ctx, "add", "", addScript, args...)
	if err != nil {
		return nil, err
	}
	return admitted(items, res, 0), nil
}

// admitted returns the items whose flag in res (from index off) is 1.
func admitted(items []crawl.Item, res any, off int) []crawl.Item {
	flags, _ := res.([]any)
	var out []crawl.Item
	for i, it := range items {
		if j := off + i; j < len(flags) && flags[j] == int64(1) {
			out = append(out, it)
		}
	}
	return out
}

// Seen reports whether key was ever admitted or marked.
func (q *Queue) Seen(ctx context.Context, key string) (bool, error) {
	res, err := q.run(ctx, "seen", "", statScript, key)
	if err != nil {
		return false, err
	}
	return res == int64(1), nil
}

// Mark records the items' keys as seen without queueing them; with counted,
// each newly seen one counts against its site's cap.
func (q *Queue) Mark(ctx context.Context, counted bool, items ...crawl.Item) error {
	if len(items) == 0 {
		return nil
	}
	args := []any{bit(counted)}
	for _, it := range items {
		args = append(args, it.Key, it.Site)
	}
	_, err := q.run(ctx, "mark", "", markScript, args...)
	return err
}

// Len returns the number of queued items, not counting leased ones.
func (q *Queue) Len(ctx context.Context) (int, error) {
	res, err := q.run(ctx, "len", "", statScript)
	if err != nil {
		return 0, err
	}
	n, _ := res.(int64)
	return int(n), nil
}

// Lease leases the head item of the site due first, if it is due at now and
// has no item leased, for ttl: until the item is finished, no other item of
// its site is leased, and when ttl passes without a Finish the item goes
// back to the head of its site's queue, due at once (its worker is taken
// for dead; ttl <= 0 means [crawl.DefaultLeaseTTL]). It is one round trip.
// With ok false, next is when to ask again: the first due time or lease
// expiry, zero when nothing is queued or leased (the crawl is over). Other
// processes may queue work sooner: a crawl.Crawler on a shared queue sets
// its Recheck. A damaged entry is moved aside and reported as an error
// matching [ErrBadItem]; the next Lease goes on.
func (q *Queue) Lease(ctx context.Context, now time.Time, ttl time.Duration) (it crawl.Item, next time.Time, ok bool, err error) {
	token := newToken()
	if q.owner != "" {
		token = q.owner + "/" + token
	}
	if ttl <= 0 {
		ttl = defaultTTL
	}
	res, err := q.run(ctx, "lease", "", leaseScript, now.UnixMilli(), max(ttl.Milliseconds(), 1), token)
	if err != nil {
		return crawl.Item{}, time.Time{}, false, err
	}
	r, _ := res.([]any)
	if len(r) == 3 && r[0] == int64(0) {
		due, _ := r[1].(int64)
		exp, _ := r[2].(int64)
		return crawl.Item{}, nextTime(due, exp), false, nil
	}
	if len(r) != 4 {
		return crawl.Item{}, time.Time{}, false, &Error{Op: "lease", Kind: ErrRedis, Err: fmt.Errorf("unexpected answer %v", r)}
	}
	site, _ := r[1].(string)
	key, _ := r[2].(string)
	raw, _ := r[3].(string)
	it, err = decodeItem(site, key, raw)
	if err != nil {
		q.log.Warn("redisqueue: damaged item moved aside", "site", site, "err", err)
		if _, derr := q.run(ctx, "lease", site, discardScript, token, site, now.UnixMilli()); derr != nil {
			err = errors.Join(err, derr) // the lease runs out: the entry comes back and fails again
		}
		return crawl.Item{}, time.Time{}, false, &Error{Op: "lease", Site: site, Kind: ErrBadItem, Err: err}
	}
	l := &lease{token: token, stop: make(chan struct{})}
	q.mu.Lock()
	if q.leases == nil {
		q.leases = map[string]*lease{}
	}
	if old := q.leases[it.Key]; old != nil { // taken back from this very Queue
		close(old.stop)
	}
	q.leases[it.Key] = l
	q.wg.Add(1)
	q.mu.Unlock()
	go q.renew(it.Site, l, now, ttl)
	return it, time.Time{}, true, nil
}

// nextTime is when a worker that got nothing asks again: the first due
// time or lease expiry (unix ms, -1: none); zero when neither.
func nextTime(due, exp int64) time.Time {
	switch {
	case due < 0 && exp < 0:
		return time.Time{}
	case due < 0 || (exp >= 0 && exp < due):
		return time.UnixMilli(exp)
	}
	return time.UnixMilli(due)
}

// Finish ends it's lease and applies step in one round trip, all of it or
// nothing: Done keys are marked seen and done and leave the queue, like
// Dropped keys; DropSite drops the site's queued items; Queued items are
// added as by Add under step.MaxPerSite, except it's retry (its key with
// more Tries), which goes to the end of its site's queue uncounted. The
// leased item leaves the queue when the step names it, else it goes back
// to the head of its site's queue. The site is then due at ready (the zero
// time: at once). An item whose lease this Queue does not hold (never
// leased here, finished already, or expired and taken back) gets an
// *[Error] matching [ErrLeaseLost] and nothing is applied.
func (q *Queue) Finish(ctx context.Context, it crawl.Item, step crawl.Step, ready time.Time) error {
	_, err := q.finish(ctx, it, step.Done, step.Dropped, step.Queued, step.MaxPerSite, step.DropSite, ready)
	return err
}

// finish is Finish; it returns the queued items admitted.
func (q *Queue) finish(ctx context.Context, it crawl.Item, done, dropped []string, queued []crawl.Item, maxPerSite int, dropSite bool, ready time.Time) ([]crawl.Item, error) {
	q.mu.Lock()
	l := q.leases[it.Key]
	q.mu.Unlock()
	if l == nil {
		return nil, &Error{Op: "finish", Site: it.Site, Kind: ErrLeaseLost}
	}
	token := l.token
	at := int64(0) // the zero time: due at once
	if !ready.IsZero() {
		at = ready.UnixMilli()
	}
	args := []any{token, it.Site, at, maxPerSite, bit(dropSite), len(done)}
	for _, k := range done {
		args = append(args, k, siteOfKey(k))
	}
	args = append(args, len(dropped))
	for _, k := range dropped {
		args = append(args, k, siteOfKey(k))
	}
	for _, n := range queued {
		args = append(args, n.Key, n.Site, encodeItem(n), bit(n.Key == it.Key && n.Tries > it.Tries))
	}
	res, err := q.run(ctx, "finish", it.Site, finishScript, args...)
	if err != nil {
		return nil, err // the lease is still ours until it runs out
	}
	q.drop(it.Key, l)
	if r, _ := res.([]any); len(r) == 0 || r[0] != int64(1) {
		return nil, &Error{Op: "finish", Site: it.Site, Kind: ErrLeaseLost}
	}
	return admitted(queued, res, 1), nil
}

// siteOfKey is the site of a normalised URL ("" if it does not parse: such
// a key is in no site's queue).
func siteOfKey(key string) string {
	u, err := url.Parse(key)
	if err != nil || u.Host == "" {
		return ""
	}
	return crawl.Site(u)
}

// drop forgets l, the lease of key, and ends its renewals.
func (q *Queue) drop(key string, l *lease) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.leases[key] == l {
		delete(q.leases, key)
		close(l.stop)
	}
}

// renew extends l every ttl/3 until it ends or is found lost. The new
// expiries are on the clock of the Lease call (at, advanced by the time
// elapsed since), as the first one was.
func (q *Queue) renew(site string, l *lease, at time.Time, ttl time.Duration) {
	start := time.Now()
	defer q.wg.Done()
	t := time.NewTicker(max(ttl/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), max(ttl/3, time.Millisecond))
		res, err := renewScript.Run(ctx, q.rdb, q.keys, q.prefix, site, l.token, at.Add(time.Since(start)+ttl).UnixMilli()).Result()
		cancel()
		switch {
		case err != nil:
			q.log.Warn("redisqueue: lease renewal failed", "site", site, "err", opError("renew", site, err))
		case res != int64(1):
			q.lost(site, l, ttl)
			return
		}
	}
}

// lost logs that l was found lost by its renewal, unless this Queue ended
// it meanwhile: a Lease that took the item back, or a Finish, changes the
// lease in Redis first and closes l.stop just after, so a renewal can run
// in between and find it gone. lost waits a third of the ttl for that.
func (q *Queue) lost(site string, l *lease, ttl time.Duration) {
	grace := time.NewTimer(max(ttl/3, time.Millisecond))
	defer grace.Stop()
	select {
	case <-l.stop:
	case <-grace.C:
		q.log.Warn("redisqueue: lease lost", "site", site)
	}
}

// Close ends the renewals of the leases this Queue holds, so that they run
// out (their items are leased again by other workers), and makes later
// calls fail with [ErrClosed]. It does not close the Redis client.
func (q *Queue) Close() error {
	q.mu.Lock()
	q.closed = true
	for k, l := range q.leases {
		close(l.stop)
		delete(q.leases, k)
	}
	q.mu.Unlock()
	q.wg.Wait()
	return nil
}

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// defaultTTL is the lease (and claim) time when none is given.
const defaultTTL = crawl.DefaultLeaseTTL
