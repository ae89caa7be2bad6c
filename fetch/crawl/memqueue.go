package crawl

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// memQueue is the [Frontier]'s in-memory [Queue]: one FIFO queue per site
// in memory (or, beyond maxInMem items, in the Spill), a heap of the sites
// that can be leased ordered by ready time, and the seen set. It records
// every change in the Journal, after applying it in memory. Its lock is
// the Frontier's.
type memQueue struct {
	mu       sync.Mutex // guards the fields below but journal, spill, maxInMem
	journal  Journal
	spill    Spill
	maxInMem int
	seen     seenSet

	sites   map[string]*siteQ
	sched   schedule // sites with queued items, none leased
	leased  map[*siteQ]struct{}
	expiry  time.Time         // no lease ends before (zero: none leased since the last expire)
	toSpill map[*siteQ][]Item // enqueued for the Spill, pushed by flushSpill
	order   uint64            // sites scheduled so far (ties of ready time)
	queued  int               // items queued or leased
	inMem   int               // of which in memory
	err     error             // first Spill error
}

// siteQ is one site's queue and schedule.
type siteQ struct {
	name  string
	items []Item // in memory, head first; the Spill holds spilt more after them
	spilt int
	count int       // items admitted (or marked counted) in this crawl
	ready time.Time // not leased before
	order uint64    // ready-time ties: earlier scheduled first
	idx   int       // index in the schedule; -1 when out of it

	lease Item      // the leased item (lease.Key != "" while leased)
	until time.Time // lease expiry

	gone map[string]struct{} // keys dropped while spilt: skipped when they come back
}

func newMemQueue(j Journal, s Spill, maxInMem int, seen seenSet) *memQueue {
	return &memQueue{journal: j, spill: s, maxInMem: maxInMem, seen: seen,
		sites: map[string]*siteQ{}, leased: map[*siteQ]struct{}{}}
}

var _ Queue = (*memQueue)(nil)

// Add implements [Queue]: the items queued are recorded in the Journal,
// after memory; a Journal error is returned and the items stay queued in
// memory.
func (q *memQueue) Add(ctx context.Context, items []Item, maxPerSite int) ([]Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q.mu.Lock()
	out := q.admit(items, maxPerSite)
	q.mu.Unlock()
	return out, q.record(ctx, Step{Queued: out})
}

// Seen implements [Queue].
func (q *memQueue) Seen(ctx context.Context, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.seen.has(key), nil
}

// Mark implements [Queue].
func (q *memQueue) Mark(ctx context.Context, counted bool, items ...Item) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, it := range items {
		if q.seen.has(it.Key) {
			continue
		}
		q.seen.add(it.Key)
		if counted {
			q.site(it.Site).count++
		}
	}
	return nil
}

