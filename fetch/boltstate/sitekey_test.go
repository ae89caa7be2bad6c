package boltstate_test

import (
	"path/filepath"
	"slices"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// bucketKeys lists the keys of the named bucket of the state file at path.
func bucketKeys(t *testing.T, path, name string) []string {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var keys []string
	err = db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket([]byte(name)); b != nil {
			return b.ForEach(func(k, _ []byte) error { keys = append(keys, string(k)); return nil })
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// S8, B8: the state file keeps one record per site and per page whatever
// the spelling of the host: robots.txt under the site key, the fetched
// mark and the validators under the normalised URL; a later run asking for
// another spelling finds them.
func TestState_S8_OneRecordAcrossSpellings(t *testing.T) {
	w := fetchtest.New()
	defer w.Close()
	w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n")).
		Handle("/page", fetchtest.Page{Body: "p", ETag: `"1"`})
	path := filepath.Join(t.TempDir(), "bot.db")

	if got := run(t, w, path, "http://A.TEST.:080/page", "http://a\u3002test/page"); !slices.Equal(got, []fetch.Outcome{fetch.OK, fetch.Duplicate}) {
		t.Fatalf("first run: %v, want [ok duplicate]", got)
	}
	for bucket, want := range map[string][]string{
		boltstate.RobotsBucket:     {"http://a.test:80"},
		boltstate.FetchedBucket:    {"http://a.test/page"},
		boltstate.ValidatorsBucket: {"http://a.test/page"},
	} {
		if got := bucketKeys(t, path, bucket); !slices.Equal(got, want) {
			t.Errorf("bucket %s: keys %q, want %q", bucket, got, want)
		}
	}
	w.Reset()
	if got := run(t, w, path, "http://\uff41.test/page"); got[0] != fetch.Duplicate {
		t.Errorf("second run: %v, want duplicate", got)
	}
	if n := len(w.Requests()); n != 0 {
		t.Errorf("second run sent %d requests", n)
	}
}
