package boltstate_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
)

// The log holds at most about CheckpointBytes of writes whatever they
// write: rewriting the same few keys (a site's count, a robots.txt copy
// saved again), a bucket's sequence or dropping one bucket again and again
// checkpoints as new keys do, so the log files stay bounded and an open
// has a bounded log to replay. Both layers are bounded too.
func TestLog_RewritesAreCheckpointed(t *testing.T) {
	value := bytes.Repeat([]byte("v"), 100)
	for _, tc := range []struct {
		name  string
		write func(tx *boltstate.Tx, i int) error
	}{
		{"one of 3 keys", func(tx *boltstate.Tx, i int) error { return tx.Put("b", fmt.Sprintf("k%d", i%3), value) }},
		{"a sequence", func(tx *boltstate.Tx, i int) error { _, err := tx.NextSequence("b"); return err }},
		{"a dropped bucket", func(tx *boltstate.Tx, i int) error { return tx.DropBucket("b") }},
	} {
		t.Run(tc.name, func(t *testing.T) { checkpointedRewrites(t, tc.write) })
	}
	t.Run("values read back", func(t *testing.T) {
		st, err := boltstate.Open(filepath.Join(t.TempDir(), "state.db"), &boltstate.Options{CheckpointBytes: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ctx := context.Background()
		for i := range 300 {
			if err := st.Write(ctx, func(tx *boltstate.Tx) error { return tx.Put("b", fmt.Sprintf("k%d", i%3), fmt.Appendf(nil, "%d", i)) }); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 3 {
			want := fmt.Sprint(297 + i)
			if v, err := st.Get(ctx, "b", fmt.Sprintf("k%d", i)); err != nil || string(v) != want {
				t.Errorf("k%d = %q, %v; want %q, the last value written", i, v, err, want)
			}
		}
	})
}

// checkpointedRewrites makes 2,000 writes with write and checks the log's
// files and the layers against a threshold of 4 KiB.
func checkpointedRewrites(t *testing.T, write func(tx *boltstate.Tx, i int) error) {
	const limit = 4 << 10
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := boltstate.Open(path, &boltstate.Options{CheckpointBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	txBefore := txID(t, st.DB)
	biggest, most := int64(0), 0
	const writes = 2000 // 2,000 records of up to 120 bytes
	for i := range writes {
		if err := st.Write(ctx, func(tx *boltstate.Tx) error { return write(tx, i) }); err != nil {
			t.Fatal(err)
		}
		biggest = max(biggest, logSize(t, path))
		a, f := boltstate.LayerBytes(st)
		most = max(most, a+f)
	}
	if biggest < 200 {
		t.Fatalf("the log files held %d bytes at most: the writes were not logged", biggest)
	}
	if txAfter := txID(t, st.DB); txAfter-txBefore < 10 {
		t.Errorf("%d rewrites made %d checkpoints with a 4 KiB threshold, want at least 10", writes, txAfter-txBefore)
	}
	// Two files of a threshold each, a record beyond each, their headers.
	if bound := int64(2*limit + 2*200 + 2*64); biggest > bound {
		t.Errorf("the log files grew to %d bytes for %d rewrites with a 4 KiB threshold, want at most %d", biggest, writes, bound)
	}
	if bound := 2*limit + 2*(100+64+2) + 2*(1+boltstate.BucketOverhead); most > bound {
		t.Errorf("the layers held %d bytes at most, want at most %d", most, bound)
	}
}
