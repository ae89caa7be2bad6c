package boltjournal_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/crawl/boltjournal"
	"github.com/goodbot-go/goodbot/fetch/crawl/journaltest"
)

// spilled is how many items the spill of st holds for sites (the State's
// reads: its memory and its file).
func spilled(t *testing.T, st *boltstate.State, sites ...string) int {
	t.Helper()
	n := 0
	for _, site := range sites {
		if err := st.ForEach(context.Background(), string(boltjournal.SpillBucket)+" "+site, func(k, v []byte) error {
			n++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// logSize is the bytes the log files of the state at path hold.
func logSize(path string) (n int64) {
	for _, suffix := range boltstate.LogSuffixes {
		if fi, err := os.Stat(path + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// spilledInFile is how many items the bbolt file itself holds in site's
// spill bucket.
func spilledInFile(t *testing.T, db *bolt.DB, site string) int {
	t.Helper()
	n := 0
	if err := db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte(string(boltjournal.SpillBucket) + " " + site)); b != nil {
			n = b.Stats().KeyN
		}
		return nil
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
	if n := spilled(t, st, "http://s0.test", "http://s1.test"); f.Len() != sites*each || f.InMemory() != max || n != sites*each-max {
		t.Fatalf("after adding %d: Len %d, InMemory %d, spilled %d; want %d, %d, %d",
			sites*each, f.Len(), f.InMemory(), n, sites*each, max, sites*each-max)
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
	if got != sites*each || f.Err() != nil {
		t.Errorf("took %d items, err %v; want %d, nil", got, f.Err(), sites*each)
	}
	for s := range sites {
		if its, err := j.Pop(context.Background(), fmt.Sprintf("http://s%d.test", s), 10); len(its) != 0 || err != nil {
			t.Errorf("Pop after the drain = %d items, %v; want none", len(its), err)
		}
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
	if n := spilled(t, st2, "http://a.test"); f2.InMemory() != 2 || n != 3 {
		t.Errorf("after Resume: InMemory %d, spilled %d; want 2, 3", f2.InMemory(), n)
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

// With the Journal as Spill, the seen set of the frontier is in the
// State: 3,000 URLs drained through a MaxInMemory of 10 are all still seen
// (none queued again), their keys in the seen bucket of the file after a
// checkpoint.
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
	if err := st.Checkpoint(context.Background()); err != nil {
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

// The seen set is written without the log: its keys, read at once, cost
// the log nothing (the seen set is emptied when a Frontier starts, so a
// crash may lose its latest keys), and a checkpoint, not a transaction
// per batch, takes them to the file.
func TestSeen_WrittenWithoutTheLog(t *testing.T) {
	const keys = 5000
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	st, _, j := open(t, path)
	defer st.Close()
	before := logSize(path)
	for i := 0; i < keys; i += 1000 {
		var batch []string
		for k := i; k < i+1000; k++ {
			batch = append(batch, fmt.Sprintf("http://s%d.test/%d", k%7, k))
		}
		if err := j.AddSeen(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	if n := logSize(path); n != before {
		t.Errorf("the log grew from %d to %d bytes with %d seen keys", before, n, keys)
	}
	for k := range keys {
		if ok, err := j.HasSeen(ctx, fmt.Sprintf("http://s%d.test/%d", k%7, k)); err != nil || !ok {
			t.Fatalf("HasSeen(key %d) = %v, %v after AddSeen", k, ok, err)
		}
	}
	if ok, _ := j.HasSeen(ctx, "http://s0.test/never"); ok {
		t.Error("HasSeen of a key never added = true")
	}
	n := 0
	st.DB.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(boltjournal.SeenBucket); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	})
	if n != 0 {
		t.Errorf("%d seen keys in the file before a checkpoint: written by a transaction of their own", n)
	}
	if err := j.ClearSeen(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := j.HasSeen(ctx, "http://s0.test/0"); ok {
		t.Error("HasSeen after ClearSeen = true")
	}
}

// withSpill opens a fresh journal at path (a new file when "") with items 0,
// 1 and 2 of site pushed to its spill; the state is closed when the test
// ends.
func withSpill(t *testing.T, path, site string) (*boltstate.State, *boltjournal.Journal) {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "state.db")
	}
	st, _, j := open(t, path)
	t.Cleanup(func() { st.Close() })
	if err := j.Push(context.Background(), site, spillItems(t, site, 0, 3)); err != nil {
		t.Fatal(err)
	}
	return st, j
}

func spillItems(t *testing.T, site string, from, to int) []crawl.Item {
	t.Helper()
	var out []crawl.Item
	for i := from; i < to; i++ {
		raw := fmt.Sprintf("%s/%d", site, i)
		out = append(out, crawl.Item{URL: mustURL(t, raw), Key: raw, Site: site})
	}
	return out
}

// The spill is written without the log and without a transaction of its
// own (it is a cache Load empties): Pushes and Pops leave the log and the
// file as they were, read back in order from the State's memory, and a
// checkpoint takes to the file exactly the items not popped.
func TestSpill_WrittenWithoutTheLog(t *testing.T) {
	const site, total, batch = "http://a.test", 5000, 64
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	st, _, j := open(t, path)
	defer st.Close()
	stats := st.DB.Stats()
	before, file := logSize(path), stats.TxStats.GetWrite()
	for i := 0; i < total; i += 100 {
		if err := j.Push(ctx, site, spillItems(t, site, i, i+100)); err != nil {
			t.Fatal(err)
		}
	}
	popped := 0
	for popped < total/2 {
		its, err := j.Pop(ctx, site, batch)
		if err != nil || len(its) == 0 {
			t.Fatalf("Pop = %d items, %v after %d", len(its), err, popped)
		}
		if want := fmt.Sprintf("%s/%d", site, popped); its[0].Key != want {
			t.Fatalf("Pop's first item %s; want %s", its[0].Key, want)
		}
		popped += len(its)
	}
	if n := logSize(path); n != before {
		t.Errorf("the log grew from %d to %d bytes with the spill's writes", before, n)
	}
	stats = st.DB.Stats()
	if w := stats.TxStats.GetWrite(); w != file {
		t.Errorf("%d pages written to the file by Pushes and Pops; want none", w-file)
	}
	if n := spilled(t, st, site); n != total-popped {
		t.Errorf("the spill reads %d items; want %d", n, total-popped)
	}
	if err := st.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if n := spilledInFile(t, st.DB, site); n != total-popped {
		t.Errorf("%d items in the file after a checkpoint; want the %d not popped", n, total-popped)
	}
	// The rest in one Pop, from the file: as many as asked for, in order.
	its, err := j.Pop(ctx, site, total)
	if err != nil || len(its) != total-popped {
		t.Fatalf("Pop(%d) after the checkpoint = %d items, %v; want %d", total, len(its), err, total-popped)
	}
	for i, it := range its {
		if want := fmt.Sprintf("%s/%d", site, popped+i); it.Key != want {
			t.Fatalf("item %d of the last Pop is %s; want %s", i, it.Key, want)
		}
	}
	if its, err := j.Pop(ctx, site, batch); len(its) != 0 || err != nil {
		t.Errorf("Pop of an empty spill = %d items, %v", len(its), err)
	}
}

// The spill pops only the items its Journal pushed since it was made or
// loaded, and all of them: not those an earlier Journal on the file left
// (a crawl stopped without Load; its own first Push may have had no
// items), nor those Load emptied or a Pop took, and not fewer after the
// site's queue was drained.
func TestSpill_PopsOnlyItsOwn(t *testing.T) {
	const site = "http://a.test"
	ctx := context.Background()
	// earlier opens a Journal on path after an earlier one pushed 3 items.
	earlier := func(t *testing.T, path string) (*boltjournal.Journal, func()) {
		st, _, j := open(t, path)
		if err := j.Push(ctx, site, spillItems(t, site, 100, 103)); err != nil {
			t.Fatal(err)
		}
		st.Close()
		st2, _, j2 := open(t, path)
		return j2, func() { st2.Close() }
	}
	for _, tc := range []struct {
		name   string
		before func(t *testing.T, path string) (*boltjournal.Journal, func())
	}{
		{"earlier journal", earlier},
		{"earlier journal, then an empty Push", func(t *testing.T, path string) (*boltjournal.Journal, func()) {
			j, done := earlier(t, path)
			if err := j.Push(ctx, site, nil); err != nil {
				t.Fatal(err)
			}
			return j, done
		}},
		{"drained", func(t *testing.T, path string) (*boltjournal.Journal, func()) {
			st, _, j := open(t, path)
			if err := j.Push(ctx, site, spillItems(t, site, 100, 103)); err != nil {
				t.Fatal(err)
			}
			if its, err := j.Pop(ctx, site, 10); len(its) != 3 || err != nil {
				t.Fatalf("Pop = %d items, %v; want 3", len(its), err)
			}
			return j, func() { st.Close() }
		}},
		{"after Load", func(t *testing.T, path string) (*boltjournal.Journal, func()) {
			st, _, j := open(t, path)
			if err := j.Push(ctx, site, spillItems(t, site, 100, 105)); err != nil {
				t.Fatal(err)
			}
			if its, err := j.Pop(ctx, site, 3); len(its) != 3 || err != nil {
				t.Fatalf("Pop = %d items, %v; want 3", len(its), err)
			}
			if _, _, err := j.Load(ctx); err != nil {
				t.Fatal(err)
			}
			return j, func() { st.Close() }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, done := tc.before(t, filepath.Join(t.TempDir(), "state.db"))
			defer done()
			if err := j.Push(ctx, site, spillItems(t, site, 0, 2)); err != nil {
				t.Fatal(err)
			}
			its, err := j.Pop(ctx, site, 10)
			if err != nil || len(its) != 2 || its[0].Key != site+"/0" || its[1].Key != site+"/1" {
				var got []string
				for _, it := range its {
					got = append(got, it.Key)
				}
				t.Errorf("Pop = %v, %v; want the 2 items pushed since", got, err)
			}
		})
	}
}

// Load empties the spill of every site an earlier run left in the file
// (more sites than one write drops), and the spill the Journal wrote
// itself.
func TestSpill_LoadEmptiesEverySite(t *testing.T) {
	const sites = 3000
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	st, _, j := open(t, path)
	site := func(i int) string { return fmt.Sprintf("http://s%d.test", i) }
	for i := range sites {
		if err := j.Push(ctx, site(i), spillItems(t, site(i), 0, 1)); err != nil {
			t.Fatal(err)
		}
	}
	st.Close() // the spill reaches the file with the closing checkpoint
	countBuckets := func(db *bolt.DB) (n int) {
		prefix := string(boltjournal.SpillBucket) + " "
		db.View(func(tx *bolt.Tx) error {
			return tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
				if strings.HasPrefix(string(name), prefix) {
					n++
				}
				return nil
			})
		})
		return n
	}
	st, _, j = open(t, path)
	defer func() { st.Close() }()
	if n := countBuckets(st.DB); n != sites {
		t.Fatalf("%d spill buckets in the file before Load; want %d", n, sites)
	}
	if err := j.Push(ctx, site(0), spillItems(t, site(0), 5, 6)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := j.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if its, err := j.Pop(ctx, site(0), 10); len(its) != 0 || err != nil {
		t.Errorf("Pop after Load = %d items, %v; want none", len(its), err)
	}
	if n := spilled(t, st, site(0), site(1), site(sites-1)); n != 0 {
		t.Errorf("%d items read back after Load; want none", n)
	}
	if err := st.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countBuckets(st.DB); n != 0 {
		t.Errorf("%d spill buckets in the file after Load and a checkpoint; want none", n)
	}
}

// A damaged record is skipped, never an error nor a crash: in the queue a
// restarted crawl loads, and in the spill a Pop reads (it is deleted too).
func TestDamagedRecordsSkipped(t *testing.T) {
	ctx := context.Background()
	damage := func(t *testing.T, path, bucket string, key []byte) {
		t.Helper()
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte(bucket))
			if b == nil || b.Get(key) == nil {
				return fmt.Errorf("no record %q in %s to damage", key, bucket)
			}
			return b.Put(key, []byte("{not json"))
		}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("queue", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "state.db")
		st, _, j := open(t, path)
		f := &crawl.Frontier{Journal: j}
		for i := range 3 {
			f.Add(mustURL(t, fmt.Sprintf("http://a.test/%d", i)), 0, "seed")
		}
		st.Close()
		damage(t, path, "frontier", []byte("http://a.test/1"))
		st, _, j = open(t, path)
		defer st.Close()
		f = &crawl.Frontier{Journal: j}
		if n, err := f.Resume(ctx); err != nil || n != 2 {
			t.Fatalf("Resume over a damaged record = %d, %v; want the 2 others", n, err)
		}
	})
	t.Run("spill", func(t *testing.T) {
		const site = "http://a.test"
		path := filepath.Join(t.TempDir(), "state.db")
		st, _, j := open(t, path)
		defer func() { st.Close() }()
		if err := j.Push(ctx, site, spillItems(t, site, 0, 3)); err != nil {
			t.Fatal(err)
		}
		if err := st.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
		// The file damaged under the running State, as a bad disk would.
		if err := st.DB.Update(func(tx *bolt.Tx) error {
			return tx.Bucket([]byte(string(boltjournal.SpillBucket)+" "+site)).Put(binary.BigEndian.AppendUint64(nil, 2), []byte("{not json"))
		}); err != nil {
			t.Fatal(err)
		}
		its, err := j.Pop(ctx, site, 10)
		if err != nil || len(its) != 2 || its[0].Key != site+"/0" || its[1].Key != site+"/2" {
			t.Fatalf("Pop over a damaged record = %d items, %v; want items 0 and 2", len(its), err)
		}
		if n := spilled(t, st, site); n != 0 {
			t.Errorf("%d records left in the spill after the Pop; want none", n)
		}
	})
}

// The seen set keeps every key AddSeen was given, answers no for the
// others, forgets them all at ClearSeen, and reports a state that takes
// no write.
func TestSeen_AddHasClear(t *testing.T) {
	ctx := context.Background()
	st, _, j := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer st.Close()
	has := func(key string) bool {
		t.Helper()
		ok, err := j.HasSeen(ctx, key)
		if err != nil {
			t.Fatalf("HasSeen(%s): %v", key, err)
		}
		return ok
	}
	if err := j.AddSeen(ctx, []string{"http://a.test/1", "http://b.test/2"}); err != nil {
		t.Fatalf("AddSeen: %v", err)
	}
	if !has("http://a.test/1") || !has("http://b.test/2") || has("http://a.test/3") {
		t.Errorf("after AddSeen: a/1 %v, b/2 %v, a/3 %v; want true, true, false",
			has("http://a.test/1"), has("http://b.test/2"), has("http://a.test/3"))
	}
	if err := j.ClearSeen(ctx); err != nil {
		t.Fatalf("ClearSeen: %v", err)
	}
	if has("http://a.test/1") {
		t.Error("a/1 seen after ClearSeen")
	}
	st.Close()
	if err := j.AddSeen(ctx, []string{"http://a.test/4"}); !errors.Is(err, boltstate.ErrClosed) {
		t.Errorf("AddSeen on a closed state: %v, want ErrClosed", err)
	}
}
