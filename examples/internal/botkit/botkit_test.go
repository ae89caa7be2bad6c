package botkit

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"github.com/goodbot-go/goodbot/internal/syncbuf"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goodbot-go/goodbot/signing"
	bolt "go.etcd.io/bbolt"
)

func TestOpenStateCorruptMovedAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	garbage := bytes.Repeat([]byte("not a bolt file "), 1000)
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	db, err := OpenState(path, Logger(&logs, false))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	kept, _ := filepath.Glob(path + ".corrupt-*")
	if len(kept) != 1 {
		t.Fatalf("corrupt file not kept aside: %v", kept)
	}
	if b, _ := os.ReadFile(kept[0]); !bytes.Equal(b, garbage) {
		t.Error("corrupt file was changed")
	}
	if !strings.Contains(logs.String(), "corrupt") {
		t.Errorf("no clear message: %s", logs.String())
	}
}

// A state file cut short (a full disk, a copy interrupted) is moved aside and
// a fresh one started: the bot runs, it does not die of SIGBUS.
func TestOpenStateTruncatedMovedAside(t *testing.T) {
	good := filepath.Join(t.TempDir(), "good.db")
	db, err := OpenState(good, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucketIfNotExists([]byte("fetched"))
		for i := range 500 {
			b.Put([]byte(strings.Repeat("u", 40)+string(rune('a'+i%26))+strings.Repeat("x", i)), []byte("v"))
		}
		return nil
	})
	db.Close()
	data, _ := os.ReadFile(good)
	for _, n := range []int{100, 4096, 8192, 3 * 4096, len(data) / 4} {
		path := filepath.Join(t.TempDir(), "s.db")
		os.WriteFile(path, data[:n], 0o600)
		var logs bytes.Buffer
		db, err := OpenState(path, Logger(&logs, false))
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		db.Close()
		if kept, _ := filepath.Glob(path + ".corrupt-*"); len(kept) != 1 || !strings.Contains(logs.String(), kept[0]) {
			t.Errorf("%d bytes: kept %v, log %q", n, kept, logs.String())
		}
	}
}

func TestOpenStateVersions(t *testing.T) {
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer.db")
	db, err := bolt.Open(newer, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucketIfNotExists(metaBucket)
		return b.Put(schemaKey, []byte("99"))
	})
	db.Close()
	if _, err := OpenState(newer, nil); !errors.Is(err, ErrStateNewer) {
		t.Errorf("newer state: %v", err)
	}

	older := filepath.Join(dir, "older.db")
	db, _ = bolt.Open(older, 0o600, nil)
	db.Update(func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucketIfNotExists([]byte("ancient"))
		return b.Put([]byte("k"), []byte("v"))
	})
	db.Close()
	db, err = OpenState(older, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if kept, _ := filepath.Glob(older + ".old-*"); len(kept) != 1 {
		t.Errorf("old state not kept aside: %v", kept)
	}

	// A version 1 file (the examples' own JSON records, before
	// fetch/boltstate) is moved aside, not read through the library's stores.
	v1 := filepath.Join(dir, "v1.db")
	db, _ = bolt.Open(v1, 0o600, nil)
	db.Update(func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucketIfNotExists(metaBucket)
		b.Put(schemaKey, []byte("1"))
		s, _ := tx.CreateBucketIfNotExists([]byte("sitemaps"))
		return s.Put([]byte("https://example.com:443"), []byte(`{"Sitemaps":{}}`))
	})
	db.Close()
	db, err = OpenState(v1, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("sitemaps")) != nil {
			t.Error("version 1 records read as current")
		}
		return nil
	})
	db.Close()
	if kept, _ := filepath.Glob(v1 + ".old-*"); len(kept) != 1 {
		t.Errorf("version 1 state not kept aside: %v", kept)
	}

	// A fresh file gets the schema and reopens cleanly, keeping its data.
	fresh := filepath.Join(dir, "sub", "fresh.db")
	db, err = OpenState(fresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucketIfNotExists([]byte("data"))
		return b.Put([]byte("k"), []byte("v"))
	})
	db.Close()
	db, err = OpenState(fresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("data")) == nil {
			t.Error("state lost on reopen")
		}
		return nil
	})
	if _, err := OpenState(fresh, nil); !errors.Is(err, ErrStateInUse) {
		t.Errorf("second open while in use: %v", err)
	}
	db.Close()
}

