package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"
)

// popSpill is a Spill in memory that records each Pop: the items asked
// for, the items the site had in the Spill and the items returned. With
// fail set, Push fails with it.
type popSpill struct {
	*mapSpill
	pops []spillPop
	fail error
}

type spillPop struct {
	site              string
	asked, had, given int
}

func (p *popSpill) Push(ctx context.Context, site string, items []Item) error {
	if p.fail != nil {
		return p.fail
	}
	return p.mapSpill.Push(ctx, site, items)
}

func (p *popSpill) Pop(ctx context.Context, site string, n int) ([]Item, error) {
	p.mu.Lock()
	had := len(p.queues[site])
	p.mu.Unlock()
	its, err := p.mapSpill.Pop(ctx, site, n)
	p.pops = append(p.pops, spillPop{site, n, had, len(its)})
	return its, err
}

// A spilled frontier drains in batches: each Spill.Pop brings back at
// least refillBatch items (or MaxInMemory, or all the site has left), so a
// site needs at most its spilled items / batch Pops. Each site's order is
// kept, new items included, and at every step memory holds at most
// MaxInMemory items plus, per site, up to a batch of its own.
func TestMemQueue_SpillDrainsInBatches(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		sites, each, maxInMem int
		lease                 bool // Lease and Finish, else Frontier.Next
		linkEvery             int  // a Finish queues a new item every linkEvery items
	}{
		{name: "next, 100 sites", sites: 100, each: 100, maxInMem: 100},
		{name: "lease, 100 sites", sites: 100, each: 100, maxInMem: 100, lease: true},
		{name: "lease, new items queued", sites: 20, each: 200, maxInMem: 50, lease: true, linkEvery: 7},
		{name: "next, MaxInMemory below the batch", sites: 5, each: 100, maxInMem: 10},
		{name: "lease, one site", sites: 1, each: 1000, maxInMem: 100, lease: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := &popSpill{mapSpill: newMapSpill()}
			f := &Frontier{Spill: sp, MaxInMemory: tc.maxInMem}
			want := map[string][]string{} // each site's keys in queue order
			for i := range tc.each {
				for s := range tc.sites {
					raw := fmt.Sprintf("http://s%d.test/%d", s, i)
					if !f.Add(u(raw), 0, "seed") {
						t.Fatalf("Add(%s) refused", raw)
					}
					want[Site(u(raw))] = append(want[Site(u(raw))], raw)
				}
			}
			spilled := map[string]int{}
			for site, q := range sp.queues {
				spilled[site] = len(q)
			}
			if n := tc.sites*tc.each - tc.maxInMem; sum(spilled) != n {
				t.Fatalf("%d items spilled; want %d", sum(spilled), n)
			}
			q := f.memq()
			batch := min(refillBatch, tc.maxInMem)
			got, added := 0, 0
			took := func(it Item) {
				t.Helper()
				if it.Key != want[it.Site][0] {
					t.Fatalf("took %s; want %s (site order)", it.Key, want[it.Site][0])
				}
				want[it.Site] = want[it.Site][1:]
				got++
				checkBound(t, q, batch)
			}
			for f.Len() > 0 {
				if !tc.lease {
					for _, site := range f.Sites() {
						it, ok := f.Next(site)
						if !ok {
							t.Fatalf("Next(%s) empty with Len %d", site, f.Len())
						}
						took(it)
					}
					continue
				}
				it, _, ok, err := q.Lease(context.Background(), time.Unix(0, 0), 0)
				if err != nil || !ok {
					t.Fatalf("Lease = %v, %v with Len %d", ok, err, f.Len())
				}
				took(it)
				step := Step{Done: []string{it.Key}}
				if tc.linkEvery > 0 && got%tc.linkEvery == 0 {
					raw := fmt.Sprintf("%s/new%d", it.Site, added)
					added++
					step.Queued = []Item{{URL: u(raw), Key: raw, Site: it.Site, From: "link"}}
					want[it.Site] = append(want[it.Site], raw)
				}
				if err := q.Finish(context.Background(), it, step, time.Time{}); err != nil {
					t.Fatal(err)
				}
				checkBound(t, q, batch)
			}
			if got != tc.sites*tc.each+added || f.Err() != nil {
				t.Fatalf("took %d items, err %v; want %d", got, f.Err(), tc.sites*tc.each+added)
			}
			if len(sp.pops) == 0 {
				t.Fatal("no Spill.Pop")
			}
			pops := map[string]int{}
			for _, p := range sp.pops {
				if least := min(batch, p.had); p.asked < least || p.given < least {
					t.Fatalf("Pop of %s asked %d, got %d of its %d spilled; want at least %d", p.site, p.asked, p.given, p.had, least)
				}
				pops[p.site]++
			}
			for site, n := range spilled {
				if most := (n + batch - 1) / batch; tc.linkEvery == 0 && pops[site] > most {
					t.Errorf("%s: %d Pops for %d spilled items; want at most %d", site, pops[site], n, most)
				}
			}
		})
	}
}

