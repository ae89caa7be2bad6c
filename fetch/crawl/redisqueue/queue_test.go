package redisqueue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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
	"github.com/goodbot-go/goodbot/internal/syncbuf"
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
		done    []string // before the leased item
		dropped []string
		drop    bool
	}{
		{name: "last item", queued: []string{"http://a.test/1"}},
		{name: "the rest dropped", queued: []string{"http://a.test/1", "http://a.test/2"}, dropped: []string{"http://a.test/2"}},
		{name: "the rest done", queued: []string{"http://a.test/1", "http://a.test/2"}, done: []string{"http://a.test/2"}},
		{name: "site dropped", queued: []string{"http://a.test/1", "http://a.test/2"}, drop: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := newQueue(t)
			mustAdd(t, q, items(c.queued...), 0)
			it := mustLease(t, q, t0)
			if _, err := q.finish(ctx, it, append(c.done, it.Key), c.dropped, nil, 0, c.drop, t0.Add(time.Hour)); err != nil {
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

// A site whose last item was finished is out of the schedule; an item
// queued for it later, by Add or by another item's Finish, makes it due at
// the ready time of that last Finish.
func TestQueue_EmptiedSiteRefilledAtItsReady(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		seeds  []string
		refill func(t *testing.T, q *Queue)
	}{
		{name: "by Add", seeds: []string{"http://a.test/1"}, refill: func(t *testing.T, q *Queue) { mustAdd(t, q, items("http://a.test/2"), 0) }},
		{name: "by another site's Finish", seeds: []string{"http://a.test/1", "http://b.test/1"}, refill: func(t *testing.T, q *Queue) {
			b := mustLease(t, q, t0)
			if b.Key != "http://b.test/1" {
				t.Fatalf("leased %s; want http://b.test/1", b.Key)
			}
			if got, err := q.finish(ctx, b, []string{b.Key}, nil, items("http://a.test/2"), 0, false, t0); err != nil || len(got) != 1 {
				t.Fatalf("Finish of b.test queued %v, %v; want http://a.test/2", keys(got), err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := newQueue(t)
			mustAdd(t, q, items(c.seeds...), 0)
			a := mustLease(t, q, t0)
			if a.Key != "http://a.test/1" {
				t.Fatalf("leased %s; want http://a.test/1 (due first)", a.Key)
			}
			if _, err := q.finish(ctx, a, []string{a.Key}, nil, nil, 0, false, t0.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			c.refill(t, q)
			if n, _ := q.Len(ctx); n != 1 {
				t.Fatalf("Len after the refill = %d; want 1", n)
			}
			if next := mustNotLease(t, q, t0); !next.Equal(t0.Add(time.Second)) {
				t.Errorf("next = %v; want a.test's ready time, 1s", next.Sub(t0))
			}
			if it := mustLease(t, q, t0.Add(time.Second)); it.Key != "http://a.test/2" {
				t.Errorf("leased %s; want http://a.test/2", it.Key)
			}
		})
	}
}

// Mark counts a key against its site's cap only when counted and only the
// first time the key is seen, however many items one call marks.
func TestQueue_MarkCounts(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		added   []string // admitted before the Mark
		counted bool
		marked  []string
		want    map[string]string // the count hash afterwards
	}{
		{name: "counted, several at once", counted: true, marked: []string{"http://a.test/1", "http://a.test/2", "http://b.test/1"},
			want: map[string]string{"http://a.test": "2", "http://b.test": "1"}},
		{name: "not counted", marked: []string{"http://a.test/1", "http://b.test/1"}, want: map[string]string{}},
		{name: "counted, one seen before", added: []string{"http://a.test/1"}, counted: true, marked: []string{"http://a.test/1", "http://a.test/2"},
			want: map[string]string{"http://a.test": "2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rdb := needRedis(t)
			q := open(t, rdb, crawlName())
			if len(c.added) > 0 {
				mustAdd(t, q, items(c.added...), 0)
			}
			if err := q.Mark(ctx, c.counted, items(c.marked...)...); err != nil {
				t.Fatal(err)
			}
			for _, k := range c.marked {
				if s, err := q.Seen(ctx, k); !s || err != nil {
					t.Errorf("Seen(%s) after the Mark = %v, %v; want true", k, s, err)
				}
			}
			got, err := rdb.HGetAll(ctx, q.Prefix()+"count").Result()
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("counts = %v; want %v", got, c.want)
			}
		})
	}
}

// A damaged entry is discarded only under the discarding token's lease:
// moved to the bad list, out of the items, its lease ended, and its site
// due again at once if it has items left (not otherwise).
func TestQueue_DiscardOnlyOwnLease(t *testing.T) {
	ctx := context.Background()
	const site, key, raw, now = "http://a.test", "http://a.test/x", "damaged", 7000
	for _, c := range []struct {
		name      string
		holder    string // token in the held hash ("" none)
		more      bool   // another item queued for site
		want      int64
		bad       []string
		held      bool    // site still in the held hash afterwards
		expiry    float64 // its score in leases afterwards (0: none)
		due       int64   // when site is due afterwards (unix ms, 0: not scheduled)
		itemsLeft int64
	}{
		{name: "ours, more queued", holder: "mine", more: true, want: 1, bad: []string{raw}, due: now, itemsLeft: 1},
		{name: "ours, the last item", holder: "mine", want: 1, bad: []string{raw}},
		{name: "taken back by another", holder: "other", more: true, want: 0, held: true, expiry: 5000, itemsLeft: 2},
		{name: "not held", want: 0, itemsLeft: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rdb := needRedis(t)
			q := open(t, rdb, crawlName())
			p := q.Prefix()
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(rdb.HSet(ctx, p+"items", key, raw).Err())
			if c.more {
				mustAdd(t, q, items("http://a.test/1"), 0)
				must(rdb.ZRem(ctx, p+"sched", site).Err()) // a leased site is out of the schedule
			}
			if c.holder != "" {
				must(rdb.HSet(ctx, p+"held", site, c.holder+"\n"+key).Err())
				must(rdb.ZAdd(ctx, p+"leases", redis.Z{Score: 5000, Member: site}).Err())
			}
			res, err := discardScript.Run(ctx, rdb, q.keys, q.prefix, "mine", site, now).Int64()
			if err != nil {
				t.Fatal(err)
			}
			if res != c.want {
				t.Errorf("discard = %d; want %d", res, c.want)
			}
			if bad, _ := rdb.LRange(ctx, p+"bad", 0, -1).Result(); fmt.Sprint(bad) != fmt.Sprint(c.bad) {
				t.Errorf("bad list = %q; want %q", bad, c.bad)
			}
			if n, _ := rdb.HLen(ctx, p+"items").Result(); n != c.itemsLeft {
				t.Errorf("%d items left; want %d", n, c.itemsLeft)
			}
			if held, _ := rdb.HExists(ctx, p+"held", site).Result(); held != c.held {
				t.Errorf("site held afterwards: %v; want %v", held, c.held)
			}
			if exp, _ := rdb.ZScore(ctx, p+"leases", site).Result(); exp != c.expiry {
				t.Errorf("lease expiry afterwards %v; want %v", exp, c.expiry)
			}
			var due int64
			if s, err := rdb.ZScore(ctx, p+"sched", site).Result(); err == nil {
				due = int64(s) / 1024
			}
			if due != c.due {
				t.Errorf("site due at %d afterwards; want %d", due, c.due)
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
		{name: "retry of a dropped site, then a link", drop: true, queued: []crawl.Item{{URL: item("http://a.test/1").URL, Key: "http://a.test/1", Site: "http://a.test", Tries: 1}, item("http://b.test/1")},
			wantAdd: []string{"http://b.test/1"}, wantNext: []string{"http://b.test/1"}},
		{name: "drop site", drop: true, queued: items("http://b.test/1"),
			wantAdd: []string{"http://b.test/1"}, wantNext: []string{"http://b.test/1"}},
		{name: "dropped keys", done: true, dropped: []string{"http://a.test/2", "http://c.test/9"},
			wantNext: nil},
		{name: "keys that are no URL", done: true, dropped: []string{"%zz", "no/host"},
			wantNext: []string{"http://a.test/2"}},
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
		if n, err := q.Len(ctx); n != 0 || !errors.Is(err, ErrUnavailable) {
			t.Errorf("Len: %d, %v; want 0, ErrUnavailable", n, err)
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

// failHook makes every command fail as on a broken connection while fail
// is set.
type failHook struct{ fail atomic.Bool }

func (h *failHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *failHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.fail.Load() {
			err := &net.OpError{Op: "write", Net: "tcp", Err: errors.New("connection reset (injected)")}
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}
func (h *failHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A Finish that Redis did not answer is reported so, and the lease is still
// the worker's: a later Finish of it applies.
func TestQueue_FailedFinishKeepsTheLease(t *testing.T) {
	ctx := context.Background()
	c := needRedis(t)
	h := &failHook{}
	c.AddHook(h)
	q := open(t, c, crawlName())
	mustAdd(t, q, items("http://a.test/1"), 0)
	it := mustLease(t, q, t0)
	h.fail.Store(true)
	err := q.Finish(ctx, it, crawl.Step{Done: []string{it.Key}}, time.Time{})
	h.fail.Store(false)
	if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Finish on a broken connection: %v; want ErrUnavailable", err)
	}
	if err := q.Finish(ctx, it, crawl.Step{Done: []string{it.Key}}, time.Time{}); err != nil {
		t.Fatalf("Finish once Redis answers: %v; want it applied", err)
	}
	if n, err := q.Len(ctx); n != 0 || err != nil {
		t.Errorf("Len after the Finish = %d, %v; want 0", n, err)
	}
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

// An item taken back from a Queue and leased again by that same Queue: the
// renewals of the old lease stop (they would find it lost), those of the
// new one go on.
func TestQueue_ReleasedByTheSameQueue(t *testing.T) {
	ctx := context.Background()
	c := needRedis(t)
	h := &rtHook{}
	c.AddHook(h)
	var logs bytes.Buffer // read after Close, which waits for the renewals
	q := openLogged(t, c, &logs)
	mustAdd(t, q, items("http://a.test/1"), 0)
	const ttl = 300 * time.Millisecond // renewals every 100ms, wall clock
	first, _, ok, err := q.Lease(ctx, t0, ttl)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	again, _, ok, err := q.Lease(ctx, t0.Add(time.Hour), ttl) // the first lease ran out
	if !ok || err != nil || again.Key != first.Key {
		t.Fatalf("Lease after the first ran out = %s, %v, %v; want %s again", again.Key, ok, err, first.Key)
	}
	leased := h.n.Load()
	for deadline := time.Now().Add(5 * time.Second); h.n.Load() < leased+2; {
		if time.Now().After(deadline) {
			t.Fatal("no two renewals within 5s")
		}
		time.Sleep(time.Millisecond) // polling for the renewals
	}
	if err := q.Finish(ctx, again, crawl.Step{Done: []string{again.Key}}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 {
		t.Errorf("logged:\n%s", logs.String())
	}
}

// A renewal that runs after this Queue ended its lease in Redis (a Lease
// that took the item back, a Finish) and before the Queue's own
// bookkeeping finds the lease gone, but it is not lost: nothing is logged.
// The hook holds that script's answer until a renewal has been answered
// "not yours", so the renewal always falls in that window (under the race
// detector on a loaded machine it once did by chance, and the Queue logged
// "lease lost").
func TestQueue_EndedWhileRenewing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script *redis.Script
		end    func(ctx context.Context, q *Queue, it crawl.Item) (crawl.Item, error)
	}{
		{"taken back by a Lease", leaseScript, func(ctx context.Context, q *Queue, it crawl.Item) (crawl.Item, error) {
			again, _, ok, err := q.Lease(ctx, t0.Add(time.Hour), leaseTTL) // the first lease ran out
			if !ok || err != nil || again.Key != it.Key {
				return again, fmt.Errorf("Lease after the first ran out = %s, %v, %v; want %s again", again.Key, ok, err, it.Key)
			}
			return again, nil
		}},
		{"finished", finishScript, func(ctx context.Context, q *Queue, it crawl.Item) (crawl.Item, error) {
			return crawl.Item{}, q.Finish(ctx, it, crawl.Step{Done: []string{it.Key}}, time.Time{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := needRedis(t)
			if err := renewScript.Load(ctx, c).Err(); err != nil { // renewals then go as EVALSHA
				t.Fatal(err)
			}
			h := &renewRaceHook{script: tc.script.Hash(), lost: make(chan struct{}, 1)}
			c.AddHook(h)
			var logs syncbuf.Buffer
			q := openLogged(t, c, &logs)
			mustAdd(t, q, items("http://a.test/1"), 0)
			it, _, ok, err := q.Lease(ctx, t0, leaseTTL)
			if !ok || err != nil {
				t.Fatal(ok, err)
			}
			h.hold.Store(true)
			again, err := tc.end(ctx, q, it)
			if err != nil {
				t.Fatal(err)
			}
			if !h.held.Load() {
				t.Fatal("no renewal found the lease gone while the script's answer was held: the window was not tested")
			}
			if again.Key != "" {
				if err := q.Finish(ctx, again, crawl.Step{Done: []string{again.Key}}, time.Time{}); err != nil {
					t.Fatal(err)
				}
			}
			if err := q.Close(); err != nil { // waits for the renewals
				t.Fatal(err)
			}
			if logs.String() != "" {
				t.Errorf("logged:\n%s", logs.String())
			}
		})
	}
}

// leaseTTL is TestQueue_EndedWhileRenewing's: renewals every 100ms.
const leaseTTL = 300 * time.Millisecond

// renewRaceHook, while hold is set, holds the answer of the next run of the
// script whose hash is script until a renewal has been answered that its
// lease is gone (held says one was).
type renewRaceHook struct {
	script     string
	hold, held atomic.Bool
	lost       chan struct{}
}

func (h *renewRaceHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *renewRaceHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		args := cmd.Args()
		if len(args) < 2 || args[0] != "evalsha" {
			return err
		}
		switch args[1] {
		case renewScript.Hash():
			if c, ok := cmd.(*redis.Cmd); ok && c.Val() == int64(0) {
				select {
				case h.lost <- struct{}{}:
				default:
				}
			}
		case h.script:
			if h.hold.CompareAndSwap(true, false) {
				select {
				case <-h.lost:
					h.held.Store(true)
				case <-time.After(5 * time.Second):
				}
			}
		}
		return err
	}
}
func (h *renewRaceHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// waitFor polls cond (every millisecond, up to 5s) and fails t if it
// never holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 5s", what)
		}
		time.Sleep(time.Millisecond) // polling
	}
}

// A renewal that finds its lease taken by another worker logs it once and
// stops; the renewals of the Queue's other leases go on.
func TestQueue_LostLeaseStopsRenewing(t *testing.T) {
	ctx := context.Background()
	c := needRedis(t)
	var logs syncbuf.Buffer
	q := openLogged(t, c, &logs)
	mustAdd(t, q, items("http://a.test/1", "http://b.test/1"), 0)
	const ttl = 60 * time.Millisecond // renewals every 20ms
	a, _, ok, err := q.Lease(ctx, time.Now(), ttl)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	b, _, ok, err := q.Lease(ctx, time.Now(), ttl)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := c.HSet(ctx, q.Prefix()+"held", a.Site, "other\n"+a.Key).Err(); err != nil { // taken back and leased elsewhere
		t.Fatal(err)
	}
	waitFor(t, "lease lost in the log", func() bool { return strings.Contains(logs.String(), "lease lost") })
	expiry := func() int64 { return int64(c.ZScore(ctx, q.Prefix()+"leases", b.Site).Val()) }
	e := expiry()
	waitFor(t, "three renewals of the other lease", func() bool { return expiry() >= e+3*20 })
	if n := strings.Count(logs.String(), "lease lost"); n != 1 {
		t.Errorf("lease lost logged %d times; want once:\n%s", n, logs.String())
	}
	if err := q.Finish(ctx, b, crawl.Step{Done: []string{b.Key}}, time.Time{}); err != nil {
		t.Fatal(err)
	}
}

// A renewal that Redis does not answer is logged, and the renewals go on.
func TestQueue_FailedRenewalIsLogged(t *testing.T) {
	ctx := context.Background()
	c := needRedis(t)
	h := &failHook{}
	c.AddHook(h)
	var logs syncbuf.Buffer
	q := openLogged(t, c, &logs)
	mustAdd(t, q, items("http://a.test/1"), 0)
	it, _, ok, err := q.Lease(ctx, time.Now(), 30*time.Millisecond)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	h.fail.Store(true)
	waitFor(t, "renewal failure in the log", func() bool { return strings.Contains(logs.String(), "lease renewal failed") })
	h.fail.Store(false)
	e := int64(c.ZScore(ctx, q.Prefix()+"leases", it.Site).Val())
	waitFor(t, "renewal once Redis answers", func() bool { return int64(c.ZScore(ctx, q.Prefix()+"leases", it.Site).Val()) > e })
	if err := q.Finish(ctx, it, crawl.Step{Done: []string{it.Key}}, time.Time{}); err != nil {
		t.Fatal(err)
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
		{0, -1, time.UnixMilli(0)},
		{-1, 0, time.UnixMilli(0)},
		{0, 7, time.UnixMilli(0)},
		{5, 0, time.UnixMilli(0)},
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

// A lease lasts the TTL given, at least a millisecond; no positive TTL
// means the default one.
func TestQueue_LeaseTTL(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		ttl, want time.Duration
	}{
		{-time.Second, crawl.DefaultLeaseTTL},
		{time.Nanosecond, time.Millisecond},
		{1500 * time.Microsecond, time.Millisecond},
		{3 * time.Second, 3 * time.Second},
	} {
		t.Run(c.ttl.String(), func(t *testing.T) {
			rdb := needRedis(t)
			// The expiry read is the Lease's own: a renewal (every
			// millisecond at the shortest ttl) would move it.
			rdb.AddHook(noRenewHook{})
			q := open(t, rdb, crawlName())
			mustAdd(t, q, items("http://a.test/1"), 0)
			it, _, ok, err := q.Lease(ctx, t0, c.ttl)
			if !ok || err != nil {
				t.Fatal(ok, err)
			}
			if exp, err := rdb.ZScore(ctx, q.Prefix()+"leases", it.Site).Result(); err != nil || int64(exp) != t0.Add(c.want).UnixMilli() {
				t.Errorf("lease expiry %v ms after the lease, %v; want %v", int64(exp)-t0.UnixMilli(), err, c.want)
			}
		})
	}
}

// noRenewHook fails every renewal without sending it.
type noRenewHook struct{}

func (noRenewHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (noRenewHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if args := cmd.Args(); len(args) > 1 && args[0] == "evalsha" && args[1] == renewScript.Hash() {
			err := errors.New("renewal not sent (test)")
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}
func (noRenewHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// Adding or marking no items is no round trip.
func TestQueue_NothingToAddOrMark(t *testing.T) {
	c := needRedis(t)
	h := &rtHook{}
	c.AddHook(h)
	q := open(t, c, crawlName())
	ctx := context.Background()
	if got, err := q.Add(ctx, nil, 0); got != nil || err != nil {
		t.Errorf("Add of nothing = %v, %v", got, err)
	}
	if err := q.Mark(ctx, true); err != nil {
		t.Errorf("Mark of nothing: %v", err)
	}
	if n := h.n.Load(); n != 0 {
		t.Errorf("%d round trips; want none", n)
	}
}

// A damaged entry that cannot be moved aside (Redis refuses) is reported
// with both causes; its lease runs out and the entry fails again.
func TestQueue_DamagedEntryNotMovedAside(t *testing.T) {
	ctx := context.Background()
	c := needRedis(t)
	q := open(t, c, crawlName())
	mustAdd(t, q, items("http://a.test/1"), 0)
	if err := c.HSet(ctx, q.Prefix()+"items", "http://a.test/1", "not json").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, q.Prefix()+"bad", "a string, not a list", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, now := range []time.Time{t0, t0.Add(time.Minute)} {
		_, _, ok, err := q.Lease(ctx, now, time.Minute)
		if ok || !errors.Is(err, ErrBadItem) || !errors.Is(err, ErrRedis) {
			t.Fatalf("Lease at %v = %v, %v; want an error matching ErrBadItem and ErrRedis", now.Sub(t0), ok, err)
		}
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
	q := openLogged(t, c, &logs)
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

// holdHook holds the next command once armed, until released, and records
// when it is over.
type holdHook struct {
	armed             atomic.Bool
	entered, released chan struct{}
	over              atomic.Bool
}

func (h *holdHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *holdHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !h.armed.CompareAndSwap(true, false) {
			return next(ctx, cmd)
		}
		close(h.entered)
		<-h.released
		err := next(ctx, cmd)
		h.over.Store(true)
		return err
	}
}
func (h *holdHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// Close returns only once the renewals are over, a renewal in flight
// included.
func TestQueue_CloseWaitsForARenewalInFlight(t *testing.T) {
	c := needRedis(t)
	h := &holdHook{entered: make(chan struct{}), released: make(chan struct{})}
	c.AddHook(h)
	q := open(t, c, crawlName())
	mustAdd(t, q, items("http://a.test/1"), 0)
	if _, _, ok, err := q.Lease(context.Background(), time.Now(), 300*time.Millisecond); !ok || err != nil {
		t.Fatal(ok, err)
	}
	h.armed.Store(true)
	<-h.entered // the first renewal, 100ms on
	closed := make(chan struct{})
	go func() { _ = q.Close(); close(closed) }()
	waitFor(t, "Close under way", func() bool { q.mu.Lock(); defer q.mu.Unlock(); return q.closed })
	close(h.released)
	<-closed
	if !h.over.Load() {
		t.Error("Close returned while a renewal was still running")
	}
}

// cancelHook, once armed, holds the next command until its context is
// cancelled, as a slow Redis would.
type cancelHook struct {
	armed   atomic.Bool
	entered chan struct{}
}

func (h *cancelHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *cancelHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.armed.CompareAndSwap(true, false) {
			close(h.entered)
			<-ctx.Done()
		}
		return next(ctx, cmd)
	}
}
func (h *cancelHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A context cancelled while its call waits for Redis: the call returns the
// context's error, not an *Error (Redis is not down).
func TestQueue_CancelledDuringTheCall(t *testing.T) {
	c := needRedis(t)
	h := &cancelHook{entered: make(chan struct{})}
	c.AddHook(h)
	q := open(t, c, crawlName())
	ctx, cancel := context.WithCancel(context.Background())
	h.armed.Store(true)
	go func() { <-h.entered; cancel() }()
	_, err := q.Add(ctx, items("http://a.test/1"), 0)
	var qe *Error
	if !errors.Is(err, context.Canceled) || errors.As(err, &qe) {
		t.Errorf("Add cancelled under way: %v; want context.Canceled itself", err)
	}
}

// openLogged is a Queue of a new crawl on c that logs to w, closed when
// the test ends.
func openLogged(t *testing.T, c *redis.Client, w io.Writer) *Queue {
	t.Helper()
	q := New(c, crawlName(), &Options{Logger: slog.New(slog.NewTextHandler(w, nil))})
	t.Cleanup(func() { _ = q.Close() })
	return q
}
