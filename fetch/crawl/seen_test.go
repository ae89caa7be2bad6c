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
	if sp.writes != urls/seenFlushEvery || len(sp.seen) != urls/seenFlushEvery*seenFlushEvery {
		t.Errorf("%d writes of %d keys; want %d writes of %d", sp.writes, len(sp.seen), urls/seenFlushEvery, urls/seenFlushEvery*seenFlushEvery)
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

// A store that fails loses no page: a key it cannot answer counts as not
// seen, and Err reports the failure.
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
	if err := f.Err(); !errors.Is(err, sp.fail) {
		t.Errorf("Err = %v; want the store's error", err)
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
