// Package journaltest checks that a [crawl.Journal] implementation keeps a
// frontier's queue as [crawl.Frontier.Resume] expects, in the manner of
// testing/fstest.TestFS; [RunSpill] does the same for a [crawl.Spill].
package journaltest

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"testing"

	"github.com/goodbot-go/goodbot/fetch/crawl"
)

// Claim marks key fetched the way the crawl's fetcher does before the
// outcome is recorded (for a journal whose Done reads the fetcher's
// fetched set). nil when the journal needs nothing.
type Claim func(ctx context.Context, key string) error

// Run runs the conformance tests against journals made by newJournal, one
// fresh, empty journal per subtest.
func Run(t *testing.T, newJournal func(t *testing.T) (crawl.Journal, Claim)) {
	t.Helper()
	ctx := context.Background()

	t.Run("Empty", func(t *testing.T) {
		j, _ := newJournal(t)
		items, counts, err := j.Load(ctx)
		if err != nil || len(items) != 0 || len(counts) != 0 {
			t.Fatalf("Load of an empty journal = %v, %v, %v; want nothing", items, counts, err)
		}
		if done, err := j.Done(ctx, "http://a.test/"); done || err != nil {
			t.Fatalf("Done on an empty journal = %v, %v", done, err)
		}
	})

	t.Run("QueueOrderAndCounts", func(t *testing.T) {
		j, _ := newJournal(t)
		a0, a1, b0 := item("http://a.test/0", 0), item("http://a.test/1", 2), item("http://b.test:8080/0", 1)
		record(t, j, crawl.Step{Queued: []crawl.Item{a0, a1}})
		record(t, j, crawl.Step{Queued: []crawl.Item{b0}})
		items, counts := load(t, j)
		want(t, items, a0, a1, b0)
		if counts["http://a.test"] != 2 || counts["http://b.test:8080"] != 1 || len(counts) != 2 {
			t.Errorf("counts = %v; want a.test 2, b.test:8080 1", counts)
		}
	})

	t.Run("DoneLeavesInTheSameStep", func(t *testing.T) {
		j, claim := newJournal(t)
		a0, a1, a2 := item("http://a.test/0", 0), item("http://a.test/1", 0), item("http://a.test/2", 1)
		record(t, j, crawl.Step{Queued: []crawl.Item{a0, a1}})
		mark(t, claim, a0.Key)
		record(t, j, crawl.Step{Done: []string{a0.Key}, Queued: []crawl.Item{a2}})
		items, counts := load(t, j)
		want(t, items, a1, a2)
		if counts["http://a.test"] != 3 {
			t.Errorf("count = %d; want 3 (admitted, done or not)", counts["http://a.test"])
		}
		for key, w := range map[string]bool{a0.Key: true, a1.Key: false, a2.Key: false} {
			if got, err := j.Done(ctx, key); got != w || err != nil {
				t.Errorf("Done(%s) = %v, %v; want %v", key, got, err, w)
			}
		}
	})

	t.Run("DroppedLeavesNotDone", func(t *testing.T) {
		j, _ := newJournal(t)
		a0, a1 := item("http://a.test/0", 0), item("http://a.test/1", 0)
		record(t, j, crawl.Step{Queued: []crawl.Item{a0, a1}})
		record(t, j, crawl.Step{Dropped: []string{a0.Key}})
		items, _ := load(t, j)
		want(t, items, a1)
		if got, _ := j.Done(ctx, a0.Key); got {
			t.Error("a dropped item counts as done")
		}
	})

	t.Run("RetryGoesLastUncounted", func(t *testing.T) {
		j, _ := newJournal(t)
		a0, a1 := item("http://a.test/0", 0), item("http://a.test/1", 0)
		record(t, j, crawl.Step{Queued: []crawl.Item{a0, a1}})
		again := a0
		again.Tries = 1
		record(t, j, crawl.Step{Queued: []crawl.Item{again}})
		items, counts := load(t, j)
		want(t, items, a1, again)
		if counts["http://a.test"] != 2 {
			t.Errorf("count = %d after a retry; want 2", counts["http://a.test"])
		}
	})

	t.Run("DrainedForgetsCounts", func(t *testing.T) {
		j, claim := newJournal(t)
		a0 := item("http://a.test/0", 0)
		record(t, j, crawl.Step{Queued: []crawl.Item{a0}})
		mark(t, claim, a0.Key)
		record(t, j, crawl.Step{Done: []string{a0.Key}})
		if items, counts := load(t, j); len(items) != 0 || len(counts) != 0 {
			t.Fatalf("Load of a drained journal = %v, %v; want nothing", items, counts)
		}
		a1 := item("http://a.test/1", 0)
		record(t, j, crawl.Step{Queued: []crawl.Item{a1}})
		if _, counts := load(t, j); counts["http://a.test"] != 1 {
			t.Errorf("count of a new crawl = %d; want 1", counts["http://a.test"])
		}
	})

	t.Run("CanceledRecordAppliesNothing", func(t *testing.T) {
		j, _ := newJournal(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := j.Record(cctx, crawl.Step{Queued: []crawl.Item{item("http://a.test/0", 0)}}); err == nil {
			t.Error("Record with a canceled context returned nil")
		}
		if items, _ := load(t, j); len(items) != 0 {
			t.Errorf("a canceled Record queued %v", items)
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		j, _ := newJournal(t)
		const workers, each = 8, 25
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					if err := j.Record(ctx, crawl.Step{Queued: []crawl.Item{item(fmt.Sprintf("http://h%d.test/%d", w, i), 0)}}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		items, counts := load(t, j)
		if len(items) != workers*each || len(counts) != workers {
			t.Errorf("after concurrent Records: %d items on %d sites; want %d on %d", len(items), len(counts), workers*each, workers)
		}
	})
}

func item(raw string, depth int) crawl.Item {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	return crawl.Item{URL: u, Key: raw, Site: crawl.Site(u), Depth: depth, From: "link"}
}

func record(t *testing.T, j crawl.Journal, s crawl.Step) {
	t.Helper()
	if err := j.Record(context.Background(), s); err != nil {
		t.Fatalf("Record: %v", err)
	}
}

func mark(t *testing.T, claim Claim, key string) {
	t.Helper()
	if claim == nil {
		return
	}
	if err := claim(context.Background(), key); err != nil {
		t.Fatalf("claim %s: %v", key, err)
	}
}

func load(t *testing.T, j crawl.Journal) ([]crawl.Item, map[string]int) {
	t.Helper()
	items, counts, err := j.Load(context.Background())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return items, counts
}

func want(t *testing.T, got []crawl.Item, want ...crawl.Item) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("Load = %d items %v; want %d", len(got), keys(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Key != w.Key || g.URL.String() != w.URL.String() || g.Site != w.Site || g.Depth != w.Depth || g.From != w.From || g.Tries != w.Tries {
			t.Errorf("item %d = %+v; want %+v", i, g, w)
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
