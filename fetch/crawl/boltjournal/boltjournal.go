// Package boltjournal keeps a [crawl.Frontier]'s queue in a bbolt file, the
// same file [boltstate] keeps the fetcher's state in, so that a stopped or
// killed crawl resumes where it stopped.
//
// The queue lives in two buckets: "frontier" (one record per queued URL, by
// normalised URL, in queue order) and "frontier-sites" (the count of URLs
// admitted per site in the current crawl). Each [crawl.Step] is one bbolt
// transaction which also commits the [boltstate.Stage]'s staged fetched
// marks and validators of the URLs whose outcome it records: a URL leaves
// the queue only in the transaction that records its outcome, and no URL is
// marked fetched whose outcome was not recorded.
//
// A Journal is also a [crawl.Spill]: give it as a Frontier's Spill with a
// MaxInMemory and the queued items beyond that bound wait in the file
// ("frontier-spill" bucket) instead of memory.
//
// bbolt is already a dependency of [boltstate]; this package adds none.
package boltjournal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"

	bolt "go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/fetch/crawl"
)

// Bucket names of the journal in the bbolt file.
var (
	FrontierBucket = []byte("frontier")
	SitesBucket    = []byte("frontier-sites")
)

// ErrNilState is returned by [New] without a state or stage.
var ErrNilState = errors.New("boltjournal: nil state or stage")

// Journal is a [crawl.Journal] in a bbolt file. Make one with [New]; the
// zero value is not usable. It is safe for concurrent use (bbolt
// serialises the writes).
type Journal struct {
	db    *bolt.DB
	stage *boltstate.Stage
	done  fetch.FetchedSet // the committed marks
	spill spillHeads
}

var _ crawl.Journal = (*Journal)(nil)

// New returns the journal kept in st's file. Its steps commit g's staged
// marks and validators; give the fetcher g as its Fetched and Validators
// store ([boltstate.Stage.Apply]) so that a fetch becomes durable only
// with its recorded outcome.
func New(st *boltstate.State, g *boltstate.Stage) (*Journal, error) {
	if st == nil || st.DB == nil || g == nil {
		return nil, ErrNilState
	}
	return &Journal{db: st.DB, stage: g, done: st.Fetched}, nil
}

// record is a queued item as stored.
type record struct {
	URL   string `json:"u"`
	Key   string `json:"k,omitempty"` // spilled items only
	Depth int    `json:"d,omitempty"`
	From  string `json:"f,omitempty"`
	Tries int    `json:"t,omitempty"`
	Seq   uint64 `json:"s"`
}

// Load implements [crawl.Journal]. With nothing queued the crawl starts
// afresh and the per-site counts of the last one are forgotten. A damaged
// record is skipped (that URL is rediscovered or lost, never a crash).
func (j *Journal) Load(ctx context.Context) ([]crawl.Item, map[string]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	type seqItem struct {
		seq uint64
		it  crawl.Item
	}
	var items []seqItem
	counts := map[string]int{}
	err := j.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(FrontierBucket); b != nil {
			if err := b.ForEach(func(k, v []byte) error {
				var r record
				if json.Unmarshal(v, &r) != nil {
					return nil
				}
				u, err := url.Parse(r.URL)
				if err != nil || u.Host == "" {
					return nil
				}
				items = append(items, seqItem{r.Seq, crawl.Item{URL: u, Key: string(k), Site: crawl.Site(u), Depth: r.Depth, From: r.From, Tries: r.Tries}})
				return nil
			}); err != nil {
				return err
			}
		}
		if b := tx.Bucket(SitesBucket); b != nil {
			return b.ForEach(func(k, v []byte) error {
				n, _ := strconv.Atoi(string(v))
				counts[string(k)] = n
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("boltjournal: %w", err)
	}
	// The spilled items of an earlier frontier are in the queue loaded
	// above: the spill starts empty.
	if err := j.clearSpill(); err != nil {
		return nil, nil, fmt.Errorf("boltjournal: %w", err)
	}
	if len(items) == 0 {
		if len(counts) > 0 {
			err := j.db.Update(func(tx *bolt.Tx) error {
				if tx.Bucket(SitesBucket) == nil {
					return nil
				}
				return tx.DeleteBucket(SitesBucket)
			})
			if err != nil {
				return nil, nil, fmt.Errorf("boltjournal: %w", err)
			}
		}
		return nil, nil, nil
	}
	sort.Slice(items, func(a, b int) bool { return items[a].seq < items[b].seq })
	out := make([]crawl.Item, len(items))
	for i, si := range items {
		out[i] = si.it
	}
	return out, counts, nil
}

// Done implements [crawl.Journal]: it reports whether key is in the
// committed fetched set.
func (j *Journal) Done(ctx context.Context, key string) (bool, error) {
	return j.done.Has(ctx, key)
}

// Record implements [crawl.Journal]: one transaction commits the staged
// marks and validators of step.Done and changes the queue.
func (j *Journal) Record(ctx context.Context, step crawl.Step) error {
	return j.stage.Commit(ctx, step.Done, func(tx *bolt.Tx) error {
		fb, err := tx.CreateBucketIfNotExists(FrontierBucket)
		if err != nil {
			return err
		}
		sb, err := tx.CreateBucketIfNotExists(SitesBucket)
		if err != nil {
			return err
		}
		for _, keys := range [][]string{step.Done, step.Dropped} {
			for _, k := range keys {
				if err := fb.Delete([]byte(k)); err != nil {
					return err
				}
			}
		}
		for _, it := range step.Queued {
			key := []byte(it.Key)
			if fb.Get(key) == nil && it.Tries == 0 {
				n, _ := strconv.Atoi(string(sb.Get([]byte(it.Site))))
				if err := sb.Put([]byte(it.Site), []byte(strconv.Itoa(n+1))); err != nil {
					return err
				}
			}
			seq, err := fb.NextSequence()
			if err != nil {
				return err
			}
			raw, err := json.Marshal(record{URL: it.URL.String(), Depth: it.Depth, From: it.From, Tries: it.Tries, Seq: seq})
			if err != nil {
				return err
			}
			if err := fb.Put(key, raw); err != nil {
				return err
			}
		}
		return nil
	})
}
