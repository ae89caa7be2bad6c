package boltstate_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
)

// While a checkpoint applies the frozen writes, a bucket's sequence goes
// on from the frozen layer's (not yet in the file): a write then takes the
// next number, never one taken already.
func TestNextSequence_DuringACheckpoint(t *testing.T) {
	st, err := boltstate.Open(filepath.Join(t.TempDir(), "state.db"), &boltstate.Options{CheckpointBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	next := func() uint64 {
		t.Helper()
		var n uint64
		if err := st.Write(ctx, func(tx *boltstate.Tx) error {
			var err error
			n, err = tx.NextSequence("q")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for range 3 {
		next()
	}
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
	got := next()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got != 4 {
		t.Errorf("NextSequence during the checkpoint of 1…3 = %d, want 4", got)
	}
	boltstate.SetCheckpointHook(st, nil)
	if got := next(); got != 5 {
		t.Errorf("NextSequence after it = %d, want 5", got)
	}
}

// A write keeps the values it was given, not its caller's buffers: a
// buffer changed once Put returned (reused for the next value) does not
// change what the state holds, before its checkpoint or after.
func TestTx_PutKeepsItsOwnCopy(t *testing.T) {
	st, err := boltstate.Open(filepath.Join(t.TempDir(), "state.db"), &boltstate.Options{CheckpointBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	buf := []byte("first")
	if err := st.Write(ctx, func(tx *boltstate.Tx) error {
		if err := tx.Put("b", "k1", buf); err != nil {
			return err
		}
		copy(buf, "again") // reused within the write
		return tx.Put("b", "k2", buf)
	}); err != nil {
		t.Fatal(err)
	}
	copy(buf, "later") // and after it
	check := func(when string) {
		t.Helper()
		for k, want := range map[string]string{"k1": "first", "k2": "again"} {
			if v, err := st.Get(ctx, "b", k); err != nil || string(v) != want {
				t.Errorf("%s: %s = %q, %v; want %q", when, k, v, err, want)
			}
		}
	}
	check("before the checkpoint")
	if err := st.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	check("after it")
}

// A dropped bucket is removed from the bbolt file by the checkpoint that
// applies the drop, not left there empty: the file holds no bucket of
// that name, as bbolt's DeleteBucket would leave it.
func TestTx_DropBucketRemovesItFromTheFile(t *testing.T) {
	st, err := boltstate.Open(filepath.Join(t.TempDir(), "state.db"), &boltstate.Options{CheckpointBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for _, fn := range []func(tx *boltstate.Tx) error{
		func(tx *boltstate.Tx) error { return tx.Put("gone", "k", []byte("v")) },
		func(tx *boltstate.Tx) error { return tx.DropBucket("gone") },
	} {
		if err := st.Write(ctx, fn); err != nil {
			t.Fatal(err)
		}
		if err := st.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.DB.View(func(tx *bbolt.Tx) error {
		if tx.Bucket([]byte("gone")) != nil {
			t.Error("the dropped bucket is still in the file (empty)")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// Tx.Applied's functions run, in order, for a write the state took (logged
// or not, with changes or none), once its changes are seen by reads; not
// for one it refused after fn registered them (fn's error here;
// ErrWriteTooLarge is TestWrite_TooLargeForOneRecord's).
func TestTx_Applied(t *testing.T) {
	ctx := context.Background()
	refused := errors.New("refused")
	for _, tc := range []struct {
		name     string
		unlogged bool
		put      bool // the write changes something
		fnErr    error
		want     string // the hooks' trace; "" none ran
	}{
		{"logged", false, true, nil, "1 2"},
		{"unlogged", true, true, nil, "1 2"},
		{"no change", false, false, nil, "1 2"},
		{"fn refuses", false, true, refused, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := boltstate.Open(filepath.Join(t.TempDir(), "state.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var trace []string
			write := st.Write
			if tc.unlogged {
				write = st.WriteUnlogged
			}
			err = write(ctx, func(tx *boltstate.Tx) error {
				for _, n := range []string{"1", "2"} {
					tx.Applied(func() {
						if v, err := st.Get(ctx, "b", "k"); tc.put && (err != nil || string(v) != "v") {
							t.Errorf("hook %s: the write reads back %q, %v", n, v, err)
						}
						trace = append(trace, n)
					})
				}
				if tc.put {
					if err := tx.Put("b", "k", []byte("v")); err != nil {
						return err
					}
				}
				return tc.fnErr
			})
			if (err == nil) != (tc.want != "") {
				t.Fatalf("write = %v", err)
			}
			if got := strings.Join(trace, " "); got != tc.want {
				t.Errorf("hooks ran %q; want %q", got, tc.want)
			}
			// The next write runs no hook of this one.
			if err := st.Write(ctx, func(tx *boltstate.Tx) error { return tx.Put("b", "k2", []byte("w")) }); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(trace, " "); got != tc.want {
				t.Errorf("after the next write, hooks ran %q; want %q", got, tc.want)
			}
		})
	}
}
