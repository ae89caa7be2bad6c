package boltstore_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/robots/boltstore"
	"github.com/goodbot-go/goodbot/robots/storetest"
	bolt "go.etcd.io/bbolt"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func openDB(t *testing.T, path string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// newStore returns a Store in a new file's "robots" bucket, and the file.
func newStore(t *testing.T) (*bolt.DB, *boltstore.Store) {
	t.Helper()
	db := openDB(t, filepath.Join(t.TempDir(), "state.db"))
	t.Cleanup(func() { db.Close() })
	s, err := boltstore.New(db, "robots")
	if err != nil {
		t.Fatal(err)
	}
	return db, s
}

func TestRoundTrip(t *testing.T) {
	_, s := newStore(t)
	ctx := context.Background()
	if _, ok, err := s.Load(ctx, "https://example.com:443"); ok || err != nil {
		t.Fatalf("empty Load = %v, %v", ok, err)
	}
	cases := []robots.Entry{
		{Fetched: time.Date(2026, 11, 30, 10, 0, 0, 123, time.UTC), Status: 200, Body: []byte("User-agent: *\nDisallow: /x\n")},
		{Fetched: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), Status: 503},
		{Status: 0}, // a network error, zero time
	}
	for _, want := range cases {
		if err := s.Save(ctx, "https://example.com:443", want); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Load(ctx, "https://example.com:443")
		if !ok || err != nil || !got.Fetched.Equal(want.Fetched) || got.Status != want.Status || string(got.Body) != string(want.Body) {
			t.Errorf("Load = %+v, %v, %v; want %+v", got, ok, err, want)
		}
	}
}

func TestCorruptRecordIsAbsent(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "state.db"))
	defer db.Close()
	s, _ := boltstore.New(db, "robots")
	db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("robots")).Put([]byte("k"), []byte{9, 9}) })
	if _, ok, err := s.Load(context.Background(), "k"); ok || err != nil {
		t.Fatalf("corrupt Load = %v, %v", ok, err)
	}
	if _, err := boltstore.New(nil, "x"); err == nil {
		t.Error("New(nil) succeeded")
	}
}

type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return &http.Response{StatusCode: 200, Header: http.Header{}, Request: req,
		Body: io.NopCloser(strings.NewReader("User-agent: *\nDisallow: /private\n"))}, nil
}

// B9: a restarted bot with the same bbolt file does not refetch a fresh copy.
func TestCache_B9_RestartDoesNotRefetch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	u, _ := url.Parse("https://example.com/private/x")
	rt := &countingTransport{}
	a := robots.Agent{Token: "BothyBot"}
	for run := range 2 {
		db := openDB(t, path)
		s, err := boltstore.New(db, "robots")
		if err != nil {
			t.Fatal(err)
		}
		c := &robots.Cache{Transport: rt, Store: s, TTL: time.Hour}
		if err := c.Check(context.Background(), a, u); !errors.Is(err, robots.ErrDisallowed) {
			t.Fatalf("run %d: Check = %v", run, err)
		}
		db.Close()
	}
	if n := rt.n.Load(); n != 1 {
		t.Fatalf("%d fetches across a restart, want 1", n)
	}
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) robots.Store {
		db := openDB(t, filepath.Join(t.TempDir(), "state.db"))
		t.Cleanup(func() { db.Close() })
		s, err := boltstore.New(db, "robots")
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// A zero Store (not made by New) returns errors instead of panicking.
func TestZeroStore(t *testing.T) {
	var s boltstore.Store
	ctx := context.Background()
	if _, ok, err := s.Load(ctx, "https://example.com:443"); err == nil || ok {
		t.Errorf("Load on a zero Store = %v, %v; want an error", ok, err)
	}
	if err := s.Save(ctx, "https://example.com:443", robots.Entry{Status: 200}); err == nil || !strings.HasPrefix(err.Error(), "boltstore: ") {
		t.Errorf("Save on a zero Store = %v; want a boltstore error", err)
	}
}