// checkBound fails t if q holds more items in memory than maxInMem plus,
// per site, up to batch of its own (a leased item included).
func checkBound(t *testing.T, q *memQueue, batch int) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	held, bound := 0, q.maxInMem
	for _, s := range q.sites {
		n := len(s.items)
		if s.lease.Key != "" {
			n++
		}
		held += n
		bound += min(n, batch)
	}
	if held != q.inMem {
		t.Fatalf("%d items in the sites' memory; inMem says %d", held, q.inMem)
	}
	if held > bound {
		t.Fatalf("%d items in memory; bound %d", held, bound)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// A key that Finish drops leaves the queue: at once in memory, and while
// its item is in the Spill, it is skipped when the item comes back (and no
// longer counted), unless it was queued again;
// the leased item, unless the step names it, goes back to the head.
func TestMemQueue_DroppedWhileSpilled(t *testing.T) {
	const site = "http://a.test"
	key := func(i int) string { return fmt.Sprintf("%s/%d", site, i) }
	for _, tc := range []struct {
		name     string
		maxInMem int
		step     func(it Item) Step
		want     []string // the keys leased after a/0, in order
	}{
		{"spilled key dropped", 1, func(it Item) Step {
			return Step{Done: []string{it.Key}, Dropped: []string{key(2), key(4)}}
		}, []string{key(1), key(3)}},
		{"another key dropped, the item not named: it stays", 1, func(it Item) Step {
			return Step{Dropped: []string{key(2)}}
		}, []string{key(0), key(1), key(3), key(4)}},
		{"keys in memory and spilled dropped", 2, func(it Item) Step {
			return Step{Done: []string{it.Key}, Dropped: []string{key(1), key(3)}}
		}, []string{key(2), key(4)}},
		{"unknown key dropped", 1, func(it Item) Step {
			return Step{Done: []string{it.Key}, Dropped: []string{"http://a.test/none"}}
		}, []string{key(1), key(2), key(3), key(4)}},
		{"dropped and retried", 1, func(it Item) Step {
			again := it
			again.Tries++
			return Step{Dropped: []string{it.Key, key(3)}, Queued: []Item{again}}
		}, []string{key(1), key(2), key(4), key(0)}},
		// a/2 and a/3 come back in one batch of 2: the rest of the batch
		// is kept.
		{"dropped key heads a batch", 2, func(it Item) Step {
			return Step{Done: []string{it.Key}, Dropped: []string{key(2)}}
		}, []string{key(1), key(3), key(4)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := &popSpill{mapSpill: newMapSpill()}
			q := newMemQueue(nil, sp, tc.maxInMem, memSeen{})
			var its []Item
			for i := range 5 {
				its = append(its, Item{URL: u(key(i)), Key: key(i), Site: site})
			}
			if _, err := q.Add(context.Background(), its, 0); err != nil {
				t.Fatal(err)
			}
			now := time.Unix(0, 0)
			first, _, ok, _ := q.Lease(context.Background(), now, 0)
			if !ok || first.Key != key(0) {
				t.Fatalf("first lease = %s, %v; want %s", first.Key, ok, key(0))
			}
			if err := q.Finish(context.Background(), first, tc.step(first), time.Time{}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for {
				it, _, ok, err := q.Lease(context.Background(), now, 0)
				if err != nil || !ok {
					break
				}
				got = append(got, it.Key)
				if err := q.Finish(context.Background(), it, Step{Done: []string{it.Key}}, time.Time{}); err != nil {
					t.Fatal(err)
				}
			}
			if len(sp.pops) == 0 {
				t.Fatal("nothing came back from the Spill")
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("leased %v; want %v", got, tc.want)
			}
			if n, _ := q.Len(context.Background()); n != 0 || q.inMem != 0 {
				t.Errorf("Len %d, %d in memory after the drain; want 0, 0", n, q.inMem)
			}
		})
	}
}

// One Add or Mark of many items takes each on its own: a capped or seen
// item does not stop the items after it.
func TestMemQueue_ManyItemsPerCall(t *testing.T) {
	ctx := context.Background()
	q := NewMemoryQueue()
	item := func(raw string) Item { return Item{URL: u(raw), Key: raw, Site: Site(u(raw))} }
	added, err := q.Add(ctx, []Item{item("http://a.test/0"), item("http://a.test/1"), item("http://b.test/0")}, 1)
	if err != nil || fmt.Sprint(keysOf(added)) != "[http://a.test/0 http://b.test/0]" {
		t.Fatalf("Add under a cap of 1 = %v, %v; want a.test/0 and b.test/0", keysOf(added), err)
	}
	if err := q.Mark(ctx, true, item("http://a.test/0"), item("http://c.test/0"), item("http://c.test/1")); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"http://c.test/0", "http://c.test/1"} {
		if seen, _ := q.Seen(ctx, key); !seen {
			t.Errorf("%s, marked after a key seen before, is not seen", key)
		}
	}
	if added, _ := q.Add(ctx, []Item{item("http://c.test/2")}, 2); len(added) != 0 {
		t.Errorf("Add on c.test under a cap of 2 = %v; want none (two marked counted)", keysOf(added))
	}
}

func keysOf(its []Item) []string {
	var out []string
	for _, it := range its {
		out = append(out, it.Key)
	}
	return out
}

// A call whose ctx is done returns ctx's error and nothing else: no item
// leased, no key seen, nothing marked, no lease ended.
func TestMemQueue_CanceledCallsDoNothing(t *testing.T) {
	ctx := context.Background()
	done, cancel := context.WithCancel(ctx)
	cancel()
	q := NewMemoryQueue()
	a := Item{URL: u("http://a.test/0"), Key: "http://a.test/0", Site: "http://a.test"}
	if _, err := q.Add(ctx, []Item{a}, 0); err != nil {
		t.Fatal(err)
	}
	if it, next, ok, err := q.Lease(done, time.Unix(0, 0), 0); ok || it.Key != "" || !next.IsZero() || !errors.Is(err, context.Canceled) {
		t.Errorf("Lease = %q, %v, %v, %v; want nothing and ctx's error", it.Key, next, ok, err)
	}
	if seen, err := q.Seen(done, a.Key); seen || !errors.Is(err, context.Canceled) {
		t.Errorf("Seen = %v, %v; want false and ctx's error", seen, err)
	}
	b := Item{Key: "http://b.test/0", Site: "http://b.test"}
	if err := q.Mark(done, false, b); !errors.Is(err, context.Canceled) {
		t.Errorf("Mark = %v; want ctx's error", err)
	}
	if seen, _ := q.Seen(ctx, b.Key); seen {
		t.Error("a canceled Mark marked its key")
	}
	it, _, ok, _ := q.Lease(ctx, time.Unix(0, 0), 0)
	if !ok {
		t.Fatal("no lease")
	}
	if err := q.Finish(done, it, Step{Done: []string{it.Key}}, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Finish = %v; want ctx's error", err)
	}
	if n, err := q.Len(done); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("Len = %d, %v; want 0 and ctx's error", n, err)
	}
	if err := q.Finish(ctx, it, Step{Done: []string{it.Key}}, time.Time{}); err != nil {
		t.Errorf("Finish after a canceled one = %v; want the lease still held", err)
	}
}

