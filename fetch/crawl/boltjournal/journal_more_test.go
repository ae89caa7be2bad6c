package boltjournal_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/crawl/boltjournal"
)

// New refuses a state without its bbolt file and a missing stage, not
// only a missing state.
func TestNew_NilStageOrDB(t *testing.T) {
	st, g, _ := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer st.Close()
	for name, call := range map[string]func() (*boltjournal.Journal, error){
		"nil stage":   func() (*boltjournal.Journal, error) { return boltjournal.New(st, nil) },
		"nil DB":      func() (*boltjournal.Journal, error) { return boltjournal.New(&boltstate.State{}, g) },
		"nil state":   func() (*boltjournal.Journal, error) { return boltjournal.New(nil, g) },
		"nil, nil DB": func() (*boltjournal.Journal, error) { return boltjournal.New(&boltstate.State{}, nil) },
	} {
		if j, err := call(); err != boltjournal.ErrNilState || j != nil {
			t.Errorf("%s: New = %v, %v; want nil, ErrNilState", name, j, err)
		}
	}
}

// queueN records n new URLs of site, one step each, from index from.
func queueN(t *testing.T, j *boltjournal.Journal, site string, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		u := mustURL(t, fmt.Sprintf("%s/%d", site, i))
		if err := j.Record(context.Background(), crawl.Step{Queued: []crawl.Item{{URL: u, Key: u.String(), Site: crawl.Site(u)}}}); err != nil {
			t.Fatal(err)
		}
	}
}

// A site's count of admitted URLs survives a reopen however many digits it
// has, and each step of a journal made on the reopened file adds to it,
// whether or not the journal was loaded first.
func TestCounts_AcrossReopen(t *testing.T) {
	ctx := context.Background()
	for _, loadFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("load first %v", loadFirst), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			st, _, j := open(t, path)
			queueN(t, j, "http://a.test", 0, 12)
			queueN(t, j, "http://b.test", 0, 3)
			st.Close()

			st, _, j = open(t, path)
			defer st.Close()
			if loadFirst {
				if _, counts, err := j.Load(ctx); err != nil || counts["http://a.test"] != 12 || counts["http://b.test"] != 3 {
					t.Fatalf("Load after a reopen: counts %v, %v; want a.test 12, b.test 3", counts, err)
				}
			}
			queueN(t, j, "http://a.test", 12, 2)
			items, counts, err := j.Load(ctx)
			if err != nil || len(items) != 17 || counts["http://a.test"] != 14 || counts["http://b.test"] != 3 || len(counts) != 2 {
				t.Errorf("Load = %d items, counts %v, %v; want 17 items, a.test 14, b.test 3", len(items), counts, err)
			}
		})
	}
}

