package boltjournal

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/fetch/crawl"
)

// SpillBucket names the buckets of the items a [crawl.Frontier] spilled
// beyond its MaxInMemory: one bucket per site, named SpillBucket, a space
// and the site, keyed by a big-endian sequence. (Files of earlier versions
// hold them nested in one bucket of this name.) They are a cache of the
// "frontier" bucket's queue, emptied by [Journal.Load], so they are
// written without the log ([boltstate.State.WriteUnlogged]): a Push or Pop
// costs a write to the State's memory, no transaction and no sync, and
// reaches the file with the State's next checkpoint. Items left there by
// an earlier Journal on the file are never popped.
var SpillBucket = []byte("frontier-spill")

// spillDropBatch is how many spill buckets one write drops.
const spillDropBatch = 1024

// spillBucket is the name of site's spill bucket.
func spillBucket(site string) string { return string(SpillBucket) + " " + site }

// spillHeads is where each site's spilled queue starts and ends: its items
// are the sequences from head to tail (excluded), those before head were
// popped or left by an earlier Journal on the file.
type spillHeads struct {
	mu   sync.Mutex        // held through each Push and Pop
	head map[string]uint64 // the site's first sequence to pop
	tail map[string]uint64 // one past the site's last sequence pushed
}

// clearSpill empties the spill: the buckets the file holds, those this
// Journal wrote, and the one bucket of earlier versions.
func (j *Journal) clearSpill(ctx context.Context) error {
	h := &j.spill
	h.mu.Lock()
	defer h.mu.Unlock()
	names := map[string]bool{string(SpillBucket): true}
	for site := range h.head {
		names[spillBucket(site)] = true
	}
	prefix := []byte(spillBucket(""))
	err := j.st.DB.View(func(tx *bolt.Tx) error { // the buckets an earlier run left
		return tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			if bytes.HasPrefix(name, prefix) {
				names[string(name)] = true
			}
			return nil
		})
	})
	// In writes of spillDropBatch buckets: a crawl of many sites leaves
	// many, and a write waits while the State's memory is full.
	all := slices.Collect(maps.Keys(names))
	for len(all) > 0 && err == nil {
		batch := all[:min(len(all), spillDropBatch)]
		all = all[len(batch):]
		err = j.st.WriteUnlogged(ctx, func(tx *boltstate.Tx) error {
			for _, name := range batch {
				if err := tx.DropBucket(name); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	h.head, h.tail = nil, nil
	return nil
}

var _ crawl.Spill = (*Journal)(nil)

// Push implements [crawl.Spill]: one unlogged write appends items to
// site's spilled queue.
func (j *Journal) Push(ctx context.Context, site string, items []crawl.Item) error {
	if len(items) == 0 {
		return ctx.Err()
	}
	raws := make([][]byte, len(items))
	for i, it := range items {
		raws[i] = record{URL: it.URL.String(), Key: it.Key, Depth: it.Depth, From: it.From, Tries: it.Tries}.appendJSON(nil)
	}
	h := &j.spill
	h.mu.Lock()
	defer h.mu.Unlock()
	name := spillBucket(site)
	var first uint64
	err := j.st.WriteUnlogged(ctx, func(tx *boltstate.Tx) error {
		for i, raw := range raws {
			seq, err := tx.NextSequence(name)
			if err != nil {
				return err
			}
			if i == 0 {
				first = seq
			}
			if err := tx.Put(name, string(binary.BigEndian.AppendUint64(nil, seq)), raw); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("boltjournal: spill: %w", err)
	}
	if h.head == nil {
		h.head, h.tail = map[string]uint64{}, map[string]uint64{}
	}
	if _, ok := h.head[site]; !ok {
		h.head[site] = first // what an earlier Journal left is not this one's
	}
	h.tail[site] = first + uint64(len(items))
	return nil
}

// Pop implements [crawl.Spill]: it reads up to n items from the head of
// site's spilled queue, by their sequences, and one unlogged write deletes
// them. A damaged record is skipped (and deleted).
func (j *Journal) Pop(ctx context.Context, site string, n int) ([]crawl.Item, error) {
	h := &j.spill
	h.mu.Lock()
	defer h.mu.Unlock()
	head, tail := h.head[site], h.tail[site]
	end := min(tail, head+uint64(max(n, 0)))
	if end <= head {
		return nil, ctx.Err() // nothing left that this Journal pushed
	}
	name := spillBucket(site)
	var out []crawl.Item
	keys := make([]string, 0, end-head)
	for seq := head; seq < end; seq++ {
		k := string(binary.BigEndian.AppendUint64(nil, seq))
		keys = append(keys, k)
		v, err := j.st.Get(ctx, name, k)
		if err != nil {
			return nil, fmt.Errorf("boltjournal: spill: %w", err)
		}
		var r record
		if v != nil && json.Unmarshal(v, &r) == nil {
			if u, err := url.Parse(r.URL); err == nil && u.Host != "" && r.Key != "" {
				out = append(out, crawl.Item{URL: u, Key: r.Key, Site: site, Depth: r.Depth, From: r.From, Tries: r.Tries})
			}
		}
	}
	err := j.st.WriteUnlogged(ctx, func(tx *boltstate.Tx) error {
		for _, k := range keys {
			if err := tx.Delete(name, k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("boltjournal: spill: %w", err)
	}
	h.head[site] = end
	return out, nil
}

// SeenBucket holds the seen set of a [crawl.Frontier] whose Spill is this
// Journal (one empty value per normalised URL), so that the seen set of a
// large crawl lives in the file too. Like the spill, it is emptied when a
// Frontier starts ([Journal.ClearSeen]), so it is written without the
// log ([boltstate.State.WriteUnlogged]): a crash may lose its latest keys,
// and the next Frontier empties it anyway.
var SeenBucket = []byte("frontier-seen")

var _ crawl.SeenStore = (*Journal)(nil)

// ClearSeen implements [crawl.SeenStore]: it empties the seen bucket.
func (j *Journal) ClearSeen(ctx context.Context) error {
	err := j.st.WriteUnlogged(ctx, func(tx *boltstate.Tx) error { return tx.DropBucket(string(SeenBucket)) })
	if err != nil {
		return fmt.Errorf("boltjournal: seen set: %w", err)
	}
	return nil
}

// AddSeen implements [crawl.SeenStore]: one unlogged write of the
// State records keys. They reach the file with the State's next
// checkpoint, with its other writes, in key order; a transaction of
// their own for each call would rewrite a leaf of the bucket for nearly
// every key, the keys being spread over it.
func (j *Journal) AddSeen(ctx context.Context, keys []string) error {
	err := j.st.WriteUnlogged(ctx, func(tx *boltstate.Tx) error {
		for _, k := range keys {
			if err := tx.Put(string(SeenBucket), k, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("boltjournal: seen set: %w", err)
	}
	return nil
}

// HasSeen implements [crawl.SeenStore]: a read of the State, no write.
func (j *Journal) HasSeen(ctx context.Context, key string) (bool, error) {
	v, err := j.st.Get(ctx, string(SeenBucket), key)
	if err != nil {
		return false, fmt.Errorf("boltjournal: seen set: %w", err)
	}
	return v != nil, nil
}