// A site whose last items Frontier.Next or Drop took leaves the schedule,
// even when it is the next one due: with nothing queued the crawl is over.
func TestMemQueue_EmptiedSiteLeavesTheSchedule(t *testing.T) {
	for _, tt := range []struct {
		name  string
		empty func(f *Frontier)
	}{
		{"next", func(f *Frontier) { f.Next("http://a.test") }},
		{"drop", func(f *Frontier) { f.Drop("http://a.test") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			f := &Frontier{}
			f.AddAll([]*url.URL{u("http://a.test/0"), u("http://a.test/1")}, "seed")
			q := f.memq()
			now := time.Unix(0, 0)
			it, _, ok, _ := q.Lease(ctx, now, 0)
			if !ok {
				t.Fatal("no lease")
			}
			if err := q.Finish(ctx, it, Step{Done: []string{it.Key}}, now.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			tt.empty(f)
			if f.Len() != 0 || f.InMemory() != 0 {
				t.Fatalf("Len %d, %d in memory; want 0, 0", f.Len(), f.InMemory())
			}
			if it, next, ok, _ := q.Lease(ctx, now, 0); ok || !next.IsZero() {
				t.Errorf("Lease = %q, next %v; want none and the crawl over", it.Key, next.Sub(now))
			}
		})
	}
}

// Items stay in memory, in order, without a Spill, with a Spill but no
// MaxInMemory (which leaves the Spill untouched, the seen set too), or
// when the Spill's Push fails (Err then reports the failure); once Next
// has taken them the queue is empty.
func TestFrontier_SpillKeepsItemsInMemory(t *testing.T) {
	broken := errors.New("spill disk gone")
	for _, tt := range []struct {
		name        string
		spill       bool // the Frontier has a Spill (a SeenStore too)
		maxInMemory int
		fail        error // of the Spill's Push
	}{
		{"MaxInMemory without a Spill", false, 1, nil},
		{"Spill without MaxInMemory", true, 0, nil},
		{"Push fails", true, 1, broken},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sp := &popSpill{mapSpill: newMapSpill(), fail: tt.fail}
			f := &Frontier{MaxInMemory: tt.maxInMemory}
			if tt.spill {
				f.Spill = sp
			}
			if n := f.AddAll([]*url.URL{u("http://a.test/0"), u("http://a.test/1"), u("http://a.test/2")}, "seed"); n != 3 {
				t.Fatalf("AddAll = %d; want 3", n)
			}
			if n := f.InMemory(); n != 3 || len(sp.queues["http://a.test"]) != 0 {
				t.Errorf("%d in memory, %d in the Spill; want 3, 0", n, len(sp.queues["http://a.test"]))
			}
			if tt.maxInMemory == 0 && sp.writes+sp.reads != 0 {
				t.Errorf("%d writes, %d reads of the seen set in the Spill; want none without MaxInMemory", sp.writes, sp.reads)
			}
			if err := f.Err(); !errors.Is(err, tt.fail) || (tt.fail == nil) != (err == nil) {
				t.Errorf("Err = %v; want %v", err, tt.fail)
			}
			var got []string
			for it, ok := f.Next("http://a.test"); ok; it, ok = f.Next("http://a.test") {
				got = append(got, it.URL.Path)
			}
			if fmt.Sprint(got) != "[/0 /1 /2]" {
				t.Errorf("Next gave %v; want [/0 /1 /2]", got)
			}
			if n, sites := f.Len(), f.Sites(); n != 0 || len(sites) != 0 {
				t.Errorf("after the last Next: Len %d, sites %v; want 0, none", n, sites)
			}
		})
	}
}

