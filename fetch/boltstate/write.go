package boltstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/internal/bloom"
)

// DefaultCheckpointBytes is the size of the writes the log holds before
// they are applied to the bbolt file in one transaction (a checkpoint),
// when Options.CheckpointBytes is zero. The writes not yet applied are
// kept in memory too, so a State holds at most about twice this much.
const DefaultCheckpointBytes = 16 << 20

// ErrClosed is returned by the writes of a closed [State].
var ErrClosed = errors.New("boltstate: state is closed")

// ErrReadOnly is returned by the writes of a read-only [State].
var ErrReadOnly = errors.New("boltstate: state is read-only")

// ErrWriteTooLarge is returned by [State.Write] (and the writes of the
// stores) for a write whose changes add up to more than one record of the
// log may hold, 256 MiB: nothing is written, and nothing of the state
// changes.
var ErrWriteTooLarge = errors.New("boltstate: write too large for one log record (256 MiB)")

// Tx is one write of a [State] (see [State.Write]): its reads see the state
// with every earlier write applied, and its own changes. Keys must not be
// empty; values returned by Get must not be modified.
type Tx struct {
	s       *State
	changes []change
	applied []func() // see Applied
}

// Applied has f run once the write is accepted: its changes are in the log
// (for [State.Write]) and seen by reads, and the next write has not begun,
// so f runs in the writes' order. f does not run if the write is refused:
// fn returned an error, the changes are too large ([ErrWriteTooLarge]), or
// the log could not take them. It is for what a caller keeps beside the
// state (a cache of counts, say), which must follow the writes the state
// took and no other. f must not write to the state.
func (tx *Tx) Applied(f func()) { tx.applied = append(tx.applied, f) }

// Get returns the value of key in bucket, nil if there is none.
func (tx *Tx) Get(bucket, key string) ([]byte, error) {
	for i := len(tx.changes) - 1; i >= 0; i-- { // the Tx's own changes first, latest first
		c := &tx.changes[i]
		switch {
		case c.bucket != bucket:
		case c.kind == opDropBucket:
			return nil, nil
		case c.key == key && c.kind == opPut:
			return c.val, nil
		case c.key == key && c.kind == opDelete:
			return nil, nil
		}
	}
	return tx.s.get(bucket, key)
}

// Put sets key to value in bucket (created if need be).
func (tx *Tx) Put(bucket, key string, value []byte) error {
	if err := checkKey(bucket, key); err != nil {
		return err
	}
	if len(value) > bbolt.MaxValueSize {
		return fmt.Errorf("boltstate: %s %q: value of %d bytes is too large", bucket, key, len(value))
	}
	tx.add(change{kind: opPut, bucket: bucket, key: key, val: bytes.Clone(value)})
	return nil
}

// Delete removes key from bucket.
func (tx *Tx) Delete(bucket, key string) error {
	if err := checkKey(bucket, key); err != nil {
		return err
	}
	tx.add(change{kind: opDelete, bucket: bucket, key: key})
	return nil
}

// NextSequence returns the next value of bucket's sequence (as bbolt's
// Bucket.NextSequence). Calls in one write cost one change of the log
// however many they are: only the last value is kept.
func (tx *Tx) NextSequence(bucket string) (uint64, error) {
	if bucket == "" {
		return 0, errors.New("boltstate: empty bucket name")
	}
	for i := len(tx.changes) - 1; i >= 0; i-- {
		c := &tx.changes[i]
		switch {
		case c.bucket != bucket:
		case c.kind == opSequence:
			c.seq++ // nothing reads the values in between
			return c.seq, nil
		case c.kind == opDropBucket: // a dropped bucket's sequence is 0
			tx.add(change{kind: opSequence, bucket: bucket, seq: 1})
			return 1, nil
		}
	}
	seq, err := tx.s.sequence(bucket)
	if err != nil {
		return 0, err
	}
	tx.add(change{kind: opSequence, bucket: bucket, seq: seq + 1})
	return seq + 1, nil
}

// DropBucket removes bucket and everything in it.
func (tx *Tx) DropBucket(bucket string) error {
	if bucket == "" {
		return errors.New("boltstate: empty bucket name")
	}
	tx.add(change{kind: opDropBucket, bucket: bucket})
	return nil
}

func (tx *Tx) add(c change) { tx.changes = append(tx.changes, c) }

// reset empties tx for the next write, keeping a small slice for it.
func (tx *Tx) reset() {
	clear(tx.changes)
	tx.changes = tx.changes[:0]
	clear(tx.applied)
	tx.applied = tx.applied[:0]
	if cap(tx.changes) > 256 {
		tx.changes = nil
	}
}