// Lease implements [Queue].
func (q *memQueue) Lease(ctx context.Context, now time.Time, ttl time.Duration) (Item, time.Time, bool, error) {
	if err := ctx.Err(); err != nil {
		return Item{}, time.Time{}, false, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	it, next, ok := q.lease(now, ttl)
	return it, next, ok, nil
}

// Finish implements [Queue]: the step is applied in memory, then recorded
// in the Journal (Queued as admitted, Dropped with the keys DropSite
// dropped); a Journal error is returned with the step applied in memory.
func (q *memQueue) Finish(ctx context.Context, it Item, step Step, ready time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	out, err := q.finish(it, step, ready)
	q.mu.Unlock()
	if err != nil {
		return err
	}
	return q.record(ctx, out)
}

// Len implements [Queue].
func (q *memQueue) Len(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued, nil
}

// record applies step to the journal (nothing without one, or for an
// empty step).
func (q *memQueue) record(ctx context.Context, step Step) error {
	if q.journal == nil || (len(step.Done) == 0 && len(step.Queued) == 0 && len(step.Dropped) == 0) {
		return nil
	}
	return q.journal.Record(ctx, step)
}

// site returns the queue of name, made on first use.
func (q *memQueue) site(name string) *siteQ {
	s := q.sites[name]
	if s == nil {
		s = &siteQ{name: name, idx: -1}
		q.sites[name] = s
	}
	return s
}

// waiting reports whether s has queued items (leased one aside).
func (s *siteQ) waiting() bool { return len(s.items) > 0 || s.spilt > 0 }

// reschedule puts s in the schedule if it has queued items and no lease.
func (q *memQueue) reschedule(s *siteQ) {
	if s.idx >= 0 || s.lease.Key != "" || !s.waiting() {
		return
	}
	q.order++
	s.order = q.order
	heap.Push(&q.sched, s)
}

// unschedule takes s out of the schedule.
func (q *memQueue) unschedule(s *siteQ) {
	if s.idx >= 0 {
		heap.Remove(&q.sched, s.idx)
	}
}

// admit queues the items not seen and under the cap, and returns them.
func (q *memQueue) admit(items []Item, maxPerSite int) []Item {
	var out []Item
	for _, it := range items {
		if q.seen.has(it.Key) {
			continue
		}
		s := q.site(it.Site)
		if maxPerSite > 0 && s.count >= maxPerSite {
			continue
		}
		q.seen.add(it.Key)
		s.count++
		q.enqueue(s, it)
		out = append(out, it)
	}
	q.flushSpill()
	return out
}

// enqueue puts it at the end of s's queue: in memory, or in the Spill
// (beyond maxInMem items, or when s already has spilled items, to keep its
// order). A Spill error keeps the item in memory.
func (q *memQueue) enqueue(s *siteQ, it Item) {
	q.queued++
	delete(s.gone, it.Key) // queued again
	defer q.reschedule(s)
	if q.spill != nil && q.maxInMem > 0 && (q.inMem >= q.maxInMem || s.spilt > 0) {
		if q.toSpill == nil {
			q.toSpill = map[*siteQ][]Item{}
		}
		q.toSpill[s] = append(q.toSpill[s], it)
		s.spilt++
		return
	}
	s.items = append(s.items, it)
	q.inMem++
}

// flushSpill pushes the items enqueue gave the Spill, one Push per site.
// A site whose Push fails keeps its items in memory.
func (q *memQueue) flushSpill() {
	for s, its := range q.toSpill {
		if err := q.spill.Push(context.Background(), s.name, its); err != nil {
			q.keep(err)
			s.spilt -= len(its)
			s.items = append(s.items, its...)
			q.inMem += len(its)
		}
	}
	clear(q.toSpill)
}

func (q *memQueue) keep(err error) {
	if q.err == nil {
		q.err = err
	}
}

// refillBatch is the fewest spilled items a site whose queue in memory
// ran dry brings back in one Spill.Pop (if it has that many, and at most
// maxInMem), even when memory is full: the Spill is read once per batch,
// not once per item, and a site holds at most that many beyond maxInMem.
const refillBatch = 64

// refill brings back s's spilled items into memory in one Spill.Pop: what
// maxInMem leaves room for, and at least min(refillBatch, maxInMem). It is
// called when s has none in memory (but a leased one), and pop or drop
// then takes one or all of them out, so that memory holds at most
// maxInMem items plus, per site, up to that batch of its own items.
func (q *memQueue) refill(s *siteQ) {
	q.flushSpill()
	n := min(s.spilt, max(min(refillBatch, q.maxInMem), q.maxInMem-q.inMem))
	its, err := q.spill.Pop(context.Background(), s.name, n)
	if err != nil {
		q.keep(err)
		return
	}
	if len(its) == 0 { // the Spill lost them: stop counting them
		q.queued -= s.spilt
		s.spilt, s.gone = 0, nil
		return
	}
	s.spilt -= len(its)
	s.spilt = max(s.spilt, 0)
	for _, it := range its {
		if _, ok := s.gone[it.Key]; ok {
			delete(s.gone, it.Key)
			q.queued--
			continue
		}
		s.items = append(s.items, it)
		q.inMem++
	}
	if s.spilt == 0 {
		s.gone = nil
	}
}

// bringBack refills s until it has items in memory or none spilt, and
// reports whether the Spill failed.
func (q *memQueue) bringBack(s *siteQ) bool {
	for len(s.items) == 0 && s.spilt > 0 {
		n := s.spilt
		q.refill(s)
		if s.spilt == n {
			return true
		}
	}
	return false
}

// pop removes and returns s's head item.
func (q *memQueue) pop(s *siteQ) (Item, bool) {
	q.bringBack(s)
	if len(s.items) == 0 {
		return Item{}, false
	}
	it := s.items[0]
	s.items[0] = Item{}
	s.items = s.items[1:]
	if len(s.items) == 0 {
		s.items = nil
	}
	q.queued--
	q.inMem--
	return it, true
}

// drop removes every queued item of s and returns their keys.
func (q *memQueue) drop(s *siteQ) []string {
	var keys []string
	for {
		if q.bringBack(s) || len(s.items) == 0 { // a Spill that failed keeps its items
			break
		}
		for _, it := range s.items {
			keys = append(keys, it.Key)
		}
		q.queued -= len(s.items)
		q.inMem -= len(s.items)
		s.items = nil
	}
	if !s.waiting() {
		q.unschedule(s)
	}
	return keys
}

// expire gives back the leases that ended at now.
// It looks at the leases only from q.expiry on (the earliest expiry, or
// earlier), and sets q.expiry again from the leases left.
func (q *memQueue) expire(now time.Time) {
	if len(q.leased) == 0 || now.Before(q.expiry) {
		return
	}
	q.expiry = time.Time{}
	for s := range q.leased {
		if !s.until.After(now) {
			q.unlease(s, false)
		} else if q.expiry.IsZero() || s.until.Before(q.expiry) {
			q.expiry = s.until
		}
	}
}

// unlease ends s's lease; with keep false the item goes back to the head
// of s's queue.
func (q *memQueue) unlease(s *siteQ, gone bool) {
	it := s.lease
	s.lease, s.until = Item{}, time.Time{}
	delete(q.leased, s)
	if gone {
		q.queued--
		q.inMem--
	} else {
		s.items = append([]Item{it}, s.items...)
	}
	q.reschedule(s)
}

// lease implements Queue.Lease.
func (q *memQueue) lease(now time.Time, ttl time.Duration) (Item, time.Time, bool) {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	q.expire(now)
	for len(q.sched) > 0 && !q.sched[0].ready.After(now) {
		s := heap.Pop(&q.sched).(*siteQ)
		it, ok := q.pop(s)
		if !ok {
			continue // the Spill lost its items
		}
		q.queued++ // leased items count as queued
		q.inMem++
		s.lease, s.until = it, now.Add(ttl)
		q.leased[s] = struct{}{}
		if q.expiry.IsZero() || s.until.Before(q.expiry) {
			q.expiry = s.until
		}
		return it, time.Time{}, true
	}
	var next time.Time
	if len(q.sched) > 0 {
		next = q.sched[0].ready
	}
	if len(q.leased) > 0 && (next.IsZero() || q.expiry.Before(next)) {
		next = q.expiry // a lease may end then (or later: Lease then looks again)
	}
	return Item{}, next, false
}

// finish implements Queue.Finish in memory and returns the step to
// journal: Queued as admitted, Dropped with the keys of DropSite.
func (q *memQueue) finish(it Item, step Step, ready time.Time) (Step, error) {
	s := q.sites[it.Site]
	if s == nil || s.lease.Key == "" || s.lease.Key != it.Key {
		return Step{}, &LeaseError{Site: it.Site}
	}
	named := false // the item is in Done (seen since it was queued) or Dropped
	for _, k := range step.Done {
		if k == it.Key {
			named = true
		} else {
			q.seen.add(k)
		}
	}
	for _, k := range step.Dropped {
		named = named || k == it.Key
	}
	gone := step.DropSite || named
	var fresh []Item
	var again *Item
	for i, n := range step.Queued {
		if n.Key == it.Key && n.Tries > it.Tries {
			again = &step.Queued[i]
		} else {
			fresh = append(fresh, n)
		}
	}
	out := Step{Done: step.Done, Dropped: step.Dropped}
	s.ready = ready
	q.unlease(s, gone || again != nil)
	if step.DropSite {
		out.Dropped = append(out.Dropped[:len(out.Dropped):len(out.Dropped)], q.drop(s)...)
		if !named {
			out.Dropped = append(out.Dropped, it.Key) // retried or not named: it leaves with its site
		}
	} else if len(step.Dropped) > 0 {
		q.dropKeys(s, step.Dropped)
	}
	if again != nil && !step.DropSite {
		q.enqueue(s, *again) // pushed by admit's flush below
		out.Queued = append(out.Queued, *again)
	}
	out.Queued = append(out.Queued, q.admit(fresh, step.MaxPerSite)...)
	return out, nil
}

// dropKeys removes s's queued items with these keys: at once in memory;
// those not found there, if s has items in the Spill, when they come back.
func (q *memQueue) dropKeys(s *siteQ, keys []string) {
	drop := make(map[string]bool, len(keys))
	for _, k := range keys {
		drop[k] = true
	}
	kept := s.items[:0]
	for _, it := range s.items {
		if drop[it.Key] {
			delete(drop, it.Key)
			q.queued--
			q.inMem--
		} else {
			kept = append(kept, it)
		}
	}
	clear(s.items[len(kept):])
	s.items = kept
	if s.spilt > 0 {
		for k := range drop {
			if s.gone == nil {
				s.gone = map[string]struct{}{}
			}
			s.gone[k] = struct{}{}
		}
	}
	if !s.waiting() {
		q.unschedule(s)
	}
}

// schedule is a min-heap of sites by (ready, order).
type schedule []*siteQ

func (h schedule) Len() int { return len(h) }
func (h schedule) Less(i, j int) bool {
	if !h[i].ready.Equal(h[j].ready) {
		return h[i].ready.Before(h[j].ready)
	}
	return h[i].order < h[j].order
}
func (h schedule) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *schedule) Push(x any) {
	s := x.(*siteQ)
	s.idx = len(*h)
	*h = append(*h, s)
}
func (h *schedule) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	s.idx = -1
	*h = old[:len(old)-1]
	return s
}

// NewMemoryQueue returns an empty [Queue] in memory, without journal or
// spill: the queue a [Frontier] without a Queue uses (with its Journal and
// Spill). It is safe for concurrent use. It holds every key it saw (see
// the package doc's Memory section).
func NewMemoryQueue() Queue { return newMemQueue(nil, nil, 0, memSeen{}) }
