package boltstate_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/boltstate"
	"github.com/goodbot-go/goodbot/internal/testenv"
	"github.com/goodbot-go/goodbot/robots"
)

// The damage tests open hundreds of damaged copies of a state file in a child
// process (the test binary re-run with damageEnv naming a JSON list of
// cases), so that a crash bbolt cannot recover from (SIGBUS on a truncated
// map) fails the test, naming the case, instead of killing it.
const damageEnv = "GOODBOT_BOLTSTATE_DAMAGE"

// damageCase is one damaged copy: the good file truncated to Truncate bytes
// (>= 0), or with the byte at Flip inverted (>= 0).
type damageCase struct {
	Truncate int64 `json:"truncate"`
	Flip     int64 `json:"flip"`
}

func (c damageCase) String() string {
	if c.Truncate >= 0 {
		return fmt.Sprintf("truncated to %d bytes", c.Truncate)
	}
	return fmt.Sprintf("byte %d flipped", c.Flip)
}

// damageResult is what the child saw for one case.
type damageResult struct {
	Case    int    `json:"case"`
	Verdict string `json:"verdict"` // "valid" or "corrupt"
	Problem string `json:"problem,omitempty"`
}

const goodURLs = 200

func goodURL(i int) string { return fmt.Sprintf("http://a.test/page/%04d", i) }