// runApplied runs the functions Applied registered, in their order.
func (tx *Tx) runApplied() {
	for _, f := range tx.applied {
		f()
	}
}

func checkKey(bucket, key string) error {
	switch {
	case bucket == "":
		return errors.New("boltstate: empty bucket name")
	case key == "":
		return fmt.Errorf("boltstate: %s: empty key", bucket)
	case len(key) > bbolt.MaxKeySize:
		return fmt.Errorf("boltstate: %s: key of %d bytes is too long", bucket, len(key))
	}
	return nil
}

// Write runs fn and makes its changes durable: they are appended to the
// log as one record, all or nothing, and Write returns once the record is
// synced to disk (writes made at the same time share one sync). An error
// from fn writes nothing. Writes are serialised: fn must be short and
// must not call Write. The changes are visible to reads at once; they
// reach the bbolt file with the next checkpoint.
//
// A failed log write or sync makes every later write fail (the file's page
// cache can no longer be trusted): the State must be closed and opened
// again, which replays what the log holds.
func (s *State) Write(ctx context.Context, fn func(*Tx) error) error {
	return s.write(ctx, fn, true)
}

// WriteUnlogged is [State.Write] without the log, for what a crash may
// lose: a cache, or a spill its owner empties when it starts again. fn's
// changes are visible to reads at once and reach the bbolt file with the
// next checkpoint, as Write's do, but they are not appended to the log:
// WriteUnlogged never waits for a sync, and a process that dies before
// the next checkpoint loses them (Open replays only the log). Keep such
// keys in buckets of their own: after a crash, a bucket written both ways
// holds its logged writes and only the unlogged ones a checkpoint applied.
func (s *State) WriteUnlogged(ctx context.Context, fn func(*Tx) error) error {
	return s.write(ctx, fn, false)
}

// write is Write, and WriteUnlogged when logged is false.
func (s *State) write(ctx context.Context, fn func(*Tx) error, logged bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.w == nil {
		return ErrReadOnly
	}
	if s.full.Load() {
		s.mu.Lock()
		for s.err == nil && !s.closed && s.full.Load() {
			s.cond.Wait() // both layers full: wait for the checkpoint
		}
		s.mu.Unlock()
	}

	s.wmu.Lock()
	s.mu.Lock()
	err := s.err
	if s.closed {
		err = ErrClosed
	}
	s.mu.Unlock()
	if err != nil {
		s.wmu.Unlock()
		return err
	}
	tx := &s.tx // writes take turns: one Tx serves them all, reset before wmu is let go
	tx.s = s
	if err := fn(tx); err != nil || len(tx.changes) == 0 {
		if err == nil {
			tx.runApplied() // nothing to write: accepted as it is
		}
		tx.reset()
		s.wmu.Unlock()
		return err
	}
	var batch *logBatch
	if logged && recordSize(tx.changes) > maxRecordSize {
		tx.reset()
		s.wmu.Unlock()
		return ErrWriteTooLarge
	}
	if logged {
		var err error
		if batch, err = s.w.append(tx.changes); err != nil {
			tx.reset()
			s.wmu.Unlock()
			return err
		}
	}
	s.mu.Lock()
	for _, c := range tx.changes {
		s.active.apply(c)
		if f := s.filters[c.bucket]; f != nil {
			switch c.kind {
			case opPut:
				f.Add(c.key)
			case opDropBucket:
				s.filters[c.bucket] = bloom.New(filterRoom)
			}
		}
	}
	start := s.active.bytes >= s.limit && !s.checkpointing && s.err == nil && !s.closed
	if start {
		s.checkpointing = true
	} else if s.checkpointing && s.active.bytes >= s.limit {
		s.full.Store(true)
	}
	s.mu.Unlock()
	tx.runApplied()
	tx.reset()
	s.wmu.Unlock()
	if start {
		s.bg.Go(func() { s.checkpoint() })
	}
	if !logged {
		return nil
	}
	return s.w.wait(batch)
}

// Get returns the value of key in bucket as the state holds it (the log's
// writes included), nil if there is none. The value must not be modified.
func (s *State) Get(ctx context.Context, bucket, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.get(bucket, key)
}

// get returns the value of key in bucket: nil if the bucket's filter
// never saw it, else from the layers, else from the file.
func (s *State) get(bucket, key string) ([]byte, error) {
	s.mu.Lock()
	if f := s.filters[bucket]; f != nil && !f.MayContain(key) {
		s.mu.Unlock()
		return nil, nil // not in the bucket, layers or file, as its filter knows
	}
	v, ok := s.active.get(bucket, key)
	if !ok && s.frozen != nil {
		v, ok = s.frozen.get(bucket, key)
	}
	s.mu.Unlock()
	if ok {
		return v, nil
	}
	err := view(s.DB, func(tx *bbolt.Tx) error {
		if b := tx.Bucket([]byte(bucket)); b != nil {
			v = bytes.Clone(b.Get([]byte(key)))
		}
		return nil
	})
	return v, err
}

