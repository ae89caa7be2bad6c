package boltstore_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"go.uber.org/goleak"

	"github.com/goodbot-go/goodbot/sitemap"
	"github.com/goodbot-go/goodbot/sitemap/boltstore"
	"github.com/goodbot-go/goodbot/sitemap/storetest"
)

func openDB(t *testing.T, path string, opts *bbolt.Options) *bbolt.DB {
	t.Helper()
	if opts == nil {
		opts = &bbolt.Options{Timeout: time.Second}
	}
	db, err := bbolt.Open(path, 0o600, opts)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestStore_Conformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) sitemap.Store {
		db := openDB(t, filepath.Join(t.TempDir(), "state.db"), nil)
		t.Cleanup(func() { db.Close() })
		s, err := boltstore.New(db, "sitemap")
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// The bot's other buckets in the same file are left alone, and a failed
// Save (here: the file reopened read-only) leaves the previous state
// readable.
func TestStore_SharedFileAndFailedSave(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bot.db")
	db := openDB(t, path, nil)
	if err := db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("robots"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	}); err != nil {
		t.Fatal(err)
	}
	s, err := boltstore.New(db, "sitemap")
	if err != nil {
		t.Fatal(err)
	}
	old := &sitemap.State{Read: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), Sitemaps: map[string]*sitemap.SitemapState{"https://a.test/sitemap.xml": {ETag: `"1"`}}}
	if err := s.Save(ctx, "https://a.test", old); err != nil {
		t.Fatal(err)
	}
	db.Close()

	ro := openDB(t, path, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	defer ro.Close()
	s, err = boltstore.New(ro, "sitemap")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, "https://a.test", &sitemap.State{}); err == nil {
		t.Fatal("Save on a read-only database succeeded")
	}
	got, err := s.Load(ctx, "https://a.test")
	if err != nil || got == nil || got.Sitemaps["https://a.test/sitemap.xml"].ETag != `"1"` {
		t.Errorf("after failed Save: %+v, %v", got, err)
	}
	ro.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket([]byte("robots")).Get([]byte("k")); string(v) != "v" {
			t.Errorf("other bucket: %q", v)
		}
		return nil
	})
}

