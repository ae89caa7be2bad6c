package boltjournal

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/url"

	bolt "go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch/crawl"
)

// SpillBucket holds the items a [crawl.Frontier] spilled beyond its
// MaxInMemory: one nested bucket per site, keyed by a big-endian sequence.
// It is a cache of the "frontier" bucket's queue, emptied by [Journal.Load].
var SpillBucket = []byte("frontier-spill")

var _ crawl.Spill = (*Journal)(nil)

// Push implements [crawl.Spill]: one transaction appends items to site's
// spilled queue.
func (j *Journal) Push(ctx context.Context, site string, items []crawl.Item) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := j.db.Update(func(tx *bolt.Tx) error {
		top, err := tx.CreateBucketIfNotExists(SpillBucket)
		if err != nil {
			return err
		}
		b, err := top.CreateBucketIfNotExists([]byte(site))
		if err != nil {
			return err
		}
		for _, it := range items {
			seq, err := b.NextSequence()
			if err != nil {
				return err
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
	return nil
}

// Pop implements [crawl.Spill]: one transaction removes and returns up to n
// items from the head of site's spilled queue. A damaged record is skipped.
func (j *Journal) Pop(ctx context.Context, site string, n int) ([]crawl.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []crawl.Item
	err := j.db.Update(func(tx *bolt.Tx) error {
		top := tx.Bucket(SpillBucket)
		if top == nil {
			return nil
		}
		b := top.Bucket([]byte(site))
		if b == nil {
			return nil
		}
		var del [][]byte
		c := b.Cursor()
		for k, v := c.First(); k != nil && len(del) < n; k, v = c.Next() {
			del = append(del, k)
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
		for _, k := range del {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("boltjournal: spill: %w", err)
	}
	return out, nil
}

// SeenBucket holds the seen set of a [crawl.Frontier] whose Spill is this
// Journal (one empty value per normalised URL), so that the seen set of a
// large crawl lives in the file too. Like the spill, it is emptied when a
// Frontier starts ([Journal.ClearSeen]).
var SeenBucket = []byte("frontier-seen")

var _ crawl.SeenStore = (*Journal)(nil)

// ClearSeen implements [crawl.SeenStore]: it empties the seen bucket.
func (j *Journal) ClearSeen(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := j.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(SeenBucket) == nil {
			return nil
		}
		return tx.DeleteBucket(SeenBucket)
	})
	if err != nil {
		return fmt.Errorf("boltjournal: seen set: %w", err)
	}
	return nil
}

// AddSeen implements [crawl.SeenStore]: one transaction records keys.
func (j *Journal) AddSeen(ctx context.Context, keys []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := j.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(SeenBucket)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := b.Put([]byte(k), nil); err != nil {
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

// HasSeen implements [crawl.SeenStore]: one read transaction, no write.
func (j *Journal) HasSeen(ctx context.Context, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	var ok bool
	err := j.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(SeenBucket); b != nil {
			ok = b.Get([]byte(key)) != nil
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("boltjournal: seen set: %w", err)
	}
	return ok, nil
}