// Each lease ends at its own expiry, whatever the ttl of the others: a
// short lease taken after a long one, and a lease that ends after another
// was given back and taken again, are each given back when they end. With
// none due, next is no later than the earliest end of the leases held.
func TestMemQueue_LeasesEndInTheirOwnTime(t *testing.T) {
	ctx := context.Background()
	q := NewMemoryQueue()
	var its []Item
	for _, raw := range []string{"http://a.test/0", "http://b.test/0", "http://c.test/0"} {
		its = append(its, Item{URL: u(raw), Key: raw, Site: Site(u(raw))})
	}
	if _, err := q.Add(ctx, its, 0); err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(0, 0)
	held := map[string]Item{}
	for _, step := range []struct {
		at, ttl time.Duration
		finish  string        // the key whose lease is finished (done) first
		want    string        // the key leased ("": none)
		next    time.Duration // with none leased: when to ask again
	}{
		{0, 10 * time.Minute, "", "http://a.test/0", 0},
		{0, time.Minute, "", "http://b.test/0", 0},
		{30 * time.Second, time.Minute, "", "http://c.test/0", 0},
		{59 * time.Second, time.Minute, "", "", time.Minute},      // b's lease ends first
		{time.Minute, time.Minute, "", "http://b.test/0", 0},      // given back and taken again
		{89 * time.Second, time.Minute, "", "", 90 * time.Second}, // then c's
		{90 * time.Second, time.Minute, "", "http://c.test/0", 0}, // given back too
		{119 * time.Second, time.Minute, "", "", 2 * time.Minute}, // b's second lease
		// b's lease finished before its end. Its end may still be the
		// next time to ask (Lease does not look through the leases held
		// for that); asked then, Lease answers c's end.
		{119 * time.Second, time.Minute, "http://b.test/0", "", 2 * time.Minute},
		{2 * time.Minute, time.Minute, "", "", 150 * time.Second},
	} {
		if step.finish != "" {
			if err := q.Finish(ctx, held[step.finish], Step{Done: []string{step.finish}}, time.Time{}); err != nil {
				t.Fatalf("Finish(%s) = %v", step.finish, err)
			}
		}
		it, next, ok, err := q.Lease(ctx, t0.Add(step.at), step.ttl)
		if err != nil || it.Key != step.want || ok != (step.want != "") || (!ok && !next.Equal(t0.Add(step.next))) {
			t.Fatalf("Lease at %v = %q, next %v, %v, %v; want %q, next %v", step.at, it.Key, next.Sub(t0), ok, err, step.want, step.next)
		}
		if ok {
			held[it.Key] = it
		}
	}
}

