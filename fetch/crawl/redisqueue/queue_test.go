package redisqueue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/crawl/queuetest"
	"github.com/goodbot-go/goodbot/fetch/links"
	"github.com/redis/go-redis/v9"
)

// The queue only uses the times it is given: tests pass instants of their
// own, so nothing sleeps.
var t0 = time.UnixMilli(1_800_000_000_000)

func item(raw string) crawl.Item {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	return crawl.Item{URL: u, Key: links.Normalize(u), Site: crawl.Site(u), From: "seed"}
}

func items(raws ...string) []crawl.Item {
	out := make([]crawl.Item, len(raws))
	for i, r := range raws {
		out[i] = item(r)
	}
	return out
}

func keys(its []crawl.Item) []string {
	out := make([]string, len(its))
	for i, it := range its {
		out[i] = it.Key
	}
	return out
}

func newQueue(t testing.TB) *Queue {
	t.Helper()
	return open(t, needRedis(t), crawlName())
}

// open returns the Queue of crawl name, closed at the end of t.
func open(t testing.TB, c redis.Scripter, name string) *Queue {
	q := New(c, name, nil)
	t.Cleanup(func() { _ = q.Close() })
	return q
}

func mustAdd(t *testing.T, q *Queue, its []crawl.Item, cap int) []crawl.Item {
	t.Helper()
	got, err := q.Add(context.Background(), its, cap)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func mustLease(t *testing.T, q *Queue, now time.Time) crawl.Item {
	t.Helper()
	it, next, ok, err := q.Lease(context.Background(), now, time.Minute)
	if err != nil || !ok {
		t.Fatalf("Lease at %v = %v, %v, %v; want an item", now.Sub(t0), next, ok, err)
	}
	return it
}

func mustNotLease(t *testing.T, q *Queue, now time.Time) time.Time {
	t.Helper()
	it, next, ok, err := q.Lease(context.Background(), now, time.Minute)
	if err != nil || ok {
		t.Fatalf("Lease at %v = %s, %v, %v; want nothing", now.Sub(t0), it.Key, ok, err)
	}
	return next
}

func TestQueue_Conformance(t *testing.T) {
	queuetest.Run(t, func(t *testing.T) crawl.Queue { return newQueue(t) })
}

func TestQueue_AddDedupAndCap(t *testing.T) {
	q := newQueue(t)
	ctx := context.Background()
	got := mustAdd(t, q, items("http://a.test/1", "http://a.test/2", "http://A.test:80/1", "http://a.test/3", "http://b.test/1"), 2)
	if want := []string{"http://a.test/1", "http://a.test/2", "http://b.test/1"}; fmt.Sprint(keys(got)) != fmt.Sprint(want) {
		t.Fatalf("Add admitted %v; want %v (a duplicate spelling and a third a.test page refused)", keys(got), want)
	}
	if n, err := q.Len(ctx); n != 3 || err != nil {
		t.Fatalf("Len = %d, %v; want 3", n, err)
	}
	for _, c := range []struct {
		key  string
		seen bool
	}{{"http://a.test/1", true}, {"http://b.test/1", true}, {"http://a.test/3", false}, {"http://c.test/", false}} {
		if s, err := q.Seen(ctx, c.key); s != c.seen || err != nil {
			t.Errorf("Seen(%s) = %v, %v; want %v", c.key, s, err, c.seen)
		}
	}
	// Marked pages count against the cap only when counted.
	if err := q.Mark(ctx, false, item("http://b.test/x")); err != nil {
		t.Fatal(err)
	}
	if err := q.Mark(ctx, true, item("http://b.test/y")); err != nil {
		t.Fatal(err)
	}
	if got := mustAdd(t, q, items("http://b.test/x", "http://b.test/z", "http://b.test/w"), 2); len(got) != 0 {
		t.Errorf("Add over b.test's cap (1 queued + 1 counted mark) admitted %v", keys(got))
	}
	if got := mustAdd(t, q, items("http://b.test/z"), 3); len(got) != 1 {
		t.Errorf("Add under a higher cap admitted %v; want b.test/z", keys(got))
	}
}

func TestQueue_LeaseOneItemPerSiteInOrder(t *testing.T) {
	q := newQueue(t)
	mustAdd(t, q, items("http://a.test/1", "http://a.test/2", "http://b.test/1"), 0)
	first := mustLease(t, q, t0)
	second := mustLease(t, q, t0)
	if first.Site == second.Site {
		t.Fatalf("two items of one site leased at once: %s, %s", first.Key, second.Key)
	}
	// a.test has an item queued but one leased: nothing more is due.
	next := mustNotLease(t, q, t0)
	if !next.Equal(t0.Add(time.Minute)) {
		t.Errorf("next = %v with leases out; want the first lease expiry, 1m", next.Sub(t0))
	}
	var a crawl.Item
	for _, it := range []crawl.Item{first, second} {
		if it.Site == "http://a.test" {
			a = it
		}
		if _, err := q.finish(context.Background(), it, []string{it.Key}, nil, nil, 0, false, t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if a.Key != "http://a.test/1" || a.From != "seed" || a.URL.String() != "http://a.test/1" {
		t.Errorf("a.test's first lease = %+v; want its head, http://a.test/1, as added", a)
	}
	// a.test is due again at its ready time, not before.
	if next := mustNotLease(t, q, t0.Add(999*time.Millisecond)); !next.Equal(t0.Add(time.Second)) {
		t.Errorf("next = %v; want a.test's ready time, 1s", next.Sub(t0))
	}
	if it := mustLease(t, q, t0.Add(time.Second)); it.Key != "http://a.test/2" {
		t.Errorf("leased %s; want http://a.test/2", it.Key)
	}
}

func TestQueue_OverWhenNothingQueuedOrLeased(t *testing.T) {
	q := newQueue(t)
	if next := mustNotLease(t, q, t0); !next.IsZero() {
		t.Errorf("empty queue: next = %v; want zero (over)", next)
	}
	mustAdd(t, q, items("http://a.test/1"), 0)
	it := mustLease(t, q, t0)
	if next := mustNotLease(t, q, t0); next.IsZero() {
		t.Error("an item leased: next is zero, but the crawl is not over (its outcome may queue links)")
	}
	if _, err := q.finish(context.Background(), it, []string{it.Key}, nil, nil, 0, false, t0); err != nil {
		t.Fatal(err)
	}
	if next := mustNotLease(t, q, t0); !next.IsZero() {
		t.Errorf("all done: next = %v; want zero", next)
	}
}

// The crawl is over as soon as the last item is finished, even when its site
// would be due again only later: a site with nothing queued is not due.
func TestQueue_OverWhenLastItemFinishedWithReadyLater(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		queued  []string
		dropped []string
	}{
		{name: "last item", queued: []string{"http://a.test/1"}},
		{name: "the rest dropped", queued: []string{"http://a.test/1", "http://a.test/2"}, dropped: []string{"http://a.test/2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := newQueue(t)
			mustAdd(t, q, items(c.queued...), 0)
			it := mustLease(t, q, t0)
			if _, err := q.finish(ctx, it, []string{it.Key}, c.dropped, nil, 0, false, t0.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if n, _ := q.Len(ctx); n != 0 {
				t.Fatalf("Len after the last item = %d; want 0", n)
			}
			if next := mustNotLease(t, q, t0); !next.IsZero() {
				t.Errorf("next = %v; want zero (over), not the site's ready time", next.Sub(t0))
			}
		})
	}
}

// A renewal extends the lease only while it is still the renewing token's:
// a worker whose lease was taken back must not keep its successor's lease
// alive, nor create one.
func TestQueue_RenewOnlyOwnLease(t *testing.T) {
	ctx := context.Background()
	const site, before, after = "http://a.test", 1000, 5000
	for _, c := range []struct {
		name   string
		holder string // token in the held hash ("" none)
		want   int64
		expiry float64 // score in leases afterwards (0: none)
	}{
		{name: "ours", holder: "mine", want: 1, expiry: after},
		{name: "taken back by another", holder: "other", want: 0, expiry: before},
		{name: "not held", want: 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rdb := needRedis(t)
			q := open(t, rdb, crawlName())
			if c.holder != "" {
				if err := rdb.HSet(ctx, q.Prefix()+"held", site, c.holder+"\nhttp://a.test/1").Err(); err != nil {
					t.Fatal(err)
				}
				if err := rdb.ZAdd(ctx, q.Prefix()+"leases", redis.Z{Score: before, Member: site}).Err(); err != nil {
					t.Fatal(err)
				}
			}
			res, err := renewScript.Run(ctx, rdb, q.keys, q.prefix, site, "mine", after).Int64()
			if err != nil {
				t.Fatal(err)
			}
			if res != c.want {
				t.Errorf("renew = %d; want %d", res, c.want)
			}
			got, err := rdb.ZScore(ctx, q.Prefix()+"leases", site).Result()
			if errors.Is(err, redis.Nil) {
				got = 0
			} else if err != nil {
				t.Fatal(err)
			}
			if got != c.expiry {
				t.Errorf("lease expiry after renew = %v; want %v", got, c.expiry)
			}
		})
	}
}

// A worker that dies holding a lease: when the lease runs out, its item is
// back at the head of its site's queue and due at once; the dead worker's
// late Finish applies nothing.
func TestQueue_ExpiredLeaseGoesBackToTheHead(t *testing.T) {
	ctx := context.Background()
	c := needRedis(t)
	name := crawlName()
	dead, live := open(t, c, name), open(t, c, name)
	mustAdd(t, dead, items("http://a.test/1", "http://a.test/2"), 0)
	it, _, ok, err := dead.Lease(ctx, t0, 10*time.Second)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	if next := mustNotLease(t, live, t0.Add(9*time.Second)); !next.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("next while the lease runs = %v; want its expiry, 10s", next.Sub(t0))
	}
	if n, _ := live.Len(ctx); n != 2 {
		t.Errorf("Len with one leased of two = %d; want 2 (queued or leased)", n)
	}
	again := mustLease(t, live, t0.Add(10*time.Second))
	if again.Key != it.Key {
		t.Fatalf("after the lease ran out, leased %s; want the lost item %s first", again.Key, it.Key)
	}
	if _, err := dead.finish(ctx, it, []string{it.Key}, nil, items("http://a.test/9"), 0, false, t0); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("late Finish of an expired lease: %v; want ErrLeaseLost", err)
	}
	if s, _ := live.Seen(ctx, "http://a.test/9"); s {
		t.Error("a lost lease's Finish queued its links")
	}
	if _, err := live.finish(ctx, again, []string{again.Key}, nil, nil, 0, false, t0.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := live.finish(ctx, again, []string{again.Key}, nil, nil, 0, false, t0); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("second Finish of one lease: %v; want ErrLeaseLost", err)
	}
}