// B9: a freshness check run "tomorrow", in a new process (a new Walker,
// the database file closed and reopened), against a site that published
// nothing, makes exactly one request, counted on the server, and finds
// nothing to refetch.
func TestCheck_B9_OneRequestAfterRestart(t *testing.T) {
	var requests, conditional atomic.Int64
	body := `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
		`<url><loc>{{base}}/</loc><lastmod>2024-06-01</lastmod></url>` +
		`<url><loc>{{base}}/about</loc><lastmod>2024-05-01T10:00:00+02:00</lastmod></url>` +
		`<url><loc>{{base}}/blog/1</loc><lastmod>2024-05-20</lastmod></url></urlset>`
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path != "/sitemap.xml" {
			http.NotFound(w, r)
			return
		}
		b := strings.ReplaceAll(body, "{{base}}", srv.URL)
		etag := fmt.Sprintf(`"%x"`, sha256.Sum256([]byte(b)))
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", "Sat, 01 Jun 2024 00:00:00 GMT")
		if r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" {
			conditional.Add(1)
		}
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Write([]byte(b))
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "bot.db")
	declared := []string{srv.URL + "/sitemap.xml"} // from robots.txt (cached, not fetched here)

	run := func() *sitemap.CheckResult {
		db := openDB(t, path, nil)
		defer db.Close()
		store, err := boltstore.New(db, "sitemap")
		if err != nil {
			t.Fatal(err)
		}
		w := &sitemap.Walker{Client: srv.Client(), Store: store}
		res, err := w.Check(context.Background(), srv.URL, declared)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := run()
	if !first.First || len(first.New) != 3 || requests.Load() != 1 {
		t.Fatalf("first run: %d requests, %+v", requests.Load(), first)
	}
	requests.Store(0)
	second := run()
	if n := requests.Load(); n != 1 || conditional.Load() != 1 {
		t.Errorf("second run: %d requests (%d conditional), want exactly 1 conditional", n, conditional.Load())
	}
	if second.First || second.NotModified != 1 || len(second.New)+len(second.Moved)+len(second.Gone)+len(second.Unknown) != 0 || second.Unchanged != 3 {
		t.Errorf("second run refetches something: %+v", second)
	}
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// A zero Store (not made by New) returns errors instead of panicking.
func TestZeroStore(t *testing.T) {
	var s boltstore.Store
	ctx := context.Background()
	if st, err := s.Load(ctx, "https://example.com"); err == nil || st != nil {
		t.Errorf("Load on a zero Store = %v, %v; want an error", st, err)
	}
	if err := s.Save(ctx, "https://example.com", &sitemap.State{}); err == nil || !strings.HasPrefix(err.Error(), "boltstore: ") {
		t.Errorf("Save on a zero Store = %v; want a boltstore error", err)
	}
}

// A site's stored state that does not decode (a damaged file, another
// version's format) is ErrBadState from Load, and costs one full read:
// Check reads the site as never read, says so in StateErr, and its Save
// replaces the record, so the next check is a conditional request again.
func TestCheck_DamagedStateIsReadAgain(t *testing.T) {
	for _, raw := range []string{`not json`, `{"read":`, `[]`, `{"sitemaps":5}`, `{"read":"yesterday"}`, "\xff\xfe"} {
		t.Run(fmt.Sprintf("%q", raw), func(t *testing.T) {
			var requests, conditional atomic.Int64
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				w.Header().Set("ETag", `"v1"`)
				if r.Header.Get("If-None-Match") == `"v1"` {
					conditional.Add(1)
					w.WriteHeader(http.StatusNotModified)
					return
				}
				fmt.Fprintf(w, `<urlset><url><loc>%s/a</loc><lastmod>2026-12-01</lastmod></url><url><loc>%s/b</loc><lastmod>2026-12-02</lastmod></url></urlset>`, srv.URL, srv.URL)
			}))
			defer srv.Close()
			db := openDB(t, filepath.Join(t.TempDir(), "bot.db"), nil)
			defer db.Close()
			store, err := boltstore.New(db, "sitemap")
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Update(func(tx *bbolt.Tx) error { return tx.Bucket([]byte("sitemap")).Put([]byte(srv.URL), []byte(raw)) }); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if st, err := store.Load(ctx, srv.URL); st != nil || !errors.Is(err, sitemap.ErrBadState) {
				t.Fatalf("Load of the damaged record = %+v, %v; want nil, ErrBadState", st, err)
			}
			w := &sitemap.Walker{Client: srv.Client(), Store: store, Logger: slog.New(slog.DiscardHandler)}
			res, err := w.Check(ctx, srv.URL, nil)
			if err != nil {
				t.Fatalf("Check over the damaged record: %v", err)
			}
			if !res.First || len(res.New) != 2 || !errors.Is(res.StateErr, sitemap.ErrBadState) || requests.Load() != 1 {
				t.Errorf("Check: first %v, new %v, StateErr %v, %d requests; want a first read of 2 pages, ErrBadState, 1 request",
					res.First, res.New, res.StateErr, requests.Load())
			}
			if st, err := store.Load(ctx, srv.URL); err != nil || st == nil || len(st.Snapshot().Pages) != 2 {
				t.Fatalf("Load after the check = %+v, %v; want the new read", st, err)
			}
			res, err = w.Check(ctx, srv.URL, nil)
			if err != nil || res.First || res.StateErr != nil || res.NotModified != 1 || conditional.Load() != 1 || res.Unchanged != 2 {
				t.Errorf("the next check: first %v, StateErr %v, not modified %d, conditional requests %d, unchanged %d, %v; want a 304 and 2 unchanged",
					res.First, res.StateErr, res.NotModified, conditional.Load(), res.Unchanged, err)
			}
		})
	}
}
