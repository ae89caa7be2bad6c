package boltjournal

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/url"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/fetch/crawl"
)

// SpillBucket holds the items a [crawl.Frontier] spilled beyond its
// MaxInMemory: one nested bucket per site, keyed by a big-endian sequence.
// It is a cache of the "frontier" bucket's queue, emptied by [Journal.Load].
// A Pop only reads it: the items popped are deleted later, with their
// site's next Push or once spillDeleteEvery of them wait, and items left
// there by an earlier Journal on the file are never popped.
var SpillBucket = []byte("frontier-spill")

// spillDeleteEvery is how many popped items a Journal leaves in the spill
// bucket before a Pop deletes them, in one transaction.
const spillDeleteEvery = 4096

// spillHeads is where each site's spilled queue starts: the items before
// a site's head were popped (or left by an earlier Journal) and wait to be
// deleted.
type spillHeads struct {
	mu     sync.Mutex        // held through each Push and Pop
	head   map[string]uint64 // the site's first sequence to pop
	popped map[string]int    // the site's items popped and not deleted
	total  int               // sum of popped
}

// clearSpill empties the spill bucket.
func (j *Journal) clearSpill() error {
	h := &j.spill
	h.mu.Lock()
	defer h.mu.Unlock()
	err := j.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(SpillBucket) == nil {
			return nil
		}
		return tx.DeleteBucket(SpillBucket)
	})
	if err != nil {
		return err
	}
	h.head, h.popped, h.total = nil, nil, 0
	return nil
}

// deletePopped deletes, in b, the items before site's head.
func (h *spillHeads) deletePopped(b *bolt.Bucket, site string) error {
	head, ok := h.head[site]
	if !ok {
		return nil
	}
	var del [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) < head; k, _ = c.Next() {
		del = append(del, k)
	}
	for _, k := range del {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

var _ crawl.Spill = (*Journal)(nil)

// Push implements [crawl.Spill]: one transaction appends items to site's
// spilled queue (and deletes the site's popped items).
func (j *Journal) Push(ctx context.Context, site string, items []crawl.Item) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h := &j.spill
	h.mu.Lock()
	defer h.mu.Unlock()
	var first uint64
	err := j.db.Update(func(tx *bolt.Tx) error {
		top, err := tx.CreateBucketIfNotExists(SpillBucket)
		if err != nil {
			return err
		}
		b, err := top.CreateBucketIfNotExists([]byte(site))
		if err != nil {
			return err
		}
		if err := h.deletePopped(b, site); err != nil {
			return err
		}
		for i, it := range items {
			seq, err := b.NextSequence()
			if err != nil {
				return err
			}
			if i == 0 {
				first = seq
			}
			raw, err := json.Marshal(record{URL: it.URL.String(), Key: it.Key, Depth: it.Depth, From: it.From, Tries: it.Tries})
			if err != nil {
				return err
			}
			if err := b.Put(binary.BigEndian.AppendUint64(nil, seq), raw); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("boltjournal: spill: %w", err)
	}
	if h.head == nil {
		h.head, h.popped = map[string]uint64{}, map[string]int{}
	}
	if _, ok := h.head[site]; !ok && len(items) > 0 {
		h.head[site] = first // what an earlier Journal left is not this one's
	}
	h.total -= h.popped[site]
	delete(h.popped, site)
	return nil
}

// Pop implements [crawl.Spill]: one read transaction returns up to n items
// from the head of site's spilled queue, and they leave it (see
// [SpillBucket]). A damaged record is skipped.
func (j *Journal) Pop(ctx context.Context, site string, n int) ([]crawl.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h := &j.spill
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.total >= spillDeleteEvery {
		err := j.db.Update(func(tx *bolt.Tx) error {
			top := tx.Bucket(SpillBucket)
			for s := range h.popped {
				if b := top.Bucket([]byte(s)); b != nil {
					if err := h.deletePopped(b, s); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("boltjournal: spill: %w", err)
		}
		clear(h.popped)
		h.total = 0
	}
	var out []crawl.Item
	var read int
	var next uint64
	err := j.db.View(func(tx *bolt.Tx) error {
		top := tx.Bucket(SpillBucket)
		if top == nil {
			return nil
		}
		b := top.Bucket([]byte(site))
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Seek(binary.BigEndian.AppendUint64(nil, h.head[site])); k != nil && read < n; k, v = c.Next() {
			read++
			next = binary.BigEndian.Uint64(k) + 1
			var r record
			if json.Unmarshal(v, &r) != nil {
				continue
			}
			u, err := url.Parse(r.URL)
			if err != nil || u.Host == "" || r.Key == "" {
				continue
			}
			out = append(out, crawl.Item{URL: u, Key: r.Key, Site: site, Depth: r.Depth, From: r.From, Tries: r.Tries})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("boltjournal: spill: %w", err)
	}
	if read > 0 {
		if h.head == nil {
			h.head, h.popped = map[string]uint64{}, map[string]int{}
		}
		h.head[site] = next
		h.popped[site] += read
		h.total += read
	}
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
