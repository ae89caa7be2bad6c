package boltstate_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
)

// A payload decodes only whole, to its last byte: a stray byte after its
// changes (or alone) is not a change and makes the record undecodable,
// rather than being dropped.
func TestDecodeRecord_StrayByte(t *testing.T) {
	for _, c := range []struct {
		name    string
		payload []byte
	}{
		{"a lone byte", []byte{4}},
		{"a drop and one byte more", []byte{4, 1, 'a', 4}},
		{"a put and one byte more", []byte{1, 1, 'a', 1, 'k', 1, 'v', 1}},
	} {
		if _, err := boltstate.Reencode(c.payload); err == nil {
			t.Errorf("%s (% x): decoded, want an undecodable record", c.name, c.payload)
		}
	}
}

// The warning about a damaged log says where the damage is (LogError's
// Offset: the records before it were replayed, none after it) and why: the
// header's magic at byte 0, its generation's checksum at byte 15, and a
// record's length, checksums or payload at the first byte of that record.
func TestLog_DamageSaysWhere(t *testing.T) {
	k := newKilledLog(t, 4)
	third := k.ends[1] // the first byte of the third record
	for _, c := range []struct {
		flip     int // the byte flipped
		at       int // where the damage is said to be
		reason   string
		replayed int // records replayed before it
	}{
		{3, 0, "not a goodbot redo log (bad header)", 0},
		{16, 15, "checksum mismatch in the header", 0},
		{third + 1, third, "checksum mismatch in a record's length", 2},
		{third + 9, third, "checksum mismatch", 2},
		{k.ends[2] - 1, third, "checksum mismatch", 2},
	} {
		bad := bytes.Clone(k.log)
		bad[c.flip] ^= 0x20
		_, prefix, _, logs := k.replay(t, bad)
		if prefix != c.replayed {
			t.Errorf("byte %d flipped: %d records replayed, want %d", c.flip, prefix, c.replayed)
		}
		if want := fmt.Sprintf("is damaged at byte %d: %s\"", c.at, c.reason); !strings.Contains(logs, want) {
			t.Errorf("byte %d flipped: the warning does not say %q:\n%s", c.flip, want, logs)
		}
	}
}

// A write the log could not take fails and is not in the state after the
// State is closed and opened again: the failure stops the State, which
// applies nothing more to its file (its Close takes no checkpoint of the
// failed write), and the next open replays what the log holds, the writes
// acknowledged before the failure.
func TestLog_FailedWriteNotAppliedAfterReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	quiet := &boltstate.Options{Logger: slog.New(slog.DiscardHandler)}
	st, err := boltstate.Open(path, quiet)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	put := func(st *boltstate.State, k string) error {
		return st.Write(ctx, func(tx *boltstate.Tx) error { return tx.Put("b", k, []byte("v")) })
	}
	if err := put(st, "before"); err != nil {
		t.Fatal(err)
	}
	boltstate.BreakLog(st)
	if err := put(st, "broken"); err == nil {
		t.Fatal("a write the log could not take succeeded")
	}
	st.Close()
	re, err := boltstate.Open(path, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	for k, want := range map[string]string{"before": "v", "broken": ""} {
		if v, err := re.Get(ctx, "b", k); err != nil || string(v) != want || (want == "") != (v == nil) {
			t.Errorf("after a reopen %s = %q, %v; want %q", k, v, err, want)
		}
	}
}

// A read-only State changes nothing on disk, not even by creating a log
// file its bbolt file lacks: after a clean Close (no log at all), and with
// only the newer log file left.
func TestLog_ReadOnlyCreatesNoLogFile(t *testing.T) {
	for _, c := range []struct {
		name  string
		state func(t *testing.T) string // the state file's path
	}{
		{"after a clean Close", func(t *testing.T) string {
			path := filepath.Join(t.TempDir(), "state.db")
			st := openState(t, path)
			if err := st.Write(context.Background(), func(tx *boltstate.Tx) error { return tx.Put("b", "k", []byte("v")) }); err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			return path
		}},
		{"with the newer log file only", func(t *testing.T) string {
			snap := bothFiles(t)
			if err := os.Remove(snap + boltstate.LogSuffixes[0]); err != nil {
				t.Fatal(err)
			}
			return snap
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := c.state(t)
			files := func() []string {
				ents, err := os.ReadDir(filepath.Dir(path))
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				return names
			}
			before := files()
			ro, err := boltstate.Open(path, &boltstate.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			ro.Close()
			if after := files(); !slices.Equal(before, after) {
				t.Errorf("a read-only open changed the directory from %v to %v", before, after)
			}
		})
	}
}

// Two writers are a crowd: a sync that carried the records of two is
// followed 8 ms later, not at once, so that what they write next shares
// one sync (a sync of one record is followed at once). On the bubble's
// clock: the first sync (one writer's record) is held until two more
// writers wait for the second; their next records wait 8 ms for the third.
func TestLog_TwoWritersAreACrowd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, _, syncs := crowdSynced(t, true)
		defer st.Close()
		if len(syncs()) != 3 {
			t.Fatalf("%d syncs, want 3 (one writer's record, two writers', their next records)", len(syncs()))
		}
		if gap := syncs()[1].Sub(syncs()[0]); gap != 0 {
			t.Errorf("the sync after one record came %v after it, want at once", gap)
		}
		if gap := syncs()[2].Sub(syncs()[1]); gap < 8*time.Millisecond {
			t.Errorf("the sync after two writers' records came %v after it, want 8 ms", gap)
		}
	})
}

// crowdSynced opens a State, in the caller's synctest bubble, whose first
// sync (one writer's record) is held until two more writers wait for the
// second, which then carries a crowd's records; with again, each of the
// two writes a second key after its first. It returns once all are
// written, with a write of one key and the times of the syncs so far.
func crowdSynced(t *testing.T, again bool) (st *boltstate.State, put func(key string), syncs func() []time.Time) {
	t.Helper()
	st, err := boltstate.Open(filepath.Join(t.TempDir(), "s.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var times []time.Time
	release := make(chan struct{})
	boltstate.SetBeforeSync(st, func() {
		mu.Lock()
		times = append(times, time.Now())
		first := len(times) == 1
		mu.Unlock()
		if first {
			<-release
		}
	})
	put = func(k string) {
		if err := st.Write(context.Background(), func(tx *boltstate.Tx) error { return tx.Put("b", k, []byte("v")) }); err != nil {
			t.Error(err)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { put("alone") })
	synctest.Wait() // its sync is held
	for _, w := range []string{"w1", "w2"} {
		wg.Go(func() {
			put(w)
			if again {
				put(w + " again")
			}
		})
	}
	synctest.Wait() // both records wait for the next sync
	close(release)
	wg.Wait()
	return st, put, func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(times)
	}
}

// The writes an open replays are applied to the bbolt file there: they are
// not also held in memory, where they would count towards the next
// checkpoint and the State's bound of about twice CheckpointBytes.
func TestLog_ReplayedWritesNotHeldInMemory(t *testing.T) {
	path, _ := writeKeys(t, 50)
	st := openState(t, path)
	defer st.Close()
	if active, frozen := boltstate.LayerBytes(st); active != 0 || frozen != 0 {
		t.Errorf("after replaying 50 writes the layers hold %d + %d bytes, want none (the writes are in the file)", active, frozen)
	}
	if n := inFile(t, st, "b"); n != 50 {
		t.Errorf("%d of the 50 replayed keys in the bbolt file", n)
	}
}
