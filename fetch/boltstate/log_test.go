package boltstate_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/boltstate"
)

// model is what a State must hold after a sequence of writes: the keys of
// each bucket and each bucket's sequence.
type model struct {
	keys map[string]map[string]string
	seqs map[string]uint64
}

func newModel() *model {
	return &model{keys: map[string]map[string]string{}, seqs: map[string]uint64{}}
}

func (m *model) put(b, k, v string) {
	if m.keys[b] == nil {
		m.keys[b] = map[string]string{}
	}
	m.keys[b][k] = v
}

// logStep is one step of a run against the model.
type logStep struct {
	op     byte // 'p' put, 'd' delete, 'n' next sequence, 'x' drop bucket, 'g' a put and a delete in one write, 's' one write reading its own changes, 'u' and 'v' an unlogged put and delete (in bucket unloggedBucket),
	bucket string
	key    string // 'c' checkpoint, 'r' close and open (read-only first), 'k' killed and opened again
	val    string
}

var modelBuckets = []string{"a", "b"}

// unloggedBucket is the model's bucket of unlogged writes: exact while the
// State lives and after a clean reopen; after a kill, each key it keeps
// holds a value once written to it (the checkpoints decide which).
const unloggedBucket = "u"

// stepsFrom turns bytes (a fuzzer's input) into steps, three bytes a step.
func stepsFrom(data []byte) []logStep {
	const ops = "ppppddnxgscrkuuv"
	var steps []logStep
	for i := 0; i+2 < len(data) && len(steps) < 200; i += 3 {
		steps = append(steps, logStep{op: ops[int(data[i])%len(ops)], bucket: modelBuckets[data[i+1]%2],
			key: fmt.Sprintf("k%d", data[i+2]%8), val: fmt.Sprintf("v%d-%s", i, strings.Repeat("x", int(data[i+1])%40))})
	}
	return steps
}

