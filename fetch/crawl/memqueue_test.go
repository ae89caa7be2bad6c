package crawl

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// popSpill is a Spill in memory that records each Pop: the items asked
// for, the items the site had in the Spill and the items returned.
type popSpill struct {
	*mapSpill
	pops []spillPop
}

type spillPop struct {
	site              string
	asked, had, given int
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

// A key that Finish drops while its item is in the Spill is skipped when
// the item comes back (and no longer counted), unless it was queued again.
func TestMemQueue_DroppedWhileSpilled(t *testing.T) {
	const site = "http://a.test"
	key := func(i int) string { return fmt.Sprintf("%s/%d", site, i) }
	for _, tc := range []struct {
		name string
		step func(it Item) Step
		want []string // the keys leased after a/0, in order
	}{
		{"spilled key dropped", func(it Item) Step {
			return Step{Done: []string{it.Key}, Dropped: []string{key(2), key(4)}}
		}, []string{key(1), key(3)}},
		{"unknown key dropped", func(it Item) Step {
			return Step{Done: []string{it.Key}, Dropped: []string{"http://a.test/none"}}
		}, []string{key(1), key(2), key(3), key(4)}},
		{"dropped and retried", func(it Item) Step {
			again := it
			again.Tries++
			return Step{Dropped: []string{it.Key, key(3)}, Queued: []Item{again}}
		}, []string{key(1), key(2), key(4), key(0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := &popSpill{mapSpill: newMapSpill()}
			q := newMemQueue(nil, sp, 1, memSeen{})
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
