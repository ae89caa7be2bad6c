package boltjournal_test

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/crawl/boltjournal"
	"github.com/goodbot-go/goodbot/fetch/crawl/journaltest"
)

func spilled(t *testing.T, db *bolt.DB) int {
	t.Helper()
	n := 0
	if err := db.View(func(tx *bolt.Tx) error {
		top := tx.Bucket(boltjournal.SpillBucket)
		if top == nil {
			return nil
		}
		return top.ForEachBucket(func(k []byte) error {
			n += top.Bucket(k).Stats().KeyN
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// With MaxInMemory 3, a frontier of 2 sites × 10 URLs keeps 3 in memory and
// 17 in the file; every URL comes out once, each site in its order, in
// batches of 3 (at most 6 Pops: 8 and 9 spilled), and never more than
// 3 + 3 per site are in memory.
func TestSpill_BoundedMemory(t *testing.T) {
	const max, sites, each, pops = 3, 2, 10, 6
	st, _, j := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer st.Close()
	sp := &countingSpill{Journal: j}
	f := &crawl.Frontier{Journal: j, Spill: sp, MaxInMemory: max}
	for i := range each {
		for s := range sites {
			if !f.Add(mustURL(t, fmt.Sprintf("http://s%d.test/%d", s, i)), 0, "seed") {
				t.Fatalf("Add %d/%d refused", s, i)
			}
		}
	}
	if err := f.Err(); err != nil {
		t.Fatal(err)
	}
	if f.Len() != sites*each || f.InMemory() != max || spilled(t, st.DB) != sites*each-max {
		t.Fatalf("after adding %d: Len %d, InMemory %d, spilled %d; want %d, %d, %d",
			sites*each, f.Len(), f.InMemory(), spilled(t, st.DB), sites*each, max, sites*each-max)
	}
	next := map[string]int{}
	got := 0
	for f.Len() > 0 {
		sitesNow := f.Sites()
		if len(sitesNow) == 0 {
			t.Fatalf("Len %d but no site listed", f.Len())
		}
		for _, s := range sitesNow {
			it, ok := f.Next(s)
			if !ok {
				t.Fatalf("Next(%s) empty with Len %d", s, f.Len())
			}
			if want := fmt.Sprintf("%s/%d", s, next[s]); it.Key != want {
				t.Fatalf("Next(%s) = %s; want %s (site order kept)", s, it.Key, want)
			}
			next[s]++
			got++
			if f.InMemory() > max+max*sites {
				t.Fatalf("%d items in memory; bound %d", f.InMemory(), max+max*sites)
			}
		}
	}
	if got != sites*each || spilled(t, st.DB) != 0 || f.Err() != nil {
		t.Errorf("took %d items, %d left spilled, err %v; want %d, 0, nil", got, spilled(t, st.DB), f.Err(), sites*each)
	}
	if n := sp.pops.Load(); n == 0 || n > pops {
		t.Errorf("%d Pops; want 1 to %d", n, pops)
	}
}

// A crawl with a spilling frontier stopped half-way resumes everything not
// recorded, and the stale spill is emptied.
func TestSpill_ResumeAfterStop(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	st, g, j := open(t, path)
	f := &crawl.Frontier{Journal: j, Spill: j, MaxInMemory: 2}
	for i := range 8 {
		f.Add(mustURL(t, fmt.Sprintf("http://a.test/%d", i)), 0, "seed")
	}
	for range 3 {
		it, _ := f.Next("http://a.test")
		if _, err := g.Add(ctx, it.Key); err != nil {
			t.Fatal(err)
		}
		if err := f.Record(ctx, crawl.Step{Done: []string{it.Key}}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	st2, _, j2 := open(t, path)
	defer st2.Close()
	f2 := &crawl.Frontier{Journal: j2, Spill: j2, MaxInMemory: 2}
	if n, err := f2.Resume(ctx); err != nil || n != 5 {
		t.Fatalf("Resume = %d, %v; want 5", n, err)
	}
	if f2.InMemory() != 2 || spilled(t, st2.DB) != 3 {
		t.Errorf("after Resume: InMemory %d, spilled %d; want 2, 3", f2.InMemory(), spilled(t, st2.DB))
	}
	for i := 3; i < 8; i++ {
		it, ok := f2.Next("http://a.test")
		if want := fmt.Sprintf("http://a.test/%d", i); !ok || it.Key != want {
			t.Fatalf("Next = %s, %v; want %s", it.Key, ok, want)
		}
	}
}

// An item queued when memory has room again still goes after its site's
// spilled items: the site's order is kept.
func TestSpill_OrderKeptAfterRoom(t *testing.T) {
	st, _, j := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer st.Close()
	f := &crawl.Frontier{Spill: j, MaxInMemory: 2}
	for i := range 5 {
		f.Add(mustURL(t, fmt.Sprintf("http://a.test/%d", i)), 0, "seed")
	}
	var got []string
	it, _ := f.Next("http://a.test") // room for one in memory again
	got = append(got, it.URL.Path)
	f.Add(mustURL(t, "http://a.test/5"), 0, "link")
	for it, ok := f.Next("http://a.test"); ok; it, ok = f.Next("http://a.test") {
		got = append(got, it.URL.Path)
	}
	if fmt.Sprint(got) != "[/0 /1 /2 /3 /4 /5]" {
		t.Errorf("order %v; want /0 to /5", got)
	}
}

func TestSpillConformance(t *testing.T) {
	journaltest.RunSpill(t, func(t *testing.T) crawl.Spill {
		st, _, j := open(t, filepath.Join(t.TempDir(), "state.db"))
		t.Cleanup(func() { st.Close() })
		return j
	})
}

func TestSeenConformance(t *testing.T) {
	journaltest.RunSeen(t, func(t *testing.T) crawl.SeenStore {
		st, _, j := open(t, filepath.Join(t.TempDir(), "state.db"))
		t.Cleanup(func() { st.Close() })
		return j
	})
}

// With the Journal as Spill, the seen set of the frontier is in the file:
// 3,000 URLs drained through a MaxInMemory of 10 are all still seen (none
// queued again), their keys in the seen bucket.
func TestSpill_SeenSetInTheFile(t *testing.T) {
	const urls = 3000
	st, _, j := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer st.Close()
	f := &crawl.Frontier{Journal: j, Spill: j, MaxInMemory: 10}
	var us []*url.URL
	for i := range urls {
		us = append(us, mustURL(t, fmt.Sprintf("http://s%d.test/%d", i%3, i)))
	}
	if n := f.AddAll(us, "seed"); n != urls {
		t.Fatalf("AddAll queued %d; want %d", n, urls)
	}
	for f.Len() > 0 {
		for _, s := range f.Sites() {
			f.Next(s)
		}
	}
	if n := f.AddAll(us, "seed"); n != 0 {
		t.Fatalf("%d URLs queued again", n)
	}
	if err := f.Err(); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := st.DB.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(boltjournal.SeenBucket); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n < urls-1024 {
		t.Errorf("%d keys in the seen bucket; want at least %d (all but the last batch)", n, urls-1024)
	}
}
