package boltstate

import (
	"hash/maphash"
	"maps"
	"slices"

	"go.etcd.io/bbolt"
)

// layer holds the writes of the log not yet applied to the bbolt file, by
// bucket and key: the active layer takes new writes, the frozen one holds
// the writes of a checkpoint while they are applied.
type layer struct {
	buckets map[string]*layerBucket
	bytes   int            // what the layer's writes add up to, for the checkpoint threshold (see apply)
	room    map[string]int // keys of each bucket in the layer before (see next)
	arena   arena          // the keys and values of its buckets
	seed    maphash.Seed   // of its tables' hashes
}

type layerBucket struct {
	dropped bool   // the bucket was dropped: the layers below and the file do not count
	keys    *table // its keys and values (a nil value: deleted)
	seq     uint64
	hasSeq  bool
}

// entryOverhead approximates what one key costs a layer beyond its bytes
// (map entry, string and slice headers), and is what each change counts
// beyond its key and value (a sequence or a dropped bucket has neither);
// bucketOverhead what one bucket does beyond its name (its entry, struct
// and empty map): a layer of many buckets with few keys each (or dropped
// ones) is bounded as one of many keys.
const (
	entryOverhead  = 64
	bucketOverhead = 160
)

func newLayer() *layer { return &layer{buckets: map[string]*layerBucket{}, seed: maphash.MakeSeed()} }

// next returns a new empty layer to follow l: a bucket it writes is made
// with room for as many keys as l's held (a crawl writes at a steady pace,
// so its maps are not grown again from nothing after every checkpoint).
func (l *layer) next() *layer {
	n := newLayer()
	n.room = make(map[string]int, len(l.buckets))
	for name, b := range l.buckets {
		n.room[name] = b.keys.len()
	}
	return n
}

func (l *layer) bucket(name string) *layerBucket {
	b := l.buckets[name]
	if b == nil {
		b = &layerBucket{keys: newTable(&l.arena, l.seed, l.room[name])}
		l.buckets[name] = b
		l.bytes += len(name) + bucketOverhead
	}
	return b
}

// get reports the value of key in bucket as the layer decides it: decided
// false means the layers below (and the file) decide.
func (l *layer) get(bucket, key string) (val []byte, decided bool) {
	b := l.buckets[bucket]
	if b == nil {
		return nil, false
	}
	if v, ok := b.keys.get(key); ok {
		return v, true
	}
	return nil, b.dropped
}

// sequence is get for a bucket's sequence.
func (l *layer) sequence(bucket string) (seq uint64, decided bool) {
	b := l.buckets[bucket]
	if b == nil {
		return 0, false
	}
	if b.hasSeq {
		return b.seq, true
	}
	return 0, b.dropped
}

// apply makes c part of the layer. Every change counts in l.bytes, a
// rewrite of a key or a dropped bucket's keys too: l.bytes is then what the
// log took since the layer started (so the checkpoint threshold bounds the
// log's files, however often the same keys are written) and an upper
// bound of what the layer's maps hold.
func (l *layer) apply(c change) {
	b := l.bucket(c.bucket)
	l.bytes += len(c.key) + len(c.val) + entryOverhead
	switch c.kind {
	case opPut, opDelete:
		v := c.val
		if c.kind == opPut && v == nil {
			v = []byte{}
		}
		b.keys.set(c.key, v)
	case opSequence:
		b.seq, b.hasSeq = c.seq, true
	case opDropBucket:
		b.keys.clear()
		b.dropped, b.seq, b.hasSeq = true, 0, false
	}
}

// applyTo writes the layer into tx, each bucket's keys in key order (bbolt
// inserts in place: keys in order cost it least).
func (l *layer) applyTo(tx *bbolt.Tx) error {
	for _, name := range slices.Sorted(maps.Keys(l.buckets)) {
		b := l.buckets[name]
		if b.dropped && tx.Bucket([]byte(name)) != nil {
			if err := tx.DeleteBucket([]byte(name)); err != nil {
				return err
			}
		}
		if b.keys.len() == 0 && !b.hasSeq {
			continue
		}
		bk, err := tx.CreateBucketIfNotExists([]byte(name))
		if err != nil {
			return err
		}
		refs := b.keys.refs()
		slices.SortFunc(refs, l.arena.compare)
		for _, r := range refs {
			// The arena's bytes stay as they are until the layer goes,
			// after the transaction: bbolt may keep them until it commits.
			key, val := l.arena.entry(r)
			if val == nil {
				err = bk.Delete(key)
			} else {
				err = bk.Put(key, val)
			}
			if err != nil {
				return err
			}
		}
		if b.hasSeq {
			if err := bk.SetSequence(b.seq); err != nil {
				return err
			}
		}
	}
	return nil
}

// merged returns the entries of bucket that the layers (top first) decide,
// and whether they decide the whole bucket (a layer dropped it).
func merged(bucket string, layers ...*layer) (map[string][]byte, bool) {
	out := map[string][]byte{}
	for _, l := range layers {
		if l == nil {
			continue
		}
		b := l.buckets[bucket]
		if b == nil {
			continue
		}
		for _, r := range b.keys.refs() {
			k, v := l.arena.entry(r)
			if _, ok := out[string(k)]; !ok {
				out[string(k)] = v
			}
		}
		if b.dropped {
			return out, true
		}
	}
	return out, false
}
