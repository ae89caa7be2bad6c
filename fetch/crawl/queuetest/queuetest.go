// Package queuetest checks that a [crawl.Queue] implementation behaves as
// a [crawl.Crawler] expects, in the manner of testing/fstest.TestFS: each
// key queued once, the per-site cap, FIFO order per site, one lease per
// site, sites served by ready time, expired leases given back, Finish
// applying its whole step, and the end of the crawl signalled.
//
// The tests pass their own clock to Lease (a fixed instant and offsets
// from it), so an implementation must take "now" from its argument. Use:
//
//	func TestMyQueue(t *testing.T) {
//		queuetest.Run(t, func(t *testing.T) crawl.Queue { return newEmptyQueue(t) })
//	}
package queuetest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch/crawl"
)

// t0 is the tests' clock origin.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const ttl = time.Minute

// Run runs the conformance tests against queues made by newQueue, one
// fresh, empty queue per subtest.
func Run(t *testing.T, newQueue func(t *testing.T) crawl.Queue) {
	t.Helper()
	ctx := context.Background()

	t.Run("EmptyIsOver", func(t *testing.T) {
		q := newQueue(t)
		if it, next, ok, err := q.Lease(ctx, t0, ttl); ok || !next.IsZero() || err != nil {
			t.Fatalf("Lease of an empty queue = %v, %v, %v, %v; want nothing, zero next", it.Key, next, ok, err)
		}
		if n := length(t, q); n != 0 {
			t.Errorf("Len of an empty queue = %d", n)
		}
	})

	t.Run("AddDedup", func(t *testing.T) {
		q := newQueue(t)
		a0, a1, b0 := item("http://a.test/0"), item("http://a.test/1"), item("http://b.test/0")
		got := add(t, q, 0, a0, a1, a0, b0)
		want(t, "Add", got, a0, a1, b0)
		want(t, "Add again", add(t, q, 0, a1, b0), nil...)
		for key, w := range map[string]bool{a0.Key: true, b0.Key: true, "http://a.test/never": false} {
			if s, err := q.Seen(ctx, key); s != w || err != nil {
				t.Errorf("Seen(%s) = %v, %v; want %v", key, s, err, w)
			}
		}
		if n := length(t, q); n != 3 {
			t.Errorf("Len = %d; want 3", n)
		}
	})

	t.Run("CapPerSite", func(t *testing.T) {
		q := newQueue(t)
		if err := q.Mark(ctx, true, item("http://a.test/home")); err != nil {
			t.Fatal(err)
		}
		if err := q.Mark(ctx, false, item("http://a.test/old")); err != nil {
			t.Fatal(err)
		}
		a := items("http://a.test", 5)
		want(t, "Add under a cap of 3 with one page counted", add(t, q, 3, a...), a[0], a[1])
		want(t, "Add of marked keys", add(t, q, 0, item("http://a.test/home"), item("http://a.test/old")), nil...)
		b := items("http://b.test", 2)
		want(t, "Add on another site", add(t, q, 1, b...), b[0])
		want(t, "Add without a cap", add(t, q, 0, a[2:]...), a[2:]...)
	})

	t.Run("FIFOPerSite", func(t *testing.T) {
		q := newQueue(t)
		a := items("http://a.test", 4)
		add(t, q, 0, a[:2]...)
		add(t, q, 0, a[2:]...)
		for i := range a {
			it := lease(t, q, t0)
			if it.Key != a[i].Key || it.URL.String() != a[i].URL.String() || it.Site != a[i].Site || it.Depth != a[i].Depth || it.From != a[i].From {
				t.Fatalf("lease %d = %+v; want %+v", i, it, a[i])
			}
			finish(t, q, it, crawl.Step{Done: []string{it.Key}}, time.Time{})
		}
		if _, next, ok, _ := q.Lease(ctx, t0, ttl); ok || !next.IsZero() {
			t.Errorf("after every item done: ok %v next %v; want the crawl over", ok, next)
		}
	})

	t.Run("OneLeasePerSite", func(t *testing.T) {
		q := newQueue(t)
		a, b := items("http://a.test", 2), items("http://b.test", 1)
		add(t, q, 0, a[0], b[0], a[1])
		first, second := lease(t, q, t0), lease(t, q, t0)
		if first.Site == second.Site {
			t.Fatalf("two leases on one site: %s and %s", first.Key, second.Key)
		}
		it, next, ok, err := q.Lease(ctx, t0, ttl)
		if ok || err != nil {
			t.Fatalf("third Lease with every site leased = %s, %v", it.Key, err)
		}
		if !next.Equal(t0.Add(ttl)) {
			t.Errorf("next = %v; want the lease expiry %v", next, t0.Add(ttl))
		}
		if n := length(t, q); n != 3 {
			t.Errorf("Len with two leased and one queued = %d; want 3", n)
		}
		a0 := first
		if a0.Site != a[0].Site {
			a0 = second
		}
		finish(t, q, a0, crawl.Step{Done: []string{a0.Key}}, time.Time{})
		if it := lease(t, q, t0); it.Key != a[1].Key {
			t.Errorf("after a's first item: lease %s; want %s", it.Key, a[1].Key)
		}
	})

	t.Run("DueOrder", func(t *testing.T) {
		q := newQueue(t)
		// Each site's first item is finished with a ready time; the
		// second items are then served in ready order, ties in the order
		// the sites became due.
		sites := []struct {
			name  string
			ready time.Duration
		}{{"http://a.test", 3 * time.Second}, {"http://b.test", time.Second}, {"http://c.test", 2 * time.Second}, {"http://d.test", time.Second}, {"http://e.test", 0}}
		for _, s := range sites {
			add(t, q, 0, items(s.name, 2)...)
		}
		for range sites {
			it := lease(t, q, t0)
			var ready time.Duration
			for _, s := range sites {
				if s.name == it.Site {
					ready = s.ready
				}
			}
			finish(t, q, it, crawl.Step{Done: []string{it.Key}}, t0.Add(ready))
		}
		wantOrder := []struct {
			at   time.Duration
			site string
		}{{0, "http://e.test"}, {time.Second, "http://b.test"}, {time.Second, "http://d.test"}, {2 * time.Second, "http://c.test"}, {3 * time.Second, "http://a.test"}}
		for i, w := range wantOrder {
			now := t0.Add(w.at)
			if i > 0 && w.at > wantOrder[i-1].at {
				// Just before: nothing due, next is the instant.
				if it, next, ok, err := q.Lease(ctx, now.Add(-time.Millisecond), ttl); ok || err != nil || !next.Equal(now) {
					t.Fatalf("Lease at %v = %s, next %v, %v; want none, next %v", w.at-time.Millisecond, it.Key, next, err, w.at)
				}
			}
			it := lease(t, q, now)
			if it.Site != w.site {
				t.Fatalf("Lease at +%v = %s; want an item of %s", w.at, it.Key, w.site)
			}
		}
	})

	t.Run("WaitedLongestFirst", func(t *testing.T) {
		q := newQueue(t)
		add(t, q, 0, items("http://a.test", 2)...)
		add(t, q, 0, items("http://b.test", 2)...)
		x, y := lease(t, q, t0), lease(t, q, t0)
		finish(t, q, x, crawl.Step{Done: []string{x.Key}}, t0.Add(2*time.Second))
		finish(t, q, y, crawl.Step{Done: []string{y.Key}}, t0.Add(time.Second))
		// At +5 s both are due: y's site has waited longer.
		if it := lease(t, q, t0.Add(5*time.Second)); it.Site != y.Site {
			t.Errorf("first lease = %s; want the site due at +1s (%s)", it.Key, y.Site)
		}
	})

	t.Run("TiesInArrivalOrder", func(t *testing.T) {
		q := newQueue(t)
		// Sites due at the same instant are served in the order they
		// became due: new sites as added, others as finished.
		add(t, q, 0, items("http://a.test", 2)...)
		add(t, q, 0, items("http://b.test", 2)...)
		x, y := lease(t, q, t0), lease(t, q, t0)
		if x.Site != "http://a.test" || y.Site != "http://b.test" {
			t.Fatalf("leases %s, %s; want a's, then b's", x.Key, y.Key)
		}
		finish(t, q, y, crawl.Step{Done: []string{y.Key}}, t0.Add(time.Second))
		finish(t, q, x, crawl.Step{Done: []string{x.Key}}, t0.Add(time.Second))
		if it := lease(t, q, t0.Add(time.Second)); it.Site != "http://b.test" {
			t.Errorf("lease = %s; want b's (finished first, for the same ready time)", it.Key)
		}
	})

	t.Run("LeaseExpiryGivesBackToHead", func(t *testing.T) {
		q := newQueue(t)
		a := items("http://a.test", 2)
		add(t, q, 0, a...)
		it := lease(t, q, t0)
		if _, next, ok, _ := q.Lease(ctx, t0.Add(ttl/2), ttl); ok || !next.Equal(t0.Add(ttl)) {
			t.Fatalf("during the lease: ok %v next %v; want none until %v", ok, next, t0.Add(ttl))
		}
		again := lease(t, q, t0.Add(ttl))
		if again.Key != it.Key {
			t.Fatalf("after expiry: lease %s; want %s back at the head", again.Key, it.Key)
		}
		finish(t, q, again, crawl.Step{Done: []string{again.Key}}, time.Time{})
		if next := lease(t, q, t0.Add(ttl)); next.Key != a[1].Key {
			t.Errorf("then %s; want %s", next.Key, a[1].Key)
		}
	})

	t.Run("FinishWithoutLease", func(t *testing.T) {
		q := newQueue(t)
		a := items("http://a.test", 2)
		add(t, q, 0, a...)
		err := q.Finish(ctx, a[0], crawl.Step{Done: []string{a[0].Key}, Queued: items("http://b.test", 1)}, time.Time{})
		if !errors.Is(err, crawl.ErrLeaseLost) {
			t.Fatalf("Finish without a lease = %v; want ErrLeaseLost", err)
		}
		if n := length(t, q); n != 2 {
			t.Errorf("Len after a refused Finish = %d; want 2 (nothing applied)", n)
		}
		if s, _ := q.Seen(ctx, "http://b.test/0"); s {
			t.Error("a refused Finish queued its items")
		}
	})

	t.Run("FinishAppliesStep", func(t *testing.T) {
		q := newQueue(t)
		a := items("http://a.test", 3)
		add(t, q, 2, a[:2]...)
		it := lease(t, q, t0)
		retry := it
		retry.Tries = 1
		b := items("http://b.test", 1)
		step := crawl.Step{Done: []string{"http://a.test/final"}, MaxPerSite: 2,
			Queued: []crawl.Item{retry, b[0], a[1], a[2]}} // a[1] seen, a[2] over the cap
		finish(t, q, it, step, time.Time{})
		if n := length(t, q); n != 3 {
			t.Errorf("Len = %d; want 3 (a/1, the retry, b/0)", n)
		}
		if s, _ := q.Seen(ctx, "http://a.test/final"); !s {
			t.Error("a Done key is not seen")
		}
		if s, _ := q.Seen(ctx, a[2].Key); s {
			t.Error("an item over the cap was marked seen")
		}
		// The retry goes after a/1.
		for _, w := range []crawl.Item{a[1], retry} {
			got := lease(t, q, t0, "http://a.test")
			if got.Key != w.Key || got.Tries != w.Tries {
				t.Fatalf("lease = %s (tries %d); want %s (tries %d)", got.Key, got.Tries, w.Key, w.Tries)
			}
			finish(t, q, got, crawl.Step{Done: []string{got.Key}}, time.Time{})
		}
	})

	t.Run("FinishWithoutStepGivesBack", func(t *testing.T) {
		q := newQueue(t)
		a := items("http://a.test", 2)
		add(t, q, 0, a...)
		it := lease(t, q, t0)
		finish(t, q, it, crawl.Step{}, time.Time{})
		if again := lease(t, q, t0); again.Key != it.Key {
			t.Errorf("after an empty Finish: lease %s; want %s again", again.Key, it.Key)
		}
		if n := length(t, q); n != 2 {
			t.Errorf("Len = %d; want 2", n)
		}
	})

	t.Run("DropSite", func(t *testing.T) {
		q := newQueue(t)
		a, b := items("http://a.test", 4), items("http://b.test", 1)
		add(t, q, 0, a...)
		add(t, q, 0, b...)
		it := lease(t, q, t0, "http://a.test")
		finish(t, q, it, crawl.Step{Done: []string{it.Key}, DropSite: true}, time.Time{})
		if n := length(t, q); n != 1 {
			t.Errorf("Len after dropping a site = %d; want 1", n)
		}
		if got := lease(t, q, t0); got.Site != "http://b.test" {
			t.Errorf("lease = %s; want b's item", got.Key)
		}
		if s, _ := q.Seen(ctx, a[3].Key); !s {
			t.Error("a dropped item is no longer seen: it would be queued again")
		}
	})

	t.Run("DroppedKey", func(t *testing.T) {
		q := newQueue(t)
		a := items("http://a.test", 3)
		add(t, q, 0, a...)
		it := lease(t, q, t0)
		finish(t, q, it, crawl.Step{Dropped: []string{it.Key, a[1].Key}}, time.Time{})
		if got := lease(t, q, t0); got.Key != a[2].Key {
			t.Errorf("lease = %s; want %s", got.Key, a[2].Key)
		}
	})

	t.Run("ReadyDelaysSite", func(t *testing.T) {
		q := newQueue(t)
		add(t, q, 0, items("http://a.test", 2)...)
		it := lease(t, q, t0)
		finish(t, q, it, crawl.Step{Done: []string{it.Key}}, t0.Add(time.Minute))
		// Items added meanwhile do not make the site due earlier.
		add(t, q, 0, item("http://a.test/late"))
		if _, next, ok, _ := q.Lease(ctx, t0.Add(time.Second), ttl); ok || !next.Equal(t0.Add(time.Minute)) {
			t.Errorf("Lease before the ready time: ok %v, next %v; want none, next %v", ok, next, t0.Add(time.Minute))
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		q := newQueue(t)
		const sites, each, workers = 6, 5, 8
		for s := range sites {
			add(t, q, 0, items(fmt.Sprintf("http://h%d.test", s), each)...)
		}
		var mu sync.Mutex
		busy := map[string]bool{}
		done := 0
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					it, next, ok, err := q.Lease(ctx, t0, ttl)
					if err != nil {
						t.Error(err)
						return
					}
					if !ok {
						if next.IsZero() {
							return
						}
						time.Sleep(time.Millisecond)
						continue
					}
					mu.Lock()
					if busy[it.Site] {
						t.Errorf("site %s leased twice at once", it.Site)
					}
					busy[it.Site] = true
					mu.Unlock()
					time.Sleep(time.Millisecond)
					mu.Lock()
					busy[it.Site] = false
					done++
					mu.Unlock()
					if err := q.Finish(ctx, it, crawl.Step{Done: []string{it.Key}}, time.Time{}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if done != sites*each {
			t.Errorf("%d items done; want %d", done, sites*each)
		}
	})

	t.Run("CanceledAddQueuesNothing", func(t *testing.T) {
		q := newQueue(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := q.Add(cctx, items("http://a.test", 1), 0); err == nil {
			t.Error("Add with a canceled context returned nil")
		}
		if n := length(t, q); n != 0 {
			t.Errorf("a canceled Add queued %d items", n)
		}
	})
}

func item(raw string) crawl.Item {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	return crawl.Item{URL: u, Key: raw, Site: crawl.Site(u), Depth: 1, From: "link"}
}

// items returns n items of site: site/0 .. site/n-1.
func items(site string, n int) []crawl.Item {
	out := make([]crawl.Item, n)
	for i := range out {
		out[i] = item(fmt.Sprintf("%s/%d", site, i))
	}
	return out
}

func add(t *testing.T, q crawl.Queue, maxPerSite int, its ...crawl.Item) []crawl.Item {
	t.Helper()
	out, err := q.Add(context.Background(), its, maxPerSite)
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	return out
}

// lease leases an item due at now (of site, if given: items of other
// sites are given back untouched first).
func lease(t *testing.T, q crawl.Queue, now time.Time, site ...string) crawl.Item {
	t.Helper()
	var back []crawl.Item
	defer func() {
		for _, it := range back {
			finish(t, q, it, crawl.Step{}, time.Time{})
		}
	}()
	for {
		it, next, ok, err := q.Lease(context.Background(), now, ttl)
		if err != nil || !ok {
			t.Fatalf("Lease at %v = %v, next %v; want an item", now.Sub(t0), err, next)
		}
		if len(site) == 0 || it.Site == site[0] {
			return it
		}
		back = append(back, it)
	}
}

func finish(t *testing.T, q crawl.Queue, it crawl.Item, s crawl.Step, ready time.Time) {
	t.Helper()
	if err := q.Finish(context.Background(), it, s, ready); err != nil {
		t.Fatalf("Finish(%s): %v", it.Key, err)
	}
}

func length(t *testing.T, q crawl.Queue) int {
	t.Helper()
	n, err := q.Len(context.Background())
	if err != nil {
		t.Fatalf("Len: %v", err)
	}
	return n
}

func want(t *testing.T, what string, got []crawl.Item, want ...crawl.Item) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s = %v; want %v", what, keys(got), keys(want))
	}
	for i := range want {
		if got[i].Key != want[i].Key {
			t.Fatalf("%s = %v; want %v", what, keys(got), keys(want))
		}
	}
}

func keys(its []crawl.Item) []string {
	out := make([]string, len(its))
	for i, it := range its {
		out[i] = it.Key
	}
	return out
}
