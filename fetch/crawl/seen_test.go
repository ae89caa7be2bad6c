package crawl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// mapSpill is a Spill and SeenStore in maps, counting reads and writes.
type mapSpill struct {
	mu            sync.Mutex
	queues        map[string][]Item
	seen          map[string]bool
	reads, writes int
	fail          error
}

func newMapSpill() *mapSpill { return &mapSpill{queues: map[string][]Item{}, seen: map[string]bool{}} }

func (m *mapSpill) Push(_ context.Context, site string, items []Item) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queues[site] = append(m.queues[site], items...)
	return nil
}

func (m *mapSpill) Pop(_ context.Context, site string, n int) ([]Item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queues[site]
	n = min(n, len(q))
	m.queues[site] = q[n:]
	return q[:n:n], nil
}

func (m *mapSpill) ClearSeen(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.seen)
	return nil
}

func (m *mapSpill) AddSeen(_ context.Context, keys []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.writes++
	for _, k := range keys {
		m.seen[k] = true
	}
	return nil
}

func (m *mapSpill) HasSeen(_ context.Context, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return false, m.fail
	}
	m.reads++
	return m.seen[key], nil
}

// With a Spill that is a SeenStore, the seen set lives in the store: the
// Frontier keeps at most 2×MaxInMemory recent keys and the keys not yet
// written, answers every key it saw as seen (from the store once the
// caches forgot it) and no key it did not see, and writes in batches.
func TestFrontier_SeenSetInTheStore(t *testing.T) {
	const urls, inMem = 5000, 10
	sp := newMapSpill()
	f := &Frontier{Spill: sp, MaxInMemory: inMem}
	for i := range urls {
		if !f.Add(u(fmt.Sprintf("http://h%d.test/%d", i%7, i)), 0, "seed") {
			t.Fatalf("URL %d refused", i)
		}
	}
	q := f.memq()
	st, ok := q.seen.(*storeSeen)
	if !ok {
		t.Fatalf("seen set %T; want the store's", q.seen)
	}
	if n := len(st.cur) + len(st.prev) + len(st.pending); n > 2*inMem+seenFlushEvery {
		t.Errorf("%d keys in memory; want at most %d", n, 2*inMem+seenFlushEvery)
	}
	// The first inMem keys in one write, then one write per seenFlushEvery.
	flushes := (urls - inMem) / seenFlushEvery
	if want := inMem + flushes*seenFlushEvery; sp.writes != 1+flushes || len(sp.seen) != want {
		t.Errorf("%d writes of %d keys; want %d writes of %d", sp.writes, len(sp.seen), 1+flushes, want)
	}
	for i := range urls { // every one seen, from memory or the store
		if f.Add(u(fmt.Sprintf("http://h%d.test/%d", i%7, i)), 0, "seed") {
			t.Fatalf("URL %d queued twice", i)
		}
	}
	if sp.reads == 0 {
		t.Error("no key was looked up in the store")
	}
	if f.Seen(u("http://h1.test/never")) || !f.Add(u("http://h1.test/never"), 0, "seed") {
		t.Error("a key never seen was answered seen")
	}
	if f.Len() != urls+1 {
		t.Errorf("Len %d; want %d", f.Len(), urls+1)
	}
}

// A seen set smaller than MaxInMemory stays in memory: the store is neither
// written nor read. The key that reaches MaxInMemory moves the set to the
// store in one write; from then on a key memory lacks is looked up there,
// and a key memory holds is not.
func TestFrontier_SeenSetInMemoryUntilLarge(t *testing.T) {
	const inMem = 1000
	sp := newMapSpill()
	f := &Frontier{Spill: sp, MaxInMemory: inMem}
	add := func(i int) bool { return f.Add(u(fmt.Sprintf("http://h%d.test/%d", i%7, i)), 0, "seed") }
	for i := range inMem - 1 {
		if !add(i) {
			t.Fatalf("URL %d refused", i)
		}
	}
	for i := range inMem - 1 {
		if add(i) {
			t.Fatalf("URL %d queued twice", i)
		}
	}
	if sp.writes != 0 || sp.reads != 0 {
		t.Fatalf("%d keys seen: %d writes, %d reads of the store; want none below MaxInMemory %d", inMem-1, sp.writes, sp.reads, inMem)
	}
	if !add(inMem - 1) {
		t.Fatal("URL at MaxInMemory refused")
	}
	if sp.writes != 1 || len(sp.seen) != inMem {
		t.Fatalf("at MaxInMemory keys: %d writes of %d keys; want 1 write of %d", sp.writes, len(sp.seen), inMem)
	}
	if add(0) || sp.reads != 0 {
		t.Errorf("a key in memory after the move: %d reads of the store; want 0", sp.reads)
	}
	if !add(inMem) || sp.reads != 0 {
		t.Errorf("a new key past MaxInMemory: %d reads of the store; want 0 (the filter knows it is new)", sp.reads)
	}
	for i := range inMem + 1 {
		if add(i) {
			t.Fatalf("URL %d queued twice after the move", i)
		}
	}
}