// sequence is get for bucket's sequence.
func (s *State) sequence(bucket string) (uint64, error) {
	s.mu.Lock()
	seq, ok := s.active.sequence(bucket)
	if !ok && s.frozen != nil {
		seq, ok = s.frozen.sequence(bucket)
	}
	s.mu.Unlock()
	if ok {
		return seq, nil
	}
	err := view(s.DB, func(tx *bbolt.Tx) error {
		if b := tx.Bucket([]byte(bucket)); b != nil {
			seq = b.Sequence()
		}
		return nil
	})
	return seq, err
}

// ForEach calls fn for each key of bucket and its value, in key order, as
// the state holds them (the log's writes included). fn must not write to
// the State, nor keep k or v.
func (s *State) ForEach(ctx context.Context, bucket string, fn func(k, v []byte) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	over, whole := merged(bucket, s.active, s.frozen)
	s.mu.Unlock()
	keys := slices.Sorted(maps.Keys(over))
	return view(s.DB, func(tx *bbolt.Tx) error {
		i := 0
		// emit gives fn the layers' keys before k (all of them for nil).
		emit := func(k []byte) error {
			for ; i < len(keys) && (k == nil || keys[i] < string(k)); i++ {
				if v := over[keys[i]]; v != nil {
					if err := fn([]byte(keys[i]), v); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if b := tx.Bucket([]byte(bucket)); b != nil && !whole {
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if v == nil {
					continue // a nested bucket
				}
				if err := emit(k); err != nil {
					return err
				}
				if i < len(keys) && keys[i] == string(k) {
					i++ // the layers decide this key
					if lv := over[string(k)]; lv != nil {
						if err := fn(k, lv); err != nil {
							return err
						}
					}
					continue
				}
				if err := fn(k, v); err != nil {
					return err
				}
			}
		}
		return emit(nil)
	})
}

// Checkpoint applies every write of the log to the bbolt file now (it
// also happens on its own, each time the log holds
// Options.CheckpointBytes, and at Close). It returns once they are
// committed there.
func (s *State) Checkpoint(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.w == nil {
		return ErrReadOnly
	}
	s.mu.Lock()
	for s.checkpointing {
		s.cond.Wait()
	}
	if s.err != nil || s.closed {
		err := s.err
		if err == nil {
			err = ErrClosed
		}
		s.mu.Unlock()
		return err
	}
	s.checkpointing = true
	s.mu.Unlock()
	return s.checkpoint()
}

// checkpoint freezes the active layer, switching the log to its other file,
// applies the frozen layer to the bbolt file in one transaction, then
// empties the file that held it. The caller set s.checkpointing.
func (s *State) checkpoint() error {
	if s.checkpointHook != nil {
		s.checkpointHook("start")
	}
	s.wmu.Lock()
	old, next := s.logs[0], s.logs[1]
	if s.w.active == next {
		old, next = next, old
	}
	err := next.reset(old.gen + 1)
	if err == nil {
		err = s.w.switchTo(next)
	}
	var frozen *layer
	if err == nil {
		s.mu.Lock()
		frozen, s.frozen, s.active = s.active, s.active, s.active.next()
		// The writes that found the active layer full wait no longer: the
		// new one has room. They wait for this checkpoint only if it fills
		// too before the checkpoint ends.
		s.full.Store(false)
		s.cond.Broadcast()
		s.mu.Unlock()
	}
	s.wmu.Unlock()
	if err == nil && s.checkpointHook != nil {
		s.checkpointHook("frozen")
	}
	if err == nil {
		err = update(s.DB, frozen.applyTo)
	}
	if err == nil && s.checkpointHook != nil {
		s.checkpointHook("applied")
	}
	if err == nil {
		err = old.reset(old.gen)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("boltstate: checkpoint: %w", err)
		if s.err == nil {
			s.err = err
		}
		s.w.fail(err)
		s.log.Error("the state's log could not be applied to its file; writes stop, the log is kept for the next open", "file", s.DB.Path(), "err", err)
	} else {
		s.frozen = nil
	}
	s.checkpointing = false
	s.full.Store(false)
	s.cond.Broadcast()
	return err
}

// update is db.Update with a panic inside bbolt returned as an error.
func update(db *bbolt.DB, fn func(*bbolt.Tx) error) (err error) {
	defer recoverInto(&err)
	return db.Update(fn)
}
