package boltstate_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
)

// layerBytesOf is what a fresh State's layer counts for one write of put
// (the threshold Options.CheckpointBytes is compared with), measured, so
// that the tests below do not depend on the layer's overhead constants.
func layerBytesOf(t *testing.T, put func(tx *boltstate.Tx) error) int {
	t.Helper()
	st, err := boltstate.Open(filepath.Join(t.TempDir(), "probe.db"), &boltstate.Options{CheckpointBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Write(context.Background(), put); err != nil {
		t.Fatal(err)
	}
	active, _ := boltstate.LayerBytes(st)
	if active == 0 {
		t.Fatal("the probe's write counted nothing")
	}
	return active
}

// A checkpoint starts with the write that brings the log to
// Options.CheckpointBytes ("each time the log holds CheckpointBytes"), not
// one write later; a write one byte short starts none.
func TestCheckpoint_StartsAtTheLimit(t *testing.T) {
	put := func(tx *boltstate.Tx) error { return tx.Put("b", "k", bytes.Repeat([]byte("v"), 100)) }
	at := layerBytesOf(t, put)
	for _, tt := range []struct {
		limit int
		start bool
	}{
		{at - 1, true},
		{at, true},
		{at + 1, false},
	} {
		t.Run(fmt.Sprintf("limit=%d,bytes=%d", tt.limit, at), func(t *testing.T) {
			st, err := boltstate.Open(filepath.Join(t.TempDir(), "state.db"), &boltstate.Options{CheckpointBytes: tt.limit})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var started atomic.Bool
			boltstate.SetCheckpointHook(st, func(stage string) {
				if stage == "start" {
					started.Store(true)
				}
			})
			if err := st.Write(context.Background(), put); err != nil {
				t.Fatal(err)
			}
			// Write decided before it returned: a started checkpoint is
			// running or has called the hook.
			if got := started.Load() || boltstate.Checkpointing(st); got != tt.start {
				t.Errorf("checkpoint started = %v, want %v", got, tt.start)
			}
		})
	}
}

// While a checkpoint runs, the writes that bring the new layer to
// CheckpointBytes make the next writers wait (the State's bound of about
// twice CheckpointBytes in memory); a layer one byte short does not.
func TestWrite_FullAtTheLimitWhileCheckpointing(t *testing.T) {
	put := func(tx *boltstate.Tx) error { return tx.Put("b", "k", bytes.Repeat([]byte("v"), 100)) }
	at := layerBytesOf(t, put)
	for _, tt := range []struct {
		limit int
		full  bool
	}{
		{at, true},
		{at + 1, false},
	} {
		t.Run(fmt.Sprintf("limit=%d,bytes=%d", tt.limit, at), func(t *testing.T) {
			ctx := context.Background()
			st, err := boltstate.Open(filepath.Join(t.TempDir(), "state.db"), &boltstate.Options{CheckpointBytes: tt.limit})
			if err != nil {
				t.Fatal(err)
			}
			frozen, release := make(chan struct{}), make(chan struct{})
			var held atomic.Bool // the first checkpoint only, not Close's
			boltstate.SetCheckpointHook(st, func(stage string) {
				if stage == "frozen" && !held.Swap(true) {
					close(frozen)
					<-release
				}
			})
			// Over the limit: a checkpoint starts and holds after freezing it.
			if err := st.Write(ctx, func(tx *boltstate.Tx) error { return tx.Put("b", "big", make([]byte, tt.limit)) }); err != nil {
				t.Fatal(err)
			}
			<-frozen
			if !boltstate.Checkpointing(st) || boltstate.Full(st) {
				t.Fatalf("after the first write: checkpointing %v, full %v; want true, false", boltstate.Checkpointing(st), boltstate.Full(st))
			}
			if err := st.Write(ctx, put); err != nil {
				t.Fatal(err)
			}
			if active, _ := boltstate.LayerBytes(st); active != at {
				t.Fatalf("the new layer counts %d bytes, want %d", active, at)
			}
			if got := boltstate.Full(st); got != tt.full {
				t.Errorf("full = %v, want %v", got, tt.full)
			}
			close(release)
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The changes slice the writes share is kept for the next write when it
// is small and let go after a large write, so one batch of thousands of
// keys does not pin its slice for the State's life.
func TestWrite_ScratchLetGoAfterALargeWrite(t *testing.T) {
	ctx := context.Background()
	st, err := boltstate.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	write := func(n int) {
		t.Helper()
		if err := st.WriteUnlogged(ctx, func(tx *boltstate.Tx) error {
			for i := range n {
				if err := tx.Put("b", fmt.Sprint("k", i), []byte("v")); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	write(3)
	if got := boltstate.TxScratch(st); got < 3 {
		t.Errorf("after a write of 3 changes the scratch holds room for %d, want it kept (>= 3)", got)
	}
	write(10_000)
	if got := boltstate.TxScratch(st); got != 0 {
		t.Errorf("after a write of 10,000 changes the scratch holds room for %d, want 0 (let go)", got)
	}
}