// A queue record whose URL has no host (or does not parse), or with a
// field of the wrong type, is damaged: Load skips it and loads the others.
func TestLoad_SkipsDamagedRecords(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	st, _, j := open(t, path)
	queueN(t, j, "http://a.test", 0, 5)
	st.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(boltjournal.FrontierBucket)
		for key, raw := range map[string]string{
			"http://a.test/1": `{"u":"/1","s":2}`,
			"http://a.test/2": `{"u":"mailto:x@a.test","s":3}`,
			"http://a.test/3": `{"u":"http://a.test/%zz","s":4}`,
			"http://a.test/4": `{"u":"http://a.test/4","d":"deep","s":5}`,
		} {
			if b.Get([]byte(key)) == nil {
				return fmt.Errorf("no record %s", key)
			}
			if err := b.Put([]byte(key), []byte(raw)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, _, j = open(t, path)
	defer st.Close()
	items, _, err := j.Load(ctx)
	if err != nil || len(items) != 1 || items[0].Key != "http://a.test/0" {
		t.Errorf("Load over damaged records = %d items, %v; want http://a.test/0 only", len(items), err)
	}
}

// A spilled record without a key or without a host, or with a field of
// the wrong type, is damaged: Pop skips it (and deletes it) and returns
// the others.
func TestPop_SkipsDamagedRecords(t *testing.T) {
	const site = "http://a.test"
	ctx := context.Background()
	st, j := withSpill(t, "", site)
	if err := j.Push(ctx, site, spillItems(t, site, 3, 4)); err != nil {
		t.Fatal(err)
	}
	if err := st.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.DB.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(string(boltjournal.SpillBucket) + " " + site))
		for seq, raw := range map[uint64]string{
			1: `{"u":"http://a.test/0","s":0}`,
			2: `{"u":"/1","k":"http://a.test/1","s":0}`,
			4: `{"u":"http://a.test/3","k":"http://a.test/3","t":"twice","s":0}`,
		} {
			if b.Get(binary.BigEndian.AppendUint64(nil, seq)) == nil {
				return fmt.Errorf("no spilled record %d", seq)
			}
			if err := b.Put(binary.BigEndian.AppendUint64(nil, seq), []byte(raw)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	its, err := j.Pop(ctx, site, 10)
	if err != nil || len(its) != 1 || its[0].Key != site+"/2" {
		t.Fatalf("Pop over damaged records = %d items, %v; want item 2 only", len(its), err)
	}
	if n := spilled(t, st, site); n != 0 {
		t.Errorf("%d records left in the spill after the Pop; want none", n)
	}
}

// A spilled item comes back with every field it was pushed with.
func TestSpill_KeepsEveryField(t *testing.T) {
	ctx := context.Background()
	st, _, j := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer st.Close()
	u := mustURL(t, "http://a.test/p?q=1")
	in := crawl.Item{URL: u, Key: "http://a.test/p?q=1", Site: "http://a.test", Depth: 4, From: "http://a.test/", Tries: 2}
	if err := j.Push(ctx, in.Site, []crawl.Item{in}); err != nil {
		t.Fatal(err)
	}
	its, err := j.Pop(ctx, in.Site, 1)
	if err != nil || len(its) != 1 {
		t.Fatalf("Pop = %d items, %v; want 1", len(its), err)
	}
	if got := its[0]; got.URL.String() != in.URL.String() || got.Key != in.Key || got.Site != in.Site || got.Depth != in.Depth || got.From != in.From || got.Tries != in.Tries {
		t.Errorf("Pop = %+v; want %+v", got, in)
	}
}

// Load empties the one spill bucket of earlier versions too (the spilled
// items nested in "frontier-spill").
func TestLoad_DropsTheSpillBucketOfEarlierVersions(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	st, _, _ := open(t, path)
	st.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(boltjournal.SpillBucket)
		if err != nil {
			return err
		}
		nested, err := b.CreateBucket([]byte("http://a.test"))
		if err != nil {
			return err
		}
		return nested.Put(binary.BigEndian.AppendUint64(nil, 1), []byte(`{"u":"http://a.test/0","k":"http://a.test/0","s":0}`))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, _, j := open(t, path)
	defer st.Close()
	if _, _, err := j.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.DB.View(func(tx *bolt.Tx) error {
		if tx.Bucket(boltjournal.SpillBucket) != nil {
			return fmt.Errorf("the %s bucket of an earlier version is still in the file after Load", boltjournal.SpillBucket)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
}

// The counts Load returns are the caller's: changing them changes neither
// the counts the journal keeps nor those a later step writes.
func TestLoad_CountsAreTheCallers(t *testing.T) {
	ctx := context.Background()
	st, _, j := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer st.Close()
	queueN(t, j, "http://a.test", 0, 2)
	_, counts, err := j.Load(ctx)
	if err != nil || counts["http://a.test"] != 2 {
		t.Fatalf("Load: counts %v, %v; want a.test 2", counts, err)
	}
	counts["http://a.test"] = 100
	counts["http://b.test"] = 7
	queueN(t, j, "http://a.test", 2, 1)
	queueN(t, j, "http://b.test", 0, 1)
	if _, again, err := j.Load(ctx); err != nil || again["http://a.test"] != 3 || again["http://b.test"] != 1 {
		t.Errorf("Load after the caller changed its counts: %v, %v; want a.test 3, b.test 1", again, err)
	}
}

// Load empties the spill this Journal wrote and no checkpoint has taken to
// the file yet (held in the State's memory only).
func TestLoad_EmptiesTheSpillNotYetInTheFile(t *testing.T) {
	const site = "http://a.test"
	ctx := context.Background()
	st, j := withSpill(t, "", site)
	if n := spilledInFile(t, st.DB, site); n != 0 {
		t.Fatalf("%d items in the file before a checkpoint: the case of a spill in memory only is not tested", n)
	}
	if _, _, err := j.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if n := spilled(t, st, site); n != 0 {
		t.Errorf("%d spilled items read back after Load; want none", n)
	}
	if err := st.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if n := spilledInFile(t, st.DB, site); n != 0 {
		t.Errorf("%d spilled items in the file after Load and a checkpoint; want none", n)
	}
}

// Pop reads up to n items: none for n of 0 or less, which stay to be
// popped.
func TestPop_NoneForNonPositiveN(t *testing.T) {
	const site = "http://a.test"
	ctx := context.Background()
	_, j := withSpill(t, "", site)
	for _, n := range []int{0, -1, -1 << 62} {
		if its, err := j.Pop(ctx, site, n); len(its) != 0 || err != nil {
			t.Errorf("Pop(%d) = %d items, %v; want none", n, len(its), err)
		}
	}
	if its, err := j.Pop(ctx, site, 3); err != nil || len(its) != 3 || its[0].Key != site+"/0" {
		t.Errorf("Pop(3) after them = %d items, %v; want the 3 pushed, from item 0", len(its), err)
	}
}

// A spill call with a canceled context fails with the context's error and
// changes nothing, whether or not it had anything to do: the 3 items
// pushed before it are still there, in order, and nothing else.
func TestSpill_CanceledContext(t *testing.T) {
	const site = "http://a.test"
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		call func(t *testing.T, j *boltjournal.Journal) error
	}{
		{"Push", func(t *testing.T, j *boltjournal.Journal) error {
			return j.Push(canceled, site, spillItems(t, site, 3, 5))
		}},
		{"Push of no items", func(t *testing.T, j *boltjournal.Journal) error { return j.Push(canceled, site, nil) }},
		{"Pop", func(t *testing.T, j *boltjournal.Journal) error { _, err := j.Pop(canceled, site, 2); return err }},
		{"Pop of none", func(t *testing.T, j *boltjournal.Journal) error { _, err := j.Pop(canceled, site, 0); return err }},
		{"Pop of an empty queue", func(t *testing.T, j *boltjournal.Journal) error {
			_, err := j.Pop(canceled, "http://b.test", 2)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, j := withSpill(t, "", site)
			if err := tc.call(t, j); !errors.Is(err, context.Canceled) {
				t.Errorf("with a canceled context: %v; want context.Canceled", err)
			}
			its, err := j.Pop(context.Background(), site, 10)
			var got []string
			for _, it := range its {
				got = append(got, it.Key)
			}
			if want := fmt.Sprint([]string{site + "/0", site + "/1", site + "/2"}); err != nil || fmt.Sprint(got) != want {
				t.Errorf("Pop after it = %v, %v; want %s", got, err, want)
			}
		})
	}
}
