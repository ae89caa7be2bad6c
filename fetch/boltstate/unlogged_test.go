package boltstate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"

	"go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
)

// logSize is the bytes the log files of the state at path hold.
func logSize(t *testing.T, path string) int64 {
	t.Helper()
	var n int64
	for _, suffix := range boltstate.LogSuffixes {
		if fi, err := os.Stat(path + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// inFile is how many keys bucket holds in the bbolt file itself.
func inFile(t *testing.T, st *boltstate.State, bucket string) int {
	t.Helper()
	n := 0
	if err := st.DB.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket([]byte(bucket)); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// seen counts the keys u0…u(n-1) of bucket "u" that st's reads find,
// through Get, ForEach and a Tx.
func seen(t *testing.T, st *boltstate.State, n int) (get, each, tx int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		if v, err := st.Get(ctx, "u", fmt.Sprintf("u%d", i)); err != nil {
			t.Fatal(err)
		} else if v != nil {
			get++
		}
	}
	if err := st.ForEach(ctx, "u", func(k, v []byte) error { each++; return nil }); err != nil {
		t.Fatal(err)
	}
	if st.DB.IsReadOnly() {
		return get, each, get
	}
	err := st.Write(ctx, func(t *boltstate.Tx) error {
		for i := range n {
			if v, err := t.Get("u", fmt.Sprintf("u%d", i)); err != nil {
				return err
			} else if v != nil {
				tx++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return get, each, tx
}

func putUnlogged(t *testing.T, st *boltstate.State, from, to int) {
	t.Helper()
	err := st.WriteUnlogged(context.Background(), func(tx *boltstate.Tx) error {
		for i := from; i < to; i++ {
			if err := tx.Put("u", fmt.Sprintf("u%d", i), nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An unlogged write is read at once, adds nothing to the log and no sync,
// reaches the file with the next checkpoint (asked for, or at Close), and
// is lost by a process killed before it, while the logged writes around
// it are not.
func TestWriteUnlogged_ReadAtOnceLostInACrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	ctx := context.Background()
	open := func() *boltstate.State {
		st, err := boltstate.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	logged := func(st *boltstate.State, k string) {
		if err := st.Write(ctx, func(tx *boltstate.Tx) error { return tx.Put("l", k, []byte("v")) }); err != nil {
			t.Fatal(err)
		}
	}
	st := open()
	logged(st, "before")
	size, syncs := logSize(t, path), boltstate.LogSyncs(st)
	putUnlogged(t, st, 0, 100)
	if got, each, tx := seen(t, st, 100); got != 100 || each != 100 || tx != 100 {
		t.Fatalf("after an unlogged write of 100 keys, Get finds %d, ForEach %d, Tx.Get %d", got, each, tx)
	}
	if n := logSize(t, path); n != size {
		t.Errorf("the log grew from %d to %d bytes with an unlogged write", size, n)
	}
	if n := boltstate.LogSyncs(st); n != syncs {
		t.Errorf("%d syncs of the log for an unlogged write", n-syncs)
	}
	if n := inFile(t, st, "u"); n != 0 {
		t.Errorf("%d unlogged keys in the file before a checkpoint", n)
	}
	logged(st, "after")
	boltstate.Abandon(st) // killed before any checkpoint

	st = open()
	if got, each, _ := seen(t, st, 100); got != 0 || each != 0 {
		t.Errorf("after a kill, %d (Get) / %d (ForEach) unlogged keys came back; want none", got, each)
	}
	for _, k := range []string{"before", "after"} {
		if v, err := st.Get(ctx, "l", k); err != nil || string(v) != "v" {
			t.Errorf("logged %q after a kill = %q, %v; want %q", k, v, err, "v")
		}
	}
	putUnlogged(t, st, 0, 50)
	if err := st.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if n := inFile(t, st, "u"); n != 50 {
		t.Errorf("%d unlogged keys in the file after a checkpoint; want 50", n)
	}
	putUnlogged(t, st, 50, 80)
	boltstate.Abandon(st) // killed after the checkpoint of the first 50

	st = open()
	if got, each, tx := seen(t, st, 100); got != 50 || each != 50 || tx != 50 {
		t.Errorf("after a kill, Get finds %d, ForEach %d, Tx.Get %d of the keys; want the 50 checkpointed", got, each, tx)
	}
	putUnlogged(t, st, 50, 100)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	ro, err := boltstate.Open(path, &boltstate.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if got, each, _ := seen(t, ro, 100); got != 100 || each != 100 {
		t.Errorf("after Close, Get finds %d, ForEach %d of the 100 keys", got, each)
	}
	if err := ro.WriteUnlogged(ctx, func(tx *boltstate.Tx) error { return nil }); !errors.Is(err, boltstate.ErrReadOnly) {
		t.Errorf("WriteUnlogged on a read-only state = %v, want ErrReadOnly", err)
	}
}

// Unlogged writes count towards Options.CheckpointBytes, as logged ones
// do: their keys reach the file with no checkpoint asked for, and memory
// stays bounded however many are made.
func TestWriteUnlogged_CheckpointsOnItsOwn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := boltstate.Open(path, &boltstate.Options{CheckpointBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	applied := make(chan struct{}, 100)
	boltstate.SetCheckpointHook(st, func(stage string) {
		if stage == "applied" {
			applied <- struct{}{}
		}
	})
	for i := 0; i < 2000; i += 20 {
		putUnlogged(t, st, i, i+20)
		active, frozen := boltstate.LayerBytes(st)
		if active+frozen > 3*4096 {
			t.Fatalf("after %d unlogged keys the layers hold %d + %d bytes; want at most about 2 × 4096", i+20, active, frozen)
		}
	}
	<-applied // no Checkpoint was asked for
	if n := inFile(t, st, "u"); n == 0 {
		t.Error("no unlogged key in the file after the checkpoint they caused")
	}
}

// writeHeldAtItsSync starts a logged write to st and returns once the log
// has written its batch and holds its sync, which waits until release is
// closed; wrote gives the write's error.
func writeHeldAtItsSync(st *boltstate.State) (wrote <-chan error, release chan struct{}) {
	syncing, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	boltstate.SetBeforeSync(st, func() {
		once.Do(func() {
			close(syncing)
			<-release
		})
	})
	done := make(chan error, 1)
	go func() {
		done <- st.Write(context.Background(), func(tx *boltstate.Tx) error { return tx.Put("l", "k", []byte("v")) })
	}()
	<-syncing
	return done, release
}

// Buckets count towards Options.CheckpointBytes too, not only keys: many
// buckets dropped (as a spill of many sites is emptied) are checkpointed
// away as many keys would be, so the layers' buckets stay bounded.
func TestLayers_BucketsBounded(t *testing.T) {
	st, err := boltstate.Open(filepath.Join(t.TempDir(), "state.db"), &boltstate.Options{CheckpointBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	most := 0
	for i := range 2000 {
		err := st.WriteUnlogged(context.Background(), func(tx *boltstate.Tx) error {
			return tx.DropBucket(fmt.Sprintf("bucket %d", i)) // no key at all
		})
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, boltstate.LayerBuckets(st))
	}
	if most > 200 {
		t.Errorf("the layers held up to %d buckets at once for a CheckpointBytes of 4096; want at most about 2 × 4096 / 176", most)
	}
}

// An unlogged write does not wait for the log: it returns while a logged
// write made before it waits for its sync.
func TestWriteUnlogged_NeverWaitsForASync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := boltstate.Open(filepath.Join(t.TempDir(), "state.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		wrote, release := writeHeldAtItsSync(st) // the logged write waits for its sync
		putUnlogged(t, st, 0, 1)
		select {
		case err := <-wrote:
			t.Fatalf("the logged write returned (%v) before its sync", err)
		default:
		}
		close(release)
		if err := <-wrote; err != nil {
			t.Fatal(err)
		}
	})
}

// A write that found the active layer full waits for the checkpoint to
// freeze it, not for the checkpoint to end: once frozen, the new layer has
// room (an earlier version kept writers waiting through the checkpoint's
// whole bbolt transaction).
func TestCheckpoint_WritersWaitOnlyForTheFreeze(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		st, err := boltstate.Open(filepath.Join(dir, "state.db"), &boltstate.Options{CheckpointBytes: 300})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ctx := context.Background()
		releaseStart, releaseFrozen := make(chan struct{}), make(chan struct{})
		var startOnce, frozenOnce sync.Once
		boltstate.SetCheckpointHook(st, func(stage string) {
			switch stage {
			case "start":
				startOnce.Do(func() { <-releaseStart })
			case "frozen":
				frozenOnce.Do(func() { <-releaseFrozen })
			}
		})
		put := func(k string, n int) error {
			return st.Write(ctx, func(tx *boltstate.Tx) error { return tx.Put("b", k, make([]byte, n)) })
		}
		if err := put("crosses", 400); err != nil { // the checkpoint starts, held before its freeze
			t.Fatal(err)
		}
		if err := put("after", 10); err != nil { // the layer, not yet frozen, is full
			t.Fatal(err)
		}
		wrote := make(chan error, 1)
		go func() { wrote <- put("waits", 10) }()
		synctest.Wait()
		select {
		case err := <-wrote:
			t.Fatalf("a write went into a full layer before the freeze (%v)", err)
		default:
		}
		close(releaseStart) // the checkpoint freezes the layer, then is held
		synctest.Wait()
		select {
		case err := <-wrote:
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Error("the write still waits once the full layer is frozen, for the checkpoint's end")
		}
		close(releaseFrozen)
		if err := st.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