// A store that fails its first write keeps the whole set in memory: no key
// is forgotten, Err reports the failure, and the write is tried again
// seenFlushEvery keys later.
func TestFrontier_SeenSetFirstWriteFails(t *testing.T) {
	const inMem = 10
	sp := newMapSpill()
	sp.fail = errors.New("disk gone")
	f := &Frontier{Spill: sp, MaxInMemory: inMem}
	add := func(i int) bool { return f.Add(u(fmt.Sprintf("http://a.test/%d", i)), 0, "seed") }
	for i := range inMem + 5 {
		if !add(i) {
			t.Fatalf("URL %d refused", i)
		}
	}
	if err := f.Err(); !errors.Is(err, sp.fail) {
		t.Errorf("Err = %v; want the store's error", err)
	}
	sp.mu.Lock()
	sp.fail = nil
	sp.mu.Unlock()
	for i := range inMem + 5 {
		if add(i) {
			t.Fatalf("URL %d queued twice while the store failed", i)
		}
	}
	if sp.writes != 0 {
		t.Fatalf("%d writes before the retry point", sp.writes)
	}
	for i := inMem + 5; i < inMem+seenFlushEvery; i++ {
		add(i)
	}
	if sp.writes != 1 || len(sp.seen) != inMem+seenFlushEvery {
		t.Errorf("retry: %d writes of %d keys; want 1 of %d", sp.writes, len(sp.seen), inMem+seenFlushEvery)
	}
}

// A store that fails loses no page: a key it cannot answer counts as not
// seen (it may be queued again), and Err reports the failure.
func TestFrontier_SeenStoreFailure(t *testing.T) {
	sp := newMapSpill()
	f := &Frontier{Spill: sp, MaxInMemory: 1}
	for i := range 3 {
		f.Add(u(fmt.Sprintf("http://a.test/%d", i)), 0, "seed")
	}
	sp.fail = errors.New("disk gone")
	if !f.Add(u("http://a.test/new"), 0, "seed") {
		t.Error("a new URL was refused while the store failed")
	}
	// http://a.test/0 is out of the caches (two generations of one key):
	// only the store can answer for it.
	if !f.Add(u("http://a.test/0"), 0, "seed") {
		t.Error("a URL the failing store could not answer for was refused")
	}
	if err := f.Err(); !errors.Is(err, sp.fail) {
		t.Errorf("Err = %v; want the store's error", err)
	}
}

// Once the seen set lives in the store, a URL never seen costs no read of
// it (the Bloom filter answers), and a URL seen long ago, out of the
// caches, is read there and refused. The filter's mistakes are read: under
// 2 % on average, but their count moves with the filter's random seed
// (47 to 114 of these 5,000 in 300 runs, median 78), so the bound is 3 %.
func TestFrontier_NewURLsCostNoStoreRead(t *testing.T) {
	const inMem, old, fresh = 100, 5000, 5000
	sp := newMapSpill()
	f := &Frontier{Spill: sp, MaxInMemory: inMem}
	for i := range old {
		if !f.Add(u(fmt.Sprintf("http://h%d.test/old/%d", i%7, i)), 0, "seed") {
			t.Fatalf("URL %d refused", i)
		}
	}
	reads := sp.reads
	for i := range fresh {
		if !f.Add(u(fmt.Sprintf("http://h%d.test/new/%d", i%7, i)), 0, "seed") {
			t.Fatalf("new URL %d refused", i)
		}
	}
	if n := sp.reads - reads; n > fresh*3/100 {
		t.Errorf("%d new URLs made %d reads of the store; want at most %d", fresh, n, fresh/50)
	}
	reads = sp.reads
	for i := range 1000 {
		if f.Add(u(fmt.Sprintf("http://h%d.test/old/%d", i%7, i)), 0, "seed") {
			t.Fatalf("URL %d, seen long ago, queued again", i)
		}
	}
	if n := sp.reads - reads; n != 1000 {
		t.Errorf("1,000 URLs seen long ago made %d reads of the store; want 1,000", n)
	}
}

// The Crawler over a Frontier whose seen set is in the store fetches each
// page once.
func TestCrawler_SeenInStoreFetchesOnce(t *testing.T) {
	f := &Frontier{Spill: newMapSpill(), MaxInMemory: 2}
	f.Add(u("http://a.test/p0"), 0, "seed")
	var mu sync.Mutex
	got := map[string]int{}
	c := &Crawler{Frontier: f, FollowLinks: true, Get: func(ctx context.Context, it Item) Page {
		mu.Lock()
		got[it.Key]++
		mu.Unlock()
		var n int
		fmt.Sscanf(it.URL.Path, "/p%d", &n)
		body := ""
		for k := range 5 {
			body += fmt.Sprintf(`<a href="/p%d">x</a>`, (n*3+k)%40)
		}
		return Page{Outcome: "ok", Body: []byte(body)}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if len(got) != 40 {
		t.Errorf("%d pages fetched; want 40", len(got))
	}
	for k, n := range got {
		if n != 1 {
			t.Errorf("%s fetched %d times", k, n)
		}
	}
}

// Of the store's failures, Err reports the first.
func TestFrontier_SeenStoreKeepsTheFirstError(t *testing.T) {
	sp := newMapSpill()
	f := &Frontier{Spill: sp, MaxInMemory: 2}
	for i := range 5 { // a.test/0 and /1 written to the store, then out of the caches
		f.Add(u(fmt.Sprintf("http://a.test/%d", i)), 0, "seed")
	}
	first := errors.New("disk gone")
	for i, fail := range []error{first, errors.New("disk gone again")} {
		sp.mu.Lock()
		sp.fail = fail
		sp.mu.Unlock()
		if !f.Add(u(fmt.Sprintf("http://a.test/%d", i)), 0, "seed") {
			t.Fatalf("a.test/%d, which only the failing store could answer for, was refused", i)
		}
	}
	if err := f.Err(); !errors.Is(err, first) {
		t.Errorf("Err = %v; want the first failure, %v", err, first)
	}
}
