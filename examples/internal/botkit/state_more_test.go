package botkit

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/internal/syncbuf"
	bolt "go.etcd.io/bbolt"
)

// A fresh state file records the schema version this program writes (the
// documented SchemaVersion 2), so the next run reads it as current.
func TestOpenState_FreshRecordsSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deeper", "dir", "s.db")
	db, err := OpenState(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got string
	db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte("goodbot-examples")); b != nil {
			got = string(b.Get([]byte("schema")))
		}
		return nil
	})
	if got != "2" {
		t.Errorf("schema recorded %q, want \"2\"", got)
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state directory: %v %v", fi, err)
	}
}

// Schema values: the current one is kept as is (no move aside), a
// non-number is a damaged file (moved aside as corrupt), an older one with
// data is moved aside as old, a newer one is refused. No file is left open:
// a refused file is refused again for what it is (not as in use), and the
// file kept aside can be opened by the operator.
func TestOpenState_SchemaValues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema string
		aside  string // suffix of the file kept aside, "" for none
		newer  bool
	}{
		{"current", strconv.Itoa(2), "", false},
		{"not a number", "two", ".corrupt-", false},
		{"older", "1", ".old-", false},
		{"newer", "3", "", true},
	} {
		path := filepath.Join(t.TempDir(), "s.db")
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		db.Update(func(tx *bolt.Tx) error {
			b, _ := tx.CreateBucketIfNotExists([]byte("goodbot-examples"))
			return b.Put([]byte("schema"), []byte(tc.schema))
		})
		db.Close()
		var logs syncbuf.Buffer
		db, err = OpenState(path, Logger(&logs, false))
		if tc.newer {
			for i := range 2 {
				if !errors.Is(err, ErrStateNewer) || !strings.Contains(err.Error(), "newer") {
					t.Errorf("%s: open %d: %v, want ErrStateNewer", tc.name, i+1, err)
				}
				if db != nil {
					db.Close()
				}
				db, err = OpenState(path, nil)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		db.Close()
		kept, _ := filepath.Glob(path + ".*")
		switch {
		case tc.aside == "" && len(kept) != 0:
			t.Errorf("%s: moved aside: %v", tc.name, kept)
		case tc.aside != "" && (len(kept) != 1 || !strings.Contains(kept[0], tc.aside)):
			t.Errorf("%s: kept %v, want one %s file", tc.name, kept, tc.aside)
		}
		if tc.aside == "" {
			continue
		}
		if !strings.Contains(logs.String(), "kept_as") {
			t.Errorf("%s: log %q", tc.name, logs.String())
		}
		if len(kept) == 1 {
			old, err := bolt.Open(kept[0], 0o600, &bolt.Options{Timeout: 200 * time.Millisecond})
			if err != nil {
				t.Errorf("%s: the file kept aside cannot be opened: %v", tc.name, err)
				continue
			}
			old.Close()
		}
	}
}

// A state path that cannot be made (its directory is a file) is an error,
// not a crash; the default path is in the user's cache directory.
func TestOpenState_BadPathAndDefault(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("x"), 0o600)
	if db, err := OpenState(filepath.Join(file, "s.db"), nil); err == nil {
		db.Close()
		t.Error("state under a file opened")
	}
	if dir, err := os.UserCacheDir(); err == nil {
		if got, want := DefaultStatePath("bot"), filepath.Join(dir, "goodbot", "bot.db"); got != want {
			t.Errorf("DefaultStatePath = %q, want %q", got, want)
		}
	}
	t.Setenv("HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	if got := DefaultStatePath("bot"); got != "bot.db" {
		t.Errorf("DefaultStatePath without a cache dir = %q, want bot.db", got)
	}
}