// Finish applies a whole step: done keys, links (deduplicated and capped),
// a retry of the item itself (not refused as seen), dropping the site.
func TestQueue_FinishSteps(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		done     bool // the step names the item done
		dropped  []string
		queued   []crawl.Item
		drop     bool
		cap      int
		wantAdd  []string
		wantNext []string // keys leased afterwards
	}{
		{name: "links", done: true, queued: items("http://a.test/3", "http://a.test/2", "http://b.test/1"),
			wantAdd: []string{"http://a.test/3", "http://b.test/1"}, wantNext: []string{"http://a.test/2", "http://b.test/1", "http://a.test/3"}},
		{name: "retry", queued: []crawl.Item{{URL: item("http://a.test/1").URL, Key: "http://a.test/1", Site: "http://a.test", Tries: 1}},
			wantAdd: []string{"http://a.test/1"}, wantNext: []string{"http://a.test/2", "http://a.test/1"}},
		{name: "self link is no retry", done: true, queued: items("http://a.test/1"),
			wantNext: []string{"http://a.test/2"}},
		{name: "retry of a dropped site", drop: true, queued: []crawl.Item{{URL: item("http://a.test/1").URL, Key: "http://a.test/1", Site: "http://a.test", Tries: 1}}},
		{name: "drop site", drop: true, queued: items("http://b.test/1"),
			wantAdd: []string{"http://b.test/1"}, wantNext: []string{"http://b.test/1"}},
		{name: "dropped keys", done: true, dropped: []string{"http://a.test/2", "http://c.test/9"},
			wantNext: nil},
		{name: "done elsewhere", done: false, dropped: nil, queued: items("http://b.test/1"),
			wantAdd: []string{"http://b.test/1"}, wantNext: []string{"http://a.test/1", "http://a.test/2", "http://b.test/1"}},
		{name: "cap", done: true, cap: 3, queued: items("http://a.test/3", "http://a.test/4"),
			wantAdd: []string{"http://a.test/3"}, wantNext: []string{"http://a.test/2", "http://a.test/3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := newQueue(t)
			mustAdd(t, q, items("http://a.test/1", "http://a.test/2"), c.cap)
			it := mustLease(t, q, t0)
			var done []string
			if c.done {
				done = []string{it.Key}
			}
			got, err := q.finish(ctx, it, done, c.dropped, c.queued, c.cap, c.drop, t0)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(keys(got)) != fmt.Sprint(c.wantAdd) && len(got)+len(c.wantAdd) > 0 {
				t.Errorf("queued %v; want %v", keys(got), c.wantAdd)
			}
			if n, _ := q.Len(ctx); n != len(c.wantNext) {
				t.Errorf("Len after the step = %d; want %d", n, len(c.wantNext))
			}
			var leased []string
			for {
				it, _, ok, err := q.Lease(ctx, t0, time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				leased = append(leased, it.Key)
				if _, err := q.finish(ctx, it, []string{it.Key}, nil, nil, 0, false, t0); err != nil {
					t.Fatal(err)
				}
			}
			// Sites are served by due time; equal due times in any order,
			// each site's items in its order.
			if !sameBySite(leased, c.wantNext) {
				t.Errorf("leased afterwards %v; want %v", leased, c.wantNext)
			}
			if n, _ := q.Len(ctx); n != 0 {
				t.Errorf("Len at the end = %d", n)
			}
		})
	}
}

