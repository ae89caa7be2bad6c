package boltstate_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
)

// NextSequence counts on from the bucket's last value however the write's
// other changes fall around its calls: after a put or delete in the same
// bucket or another, and between two calls on one bucket; the values
// outlast the write and a reopen.
func TestNextSequence_AmongOtherChanges(t *testing.T) {
	type op struct {
		kind   string // "put", "del", "seq"
		bucket string
		want   uint64 // for "seq"
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := boltstate.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, write := range [][]op{
		{{"put", "a", 0}, {"seq", "b", 1}},
		{{"seq", "b", 2}, {"put", "a", 0}, {"seq", "b", 3}, {"del", "b", 0}, {"seq", "b", 4}},
		{{"put", "b", 0}, {"seq", "b", 5}, {"seq", "a", 1}, {"put", "b", 0}, {"seq", "a", 2}, {"seq", "b", 6}},
	} {
		if err := st.Write(ctx, func(tx *boltstate.Tx) error {
			for j, o := range write {
				switch o.kind {
				case "put":
					tx.Put(o.bucket, "k", []byte("v"))
				case "del":
					tx.Delete(o.bucket, "k")
				case "seq":
					if got, err := tx.NextSequence(o.bucket); err != nil || got != o.want {
						t.Errorf("write %d, change %d: NextSequence(%s) = %d, %v; want %d", i, j, o.bucket, got, err, o.want)
					}
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	st = openState(t, path)
	defer st.Close()
	st.Write(ctx, func(tx *boltstate.Tx) error {
		for bucket, want := range map[string]uint64{"a": 3, "b": 7} {
			if got, err := tx.NextSequence(bucket); err != nil || got != want {
				t.Errorf("after a reopen NextSequence(%s) = %d, %v; want %d", bucket, got, err, want)
			}
		}
		return nil
	})
}