func TestKeys(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadKey(""); !errors.Is(err, ErrNoKey) {
		t.Errorf("no key: %v", err)
	}
	path := filepath.Join(dir, "k.pem")
	var out bytes.Buffer
	k, err := GenKey(path, &out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := GenKey(path, &out); err == nil {
		t.Error("genkey overwrote a key")
	}
	k2, err := LoadKey(path)
	if err != nil || !k.Equal(k2) {
		t.Fatalf("reload: %v", err)
	}
	kid, _ := signing.Thumbprint(k.Public().(ed25519.PublicKey))
	if !strings.Contains(out.String(), `"kid": "`+kid+`"`) || strings.Contains(out.String(), `"d"`) {
		t.Errorf("JWKS: %s", out.String())
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v", fi.Mode())
	}
}

// Exit raises the bot's own verdict to 3 for failed work, unwritten results
// and an interrupt (each reason logged, also when the bot said 3 itself),
// and never lowers it; Parse gives 0 for -h and 1 (one
// line) for a bad flag. The statuses are the README's literals.
func TestExitStatus(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		code     int
		failed   bool
		stdout   io.Writer
		ctx      context.Context
		want     int
		wantLine string
	}{
		{"all done", 0, false, nil, context.Background(), 0, ""},
		{"some work failed", 0, true, nil, context.Background(), 3, "page not written"},
		{"results not written", 0, false, failWriter{}, context.Background(), 3, "results not written"},
		{"interrupted", 0, false, nil, canceled, 3, "interrupted"},
		{"bot's own partial kept", 3, false, nil, context.Background(), 3, ""},
		{"bot's own partial still says why", 3, false, failWriter{}, canceled, 3, "interrupted"},
		{"could not run is not raised", 1, true, nil, canceled, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs syncbuf.Buffer
			s := &Session{Log: Logger(&logs, false), Out: &Output{JSON: true, Stdout: io.Discard}}
			if tt.stdout != nil {
				s.Out.Stdout = tt.stdout
			}
			s.Out.Emit(Result{URL: "http://a.test/", Outcome: "ok"})
			if tt.failed {
				s.WorkFailed("page not written", "url", "http://a.test/")
			}
			if got := s.Exit(tt.ctx, tt.code); got != tt.want {
				t.Errorf("Exit = %d, want %d", got, tt.want)
			}
			if !strings.Contains(logs.String(), tt.wantLine) {
				t.Errorf("log lacks %q:\n%s", tt.wantLine, logs.String())
			}
		})
	}
	for _, tt := range []struct {
		args []string
		want int
		line string
	}{
		{[]string{"-h"}, 0, "usage: bot URL..."},
		{[]string{"-x"}, 1, "bot: flag provided but not defined: -x (see bot -h)\n"},
		{[]string{"-n", "many"}, 1, `bot: invalid value "many" for flag -n: parse error (see bot -h)` + "\n"},
	} {
		var out syncbuf.Buffer
		fs := flag.NewFlagSet("bot", flag.ContinueOnError)
		fs.SetOutput(&out)
		fs.Int("n", 1, "a number")
		code, ok := Parse(fs, tt.args, "bot URL...")
		if ok || code != tt.want || !strings.Contains(out.String(), tt.line) || (tt.want == 1 && out.String() != tt.line) {
			t.Errorf("Parse(%q) = %d, %v; printed %q, want %d and %q", tt.args, code, ok, out.String(), tt.want, tt.line)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }
