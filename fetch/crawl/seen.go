package crawl

import (
	"context"

	"github.com/goodbot-go/goodbot/internal/bloom"
)

// SeenStore holds a [Frontier]'s seen set (the normalised key of every URL
// it queued or marked) out of memory. A [Spill] that is also a SeenStore
// keeps the seen set of a Frontier with a Spill and a MaxInMemory: the
// Frontier then keeps in memory only a bounded cache of it (see the
// package doc's Memory section). Implementations must be safe for
// concurrent use; the Frontier calls them with its lock held.
type SeenStore interface {
	// ClearSeen forgets every key: a new Frontier starts with none (a
	// resumed one adds its queued items again).
	ClearSeen(ctx context.Context) error
	// AddSeen records keys, in one write.
	AddSeen(ctx context.Context, keys []string) error
	// HasSeen reports whether AddSeen recorded key.
	HasSeen(ctx context.Context, key string) (bool, error)
}

// seenSet is the set of keys a queue has seen.
type seenSet interface {
	has(key string) bool
	add(key string)
}

// memSeen is a seenSet in memory.
type memSeen map[string]struct{}

func (m memSeen) has(key string) bool { _, ok := m[key]; return ok }
func (m memSeen) add(key string)      { m[key] = struct{}{} }

// seenFlushEvery is how many new keys storeSeen buffers before it writes
// them to its store in one call.
const seenFlushEvery = 1024

// storeSeen is a seenSet in a SeenStore, kept in memory until it is
// large: the first keep keys are held in memory only (the store is neither
// written nor read: it was cleared when the set was made, so it has no
// key memory lacks). At keep keys they are written to the store in one
// call, and from then on the set lives in the store with two bounded
// caches in front: the keys not yet written (at most seenFlushEvery) and
// the keys seen lately (two generations of at most keep keys each), which
// answer the links every page of a site repeats without a read, and a
// Bloom filter of every key added, which answers "not seen" for a key it
// never took without a read (the new links of a crawl). Only keys truly
// seen are cached: a key absent from the caches and maybe in the filter is
// looked up in the store, so no cache answers "seen" for a key that was
// not. A store error
// is kept (see err); a lookup that fails answers "not seen" (the URL may be
// queued twice, the fetcher then reports a duplicate: no page is lost);
// a failed first write keeps the set in memory and is tried again after
// seenFlushEvery more keys.
type storeSeen struct {
	store      SeenStore
	keep       int
	stored     bool // the set lives in the store (it outgrew keep)
	retryAt    int  // while !stored after a failed first write: len(cur) of the next try
	pending    []string
	pendingSet map[string]struct{}
	cur, prev  map[string]struct{}
	added      *bloom.Filter // every key added since the store was cleared
	err        error
}

func newStoreSeen(store SeenStore, keep int) *storeSeen {
	s := &storeSeen{store: store, keep: max(keep, 1), pendingSet: map[string]struct{}{},
		cur: map[string]struct{}{}, prev: map[string]struct{}{}, added: bloom.New(2 * keep)}
	s.fail(store.ClearSeen(context.Background()))
	return s
}

func (s *storeSeen) fail(err error) {
	if err != nil && s.err == nil {
		s.err = err
	}
}

// remember puts key in the recent cache, ageing a full generation out.
func (s *storeSeen) remember(key string) {
	if len(s.cur) >= s.keep {
		s.prev, s.cur = s.cur, make(map[string]struct{}, s.keep)
	}
	s.cur[key] = struct{}{}
}

func (s *storeSeen) has(key string) bool {
	if _, ok := s.cur[key]; ok || !s.stored {
		return ok
	}
	if _, ok := s.pendingSet[key]; ok {
		return true
	}
	if _, ok := s.prev[key]; ok {
		s.remember(key)
		return true
	}
	if !s.added.MayContain(key) {
		return false // never added: the store does not have it either
	}
	ok, err := s.store.HasSeen(context.Background(), key)
	if err != nil {
		s.fail(err)
		return false
	}
	if ok {
		s.remember(key)
	}
	return ok
}

func (s *storeSeen) add(key string) {
	if !s.stored {
		if _, ok := s.cur[key]; !ok {
			s.added.Add(key)
		}
		s.cur[key] = struct{}{}
		if len(s.cur) >= max(s.keep, s.retryAt) {
			s.toStore()
		}
		return
	}
	if _, ok := s.pendingSet[key]; ok {
		return
	}
	s.added.Add(key)
	s.pending = append(s.pending, key)
	s.pendingSet[key] = struct{}{}
	s.remember(key)
	if len(s.pending) >= seenFlushEvery {
		s.flush()
	}
}

// toStore writes the keys held in memory to the store, in one call, and
// moves the set there; they stay in memory as the recent generation. On
// failure the set stays in memory, to be tried again seenFlushEvery keys
// later.
func (s *storeSeen) toStore() {
	keys := make([]string, 0, len(s.cur))
	for k := range s.cur {
		keys = append(keys, k)
	}
	if err := s.store.AddSeen(context.Background(), keys); err != nil {
		s.fail(err)
		s.retryAt = len(s.cur) + seenFlushEvery
		return
	}
	s.stored = true
}

// flush writes the pending keys; on failure they stay pending (and
// answered from memory) and the next add tries again.
func (s *storeSeen) flush() {
	if err := s.store.AddSeen(context.Background(), s.pending); err != nil {
		s.fail(err)
		return
	}
	clear(s.pending)
	s.pending = s.pending[:0]
	clear(s.pendingSet)
}

// newSeen returns the seen set of the Frontier's in-memory queue: in its
// Spill when that is a SeenStore and MaxInMemory bounds the queue, else in
// memory.
func (f *Frontier) newSeen() seenSet {
	if st, ok := f.Spill.(SeenStore); ok && f.MaxInMemory > 0 {
		return newStoreSeen(st, f.MaxInMemory)
	}
	return memSeen{}
}
