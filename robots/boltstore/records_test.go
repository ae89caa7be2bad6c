package boltstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/robots/boltstore"
	bolt "go.etcd.io/bbolt"
)

// A record cut short anywhere before its body (its version, the time's
// length, the time, the status) reads as absent, so the origin is fetched
// again; a record cut in its body keeps the bytes it has (bbolt writes a
// value whole, so only a damaged file can cut one).
func TestLoad_CutRecords(t *testing.T) {
	db, s := newStore(t)
	ctx := context.Background()
	want := robots.Entry{Fetched: time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC), Status: 200, Body: []byte("User-agent: *\n")}
	if err := s.Save(ctx, "o", want); err != nil {
		t.Fatal(err)
	}
	var full []byte
	if err := db.View(func(tx *bolt.Tx) error {
		full = bytes.Clone(tx.Bucket([]byte("robots")).Get([]byte("o")))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	head := len(full) - len(want.Body) // version, length, time, status
	if head < 2+4 {
		t.Fatalf("a record of %d bytes with a body of %d", len(full), len(want.Body))
	}
	for n := range len(full) + 1 {
		t.Run(fmt.Sprintf("%d of %d bytes", n, len(full)), func(t *testing.T) {
			key := fmt.Sprint("cut-", n)
			if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("robots")).Put([]byte(key), full[:n]) }); err != nil {
				t.Fatal(err)
			}
			got, ok, err := s.Load(ctx, key)
			if err != nil {
				t.Fatalf("Load = %v", err)
			}
			if n < head {
				if ok {
					t.Errorf("a record cut at %d bytes (header %d) read as %+v", n, head, got)
				}
				return
			}
			if !ok || !got.Fetched.Equal(want.Fetched) || got.Status != want.Status || !bytes.Equal(got.Body, want.Body[:n-head]) {
				t.Errorf("Load = %+v, %v; want %+v with the body's first %d bytes", got, ok, want, n-head)
			}
		})
	}
}

// On a read-only file without the bucket, New works and every origin is
// absent; Save fails with the store's error and the file is unchanged.
func TestNew_ReadOnlyFileWithoutTheBucket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	openDB(t, path).Close()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := boltstore.New(db, "robots")
	if err != nil {
		t.Fatalf("New on a read-only file: %v", err)
	}
	ctx := context.Background()
	if _, ok, err := s.Load(ctx, "o"); ok || err != nil {
		t.Errorf("Load = %v, %v; want absent, no error", ok, err)
	}
	if err := s.Save(ctx, "o", robots.Entry{Status: 200}); err == nil {
		t.Error("Save on a read-only file succeeded")
	}
}

// A cancelled context ends Load and Save before they touch the file: Save
// writes nothing.
func TestStore_CancelledContext(t *testing.T) {
	_, s := newStore(t)
	if err := s.Save(context.Background(), "o", robots.Entry{Status: 200}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok, err := s.Load(ctx, "o"); !errors.Is(err, context.Canceled) || ok {
		t.Errorf("Load = %v, %v; want context.Canceled", ok, err)
	}
	if err := s.Save(ctx, "p", robots.Entry{Status: 200}); !errors.Is(err, context.Canceled) {
		t.Errorf("Save = %v; want context.Canceled", err)
	}
	if _, ok, _ := s.Load(context.Background(), "p"); ok {
		t.Error("a Save with a cancelled context wrote its entry")
	}
}

// A fetch time whose zone time.MarshalBinary cannot encode is Save's
// error, and nothing is stored.
func TestSave_UnencodableTime(t *testing.T) {
	_, s := newStore(t)
	ctx := context.Background()
	e := robots.Entry{Fetched: time.Date(2026, 12, 7, 0, 0, 0, 0, time.FixedZone("far", 1<<30)), Status: 200}
	if err := s.Save(ctx, "o", e); err == nil || !strings.Contains(err.Error(), "boltstore: encode fetch time") {
		t.Errorf("Save = %v; want the encoding error", err)
	}
	if _, ok, err := s.Load(ctx, "o"); ok || err != nil {
		t.Errorf("Load after the failed Save = %v, %v; want absent", ok, err)
	}
}
