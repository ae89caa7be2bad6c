package boltstate

import (
	"log/slog"

	"go.etcd.io/bbolt"
)

// SetAfterRead makes g's Add run f between its read of the file and its
// claim (nil: nothing).
func SetAfterRead(g *Stage, f func()) { g.afterRead = f }

// LogSyncs is the number of syncs of st's log so far.
func LogSyncs(st *State) uint64 {
	st.w.mu.Lock()
	defer st.w.mu.Unlock()
	return st.w.syncs
}

// Abandon leaves st's files as a process killed now would: nothing is
// applied or emptied (every acknowledged write is in the log already).
func Abandon(st *State) {
	st.mu.Lock()
	st.closed = true
	for st.checkpointing {
		st.cond.Wait()
	}
	st.mu.Unlock()
	st.bg.Wait()
	st.w.close()
	closeLogFiles(st.logs)
	st.DB.Close()
}

// SetCheckpointHook makes st's checkpoints call f with "start" before they
// freeze anything, with "frozen" once they froze the writes they apply
// (nothing applied yet), and with "applied" once their transaction
// committed, before they empty the log file.
func SetCheckpointHook(st *State, f func(stage string)) { st.checkpointHook = f }

// BreakLog makes the next write of st's log fail, as a disk error would.
func BreakLog(st *State) {
	st.w.mu.Lock()
	defer st.w.mu.Unlock()
	st.w.active.f.Close()
}

// LayerBytes is what st's layers hold (active, frozen).
func LayerBytes(st *State) (int, int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	f := 0
	if st.frozen != nil {
		f = st.frozen.bytes
	}
	return st.active.bytes, f
}

// BucketOverhead is bucketOverhead, for the tests.
const BucketOverhead = bucketOverhead

// LayerBuckets is how many buckets st's layers hold (active and frozen).
func LayerBuckets(st *State) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := len(st.active.buckets)
	if st.frozen != nil {
		n += len(st.frozen.buckets)
	}
	return n
}

// Reencode decodes a record's payload and encodes its changes again (a
// whole record: header and payload).
func Reencode(p []byte) ([]byte, error) {
	cs, err := decodeRecord(p)
	if err != nil {
		return nil, err
	}
	return appendRecord(nil, cs), nil
}

// OpenBetweenResets is Open with f run at open between emptying the log's
// older file and its newer.
func OpenBetweenResets(path string, f func()) (*State, error) {
	return Open(path, &Options{betweenResets: f})
}

// SetBeforeSync makes st's log flushes run f between their write and their
// sync.
func SetBeforeSync(st *State, f func()) { st.w.beforeSync = f }

// LogUnsynced is the number of records appended to st's log and not yet
// synced (those of the flush under way included).
func LogUnsynced(st *State) int {
	st.w.mu.Lock()
	defer st.w.mu.Unlock()
	n := st.w.cur.records
	if st.w.inward != nil {
		n += st.w.inward.records
	}
	return n
}

// OpenDBUnchecked is OpenDB without Check before bbolt reads the file: what
// bbolt itself refuses, or faults on, is then met by OpenDB's second line.
func OpenDBUnchecked(path string, logger *slog.Logger) (*bbolt.DB, error) {
	return OpenDB(path, &Options{Logger: logger, unchecked: true})
}

// Checkpointing reports whether a checkpoint of st was started and has not
// ended.
func Checkpointing(st *State) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.checkpointing
}

// Full reports whether st's writers wait for its checkpoint (both layers
// full).
func Full(st *State) bool { return st.full.Load() }

// TxScratch is the capacity of the changes slice st's writes share.
func TxScratch(st *State) int {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	return cap(st.tx.changes)
}
