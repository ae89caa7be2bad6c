// Package boltjournal keeps a [crawl.Frontier]'s queue in a bbolt file, the
// same file [boltstate] keeps the fetcher's state in, so that a stopped or
// killed crawl resumes where it stopped.
//
// The queue lives in two buckets: "frontier" (one record per queued URL, by
// normalised URL, in queue order) and "frontier-sites" (the count of URLs
// admitted per site in the current crawl). Each [crawl.Step] is one write
// of the state ([boltstate.State.Write]: one record of its log, durable
// when Record returns, applied to the bbolt file in a later checkpoint)
// which also commits the [boltstate.Stage]'s staged fetched marks and
// validators of the URLs whose outcome it records: a URL leaves the queue
// only in the write that records its outcome, and no URL is marked
// fetched whose outcome was not recorded. Concurrent steps share the log's
// syncs.
//
// A Journal is also a [crawl.Spill] and a [crawl.SeenStore]: give it as a
// Frontier's Spill with a MaxInMemory and the queued items beyond that
// bound wait in the file ("frontier-spill" buckets, one a site) instead
// of memory, and so does the seen set ("frontier-seen"). Those two are
// caches of the
// queue, emptied when a Frontier starts, so they are written without the
// log ([boltstate.State.WriteUnlogged]): held in the State's memory and
// applied with its checkpoints, so a Push, a Pop or a batch of seen keys
// costs no transaction and no sync (a transaction each made admitting a
// page's links, once the frontier's memory was full, 80 times slower, and
// rewrote a page of the seen bucket for nearly every key once the set was
// large). Until a checkpoint the State's memory holds them, within its
// bound of about twice Options.CheckpointBytes.
//
// bbolt is already a dependency of [boltstate]; this package adds none.
package boltjournal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/fetch/crawl"
)

// Bucket names of the journal in the bbolt file.
var (
	FrontierBucket = []byte(frontierBucket)
	SitesBucket    = []byte(sitesBucket)
)

const (
	frontierBucket = "frontier"
	sitesBucket    = "frontier-sites"
)

// ErrNilState is returned by [New] without a state or stage.
var ErrNilState = errors.New("boltjournal: nil state or stage")

// Journal is a [crawl.Journal] in a bbolt file. Make one with [New]; the
// zero value is not usable. It is safe for concurrent use (the State
// serialises the writes).
type Journal struct {
	st    *boltstate.State
	stage *boltstate.Stage
	spill spillHeads

	// counts caches the sites bucket (the count of URLs admitted per
	// site), so that a step's counts are written without reading the
	// state. Only Record's write function and the Applied hook it sets
	// (which the State runs one write at a time, the hook only for a step
	// it took), and Load touch it; a site not in it is read once.
	counts map[string]int
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
	return &Journal{st: st, stage: g, counts: map[string]int{}}, nil
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
	err := j.st.ForEach(ctx, frontierBucket, func(k, v []byte) error {
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
	})
	if err == nil {
		err = j.st.ForEach(ctx, sitesBucket, func(k, v []byte) error {
			n, _ := strconv.Atoi(string(v))
			counts[string(k)] = n
			return nil
		})
	}
	if err != nil {
		return nil, nil, fmt.Errorf("boltjournal: %w", err)
	}
	j.counts = maps.Clone(counts) // under no write: Load runs before the crawl
	// The spilled items of an earlier frontier are in the queue loaded
	// above: the spill starts empty.
	if err := j.clearSpill(ctx); err != nil {
		return nil, nil, fmt.Errorf("boltjournal: %w", err)
	}
	if len(items) == 0 {
		if len(counts) > 0 {
			err := j.st.Write(ctx, func(tx *boltstate.Tx) error {
				tx.Applied(func() { clear(j.counts) })
				return tx.DropBucket(sitesBucket)
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
	return j.st.Fetched.Has(ctx, key) // the committed marks
}

// Record implements [crawl.Journal]: one write of the state commits the
// staged marks and validators of step.Done and changes the queue. A queued
// item with no tries yet is new to the crawl (the Frontier queues each URL
// once) and counts for its site; a retry does not.
func (j *Journal) Record(ctx context.Context, step crawl.Step) error {
	return j.stage.Commit(ctx, step.Done, func(tx *boltstate.Tx) error {
		for _, keys := range [][]string{step.Done, step.Dropped} {
			for _, k := range keys {
				if err := tx.Delete(frontierBucket, k); err != nil {
					return err
				}
			}
		}
		var counts []siteCount // this step's, into j.counts once it is all written
		for _, it := range step.Queued {
			if it.Tries == 0 {
				i := slices.IndexFunc(counts, func(c siteCount) bool { return c.site == it.Site })
				if i < 0 {
					n, err := j.count(tx, it.Site)
					if err != nil {
						return err
					}
					i, counts = len(counts), append(counts, siteCount{it.Site, n})
				}
				counts[i].n++
			}
			seq, err := tx.NextSequence(frontierBucket)
			if err != nil {
				return err
			}
			raw := record{URL: it.URL.String(), Depth: it.Depth, From: it.From, Tries: it.Tries, Seq: seq}.appendJSON(nil)
			if err := tx.Put(frontierBucket, it.Key, raw); err != nil {
				return err
			}
		}
		for _, c := range counts { // a site's count once, however many of its URLs
			if err := tx.Put(sitesBucket, c.site, strconv.AppendInt(nil, int64(c.n), 10)); err != nil {
				return err
			}
		}
		tx.Applied(func() { // a refused step leaves the cache as the state is
			for _, c := range counts {
				j.counts[c.site] = c.n
			}
		})
		return nil
	})
}

// siteCount is a site's count of admitted URLs.
type siteCount struct {
	site string
	n    int
}

// count is the count of site: cached, else read from the state.
func (j *Journal) count(tx *boltstate.Tx, site string) (int, error) {
	if n, ok := j.counts[site]; ok {
		return n, nil
	}
	had, err := tx.Get(sitesBucket, site)
	if err != nil {
		return 0, err
	}
	n, _ := strconv.Atoi(string(had))
	return n, nil
}