// sameBySite reports whether got and want hold the same keys with each
// site's keys in the same order.
func sameBySite(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	per := func(ks []string) map[string]string {
		m := map[string]string{}
		for _, k := range ks {
			s := crawl.Site(item(k).URL)
			m[s] += k + " "
		}
		return m
	}
	return fmt.Sprint(per(got)) == fmt.Sprint(per(want))
}

// A damaged entry is a typed error, moved aside, and the site goes on.
func TestQueue_DamagedEntryIsTypedAndDoesNotWedge(t *testing.T) {
	ctx := context.Background()
	for _, raw := range []string{
		"not json", `{"u":"http://a.test/x","k":"http://a.test/x","s":"http://b.test"}`,
		`{"u":"http://a.test/x","k":"http://a.test/y","s":"http://a.test"}`,
		`{"u":"ftp://a.test/x","k":"k","s":"http://a.test"}`, `{"u":"http://a.test/x","k":"","s":"http://a.test"}`,
		`{"u":"http://a.test/x","k":"k","s":"http://a.test","d":-1}`, `{"u":"%zz","k":"k","s":"http://a.test"}`, "",
	} {
		t.Run(raw, func(t *testing.T) {
			c := needRedis(t)
			q := open(t, c, crawlName())
			mustAdd(t, q, items("http://a.test/1"), 0)
			// The entry of key http://a.test/x, at the head of a.test's queue.
			if err := c.HSet(ctx, q.Prefix()+"items", "http://a.test/x", raw).Err(); err != nil {
				t.Fatal(err)
			}
			if err := c.LPush(ctx, q.Prefix()+"q:http://a.test", "http://a.test/x").Err(); err != nil {
				t.Fatal(err)
			}
			_, _, ok, err := q.Lease(ctx, t0, time.Minute)
			var qe *Error
			if ok || !errors.Is(err, ErrBadItem) || !errors.As(err, &qe) || qe.Site != "http://a.test" {
				t.Fatalf("Lease of a damaged entry = %v, %v; want an *Error matching ErrBadItem for a.test", ok, err)
			}
			if it := mustLease(t, q, t0); it.Key != "http://a.test/1" {
				t.Errorf("after the damaged entry, leased %s; want http://a.test/1", it.Key)
			}
			if bad, _ := c.LRange(ctx, q.Prefix()+"bad", 0, -1).Result(); len(bad) != 1 || bad[0] != raw {
				t.Errorf("bad list = %q; want the entry kept", bad)
			}
		})
	}
}