// goodFile writes a state file with enough records for branch pages,
// overflow pages, several buckets and a freelist.
func goodFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "good.db")
	st, err := boltstate.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range goodURLs {
		if _, err := st.Fetched.Add(ctx, goodURL(i)); err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 {
			if err := st.Validators.Save(ctx, goodURL(i), fetch.Validator{ETag: fmt.Sprintf(`"%d"`, i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 2 {
		body := bytes.Repeat([]byte("Disallow: /x\n"), 400*(i+1)) // up to 16 KB: overflow pages
		if err := st.Robots.Save(ctx, fmt.Sprintf("http://h%d.test:80", i), robots.Entry{Status: 200, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	// Freed pages: remove some marks.
	r := st.Fetched.(fetch.FetchedRemover)
	for i := 0; i < goodURLs; i += 7 {
		_ = r.Remove(ctx, goodURL(i))
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func damageMain() int {
	var job struct {
		Good  string       `json:"good"`
		Dir   string       `json:"dir"`
		Cases []damageCase `json:"cases"`
	}
	raw, err := os.ReadFile(os.Getenv(damageEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := json.Unmarshal(raw, &job); err != nil {
		fmt.Fprintln(os.Stderr, "bad job:", err)
		return 2
	}
	good, err := os.ReadFile(job.Good)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	out := bufio.NewWriter(os.Stdout)
	for i, c := range job.Cases {
		// Say which case runs before running it: if it crashes the process,
		// the parent knows which one did.
		fmt.Fprintf(os.Stderr, "case %d\n", i)
		r := openDamaged(job.Dir, i, c, good)
		b, _ := json.Marshal(r)
		out.Write(append(b, '\n'))
	}
	out.Flush()
	return 0
}

// openDamaged writes case c's copy, opens it and uses every record of the
// state. It reports "valid" (the file was kept and reads without a panic) or
// "corrupt" (moved aside whole, and a fresh, empty state opened instead);
// anything else is a Problem.
func openDamaged(dir string, i int, c damageCase, good []byte) (r damageResult) {
	r.Case = i
	path := filepath.Join(dir, fmt.Sprintf("case%d.db", i))
	bad := bytes.Clone(good)
	if c.Truncate >= 0 {
		bad = bad[:c.Truncate]
	} else {
		bad[c.Flip] ^= 0xFF
	}
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		r.Problem = err.Error()
		return r
	}
	defer func() {
		if p := recover(); p != nil {
			r.Problem = fmt.Sprintf("panic: %v", p)
		}
	}()
	var logged bytes.Buffer
	st, err := boltstate.Open(path, &boltstate.Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		r.Problem = "Open: " + err.Error()
		return r
	}
	defer st.Close()
	aside, _ := filepath.Glob(path + ".corrupt-*")
	ctx := context.Background()
	if len(aside) == 0 {
		r.Verdict = "valid"
		if logged.Len() > 0 {
			r.Problem = "kept, but logged: " + logged.String()
		}
	} else {
		r.Verdict = "corrupt"
		kept, _ := os.ReadFile(aside[0])
		switch {
		case len(aside) != 1 || !bytes.Equal(kept, bad):
			r.Problem = fmt.Sprintf("moved aside as %v, not the damaged file whole", aside)
		case !strings.Contains(logged.String(), "corrupt;") || !strings.Contains(logged.String(), aside[0]):
			r.Problem = "no log line naming the kept file: " + logged.String()
		}
		if ok, _ := st.Fetched.Has(ctx, goodURL(1)); ok {
			r.Problem = "the fresh state holds an old record"
		}
	}
	// Use everything: every record of every bucket, and a write.
	err = st.DB.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error { return nil })
		})
	})
	if err != nil {
		r.Problem = "reading: " + err.Error()
	}
	for j := range goodURLs {
		_, _ = st.Fetched.Has(ctx, goodURL(j))
		_, _, _ = st.Validators.Load(ctx, goodURL(j))
	}
	if _, err := st.Fetched.Add(ctx, "http://a.test/new"); err != nil {
		r.Problem = "writing: " + err.Error()
	}
	return r
}

// runDamage runs cases in a child process and returns the verdicts, failing
// t on a crash (naming the case) or on any case neither valid nor corrupt.
func runDamage(t *testing.T, good string, cases []damageCase) []string {
	t.Helper()
	dir := t.TempDir()
	job, _ := json.Marshal(map[string]any{"good": good, "dir": dir, "cases": cases})
	jobFile := filepath.Join(dir, "job.json")
	if err := os.WriteFile(jobFile, job, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), damageEnv+"="+jobFile)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		last := stderr.String()
		var n int
		if i := strings.LastIndex(last, "case "); i >= 0 {
			fmt.Sscanf(last[i:], "case %d", &n)
		}
		if i := strings.Index(last, fmt.Sprintf("case %d\n", n)); i >= 0 {
			last = last[i:]
		}
		if len(last) > 3000 {
			last = last[:3000]
		}
		t.Fatalf("the process crashed or hung on case %d (%v): %v\n%s", n, cases[n], err, last)
	}
	verdicts := make([]string, len(cases))
	dec := json.NewDecoder(&stdout)
	for {
		var r damageResult
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		verdicts[r.Case] = r.Verdict
		if r.Problem != "" {
			t.Errorf("%v: %s", cases[r.Case], r.Problem)
		}
	}
	for i, v := range verdicts {
		if v != "valid" && v != "corrupt" {
			t.Fatalf("%v: no verdict", cases[i])
		}
	}
	return verdicts
}

func count(verdicts []string) map[string]int {
	m := map[string]int{}
	for _, v := range verdicts {
		m[v]++
	}
	return m
}

// inUse returns the bytes of the good file's pages below its high-water mark.
func inUse(t *testing.T, path string) int64 {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	db.View(func(tx *bbolt.Tx) error { n = tx.Size(); return nil })
	return n
}

// A truncated state file is moved aside and a fresh one started: never a
// SIGBUS. Truncations that keep every page in use are valid.
func TestDamage_TruncatedFile(t *testing.T) {
	good := goodFile(t)
	fi, err := os.Stat(good)
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()
	var cases []damageCase
	for _, n := range []int64{0, 1, 15, 16, 79, 80, 100, 512, 4095, 4096, 4096 + 80, 8191, 8192, 3 * 4096, 4 * 4096, 5*4096 + 7, size / 3, size / 2, size - 3*4096, size - 4096, size - 1} {
		if n < size {
			cases = append(cases, damageCase{Truncate: n, Flip: -1})
		}
	}
	used := inUse(t, good)
	verdicts := runDamage(t, good, cases)
	for i, c := range cases {
		if want := map[bool]string{true: "corrupt", false: "valid"}[c.Truncate > 0 && c.Truncate < used]; verdicts[i] != want {
			t.Errorf("%v (pages in use end at %d): %s, want %s", c, used, verdicts[i], want)
		}
	}
	t.Logf("%d truncations of a %d-byte file (%d in use): %v", len(cases), size, used, count(verdicts))
}

// A flipped byte anywhere in the meta pages or the data pages ends as a
// valid file or as "corrupt, moved aside, fresh state": never a panic.
func TestDamage_FlippedByte(t *testing.T) {
	good := goodFile(t)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	var cases []damageCase
	const page = 4096
	used := inUse(t, good) // bytes past the high-water mark are never read
	for off := int64(0); off < used; off++ {
		inMeta := off < 2*page && off%page < 16+64  // page headers and meta fields of both meta pages
		inHeader := off%page < 16                   // every page's header
		inElems := off%page < 16+2*16 && off%7 == 0 // some of the first two elements' bytes
		if inMeta || inHeader || inElems || off%701 == 0 {
			cases = append(cases, damageCase{Truncate: -1, Flip: off})
		}
	}
	start := time.Now()
	counts := count(runDamage(t, good, cases))
	t.Logf("%v", time.Since(start))
	if counts["corrupt"] == 0 || counts["valid"] == 0 {
		t.Errorf("verdicts %v: want both kinds among %d flips", counts, len(cases))
	}
	t.Logf("%d flipped bytes of %d: %v", len(cases), len(data), counts)
}

// The meta pages are checked whole: a flip in any byte of either meta's
// fields is damage.
func TestDamage_MetaPagesChecked(t *testing.T) {
	good := goodFile(t)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, base := range []int{0, 4096} {
		for off := base + 16; off < base+16+64; off++ {
			bad := bytes.Clone(data)
			bad[off] ^= 0xFF
			p := filepath.Join(t.TempDir(), "m.db")
			os.WriteFile(p, bad, 0o600)
			if err := boltstate.Check(p); !errors.Is(err, boltstate.ErrCorrupt) {
				t.Errorf("meta byte %d flipped: Check = %v, want ErrCorrupt", off, err)
			}
		}
	}
	if err := boltstate.Check(good); err != nil {
		t.Errorf("good file: %v", err)
	}
	if err := boltstate.Check(filepath.Join(t.TempDir(), "missing.db")); err != nil {
		t.Errorf("missing file: %v", err)
	}
}

// Check says what is wrong with a damaged file: a file cut inside either
// meta page is named as such, and an underlying error is kept in the
// message after the reason.
func TestDamage_ReasonsNameTheDamage(t *testing.T) {
	data, err := os.ReadFile(goodFile(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cut  int
		want string
	}{
		{15, "file of 15 bytes is shorter than a meta page"},
		{79, "file of 79 bytes is shorter than a meta page"},
		{4096 + 79, "file of 4175 bytes ends before meta page 1"},
	} {
		p := filepath.Join(t.TempDir(), "cut.db")
		os.WriteFile(p, data[:c.cut], 0o600)
		var ce *boltstate.CorruptError
		if err := boltstate.Check(p); !errors.As(err, &ce) || ce.Reason != c.want || ce.Path != p {
			t.Errorf("cut at %d: Check = %v, want a CorruptError for %s: %q", c.cut, err, p, c.want)
		}
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, "boltstate: f.db is damaged: page 7 cannot be read"},
		{errors.New("bbolt: invalid page type"), "boltstate: f.db is damaged: page 7 cannot be read: bbolt: invalid page type"},
	} {
		if got := (&boltstate.CorruptError{Path: "f.db", Reason: "page 7 cannot be read", Err: c.err}).Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

// Files bbolt writes with its smallest and largest page sizes, without a
// freelist page, and a fresh file of four pages (two meta pages, the
// freelist, an empty root), are sound; meta pages whose checksum holds but whose page size or high-water
// mark no bbolt file can have are damage, named as such.
func TestDamage_MetaFieldsBounded(t *testing.T) {
	for _, c := range []struct {
		name     string
		pageSize int
		keys     int
		noSync   bool // bbolt's NoFreelistSync: the meta names no freelist page
	}{
		{"fresh", 0, 0, false},
		{"512-byte pages", 512, 300, false},
		{"64 KiB pages", 1 << 16, 300, false},
		{"no freelist page", 0, 300, true},
	} {
		p := filepath.Join(t.TempDir(), "b.db")
		db, err := bbolt.Open(p, 0o600, &bbolt.Options{PageSize: c.pageSize, NoFreelistSync: c.noSync})
		if err != nil {
			t.Fatal(err)
		}
		if c.keys > 0 {
			err = db.Update(func(tx *bbolt.Tx) error {
				b, err := tx.CreateBucket([]byte("b"))
				for i := 0; err == nil && i < c.keys; i++ {
					err = b.Put(fmt.Appendf(nil, "key-%04d", i), bytes.Repeat([]byte("v"), 40))
				}
				return err
			})
		}
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		if err := boltstate.Check(p); err != nil {
			t.Errorf("%s: Check = %v, want nil", c.name, err)
		}
	}
	good, err := os.ReadFile(goodFile(t))
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	pages := len(good) / page
	hwm := binary.NativeEndian.Uint64(good[16+40:]) // meta page 0's high-water mark
	for _, c := range []struct {
		field int    // offset in the meta
		value uint64 // written as u32 at 8 (page size), as u64 elsewhere
		want  string
	}{
		{8, 256, "meta page 0: page size 256"},
		{8, 1 << 17, "meta page 0: page size 131072"},
		{8, 3072, "meta page 0: page size 3072"},
		{40, 3, fmt.Sprintf("meta page 0: high-water mark of 3 pages, file holds %d", pages)},
		{40, uint64(pages + 1), fmt.Sprintf("meta page 0: high-water mark of %d pages, file holds %d", pages+1, pages)},
		{16, hwm, "meta page 0: root or freelist page beyond the high-water mark"},
		{32, hwm, "meta page 0: root or freelist page beyond the high-water mark"},
	} {
		bad := bytes.Clone(good)
		setMeta(bad, 0, c.field, c.value)
		p := filepath.Join(t.TempDir(), "m.db")
		os.WriteFile(p, bad, 0o600)
		var ce *boltstate.CorruptError
		if err := boltstate.Check(p); !errors.As(err, &ce) || ce.Reason != c.want {
			t.Errorf("meta field %d = %d: Check = %v, want the reason %q", c.field, c.value, err, c.want)
		}
	}
}

// setMeta sets a field of meta page n (0 or 1, of 4 KiB pages) of a bbolt
// file's bytes, at its offset in the meta (after the page header): a u32
// at 0 (magic), 4 (version) and 8 (page size), a u64 elsewhere; the meta's
// checksum is made to match. Field 56 is the checksum: it is made wrong.
func setMeta(data []byte, n, field int, value uint64) {
	m := data[n*4096+16 : n*4096+16+64]
	if field == 0 || field == 4 || field == 8 {
		binary.NativeEndian.PutUint32(m[field:], uint32(value))
	} else {
		binary.NativeEndian.PutUint64(m[field:], value)
	}
	if field == 56 { // the checksum itself: made not to match
		binary.NativeEndian.PutUint64(m[56:], binary.NativeEndian.Uint64(m[56:])^1)
		return
	}
	h := fnv.New64a()
	h.Write(m[:56])
	binary.NativeEndian.PutUint64(m[56:], h.Sum64())
}

// What Check does not catch, bbolt's own checks and a fault while it reads
// do (OpenDB's second line, here reached with Check left out): the file is
// corrupt, moved aside, a fresh one opened, and the damaged one's
// descriptor closed. With Check, both files are refused before bbolt reads
// them.
func TestDamage_BehindTheCheck(t *testing.T) {
	good, err := os.ReadFile(goodFile(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name         string
		field        int
		value        uint64
		reason       string
		checksReason string
	}{
		{"both metas of another format (magic)", 0, 0xdeadbeef, "bbolt refused it", "meta page 0: bad magic number"},
		{"both metas of a later version", 4, 9, "bbolt refused it", "meta page 0: unknown format version 9"},
		{"both metas' checksums wrong", 56, 0, "bbolt refused it", "meta page 0: checksum mismatch"},
		{"both metas name a freelist page far past the file", 32, 1 << 40, "bbolt failed reading it", "meta page 0: root or freelist page beyond the high-water mark"},
	} {
		bad := bytes.Clone(good)
		setMeta(bad, 0, c.field, c.value)
		setMeta(bad, 1, c.field, c.value)
		var ce *boltstate.CorruptError
		p := filepath.Join(t.TempDir(), "m.db")
		os.WriteFile(p, bad, 0o600)
		if err := boltstate.Check(p); !errors.As(err, &ce) || ce.Reason != c.checksReason {
			t.Errorf("%s: Check = %v, want the reason %q", c.name, err, c.checksReason)
		}
		fds := openFiles(t)
		for i := range 5 {
			p := filepath.Join(t.TempDir(), "m.db")
			os.WriteFile(p, bad, 0o600)
			var logs bytes.Buffer
			db, err := boltstate.OpenDBUnchecked(p, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatalf("%s: OpenDB = %v, want a fresh file in its place", c.name, err)
			}
			db.Close()
			kept, _ := filepath.Glob(p + ".corrupt-*")
			if len(kept) != 1 || !strings.Contains(logs.String(), c.reason) {
				t.Fatalf("%s: kept aside %v, logged %q; want one copy and the reason %q", c.name, kept, logs.String(), c.reason)
			}
			if saved, _ := os.ReadFile(kept[0]); !bytes.Equal(saved, bad) && i == 0 {
				t.Errorf("%s: the copy kept aside differs from the damaged file", c.name)
			}
		}
		if now := openFiles(t); now > fds {
			t.Errorf("%s: %d files open after 5 opens, %d before: the damaged files' descriptors leak", c.name, now, fds)
		}
	}
}

// A state file that cannot be opened for another reason than its content
// (a directory in its place, a directory that does not exist) is an
// error that is not ErrCorrupt, and nothing is moved aside or created:
// only damage replaces a file with a fresh one.
func TestOpenDB_NotDamageLeftInPlace(t *testing.T) {
	dir := t.TempDir()
	isDir := filepath.Join(dir, "state.db")
	if err := os.Mkdir(isDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{isDir, filepath.Join(dir, "missing", "state.db")} {
		var logs bytes.Buffer
		db, err := boltstate.OpenDB(path, &boltstate.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err == nil {
			db.Close()
			t.Fatalf("%s: opened", path)
		}
		if errors.Is(err, boltstate.ErrCorrupt) || logs.Len() > 0 {
			t.Errorf("%s: OpenDB = %v, logged %q; want an error that is not ErrCorrupt, and no warning", path, err, logs.String())
		}
	}
	if fi, err := os.Stat(isDir); err != nil || !fi.IsDir() {
		t.Errorf("the directory in the state file's place is gone: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("the directory holds %d entries after the opens, want only the one it had", len(left))
	}
}

// openFiles is the number of this process's open file descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		testenv.Missing(t, "no /proc/self/fd to count open files: %v", err)
	}
	return len(fds)
}

// treeFile writes a bbolt file with one bucket large enough for a branch
// page, and returns its bytes, the high-water mark of its newer meta and
// the bucket's root page (a branch page).
func treeFile(t *testing.T) (data []byte, hwm, branch uint64) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tree.db")
	db, err := bbolt.Open(p, 0o600, &bbolt.Options{PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("b"))
		for i := 0; err == nil && i < 2000; i++ {
			err = b.Put(fmt.Appendf(nil, "key-%05d", i), bytes.Repeat([]byte("v"), 20))
		}
		return err
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if data, err = os.ReadFile(p); err != nil {
		t.Fatal(err)
	}
	ne := binary.NativeEndian
	meta := func(i int) []byte { return data[i*4096+16 : i*4096+16+64] }
	cur := meta(0)
	if ne.Uint64(meta(1)[48:]) > ne.Uint64(cur[48:]) {
		cur = meta(1)
	}
	hwm = ne.Uint64(cur[40:])
	root := data[ne.Uint64(cur[16:])*4096:] // the leaf of top-level buckets
	if ne.Uint16(root[8:]) != 0x02 || ne.Uint16(root[10:]) != 1 {
		t.Fatalf("root page flags %#x, %d elements: want a leaf of one bucket", ne.Uint16(root[8:]), ne.Uint16(root[10:]))
	}
	e := root[16:]
	v := e[ne.Uint32(e[4:])+ne.Uint32(e[8:]):] // the bucket's header: its root page first
	branch = ne.Uint64(v)
	if bp := data[branch*4096:]; ne.Uint16(bp[8:]) != 0x01 || ne.Uint16(bp[10:]) < 2 {
		t.Fatalf("bucket root %d: flags %#x, %d elements: want a branch of two or more", branch, ne.Uint16(bp[8:]), ne.Uint16(bp[10:]))
	}
	return data, hwm, branch
}

// The tree's page references are checked: a child at the high-water mark,
// a child named twice, a page whose overflow reaches the high-water mark,
// a key or a leaf's later element past its page are damage, each named; a key that ends at its
// page's last byte is not.
func TestDamage_TreeReferencesChecked(t *testing.T) {
	good, hwm, branch := treeFile(t)
	ne := binary.NativeEndian
	child := func(data []byte, i int) []byte { return data[branch*4096+16+uint64(i)*16+8:] } // element i's page id
	first, second := ne.Uint64(child(good, 0)), ne.Uint64(child(good, 1))
	// Branch element 0: pos (from the element) and ksize; ksizeTo is the
	// ksize that ends its key at offset end of the page.
	key := func(d []byte) []byte { return d[branch*4096+16+4:] }
	ksizeTo := func(d []byte, end int) uint32 { return uint32(end - 16 - int(ne.Uint32(d[branch*4096+16:]))) }
	for _, c := range []struct {
		name string
		edit func(data []byte)
		want string
	}{
		{"child at the high-water mark", func(d []byte) { ne.PutUint64(child(d, 0), hwm) },
			fmt.Sprintf("page %d is outside the file's pages [2, %d)", hwm, hwm)},
		{"child named twice", func(d []byte) { ne.PutUint64(child(d, 1), first) },
			fmt.Sprintf("page %d is referred to twice", first)},
		{"overflow to the high-water mark", func(d []byte) { ne.PutUint32(d[second*4096+12:], uint32(hwm-second)) },
			fmt.Sprintf("page %d runs past the high-water mark", second)},
		{"a key one byte past the page", func(d []byte) { ne.PutUint32(key(d), ksizeTo(d, 4096+1)) },
			fmt.Sprintf("page %d: key 0 outside the page", branch)},
		{"a key ending at the page's end", func(d []byte) { ne.PutUint32(key(d), ksizeTo(d, 4096)) }, ""},
		{"a leaf's second element past the page", func(d []byte) { ne.PutUint32(d[second*4096+16+16+12:], 4096) },
			fmt.Sprintf("page %d: element 1 outside the page", second)},
	} {
		p := filepath.Join(t.TempDir(), "bad.db")
		bad := bytes.Clone(good)
		c.edit(bad)
		os.WriteFile(p, bad, 0o600)
		err := boltstate.Check(p)
		var ce *boltstate.CorruptError
		if c.want == "" && err != nil || c.want != "" && (!errors.As(err, &ce) || ce.Reason != c.want) {
			t.Errorf("%s: Check = %v, want the reason %q", c.name, err, c.want)
		}
	}
	p := filepath.Join(t.TempDir(), "good.db")
	os.WriteFile(p, good, 0o600)
	if err := boltstate.Check(p); err != nil {
		t.Errorf("the unedited file: %v", err)
	}
}

// The freelist page is checked: as many ids as fill its page are sound,
// one more does not fit, and an id at the high-water mark is outside the
// file's pages.
func TestDamage_FreelistChecked(t *testing.T) {
	good, hwm, _ := treeFile(t)
	ne := binary.NativeEndian
	cur := good[16 : 16+64]
	if m1 := good[4096+16 : 4096+16+64]; ne.Uint64(m1[48:]) > ne.Uint64(cur[48:]) {
		cur = m1
	}
	free := ne.Uint64(cur[32:])
	const fit = (4096 - 16) / 8 // ids after the page header
	freelist := func(n int, last uint64) []byte {
		bad := bytes.Clone(good)
		pg := bad[free*4096 : (free+1)*4096]
		ne.PutUint16(pg[10:], uint16(n))
		ne.PutUint32(pg[12:], 0) // no overflow page
		for i := range min(n, fit) {
			ne.PutUint64(pg[16+8*i:], 2)
		}
		ne.PutUint64(pg[16+8*(min(n, fit)-1):], last)
		return bad
	}
	for _, c := range []struct {
		name string
		data []byte
		want string // "" for a sound file
	}{
		{"a full page of ids", freelist(fit, hwm-1), ""},
		{"one id more than fits", freelist(fit+1, 2), fmt.Sprintf("freelist: %d ids do not fit its page", fit+1)},
		{"an id at the high-water mark", freelist(3, hwm), fmt.Sprintf("freelist: page %d outside the file's pages", hwm)},
		{"an id below the first data page", freelist(3, 1), "freelist: page 1 outside the file's pages"},
	} {
		p := filepath.Join(t.TempDir(), "f.db")
		os.WriteFile(p, c.data, 0o600)
		err := boltstate.Check(p)
		var ce *boltstate.CorruptError
		if c.want == "" && err != nil || c.want != "" && (!errors.As(err, &ce) || ce.Reason != c.want) {
			t.Errorf("%s: Check = %v, want the reason %q", c.name, err, c.want)
		}
	}
}
