package crawl

import (
	"context"
	"sort"
	"sync"
)

// MemoryJournal is a [Journal] in memory: it keeps the queue across
// frontiers of one process (a crawl stopped and started again), not across
// processes. The zero value is an empty journal, ready to use; it is safe
// for concurrent use. It holds every queued item and every done key.
type MemoryJournal struct {
	mu     sync.Mutex // guards the fields below
	queue  map[string]seqItem
	seq    uint64
	done   map[string]bool
	counts map[string]int
}

type seqItem struct {
	seq uint64
	it  Item
}

var _ Journal = (*MemoryJournal)(nil)

// Load implements [Journal]. With nothing queued the crawl starts afresh:
// the per-site counts of the last one are forgotten.
func (j *MemoryJournal) Load(ctx context.Context) ([]Item, map[string]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.queue) == 0 {
		j.counts = nil
		return nil, nil, nil
	}
	items := make([]seqItem, 0, len(j.queue))
	for _, si := range j.queue {
		items = append(items, si)
	}
	sort.Slice(items, func(a, b int) bool { return items[a].seq < items[b].seq })
	out := make([]Item, len(items))
	for i, si := range items {
		out[i] = si.it
	}
	counts := make(map[string]int, len(j.counts))
	for s, n := range j.counts {
		counts[s] = n
	}
	return out, counts, nil
}

// Done implements [Journal].
func (j *MemoryJournal) Done(ctx context.Context, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.done[key], nil
}

// Record implements [Journal]: the step is applied under one lock, all of
// it or (with ctx done) nothing.
func (j *MemoryJournal) Record(ctx context.Context, step Step) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.queue == nil {
		j.queue, j.done = map[string]seqItem{}, map[string]bool{}
	}
	if j.counts == nil {
		j.counts = map[string]int{}
	}
	for _, k := range step.Done {
		j.done[k] = true
		delete(j.queue, k)
	}
	for _, k := range step.Dropped {
		delete(j.queue, k)
	}
	for _, it := range step.Queued {
		if _, ok := j.queue[it.Key]; !ok && it.Tries == 0 {
			j.counts[it.Site]++
		}
		j.seq++
		j.queue[it.Key] = seqItem{j.seq, it}
	}
	return nil
}