// Redis down: every operation fails closed with ErrUnavailable.
func TestQueue_UnavailableFailsClosed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	ctx := context.Background()
	for _, q := range []*Queue{New(c, "down", nil), {}} {
		_, _, ok, err := q.Lease(ctx, t0, time.Minute)
		if ok || !errors.Is(err, ErrUnavailable) {
			t.Errorf("Lease: %v, %v; want ErrUnavailable", ok, err)
		}
		if _, err := q.Add(ctx, items("http://a.test/"), 0); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Add: %v; want ErrUnavailable", err)
		}
		if _, err := q.Len(ctx); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Len: %v; want ErrUnavailable", err)
		}
		if _, err := q.Seen(ctx, "http://a.test/"); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Seen: %v; want ErrUnavailable", err)
		}
		if err := q.Mark(ctx, true, item("http://a.test/")); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Mark: %v; want ErrUnavailable", err)
		}
	}
	_, _, _, err = New(c, "down", nil).Lease(ctx, t0, time.Minute)
	var oe *net.OpError
	if !errors.As(err, &oe) {
		t.Errorf("Lease error %v does not carry the network cause", err)
	}
}

// rtHook counts the commands a client sends (a pipeline counts once).
type rtHook struct{ n atomic.Int64 }

func (h *rtHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *rtHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}
func (h *rtHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.n.Add(1); return next(ctx, cmds) }
}

