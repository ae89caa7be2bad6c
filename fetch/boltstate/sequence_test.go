package boltstate_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
)

// TestNextSequence_OneChangeAWrite: a write that takes many numbers of a
// bucket's sequence logs as much as one that takes one, and the sequence
// a crash replays is the last number taken, drops included.
func TestNextSequence_OneChangeAWrite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := boltstate.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	take := func(n int, drop bool) (first, last uint64) {
		t.Helper()
		if err := st.Write(ctx, func(tx *boltstate.Tx) error {
			if drop {
				if err := tx.DropBucket("q"); err != nil {
					return err
				}
			}
			for i := range n {
				seq, err := tx.NextSequence("q")
				if err != nil {
					return err
				}
				if i == 0 {
					first = seq
				} else if seq != last+1 {
					t.Errorf("NextSequence after %d = %d", last, seq)
				}
				last = seq
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return first, last
	}
	size := logSize(t, path)
	if first, last := take(1, false); first != 1 || last != 1 {
		t.Fatalf("first write took %d…%d, want 1…1", first, last)
	}
	one := logSize(t, path) - size
	if first, last := take(500, false); first != 2 || last != 501 {
		t.Fatalf("second write took %d…%d, want 2…501", first, last)
	}
	// The same but for the number's length (a varint): 500 changes would
	// be thousands of bytes.
	if many := logSize(t, path) - size - one; one <= 0 || many > one+8 {
		t.Errorf("a write taking 500 numbers logged %d bytes, one taking 1 logged %d", many, one)
	}
	if first, last := take(3, true); first != 1 || last != 3 {
		t.Fatalf("a write dropping the bucket took %d…%d, want 1…3", first, last)
	}
	if first, last := take(2, false); first != 4 || last != 5 {
		t.Fatalf("the write after took %d…%d, want 4…5", first, last)
	}
	boltstate.Abandon(st) // killed: Open replays the log
	if st, err = boltstate.Open(path, nil); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if first, _ := take(1, false); first != 6 {
		t.Errorf("after a crash the sequence goes on at %d, want 6", first)
	}
}