// runModel applies steps to a State (checkpointing on its own every few
// hundred bytes) and to the model, and checks after each step that the
// State reads as the model: every key with Tx.Get, every bucket with
// ForEach, through checkpoints, clean reopens, read-only opens and kills.
func runModel(t *testing.T, steps []logStep) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	quiet := slog.New(slog.DiscardHandler)
	opts := &boltstate.Options{CheckpointBytes: 300, Logger: quiet}
	open := func(o *boltstate.Options) *boltstate.State {
		st, err := boltstate.Open(path, o)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open(opts)
	defer func() { st.Close() }()
	m := newModel()
	ctx := context.Background()
	write := func(fn func(tx *boltstate.Tx) error) {
		t.Helper()
		if err := st.Write(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	written := map[string]map[string]bool{} // every value each unlogged key was given
	unlogged := func(fn func(tx *boltstate.Tx) error) {
		t.Helper()
		if err := st.WriteUnlogged(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range steps {
		switch s.op {
		case 'u':
			unlogged(func(tx *boltstate.Tx) error { return tx.Put(unloggedBucket, s.key, []byte(s.val)) })
			m.put(unloggedBucket, s.key, s.val)
			if written[s.key] == nil {
				written[s.key] = map[string]bool{}
			}
			written[s.key][s.val] = true
		case 'v':
			unlogged(func(tx *boltstate.Tx) error { return tx.Delete(unloggedBucket, s.key) })
			delete(m.keys[unloggedBucket], s.key)
		case 'p':
			write(func(tx *boltstate.Tx) error { return tx.Put(s.bucket, s.key, []byte(s.val)) })
			m.put(s.bucket, s.key, s.val)
		case 'd':
			write(func(tx *boltstate.Tx) error { return tx.Delete(s.bucket, s.key) })
			delete(m.keys[s.bucket], s.key)
		case 'g':
			other := s.key + "g"
			write(func(tx *boltstate.Tx) error {
				if err := tx.Put(s.bucket, other, []byte(s.val)); err != nil {
					return err
				}
				return tx.Delete(s.bucket, s.key)
			})
			m.put(s.bucket, other, s.val)
			delete(m.keys[s.bucket], s.key)
		case 's':
			// One write that reads what it wrote: Get after Put, Delete
			// and DropBucket, NextSequence twice and after a drop.
			err := st.Write(ctx, func(tx *boltstate.Tx) error {
				check := func(what string, got []byte, want string, present bool) error {
					if (got != nil) != present || string(got) != want {
						return fmt.Errorf("%s: Get = %q (present %v), want %q (present %v)", what, got, got != nil, want, present)
					}
					return nil
				}
				n1, err := tx.NextSequence(s.bucket)
				if err != nil {
					return err
				}
				if n2, _ := tx.NextSequence(s.bucket); n2 != n1+1 || n1 != m.seqs[s.bucket]+1 {
					return fmt.Errorf("NextSequence twice = %d, %d; want %d, %d", n1, n2, m.seqs[s.bucket]+1, m.seqs[s.bucket]+2)
				}
				tx.Put(s.bucket, s.key, []byte(s.val))
				v, _ := tx.Get(s.bucket, s.key)
				if err := check("after Put", v, s.val, true); err != nil {
					return err
				}
				tx.Delete(s.bucket, s.key)
				v, _ = tx.Get(s.bucket, s.key)
				if err := check("after Delete", v, "", false); err != nil {
					return err
				}
				other := s.key + "g"
				tx.Put(s.bucket, other, []byte("before the drop"))
				tx.DropBucket(s.bucket)
				v, _ = tx.Get(s.bucket, other)
				if err := check("after DropBucket", v, "", false); err != nil {
					return err
				}
				if n, _ := tx.NextSequence(s.bucket); n != 1 {
					return fmt.Errorf("NextSequence after DropBucket = %d, want 1", n)
				}
				tx.Put(s.bucket, s.key, []byte(s.val))
				return nil
			})
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			delete(m.keys, s.bucket)
			m.put(s.bucket, s.key, s.val)
			m.seqs[s.bucket] = 1
		case 'n':
			var got uint64
			write(func(tx *boltstate.Tx) error {
				var err error
				got, err = tx.NextSequence(s.bucket)
				return err
			})
			m.seqs[s.bucket]++
			if got != m.seqs[s.bucket] {
				t.Fatalf("step %d (%q): NextSequence(%s) = %d, want %d", i, s.op, s.bucket, got, m.seqs[s.bucket])
			}
		case 'x':
			write(func(tx *boltstate.Tx) error { return tx.DropBucket(s.bucket) })
			delete(m.keys, s.bucket)
			delete(m.seqs, s.bucket)
		case 'c':
			if err := st.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
		case 'r':
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			for _, suffix := range boltstate.LogSuffixes {
				if _, err := os.Stat(path + suffix); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("step %d: log file %s left after Close (%v)", i, suffix, err)
				}
			}
			ro := open(&boltstate.Options{ReadOnly: true, Logger: quiet})
			checkModel(t, ro, m, fmt.Sprintf("step %d, read-only after Close", i))
			ro.Close()
			st = open(opts)
		case 'k':
			boltstate.Abandon(st)
			ro := open(&boltstate.Options{ReadOnly: true, Logger: quiet})
			kept := map[string]string{}
			if err := ro.ForEach(ctx, unloggedBucket, func(k, v []byte) error { kept[string(k)] = string(v); return nil }); err != nil {
				t.Fatal(err)
			}
			for k, v := range kept {
				if !written[k][v] {
					t.Fatalf("step %d, after a kill: unlogged %s = %q, a value never written to it", i, k, v)
				}
			}
			m.keys[unloggedBucket] = kept // what the checkpoints took to the file
			checkModel(t, ro, m, fmt.Sprintf("step %d, read-only after a kill", i))
			ro.Close()
			st = open(opts)
		}
		checkModel(t, st, m, fmt.Sprintf("step %d (%q %s %s)", i, s.op, s.bucket, s.key))
	}
}

// checkModel fails unless st reads as m.
func checkModel(t *testing.T, st *boltstate.State, m *model, where string) {
	t.Helper()
	ctx := context.Background()
	for _, b := range append(slices.Clone(modelBuckets), unloggedBucket) {
		got := map[string]string{}
		var order []string
		err := st.ForEach(ctx, b, func(k, v []byte) error {
			got[string(k)] = string(v)
			order = append(order, string(k))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: ForEach(%s): %v", where, b, err)
		}
		want := m.keys[b]
		if !maps.Equal(got, want) && (len(got) != 0 || len(want) != 0) {
			t.Fatalf("%s: bucket %s holds %v, want %v", where, b, got, want)
		}
		if !slices.IsSorted(order) {
			t.Fatalf("%s: ForEach(%s) not in key order: %v", where, b, order)
		}
		if st.DB.IsReadOnly() {
			continue
		}
		err = st.Write(ctx, func(tx *boltstate.Tx) error {
			for k := range 8 {
				for _, key := range []string{fmt.Sprintf("k%d", k), fmt.Sprintf("k%dg", k)} {
					v, err := tx.Get(b, key)
					if err != nil {
						return err
					}
					w, ok := want[key]
					if (v != nil) != ok || string(v) != w {
						return fmt.Errorf("Get(%s, %s) = %q (present %v), want %q (present %v)", b, key, v, v != nil, w, ok)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
	}
}

// A State reads as a plain map of buckets would, whatever mix of writes,
// checkpoints (asked for and on its own), clean reopens and kills came
// before: 200 random runs of 60 steps.
func TestState_ReadsAsTheModel(t *testing.T) {
	for seed := range 200 {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		data := make([]byte, 180)
		for i := range data {
			data[i] = byte(r.IntN(256))
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runModel(t, stepsFrom(data)) })
	}
}

func FuzzStateAgainstModel(f *testing.F) {
	f.Add([]byte{0, 0, 1, 4, 0, 1, 9, 0, 0, 10, 1, 1, 11, 0, 0})
	f.Add([]byte{6, 0, 0, 6, 0, 0, 7, 0, 0, 6, 0, 0, 11, 1, 1, 6, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) { runModel(t, stepsFrom(data)) })
}

// FuzzDecodeRecord: no payload makes the decoder panic, and the changes
// of a payload it accepts, encoded again, decode to the same encoding.
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte{1, 1, 'a', 1, 'k', 1, 'v'})
	f.Add([]byte{3, 1, 'a', 0x80, 0x01})
	f.Add([]byte{4, 1, 'b', 2, 1, 'b', 1, 'k'})
	f.Fuzz(func(t *testing.T, p []byte) {
		rec, err := boltstate.Reencode(p)
		if err != nil {
			return
		}
		again, err := boltstate.Reencode(rec[12:])
		if err != nil || !bytes.Equal(again, rec) {
			t.Fatalf("payload %x: encoded as %x, which decodes and encodes as %x (%v)", p, rec, again, err)
		}
	})
}

// A record's payload decodes only whole: every change names a bucket, a
// put or delete names a key, each length fits what follows, and a put
// holds a value (which may be empty). Change kinds: 1 put, 2 delete,
// 3 sequence, 4 drop bucket; strings are a uvarint length and the bytes.
func TestDecodeRecord_Table(t *testing.T) {
	for _, c := range []struct {
		name    string
		payload []byte
		ok      bool
	}{
		{"put", []byte{1, 1, 'a', 1, 'k', 1, 'v'}, true},
		{"put of an empty value", []byte{1, 1, 'a', 1, 'k', 0}, true},
		{"delete", []byte{2, 1, 'a', 1, 'k'}, true},
		{"sequence", []byte{3, 1, 'a', 0x80, 0x01}, true},
		{"drop, its name the whole rest", []byte{4, 3, 'a', 'b', 'c'}, true},
		{"two changes", []byte{4, 1, 'b', 2, 1, 'b', 1, 'k'}, true},
		{"empty bucket name", []byte{1, 0, 1, 'k', 1, 'v'}, false},
		{"empty key of a put", []byte{1, 1, 'a', 0, 1, 'v'}, false},
		{"empty key of a delete", []byte{2, 1, 'a', 0}, false},
		{"put without a value", []byte{1, 1, 'a', 1, 'k'}, false},
		{"delete without a key", []byte{2, 1, 'a'}, false},
		{"bucket name past the end", []byte{4, 4, 'a', 'b', 'c'}, false},
		{"value past the end", []byte{1, 1, 'a', 1, 'k', 2, 'v'}, false},
		{"length cut short", []byte{1, 1, 'a', 1, 'k', 0x80}, false},
		{"length of eleven bytes", []byte{4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, false},
		{"sequence cut short", []byte{3, 1, 'a', 0x80}, false},
		{"sequence missing", []byte{3, 1, 'a'}, false},
		{"unknown kind", []byte{5, 1, 'a'}, false},
	} {
		_, err := boltstate.Reencode(c.payload)
		if (err == nil) != c.ok {
			t.Errorf("%s (% x): decode error %v, want ok=%v", c.name, c.payload, err, c.ok)
		}
	}
}

// A record's length is bounded (256 MiB) and not zero: a log that ends in
// the header of a record of that length is a write cut short (the records
// before it are replayed, nothing is damage); one byte longer, or zero, is
// a damaged length. A LogError matches ErrCorrupt and says where the
// damage is.
func TestLog_RecordLengthBounded(t *testing.T) {
	const max = 1 << 28
	for _, c := range []struct {
		size    uint32
		damaged bool
	}{{0, true}, {max, false}, {max + 1, true}} {
		path, log := writeKeys(t, 3)
		hdr := binary.LittleEndian.AppendUint32(nil, c.size)
		hdr = binary.LittleEndian.AppendUint32(hdr, crc32.Checksum(hdr, crc32.MakeTable(crc32.Castagnoli)))
		hdr = binary.LittleEndian.AppendUint32(hdr, 0) // the payload's checksum; no payload follows
		f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(hdr)
		f.Close()
		var logs bytes.Buffer
		st, err := boltstate.Open(path, &boltstate.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		st.ForEach(context.Background(), "b", func(k, v []byte) error { n++; return nil })
		st.Close()
		if n != 3 {
			t.Errorf("length %d: %d of the 3 records before it replayed", c.size, n)
		}
		if got := strings.Contains(logs.String(), "damaged"); got != c.damaged {
			t.Errorf("length %d: damage reported %v, want %v:\n%s", c.size, got, c.damaged, logs.String())
		}
		if c.damaged && !strings.Contains(logs.String(), fmt.Sprintf("record length %d", c.size)) {
			t.Errorf("length %d: the warning does not name the length:\n%s", c.size, logs.String())
		}
	}
	e := &boltstate.LogError{Path: "s.db-wal.a", Offset: 27, Reason: "checksum mismatch"}
	if !errors.Is(e, boltstate.ErrCorrupt) || errors.Is(e, boltstate.ErrClosed) {
		t.Errorf("LogError matches ErrCorrupt %v (want true), ErrClosed %v (want false)", errors.Is(e, boltstate.ErrCorrupt), errors.Is(e, boltstate.ErrClosed))
	}
	if got, want := e.Error(), "boltstate: log s.db-wal.a is damaged at byte 27: checksum mismatch"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// writeKeys writes n records (one put each, of key00i) to a fresh state,
// abandons it as a kill would, and returns the path and the log file.
func writeKeys(t *testing.T, n int) (path, log string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "state.db")
	st, err := boltstate.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		err := st.Write(context.Background(), func(tx *boltstate.Tx) error {
			return tx.Put("b", fmt.Sprintf("key%03d", i), []byte(fmt.Sprintf("value %d", i)))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	boltstate.Abandon(st)
	return path, path + boltstate.LogSuffixes[0]
}

// killedLog is a state killed after n writes (writeKeys), as bytes: its
// bbolt file, its log, and the offset just past each record of the log.
type killedLog struct {
	db, log []byte
	ends    []int
}

func newKilledLog(t *testing.T, n int) killedLog {
	t.Helper()
	path, log := writeKeys(t, n)
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k := killedLog{db: db, log: data, ends: recordEnds(t, data)}
	if len(k.ends) != n {
		t.Fatalf("the log holds %d records, want %d", len(k.ends), n)
	}
	return k
}

// replay opens a copy of the state with log as its log, and returns the
// copy's path, keysIn's answer and what the open logged.
func (k killedLog) replay(t *testing.T, log []byte) (path string, prefix int, holes bool, logs string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "state.db")
	os.WriteFile(path, k.db, 0o600)
	os.WriteFile(path+boltstate.LogSuffixes[0], log, 0o600)
	var b bytes.Buffer
	prefix, holes = keysIn(t, path, &b)
	return path, prefix, holes, b.String()
}

// keysIn returns how many of key000, key001, ... a state at path holds in
// a row, and whether it holds any key after the gap.
func keysIn(t *testing.T, path string, logs *bytes.Buffer) (prefix int, holes bool) {
	t.Helper()
	st, err := boltstate.Open(path, &boltstate.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got := map[string]bool{}
	st.ForEach(context.Background(), "b", func(k, _ []byte) error { got[string(k)] = true; return nil })
	for got[fmt.Sprintf("key%03d", prefix)] {
		prefix++
	}
	return prefix, len(got) != prefix
}

// A log cut at any byte (a write cut by a crash, a full disk) replays
// every whole record before the cut and nothing else, without an error and
// without taking the file for a damaged one.
func TestLog_CutAtEveryByte(t *testing.T) {
	k := newKilledLog(t, 12)
	for cut := range len(k.log) + 1 {
		p, prefix, holes, logs := k.replay(t, k.log[:cut])
		want := 0
		for _, e := range k.ends {
			if e <= cut {
				want++
			}
		}
		if prefix != want || holes {
			t.Fatalf("log cut at byte %d of %d: %d records replayed in a row (holes %v), want %d", cut, len(k.log), prefix, holes, want)
		}
		if kept, _ := filepath.Glob(p + "-wal.*.corrupt-*"); len(kept) > 0 || strings.Contains(logs, "damaged") {
			t.Fatalf("log cut at byte %d taken for damage: %v\n%s", cut, kept, logs)
		}
	}
}

// recordEnds returns the offset just past each record of a log file.
func recordEnds(t *testing.T, data []byte) []int {
	t.Helper()
	const header = 15 + 8 + 4
	var ends []int
	for off := header; off+12 <= len(data); {
		off += 12 + int(binary.LittleEndian.Uint32(data[off:]))
		ends = append(ends, off)
	}
	return ends
}

// A flipped byte anywhere in a log is found (header and record checksums):
// the records before the damaged one are replayed, none after it, the log
// is copied aside and a warning names the copy; never a crash, never a
// record applied with a byte changed.
func TestLog_FlippedByteAnywhere(t *testing.T) {
	k := newKilledLog(t, 6)
	for off := range len(k.log) {
		bad := bytes.Clone(k.log)
		bad[off] ^= 0x20
		p, prefix, holes, logs := k.replay(t, bad)
		before := 0 // records wholly before the flipped byte
		for _, e := range k.ends {
			if e <= off {
				before++
			} else {
				break
			}
		}
		kept, _ := filepath.Glob(p + "-wal.a.corrupt-*")
		if prefix != before || holes {
			t.Fatalf("byte %d flipped: %d records replayed in a row (holes %v), want %d", off, prefix, holes, before)
		}
		if len(kept) == 1 {
			if !strings.Contains(logs, kept[0]) {
				t.Fatalf("byte %d flipped: the warning does not name the copy %s:\n%s", off, kept[0], logs)
			}
			if saved, _ := os.ReadFile(kept[0]); !bytes.Equal(saved, bad) {
				t.Fatalf("byte %d flipped: the copy kept aside differs from the damaged log", off)
			}
		} else {
			t.Fatalf("byte %d flipped: no copy kept aside:\n%s", off, logs)
		}
	}
}

// bothFiles returns the files of a State killed between a checkpoint's
// transaction and its emptying the older log file, with a write in each
// file: key k of bucket b set to "first" in the older (and applied to the
// bbolt file), then to "second" in the newer.
func bothFiles(t *testing.T) (snap string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	snap = filepath.Join(t.TempDir(), "snap.db")
	st, err := boltstate.Open(path, &boltstate.Options{CheckpointBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	put := func(v string) {
		if err := st.Write(ctx, func(tx *boltstate.Tx) error { return tx.Put("b", "k", []byte(v)) }); err != nil {
			t.Fatal(err)
		}
	}
	put("first")
	// The disk as a kill after the checkpoint's transaction would leave it
	// (the newer file cannot take a write then: the checkpoint holds it;
	// the write made next is appended to the copy below).
	snapshotAt(t, st, "applied", path, snap)
	if err := st.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	put("second")
	newer, _ := os.ReadFile(path + boltstate.LogSuffixes[1])
	snapNewer, _ := os.ReadFile(snap + boltstate.LogSuffixes[1])
	os.WriteFile(snap+boltstate.LogSuffixes[1], append(snapNewer, newer[len(snapNewer):]...), 0o600)
	st.Close()
	older, _ := os.ReadFile(snap + boltstate.LogSuffixes[0])
	if len(recordEnds(t, older)) != 1 || len(recordEnds(t, newer)) != 1 {
		t.Fatalf("the snapshot's files hold %d and %d records, want one each", len(recordEnds(t, older)), len(recordEnds(t, newer)))
	}
	return snap
}

// snapshotAt copies the state at path, its file and log files, to snap the
// first time a checkpoint of st reaches stage (Close checkpoints too).
func snapshotAt(t *testing.T, st *boltstate.State, stage, path, snap string) {
	var once sync.Once
	boltstate.SetCheckpointHook(st, func(at string) {
		if at == stage {
			once.Do(func() { copyState(t, path, snap) })
		}
	})
}

// copyState copies the state file at from and its log files to to.
func copyState(t *testing.T, from, to string) {
	for _, s := range append([]string{""}, boltstate.LogSuffixes[:]...) {
		b, err := os.ReadFile(from + s)
		if err != nil {
			t.Error(err)
		}
		os.WriteFile(to+s, b, 0o600)
	}
}

// valueOfK opens the state at path and returns b/k, with what it logged.
func valueOfK(t *testing.T, path string) (string, string) {
	t.Helper()
	var logs bytes.Buffer
	st, err := boltstate.Open(path, &boltstate.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var got []byte
	st.Write(context.Background(), func(tx *boltstate.Tx) error { got, err = tx.Get("b", "k"); return err })
	return string(got), logs.String()
}

// Killed between a checkpoint's transaction and its emptying the older log
// file, a State leaves records in both files: the next open replays both,
// older first, so a key written in each reads as the later write.
func TestLog_BothFilesReplayedInOrder(t *testing.T) {
	if got, _ := valueOfK(t, bothFiles(t)); got != "second" {
		t.Errorf("after replaying both files k = %q, want %q (the newer file's write)", got, "second")
	}
}

// Killed while it empties the two files of a replayed log, a State leaves
// the older emptied and the newer whole (never the other way): the next
// open still reads the newer file's write.
func TestLog_KilledBetweenEmptyingTheFiles(t *testing.T) {
	snap := bothFiles(t)
	again := filepath.Join(t.TempDir(), "again.db")
	st, err := boltstate.OpenBetweenResets(snap, func() { copyState(t, snap, again) })
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if got, _ := valueOfK(t, again); got != "second" {
		t.Errorf("k = %q after a kill between the two files' emptying, want %q", got, "second")
	}
}

// Only the file written last can end in a record cut short (the older was
// synced whole before the newer took a write): an older file cut short is
// damage wherever the cut falls (inside its record's payload, inside its
// header, or just after the header, with no byte of the payload), however
// much of a long record's payload it keeps (as many bytes as the record's
// header or more too); the replay stops there (the newer file's write is
// not applied), both files are kept aside and a warning says so.
func TestLog_OlderFileCutShortIsDamage(t *testing.T) {
	const logHeader = 15 + 8 + 4
	type cutCase struct {
		name string
		cut  func(data []byte) []byte // the older file's bytes, as cut
	}
	cases := []cutCase{
		{"inside the record's payload", func(d []byte) []byte { return d[:len(d)-3] }},
		{"inside the record's header", func(d []byte) []byte { return d[:logHeader+5] }},
		{"just after the record's header", func(d []byte) []byte { return d[:logHeader+12] }},
	}
	long := putRecord("b", "k", strings.Repeat("a long value ", 4))
	for _, payload := range []int{1, 11, 12, 13, 30, len(long) - 12 - 1} {
		cases = append(cases, cutCase{fmt.Sprintf("a long record with %d bytes of its payload", payload),
			func(d []byte) []byte { return append(d[:logHeader:logHeader], long[:12+payload]...) }})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap := bothFiles(t)
			older := snap + boltstate.LogSuffixes[0]
			data, err := os.ReadFile(older)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(older, c.cut(data), 0o600); err != nil {
				t.Fatal(err)
			}
			got, logs := valueOfK(t, snap)
			if got != "first" {
				t.Errorf("k = %q, want %q (the bbolt file's: nothing replayed past the damage)", got, "first")
			}
			for _, suffix := range boltstate.LogSuffixes {
				if kept, _ := filepath.Glob(snap + suffix + ".corrupt-*"); len(kept) != 1 {
					t.Errorf("%s not kept aside: %v", suffix, kept)
				}
			}
			if !strings.Contains(logs, "damaged") {
				t.Errorf("no warning:\n%s", logs)
			}
		})
	}
}

// A checkpoint writes the newer file's header before it waits for the
// batch the flusher is writing to the older file: a kill in between leaves
// the older file cut short in a batch nobody was told was written, and the
// newer holding no record. That is a crash, not damage: the cut batch is
// dropped, what precedes it is replayed, nothing is kept aside.
func TestLog_KilledAsACheckpointSwitchesFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	snap := filepath.Join(t.TempDir(), "snap.db")
	st, err := boltstate.Open(path, &boltstate.Options{CheckpointBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, v := range []string{"first", "second"} {
		if err := st.Write(ctx, func(tx *boltstate.Tx) error { return tx.Put("b", "k", []byte(v)) }); err != nil {
			t.Fatal(err)
		}
	}
	snapshotAt(t, st, "frozen", path, snap) // the newer file reset, nothing applied to the bbolt file
	if err := st.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	older := snap + boltstate.LogSuffixes[0]
	data, _ := os.ReadFile(older)
	ends := recordEnds(t, data)
	newer, _ := os.ReadFile(snap + boltstate.LogSuffixes[1])
	if len(ends) != 2 || len(recordEnds(t, newer)) != 0 {
		t.Fatalf("the snapshot's files hold %d and %d records, want 2 and 0", len(ends), len(recordEnds(t, newer)))
	}
	os.WriteFile(older, data[:ends[1]-5], 0o600) // "second" cut short
	got, logs := valueOfK(t, snap)
	if got != "first" {
		t.Errorf("k = %q, want %q (the older file's whole record)", got, "first")
	}
	if kept, _ := filepath.Glob(snap + "-wal.*.corrupt-*"); len(kept) > 0 || strings.Contains(logs, "damaged") {
		t.Errorf("a crash taken for damage: kept %v, logs:\n%s", kept, logs)
	}
}

// A read-only State replays whichever log files there are: with only the
// newer one (the older's writes are in the bbolt file), it still sees the
// newer file's write.
func TestLog_ReadOnlyWithTheNewerFileOnly(t *testing.T) {
	snap := bothFiles(t)
	if err := os.Remove(snap + boltstate.LogSuffixes[0]); err != nil {
		t.Fatal(err)
	}
	ro, err := boltstate.Open(snap, &boltstate.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	var got []byte
	ro.ForEach(context.Background(), "b", func(k, v []byte) error { got = append([]byte(nil), v...); return nil })
	if string(got) != "second" {
		t.Errorf("read-only k = %q, want %q (the newer file's write)", got, "second")
	}
}

// One State at a time per file: a second one, in this process, is refused
// with ErrLocked instead of sharing the log.
func TestLog_SecondStateRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := boltstate.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := boltstate.New(st.DB); !errors.Is(err, boltstate.ErrLocked) {
		t.Fatalf("second New on one file = %v, want ErrLocked", err)
	}
	if err := st.Write(context.Background(), func(tx *boltstate.Tx) error { return tx.Put("b", "k", nil) }); err != nil {
		t.Errorf("the first State stopped working after the refused second: %v", err)
	}
}

// A file another State holds is refused with ErrLocked once the lock
// timeout has passed: one second by default, else Options.LockTimeout;
// the same for the log's lock, taken by New over an open file.
func TestOpenDB_LockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	held, err := boltstate.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	openDB := func(o *boltstate.Options) func() error {
		return func() error {
			db, err := boltstate.OpenDB(path, o)
			if err == nil {
				db.Close()
			}
			return err
		}
	}
	for _, tt := range []struct {
		name string
		open func() error
		want time.Duration
	}{
		{"OpenDB, nil Options", openDB(nil), time.Second},
		{"OpenDB, zero Options", openDB(&boltstate.Options{}), time.Second},
		{"OpenDB, LockTimeout 3s", openDB(&boltstate.Options{LockTimeout: 3 * time.Second}), 3 * time.Second},
		{"New over the held file's DB", func() error { _, err := boltstate.New(held.DB); return err }, time.Second},
	} {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			err := tt.open()
			waited := time.Since(start)
			if !errors.Is(err, boltstate.ErrLocked) || waited < tt.want || waited > tt.want+100*time.Millisecond {
				t.Errorf("%s: %v after %v, want ErrLocked after %v", tt.name, err, waited, tt.want)
			}
		})
	}
}

// The layers stay bounded: with a 4 KiB checkpoint threshold, 5,000
// writes of 100 bytes never hold more than two thresholds and a write of
// each writer beyond each in memory, the file takes the writes as they go (checkpoints happen), and
// every write reads back.
func TestLog_CheckpointsBoundMemory(t *testing.T) {
	const limit = 4 << 10
	st, err := boltstate.Open(filepath.Join(t.TempDir(), "state.db"), &boltstate.Options{CheckpointBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	txBefore := txID(t, st.DB)
	var wg sync.WaitGroup
	var mu sync.Mutex
	most := 0
	for w := range 8 {
		wg.Go(func() {
			for i := range 625 {
				key := fmt.Sprintf("w%d-%04d", w, i)
				if err := st.Write(ctx, func(tx *boltstate.Tx) error { return tx.Put("b", key, bytes.Repeat([]byte("v"), 100)) }); err != nil {
					t.Error(err)
					return
				}
				a, f := boltstate.LayerBytes(st)
				mu.Lock()
				most = max(most, a+f)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if txAfter := txID(t, st.DB); txAfter-txBefore < 10 {
		t.Errorf("5,000 writes of 100 bytes made %d checkpoints with a 4 KiB threshold, want at least 10", txAfter-txBefore)
	}
	// Two thresholds, a write from each of the 8 writers beyond each (key,
	// value, a key's overhead), and the bucket each layer counts once.
	if bound := 2*limit + 2*8*(100+64+7) + 2*(1+boltstate.BucketOverhead); most > bound {
		t.Errorf("the layers held %d bytes at most, want at most %d", most, bound)
	}
	n := 0
	st.ForEach(ctx, "b", func(k, v []byte) error { n++; return nil })
	if n != 5000 {
		t.Errorf("ForEach found %d keys, want 5000", n)
	}
}

// A write the log cannot take (a disk error) fails, and so does every
// later one, with the error: nothing is acknowledged that is not durable.
// Reads go on; Close keeps the log for the next open.
func TestLog_FailedWriteIsSticky(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := boltstate.Open(path, &boltstate.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	put := func(k string) error {
		return st.Write(ctx, func(tx *boltstate.Tx) error { return tx.Put("b", k, []byte("v")) })
	}
	if err := put("before"); err != nil {
		t.Fatal(err)
	}
	boltstate.BreakLog(st)
	if err := put("broken"); err == nil {
		t.Fatal("a write the log could not take succeeded")
	}
	if err := put("after"); err == nil {
		t.Fatal("a write after a failed one succeeded")
	}
	if ok, err := st.Fetched.Add(ctx, "http://a.test/"); err == nil || ok {
		t.Errorf("Fetched.Add after a failed write = %v, %v; want an error", ok, err)
	}
	st.Close()
	re, err := boltstate.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	var got []byte
	re.Write(ctx, func(tx *boltstate.Tx) error { got, err = tx.Get("b", "before"); return err })
	if string(got) != "v" {
		t.Errorf("the write acknowledged before the failure reads %q after a reopen, want %q", got, "v")
	}
}

// A read-only State sees the writes its file's log holds (a process killed
// before its checkpoint) and changes nothing on disk.
func TestLog_ReadOnlySeesTheLog(t *testing.T) {
	path, log := writeKeys(t, 5)
	before, _ := os.ReadFile(log)
	db, _ := os.ReadFile(path)
	ro, err := boltstate.Open(path, &boltstate.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ro.ForEach(context.Background(), "b", func(k, v []byte) error { n++; return nil })
	if err := ro.Write(context.Background(), func(tx *boltstate.Tx) error { return nil }); !errors.Is(err, boltstate.ErrReadOnly) {
		t.Errorf("Write on a read-only state = %v, want ErrReadOnly", err)
	}
	ro.Close()
	if n != 5 {
		t.Errorf("read-only state sees %d of the 5 logged writes", n)
	}
	after, _ := os.ReadFile(log)
	dbAfter, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) || !bytes.Equal(db, dbAfter) {
		t.Error("a read-only open changed the files")
	}
}

// Keys a bbolt bucket cannot take are refused when written, not when the
// log is applied: the log never holds a write its checkpoint would fail on.
func TestTx_RefusesWhatBboltCannotStore(t *testing.T) {
	st, err := boltstate.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tt := range []struct {
		name string
		fn   func(tx *boltstate.Tx) error
	}{
		{"empty key", func(tx *boltstate.Tx) error { return tx.Put("b", "", []byte("v")) }},
		{"empty bucket", func(tx *boltstate.Tx) error { return tx.Put("", "k", []byte("v")) }},
		{"key too long", func(tx *boltstate.Tx) error { return tx.Put("b", strings.Repeat("k", bbolt.MaxKeySize+1), nil) }},
		{"delete empty key", func(tx *boltstate.Tx) error { return tx.Delete("b", "") }},
		{"sequence of no bucket", func(tx *boltstate.Tx) error { _, err := tx.NextSequence(""); return err }},
		{"drop no bucket", func(tx *boltstate.Tx) error { return tx.DropBucket("") }},
	} {
		if err := st.Write(context.Background(), tt.fn); err == nil {
			t.Errorf("%s: accepted", tt.name)
		}
	}
	if err := st.Checkpoint(context.Background()); err != nil {
		t.Errorf("checkpoint after refused writes: %v", err)
	}
	// bbolt's largest key is stored, through a checkpoint and back.
	long := strings.Repeat("k", bbolt.MaxKeySize)
	if err := st.Write(context.Background(), func(tx *boltstate.Tx) error { return tx.Put("b", long, []byte("v")) }); err != nil {
		t.Fatalf("a key of bbolt's largest size: %v", err)
	}
	if err := st.Checkpoint(context.Background()); err != nil {
		t.Errorf("checkpoint of the largest key: %v", err)
	}
	if v, err := st.Get(context.Background(), "b", long); err != nil || string(v) != "v" {
		t.Errorf("the largest key reads %q, %v; want %q", v, err, "v")
	}
}

// A closed State takes no checkpoint, and ForEach lists a bucket's keys
// around a nested bucket an older file holds (the nested one is not a key).
func TestState_ClosedAndNestedBuckets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("b"))
		if err == nil {
			_, err = b.CreateBucket([]byte("k2"))
		}
		for _, k := range []string{"k1", "k3"} {
			if err == nil {
				err = b.Put([]byte(k), []byte("v"))
			}
		}
		return err
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	st, err := boltstate.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	st.ForEach(context.Background(), "b", func(k, v []byte) error { keys = append(keys, string(k)); return nil })
	if fmt.Sprint(keys) != "[k1 k3]" {
		t.Errorf("ForEach = %v, want [k1 k3] (the nested bucket k2 skipped, the key after it listed)", keys)
	}
	st.Close()
	if err := st.Checkpoint(context.Background()); !errors.Is(err, boltstate.ErrClosed) {
		t.Errorf("Checkpoint after Close = %v, want ErrClosed", err)
	}
}

// A file moved aside (damaged, or from an older version) takes its log
// with it: the writes a killed process logged stay with the file they
// belong to, readable there, and nothing of them is replayed into the
// fresh file started in its place.
func TestMoveAside_TakesItsLog(t *testing.T) {
	path, _ := writeKeys(t, 3)
	moved, err := boltstate.MoveAside(path, "old")
	if err != nil {
		t.Fatal(err)
	}
	for _, suffix := range boltstate.LogSuffixes {
		if _, err := os.Stat(path + suffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind (%v)", path+suffix, err)
		}
		if _, err := os.Stat(moved + suffix); err != nil {
			t.Errorf("log file not moved with the file: %v", err)
		}
	}
	var logs bytes.Buffer
	if n, _ := keysIn(t, moved, &logs); n != 3 {
		t.Errorf("the moved file reads %d of its 3 logged writes", n)
	}
	if n, _ := keysIn(t, path, &logs); n != 0 {
		t.Errorf("a fresh file at the old path reads %d writes of the moved one", n)
	}
}

// While a checkpoint applies the frozen writes, reads see them, writes go
// on into the active layer and shadow them, and ForEach merges the two
// layers and the file in key order.
func TestState_ReadsDuringACheckpoint(t *testing.T) {
	st, err := boltstate.Open(filepath.Join(t.TempDir(), "state.db"), &boltstate.Options{CheckpointBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	write := func(fn func(tx *boltstate.Tx) error) {
		t.Helper()
		if err := st.Write(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	// In the file: a, b, c. Frozen (being applied): b changed, d added,
	// c deleted. Active (written meanwhile): d changed, e added, a deleted.
	write(func(tx *boltstate.Tx) error {
		for _, k := range []string{"a", "b", "c"} {
			tx.Put("k", k, []byte(k+"0"))
		}
		return nil
	})
	if err := st.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	write(func(tx *boltstate.Tx) error {
		tx.Put("k", "b", []byte("b1"))
		tx.Put("k", "d", []byte("d1"))
		return tx.Delete("k", "c")
	})
	frozen, release := make(chan struct{}), make(chan struct{})
	boltstate.SetCheckpointHook(st, func(stage string) {
		if stage == "frozen" {
			close(frozen)
			<-release
		}
	})
	done := make(chan error)
	go func() { done <- st.Checkpoint(ctx) }()
	<-frozen
	write(func(tx *boltstate.Tx) error {
		tx.Put("k", "d", []byte("d2"))
		tx.Put("k", "e", []byte("e2"))
		return tx.Delete("k", "a")
	})
	want := "b=b1 d=d2 e=e2"
	read := func(when string) {
		t.Helper()
		var got []string
		st.ForEach(ctx, "k", func(k, v []byte) error { got = append(got, string(k)+"="+string(v)); return nil })
		if strings.Join(got, " ") != want {
			t.Errorf("%s: ForEach = %v, want %s", when, got, want)
		}
		for k, w := range map[string]string{"a": "", "b": "b1", "c": "", "d": "d2", "e": "e2"} {
			var v []byte
			st.Write(ctx, func(tx *boltstate.Tx) error { v, _ = tx.Get("k", k); return nil })
			if string(v) != w {
				t.Errorf("%s: Get(%s) = %q, want %q", when, k, v, w)
			}
		}
	}
	read("during the checkpoint")
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	read("after it")
	boltstate.SetCheckpointHook(st, nil)
	if err := st.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	read("after the next")
}

// The fetched set and the validators keep a Bloom filter of their URLs
// (rebuilt from the file and the log at open): a URL never written there
// is answered without a read of the file (under 2 % are read by the
// filter's mistake), one written in an earlier run is read there and
// found, and one written in this run is found after a checkpoint.
func TestFiltered_NewURLsCostNoRead(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		add  func(st *boltstate.State, url string) error
		has  func(st *boltstate.State, url string) (bool, error)
	}{
		{"fetched set",
			func(st *boltstate.State, url string) error {
				ok, err := st.Fetched.Add(ctx, url)
				if err == nil && !ok {
					err = errors.New("Add: not new")
				}
				return err
			},
			func(st *boltstate.State, url string) (bool, error) { return st.Fetched.Has(ctx, url) }},
		{"validators",
			func(st *boltstate.State, url string) error {
				return st.Validators.Save(ctx, url, fetch.Validator{ETag: `"e"`})
			},
			func(st *boltstate.State, url string) (bool, error) {
				v, ok, err := st.Validators.Load(ctx, url)
				if ok && v.ETag != `"e"` {
					return false, fmt.Errorf("Load = %+v", v)
				}
				return ok, err
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			st, err := boltstate.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			const old = 5000
			for i := range old {
				if err := tt.add(st, fmt.Sprintf("https://h%d.test/old/%d", i%50, i)); err != nil {
					t.Fatalf("add %d: %v", i, err)
				}
			}
			st.Close()
			st, err = boltstate.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			reads := func() int { return st.DB.Stats().TxN }
			before := reads()
			for i := range 2000 {
				if has, err := tt.has(st, fmt.Sprintf("https://h%d.test/new/%d", i%50, i)); has || err != nil {
					t.Fatalf("a URL never written: %v, %v", has, err)
				}
			}
			if n := reads() - before; n > 40 {
				t.Errorf("2,000 URLs never written made %d reads of the file; want at most 40", n)
			}
			before = reads()
			for i := range old {
				if has, err := tt.has(st, fmt.Sprintf("https://h%d.test/old/%d", i%50, i)); !has || err != nil {
					t.Fatalf("URL %d written in the earlier run: %v, %v", i, has, err)
				}
			}
			if n := reads() - before; n != old {
				t.Errorf("%d URLs in the file made %d reads of it; want %d", old, n, old)
			}
			for i := range 100 {
				if err := tt.add(st, fmt.Sprintf("https://h%d.test/now/%d", i%50, i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
			for i := range 100 {
				if has, err := tt.has(st, fmt.Sprintf("https://h%d.test/now/%d", i%50, i)); !has || err != nil {
					t.Fatalf("URL %d written in this run, after a checkpoint: %v, %v", i, has, err)
				}
			}
		})
	}
}

// A checkpoint does not switch the log to its other file, nor empty the
// one it applied, while the flusher is still writing a batch to it: it
// waits for that batch to be durable (an early version looked only for
// records not yet taken by the flusher, and could empty the file under a
// batch in flight).
func TestLog_CheckpointWaitsForTheBatchInFlight(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		st, err := boltstate.Open(filepath.Join(dir, "state.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ctx := context.Background()
		wrote, release := writeHeldAtItsSync(st) // the batch is written, not yet synced
		checkpointed := make(chan error, 1)
		go func() { checkpointed <- st.Checkpoint(ctx) }()
		synctest.Wait() // everything that can run has run: the checkpoint waits, or is done
		select {
		case err := <-checkpointed:
			t.Fatalf("the checkpoint returned (%v) while the batch it must include was not yet synced", err)
		default:
		}
		close(release)
		if err := <-wrote; err != nil {
			t.Fatal(err)
		}
		if err := <-checkpointed; err != nil {
			t.Fatal(err)
		}
	})
}

// A writer alone is synced at once, write after write: the log holds a
// sync back (to share it) only while writers crowd.
func TestLog_LoneWriterNotDelayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := boltstate.Open(filepath.Join(t.TempDir(), "s.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		start := time.Now() // the bubble's clock: it moves only while every goroutine waits on it
		for i := range 5 {
			if err := st.Write(context.Background(), func(tx *boltstate.Tx) error {
				return tx.Put("b", fmt.Sprint(i), []byte("v"))
			}); err != nil {
				t.Fatal(err)
			}
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("five writes one after another waited %v, want 0 (each synced at once)", d)
		}
		if n := boltstate.LogSyncs(st); n < 5 {
			t.Errorf("%d syncs for five writes one after another, want one each", n)
		}
	})
}

// A crowd of writers shares its syncs: while the last sync carried the
// records of several writers, the next starts 8 ms after it, so the
// records that come meanwhile share it (a write waits up to 8 ms more for
// its sync); a sync that carried one record is followed at once. On the
// bubble's clock, which moves only during those pauses, eight writers
// writing for a second make about 125 pauses of 8 ms, and no two syncs
// start closer than that unless at the same moment.
func TestLog_CrowdSyncsAtMostEvery8ms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := boltstate.Open(filepath.Join(t.TempDir(), "s.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var mu sync.Mutex
		var syncs []time.Time
		boltstate.SetBeforeSync(st, func() {
			mu.Lock()
			syncs = append(syncs, time.Now())
			mu.Unlock()
		})
		start := time.Now() // the bubble's clock: it moves only while every goroutine waits on it
		var writes atomic.Int64
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				// A clock that never moves (no pauses) ends at 20,000 writes each.
				for i := 0; time.Since(start) < time.Second && i < 20000; i++ {
					if err := st.Write(context.Background(), func(tx *boltstate.Tx) error {
						return tx.Put("b", fmt.Sprintf("w%d-%d", w, i), []byte("v"))
					}); err != nil {
						t.Error(err)
						return
					}
					writes.Add(1)
				}
			})
		}
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		if writes.Load() < 8*100 || len(syncs) == 0 {
			t.Fatalf("eight writers made %d writes and %d syncs in a second, want at least 800 writes", writes.Load(), len(syncs))
		}
		paused := 0
		for i := 1; i < len(syncs); i++ {
			switch gap := syncs[i].Sub(syncs[i-1]); {
			case gap >= 8*time.Millisecond:
				paused++
			case gap > 0:
				t.Fatalf("syncs %d and %d started %v apart, want 8 ms at least (or at once, after a sync of one record)", i-1, i, gap)
			}
		}
		if paused < 1000/8-2 || paused > 1000/8+1 {
			t.Errorf("eight writers for a second made %d pauses between syncs, want about 125 (8 ms each)", paused)
		}
	})
}

// A write reads its own changes, the latest first, key by key, over what
// earlier writes left: a put and a delete of one key say nothing of
// another, and a dropped bucket reads empty.
func TestTx_ReadsItsOwnChanges(t *testing.T) {
	type op struct {
		do       string // "put", "delete", "drop" or "get"
		key, val string // for get, val is what it must read ("" for nil)
	}
	for _, c := range []struct {
		name string
		ops  []op
	}{
		{"the first change read back", []op{{"put", "k1", "new"}, {"get", "k1", "new"}}},
		{"the latest of two puts", []op{{"put", "k1", "a"}, {"put", "k1", "b"}, {"get", "k1", "b"}}},
		{"a put hides nothing else", []op{{"put", "k1", "new"}, {"get", "k2", "old"}, {"get", "k3", ""}}},
		{"a delete hides nothing else", []op{{"delete", "k1", ""}, {"get", "k2", "old"}, {"get", "k1", ""}}},
		{"a delete after a put", []op{{"put", "k2", "new"}, {"delete", "k2", ""}, {"get", "k2", ""}}},
		{"a drop hides the earlier writes", []op{{"drop", "", ""}, {"get", "k2", ""}}},
		{"a put after a drop", []op{{"drop", "", ""}, {"put", "k1", "new"}, {"get", "k1", "new"}, {"get", "k2", ""}}},
		{"nothing changed", []op{{"get", "k2", "old"}, {"get", "k1", ""}}},
	} {
		st, err := boltstate.Open(filepath.Join(t.TempDir(), "s.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := st.Write(ctx, func(tx *boltstate.Tx) error { return tx.Put("b", "k2", []byte("old")) }); err != nil {
			t.Fatal(err)
		}
		err = st.Write(ctx, func(tx *boltstate.Tx) error {
			for i, o := range c.ops {
				var err error
				switch o.do {
				case "put":
					err = tx.Put("b", o.key, []byte(o.val))
				case "delete":
					err = tx.Delete("b", o.key)
				case "drop":
					err = tx.DropBucket("b")
				case "get":
					var got []byte
					if got, err = tx.Get("b", o.key); err == nil && string(got) != o.val {
						t.Errorf("%s: op %d: Get(%s) = %q, want %q", c.name, i, o.key, got, o.val)
					}
					if o.val == "" && got != nil {
						t.Errorf("%s: op %d: Get(%s) = %q, want nil", c.name, i, o.key, got)
					}
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		st.Close()
	}
}

// A checkpoint empties the log file whose writes it applied: the log holds
// only what the bbolt file does not, however many checkpoints a State
// takes (its files do not grow with the crawl).
func TestLog_CheckpointEmptiesTheFileItApplied(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := boltstate.Open(path, &boltstate.Options{CheckpointBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	records := func() (n [2]int) {
		for i, s := range boltstate.LogSuffixes {
			data, err := os.ReadFile(path + s)
			if err != nil {
				t.Fatal(err)
			}
			n[i] = len(recordEnds(t, data))
		}
		return n
	}
	for round := range 3 {
		for i := range 3 {
			if err := st.Write(ctx, func(tx *boltstate.Tx) error {
				return tx.Put("b", fmt.Sprintf("k%d-%d", round, i), []byte("v"))
			}); err != nil {
				t.Fatal(err)
			}
		}
		if n := records(); n[0]+n[1] != 3 {
			t.Fatalf("round %d: the log files hold %v records, want the 3 just written", round, n)
		}
		if err := st.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
		if n := records(); n != [2]int{} {
			t.Fatalf("round %d: after the checkpoint the log files hold %v records, want none", round, n)
		}
	}
	if v, err := st.Get(ctx, "b", "k2-2"); err != nil || string(v) != "v" {
		t.Errorf("the last key reads %q, %v after the checkpoints; want %q", v, err, "v")
	}
}

// A checkpoint whose transaction fails (here the bbolt file is closed under
// it, as a disk error would fail it) stops the State: later writes and
// checkpoints fail with its error, Close takes no checkpoint, and nothing
// is emptied, so the next open replays every acknowledged write.
func TestLog_FailedCheckpointKeepsTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := boltstate.Open(path, &boltstate.Options{CheckpointBytes: 1 << 30, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	put := func(v string) error {
		return st.Write(ctx, func(tx *boltstate.Tx) error { return tx.Put("b", "k", []byte(v)) })
	}
	if err := put("first"); err != nil {
		t.Fatal(err)
	}
	st.DB.Close()
	first := st.Checkpoint(ctx)
	if !errors.Is(first, berrors.ErrDatabaseNotOpen) {
		t.Fatalf("checkpoint of a closed file = %v, want berrors.ErrDatabaseNotOpen", first)
	}
	if err := put("second"); !errors.Is(err, berrors.ErrDatabaseNotOpen) {
		t.Errorf("a write after the failed checkpoint = %v, want its error", err)
	}
	if err := st.Checkpoint(ctx); !errors.Is(err, berrors.ErrDatabaseNotOpen) {
		t.Errorf("a checkpoint after the failed one = %v, want its error", err)
	}
	if err := st.Close(); !errors.Is(err, berrors.ErrDatabaseNotOpen) {
		t.Errorf("Close after the failed checkpoint = %v, want its error", err)
	}
	if got, _ := valueOfK(t, path); got != "first" {
		t.Errorf("b/k reopened = %q, want %q (the acknowledged write, replayed from the log)", got, "first")
	}
}