// A site whose spilled items the Spill lost is skipped: Lease goes on to
// the next site due.
func TestMemQueue_SpillLostItems(t *testing.T) {
	sp := &popSpill{mapSpill: newMapSpill()}
	f := &Frontier{Spill: sp, MaxInMemory: 1}
	f.AddAll([]*url.URL{u("http://b.test/0"), u("http://a.test/0"), u("http://a.test/1"), u("http://a.test/2"), u("http://c.test/0")}, "seed")
	q := f.memq()
	ctx, now := context.Background(), time.Unix(0, 0)
	if it, _, ok, _ := q.Lease(ctx, now, 0); !ok || it.Key != "http://b.test/0" {
		t.Fatalf("first Lease = %q, %v; want b.test/0 (in memory)", it.Key, ok)
	}
	sp.mu.Lock()
	if len(sp.queues["http://a.test"]) != 3 {
		t.Fatalf("a.test has %d items in the Spill; want 3", len(sp.queues["http://a.test"]))
	}
	delete(sp.queues, "http://a.test") // lost
	sp.mu.Unlock()
	if it, _, ok, _ := q.Lease(ctx, now, 0); !ok || it.Key != "http://c.test/0" {
		t.Errorf("Lease = %q, %v; want c.test/0 (a.test's items lost)", it.Key, ok)
	}
	if n := f.Len(); n != 2 {
		t.Errorf("Len %d; want 2 (the two leased)", n)
	}
}

// Finish of an item that is not the leased one of its site (a site never
// queued, an item not leased, another item of a leased site) applies
// nothing and returns a LeaseError; the lease held is kept.
func TestMemQueue_FinishWithoutItsLease(t *testing.T) {
	ctx := context.Background()
	item := func(raw string) Item { return Item{URL: u(raw), Key: raw, Site: Site(u(raw))} }
	q := NewMemoryQueue()
	if _, err := q.Add(ctx, []Item{item("http://a.test/0"), item("http://a.test/1"), item("http://b.test/0")}, 0); err != nil {
		t.Fatal(err)
	}
	held, _, ok, _ := q.Lease(ctx, time.Unix(0, 0), 0)
	if !ok || held.Key != "http://a.test/0" {
		t.Fatalf("Lease = %q, %v; want a.test/0", held.Key, ok)
	}
	for _, it := range []Item{item("http://none.test/0"), item("http://b.test/0"), item("http://a.test/1")} {
		err := q.Finish(ctx, it, Step{Done: []string{it.Key}}, time.Time{})
		var le *LeaseError
		if !errors.As(err, &le) || le.Site != it.Site || !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Finish(%s) = %v; want a LeaseError for %s", it.Key, err, it.Site)
		}
	}
	if n, _ := q.Len(ctx); n != 3 {
		t.Errorf("Len %d; want 3 (nothing applied)", n)
	}
	if err := q.Finish(ctx, held, Step{Done: []string{held.Key}}, time.Time{}); err != nil {
		t.Errorf("Finish of the held lease = %v", err)
	}
}