// One round trip per Lease and per Finish (once the scripts are loaded).
func TestQueue_OneRoundTripPerLeaseAndFinish(t *testing.T) {
	c := needRedis(t)
	h := &rtHook{}
	c.AddHook(h)
	q := open(t, c, crawlName())
	ctx := context.Background()
	mustAdd(t, q, items("http://a.test/1", "http://a.test/2", "http://b.test/1"), 0)
	warm := mustLease(t, q, t0) // loads the lease script
	if _, err := q.finish(ctx, warm, []string{warm.Key}, nil, nil, 0, false, t0); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		before := h.n.Load()
		it := mustLease(t, q, t0)
		leased := h.n.Load()
		if _, err := q.finish(ctx, it, []string{it.Key}, nil, items("http://c.test/1"), 0, false, t0); err != nil {
			t.Fatal(err)
		}
		if l, f := leased-before, h.n.Load()-leased; l != 1 || f != 1 {
			t.Errorf("round trips: Lease %d, Finish %d; want 1 and 1", l, f)
		}
	}
}

// Workers on one crawl, each its own Queue (as separate processes have):
// every item leased exactly once, never two of one site at a time.
func TestQueue_WorkersShareOneCrawl(t *testing.T) {
	ctx := context.Background()
	c := needRedis(t)
	name := crawlName()
	const sites, per = 20, 10
	var seeds []crawl.Item
	for s := range sites {
		seeds = append(seeds, item(fmt.Sprintf("http://s%d.test/0", s)))
	}
	mustAdd(t, open(t, c, name), seeds, 0)
	var mu sync.Mutex
	leased := map[string]int{}
	busy := map[string]bool{}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 4 {
		q := open(t, c, name)
		wg.Go(func() {
			for {
				it, next, ok, err := q.Lease(ctx, time.Now(), 2*time.Second)
				if err != nil {
					errs <- err
					return
				}
				if !ok {
					if next.IsZero() {
						return
					}
					time.Sleep(min(time.Until(next), 5*time.Millisecond)) // a Crawler's Recheck
					continue
				}
				mu.Lock()
				leased[it.Key]++
				if busy[it.Site] {
					errs <- fmt.Errorf("two items of %s leased at once", it.Site)
				}
				busy[it.Site] = true
				mu.Unlock()
				var links []crawl.Item
				if n := it.Depth + 1; n < per {
					l := item(fmt.Sprintf("%s/%d", it.Site, n))
					l.Depth = n
					links = append(links, l)
					if s := seeds[n%sites]; s.Key != it.Key { // a link back to the item itself would be its retry
						links = append(links, s)
					}
				}
				mu.Lock()
				busy[it.Site] = false
				mu.Unlock()
				if _, err := q.finish(ctx, it, []string{it.Key}, nil, links, 0, false, time.Now()); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(leased) != sites*per {
		t.Errorf("%d items leased; want %d", len(leased), sites*per)
	}
	for k, n := range leased {
		if n != 1 {
			t.Errorf("%s leased %d times", k, n)
		}
	}
}

// A live worker keeps its lease past the TTL (renewed every TTL/3); once it
// stops (Close, as a dying worker's renewals stop) the lease runs out and
// another worker takes the item.
func TestQueue_LiveLeaseIsRenewed(t *testing.T) {
	ctx := context.Background()
	c := needRedis(t)
	name := crawlName()
	holder, other := open(t, c, name), open(t, c, name)
	mustAdd(t, holder, items("http://a.test/1"), 0)
	const ttl = 150 * time.Millisecond
	start := time.Now()
	it, _, ok, err := holder.Lease(ctx, start, ttl)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	first := start.Add(ttl).UnixMilli()
	expiry := func() int64 {
		s, err := c.ZScore(ctx, holder.Prefix()+"leases", it.Site).Result()
		if err != nil {
			return 0
		}
		return int64(s)
	}
	deadline := time.Now().Add(5 * time.Second)
	for expiry() < first+2*int64(ttl/time.Millisecond) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling for the renewals
	}
	if e := expiry(); e < first+2*int64(ttl/time.Millisecond) {
		t.Fatalf("lease expiry %d ms after the first one; want it renewed at least twice", e-first)
	}
	// Past the first expiry, the item is still held.
	if got, _, ok, _ := other.Lease(ctx, time.UnixMilli(first+1), ttl); ok {
		t.Fatalf("another worker leased %s while its holder renews it", got.Key)
	}
	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	e := expiry()
	if got := mustLeaseTTL(t, other, time.UnixMilli(e), ttl); got.Key != it.Key {
		t.Errorf("after the holder stopped: leased %s; want %s", got.Key, it.Key)
	}
	if err := holder.Finish(ctx, it, crawl.Step{Done: []string{it.Key}}, time.Time{}); !errors.Is(err, ErrClosed) && !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Finish after Close: %v; want ErrClosed or ErrLeaseLost", err)
	}
	if _, err := holder.Len(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Len after Close: %v; want ErrClosed", err)
	}
}

// When to ask again after getting nothing: the sooner of the first due time
// and the first lease expiry (-1: none), zero when neither (over).
func TestQueue_NextTime(t *testing.T) {
	for _, c := range []struct {
		due, exp int64
		want     time.Time
	}{
		{-1, -1, time.Time{}},
		{5, -1, time.UnixMilli(5)},
		{-1, 7, time.UnixMilli(7)},
		{5, 7, time.UnixMilli(5)},
		{9, 7, time.UnixMilli(7)},
		{7, 7, time.UnixMilli(7)},
	} {
		if got := nextTime(c.due, c.exp); !got.Equal(c.want) {
			t.Errorf("nextTime(%d, %d) = %v; want %v", c.due, c.exp, got, c.want)
		}
	}
}

// A zero TTL means the default one, for leases as for fetch claims.
func TestQueue_ZeroTTLIsDefault(t *testing.T) {
	ctx := context.Background()
	c := needRedis(t)
	q := open(t, c, crawlName())
	mustAdd(t, q, items("http://a.test/1"), 0)
	it, _, ok, err := q.Lease(ctx, t0, 0)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	if exp, err := c.ZScore(ctx, q.Prefix()+"leases", it.Site).Result(); err != nil || int64(exp) != t0.Add(crawl.DefaultLeaseTTL).UnixMilli() {
		t.Errorf("lease expiry %v ms after the lease, %v; want the default TTL %v", int64(exp)-t0.UnixMilli(), err, crawl.DefaultLeaseTTL)
	}
	if ok, err := q.Fetched(0).Add(ctx, it.Key); !ok || err != nil {
		t.Fatal("claim:", ok, err)
	}
	if left := c.PTTL(ctx, q.Prefix()+"claim:"+it.Key).Val(); left <= crawl.DefaultLeaseTTL-time.Minute {
		t.Errorf("claim TTL %v; want the default %v", left, crawl.DefaultLeaseTTL)
	}
}

func mustLeaseTTL(t *testing.T, q *Queue, now time.Time, ttl time.Duration) crawl.Item {
	t.Helper()
	it, next, ok, err := q.Lease(context.Background(), now, ttl)
	if err != nil || !ok {
		t.Fatalf("Lease = %v, %v, %v; want an item", next, ok, err)
	}
	return it
}

// The held hash names the worker holding each site's lease.
func TestQueue_OwnerInLeases(t *testing.T) {
	c := needRedis(t)
	name := crawlName()
	q := New(c, name, &Options{Owner: "host-a/42\nx"})
	t.Cleanup(func() { _ = q.Close() })
	mustAdd(t, q, items("http://a.test/1"), 0)
	it := mustLease(t, q, t0)
	h, err := c.HGet(context.Background(), q.Prefix()+"held", it.Site).Result()
	if err != nil || !strings.HasPrefix(h, "host-a/42 x/") || !strings.HasSuffix(h, "\n"+it.Key) {
		t.Fatalf("held[%s] = %q, %v; want the owner, a token and the key", it.Site, h, err)
	}
	if err := q.Finish(context.Background(), it, crawl.Step{Done: []string{it.Key}}, time.Time{}); err != nil {
		t.Fatal(err)
	}
}

// A lease renewed and then finished is forgotten, its renewals ended,
// without a word in the log.
func TestQueue_FinishedLeaseIsForgotten(t *testing.T) {
	ctx := context.Background()
	c := needRedis(t)
	h := &rtHook{}
	c.AddHook(h)
	var logs bytes.Buffer // read after Close, which waits for the renewals
	q := New(c, crawlName(), &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	t.Cleanup(func() { _ = q.Close() })
	mustAdd(t, q, items("http://a.test/1", "http://a.test/2"), 0)
	it, _, ok, err := q.Lease(ctx, time.Now(), 30*time.Millisecond)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	leased := h.n.Load()
	for deadline := time.Now().Add(5 * time.Second); h.n.Load() < leased+2; {
		if time.Now().After(deadline) {
			t.Fatal("no two renewals within 5s")
		}
		time.Sleep(time.Millisecond) // polling for the renewals
	}
	if err := q.Finish(ctx, it, crawl.Step{Done: []string{it.Key}}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	q.mu.Lock()
	n := len(q.leases)
	q.mu.Unlock()
	if n != 0 {
		t.Errorf("%d leases remembered after the Finish; want none", n)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 {
		t.Errorf("logged:\n%s", logs.String())
	}
}
