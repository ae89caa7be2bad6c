package main

import (
	"bytes"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"go.etcd.io/bbolt"
)

// B9 with the state file's record of the site's last sitemap read damaged
// (a damaged file, or another version's format): the freshness check reads
// the sitemap as never read, refetches what it lists, and replaces the
// record, so the next check is one request again. It used to fail the
// check on that run and on every run after it.
func TestBothy_B9_DamagedSitemapState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := parish(formerNames)
		state := filepath.Join(t.TempDir(), "bothy.db")
		run := runs(t, w, crawlArgs(t, state))
		run("http://parish.test/")

		db, err := bbolt.Open(state, 0o600, &bbolt.Options{Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		damaged := 0
		if err := db.Update(func(tx *bbolt.Tx) error {
			b := tx.Bucket([]byte(boltstate.SitemapsBucket))
			if b == nil {
				return nil
			}
			var keys [][]byte
			if err := b.ForEach(func(k, _ []byte) error {
				keys = append(keys, bytes.Clone(k)) // the bucket is not changed inside ForEach
				return nil
			}); err != nil {
				return err
			}
			for _, k := range keys {
				if err := b.Put(k, []byte(`{"read":`)); err != nil {
					return err
				}
				damaged++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if damaged != 1 {
			t.Fatalf("the first run kept %d sitemap records, want 1 (parish.test's)", damaged)
		}

		time.Sleep(time.Hour)
		out := run("-fresh", "http://parish.test/")
		if !strings.Contains(out.Stderr, "does not decode") {
			t.Errorf("no warning about the damaged record:\n%s", out.Stderr)
		}
		sm := w.RequestsTo("parish.test", "/sitemap.xml")
		if len(sm) != 1 || sm[0].Status != http.StatusOK {
			t.Errorf("the sitemap after the damage: %d requests, want one read", len(sm))
		}
		if r, ok := out.Result("http://parish.test/mass"); !ok || r.Outcome == "" {
			t.Errorf("the pages the sitemap lists were not checked again: /mass %+v, %v", r, ok)
		}

		time.Sleep(time.Hour)
		run("-fresh", "http://parish.test/")
		if reqs := w.Requests(); len(reqs) != 1 || reqs[0].Path != "/sitemap.xml" {
			t.Errorf("the check after: %d requests %v, want just the sitemap", len(reqs), paths(reqs))
		}
	})
}
