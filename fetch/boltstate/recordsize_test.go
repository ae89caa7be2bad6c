package boltstate

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
)

// recordSize is the length of the payload appendRecord writes, for every
// kind of change and lengths on both sides of each varint boundary.
func TestRecordSize_IsTheEncodedLength(t *testing.T) {
	long := func(n int) string { return strings.Repeat("k", n) }
	for _, changes := range [][]change{
		nil,
		{{kind: opPut, bucket: "b", key: "k", val: []byte("v")}},
		{{kind: opPut, bucket: long(127), key: long(128), val: make([]byte, 16383)}},
		{{kind: opPut, bucket: "b", key: "k", val: make([]byte, 16384)}, {kind: opDelete, bucket: long(300), key: long(2)}},
		{{kind: opSequence, bucket: "s", seq: 127}, {kind: opSequence, bucket: "s", seq: 128}, {kind: opSequence, bucket: "s", seq: 1 << 63}},
		{{kind: opDropBucket, bucket: "gone"}, {kind: opPut, bucket: "b", key: "k"}},
	} {
		if got, want := recordSize(changes), len(appendRecord(nil, changes))-recHeaderSize; got != want {
			t.Errorf("recordSize(%d changes) = %d, encoded %d", len(changes), got, want)
		}
	}
}

// A write of more than one record of the log holds (256 MiB) is refused
// with ErrWriteTooLarge before anything is written: it was acknowledged,
// then taken for damage at the next open and lost, the log moved aside.
// One of exactly 256 MiB is kept, and survives a kill.
func TestWrite_TooLargeForOneRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 256 MiB record")
	}
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	over := make([]byte, maxRecordSize) // with its bucket, key and lengths, past the bound
	applied := 0                        // Tx.Applied's runs: none for the refused write
	if err := st.Write(ctx, func(tx *Tx) error {
		tx.Applied(func() { applied++ })
		return tx.Put("b", "over", over)
	}); !errors.Is(err, ErrWriteTooLarge) || applied != 0 {
		t.Fatalf("a write of %d bytes: %v, %d Applied runs; want ErrWriteTooLarge and none", recordSize([]change{{kind: opPut, bucket: "b", key: "over", val: over}}), err, applied)
	}
	if v, err := st.Get(ctx, "b", "over"); v != nil || err != nil {
		t.Fatalf("the refused write reads back %d bytes (%v)", len(v), err)
	}
	size := func(val []byte) int { return recordSize([]change{{kind: opPut, bucket: "b", key: "exact", val: val}}) }
	exact := over
	for size(exact) > maxRecordSize {
		exact = exact[:len(exact)-1]
	}
	if n := size(exact); n != maxRecordSize {
		t.Fatalf("the test's record is %d bytes, not %d", n, maxRecordSize)
	}
	if err := st.Write(ctx, func(tx *Tx) error {
		tx.Applied(func() { applied++ })
		return tx.Put("b", "exact", exact)
	}); err != nil || applied != 1 {
		t.Fatalf("a write of exactly %d bytes: %v, %d Applied runs; want 1", maxRecordSize, err, applied)
	}
	Abandon(st) // killed: the write is in the log only
	var logs bytes.Buffer
	st, err = Open(path, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, err := st.Get(ctx, "b", "exact"); err != nil || len(v) != len(exact) {
		t.Errorf("the write of exactly %d bytes reads back %d bytes (%v) after a kill", maxRecordSize, len(v), err)
	}
	if v, _ := st.Get(ctx, "b", "over"); v != nil {
		t.Errorf("the refused write reads back %d bytes after a kill", len(v))
	}
	if strings.Contains(logs.String(), "damage") || strings.Contains(logs.String(), "corrupt") {
		t.Errorf("the log was taken for damage:\n%s", logs.String())
	}
}
