package boltstate_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
)

// Sound files that bbolt can write, or read, pass Check however unusual:
// buckets nested twenty deep (every level a page of its own), a leaf
// whose last value ends at its page's last byte, and a freelist page whose
// count is in its first id's place (bbolt's form for 0xFFFF ids or more).
func TestCheck_SoundFilesPass(t *testing.T) {
	ne := binary.NativeEndian
	tree, _, branch := treeFile(t)
	second := ne.Uint64(tree[branch*4096+16+16+8:]) // the branch's second child: a leaf
	cur := tree[16 : 16+64]
	if m1 := tree[4096+16 : 4096+16+64]; ne.Uint64(m1[48:]) > ne.Uint64(cur[48:]) {
		cur = m1
	}
	free := ne.Uint64(cur[32:])
	for _, c := range []struct {
		name string
		data func(t *testing.T) []byte
	}{
		{"buckets nested twenty deep", func(t *testing.T) []byte {
			p := filepath.Join(t.TempDir(), "deep.db")
			db, err := bbolt.Open(p, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bbolt.Tx) error {
				b, err := tx.CreateBucket([]byte("level 0"))
				for i := 1; err == nil && i <= 20; i++ {
					if err = b.Put([]byte("k"), bytes.Repeat([]byte("v"), 100)); err == nil {
						b, err = b.CreateBucket(fmt.Appendf(nil, "level %d", i))
					}
				}
				return err
			})
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			return data
		}},
		{"a leaf's last value ending at its page's end", func(t *testing.T) []byte {
			d := bytes.Clone(tree)
			pg := d[second*4096 : (second+1)*4096]
			n := int(ne.Uint16(pg[10:]))
			at := 16 + (n-1)*16
			pos, ksize := int(ne.Uint32(pg[at+4:])), int(ne.Uint32(pg[at+8:]))
			ne.PutUint32(pg[at+12:], uint32(4096-at-pos-ksize))
			return d
		}},
		{"a freelist's count in its first id's place", func(t *testing.T) []byte {
			d := bytes.Clone(tree)
			pg := d[free*4096 : (free+1)*4096]
			ne.PutUint16(pg[10:], 0xFFFF)
			ne.PutUint32(pg[12:], 0)   // no overflow page
			ne.PutUint64(pg[16:], 1)   // one id
			ne.PutUint64(pg[16+8:], 2) // page 2
			return d
		}},
	} {
		p := filepath.Join(t.TempDir(), "sound.db")
		if err := os.WriteFile(p, c.data(t), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := boltstate.Check(p); err != nil {
			t.Errorf("%s: Check = %v, want nil", c.name, err)
		}
	}
}

// A file whose every page reference is sound but whose keys are out of
// order passes Check and fails bbolt's own consistency check, OpenDB's
// second line: it is moved aside, with a warning naming that check, and a
// fresh file is opened in its place.
func TestOpenDB_ConsistencyCheckFails(t *testing.T) {
	ne := binary.NativeEndian
	data, _, branch := treeFile(t)
	leaf := ne.Uint64(data[branch*4096+16+8:]) // the branch's first child: a leaf of keys key-00000…
	pg := data[leaf*4096 : (leaf+1)*4096]
	key := func(i int) []byte {
		at := 16 + i*16
		pos, ksize := int(ne.Uint32(pg[at+4:])), int(ne.Uint32(pg[at+8:]))
		return pg[at+pos : at+pos+ksize]
	}
	k0, k1 := key(0), key(1)
	if len(k0) != len(k1) || bytes.Compare(k0, k1) >= 0 {
		t.Fatalf("leaf %d starts with keys %q, %q: want two of one length in order", leaf, k0, k1)
	}
	tmp := bytes.Clone(k0)
	copy(k0, k1)
	copy(k1, tmp)
	p := filepath.Join(t.TempDir(), "order.db")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := boltstate.Check(p); err != nil {
		t.Fatalf("Check = %v, want nil (no page reference is damaged)", err)
	}
	var logs bytes.Buffer
	db, err := boltstate.OpenDB(p, &boltstate.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("OpenDB = %v, want a fresh file in its place", err)
	}
	db.Close()
	kept, _ := filepath.Glob(p + ".corrupt-*")
	if len(kept) != 1 || !strings.Contains(logs.String(), "bbolt's consistency check failed") {
		t.Errorf("kept aside %v, logged %q; want one copy and the reason %q", kept, logs.String(), "bbolt's consistency check failed")
	}
	if len(kept) == 1 {
		if saved, _ := os.ReadFile(kept[0]); !bytes.Equal(saved, data) {
			t.Error("the copy kept aside differs from the damaged file")
		}
	}
}

// With Options.ReadOnly a damaged file is an error, a *CorruptError, and
// is left where it is: nothing is moved aside, no fresh file started.
func TestOpenDB_ReadOnlyDamageLeftInPlace(t *testing.T) {
	good, err := os.ReadFile(goodFile(t))
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(good)
	setMeta(bad, 0, 56, 0) // meta page 0's checksum made wrong
	p := filepath.Join(t.TempDir(), "ro.db")
	if err := os.WriteFile(p, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, open := range []struct {
		name string
		open func(o *boltstate.Options) error
	}{
		{"OpenDB", func(o *boltstate.Options) error {
			db, err := boltstate.OpenDB(p, o)
			if err == nil {
				db.Close()
			}
			return err
		}},
		{"Open", func(o *boltstate.Options) error {
			st, err := boltstate.Open(p, o)
			if err == nil {
				st.Close()
			}
			return err
		}},
	} {
		var logs bytes.Buffer
		err := open.open(&boltstate.Options{ReadOnly: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		var ce *boltstate.CorruptError
		if !errors.As(err, &ce) || ce.Path != p {
			t.Errorf("%s read-only: %v, want a *CorruptError for %s", open.name, err, p)
		}
		if kept, _ := filepath.Glob(p + ".corrupt-*"); len(kept) != 0 || logs.Len() != 0 {
			t.Errorf("%s read-only: kept aside %v, logged %q; want nothing moved, no warning", open.name, kept, logs.String())
		}
		if now, err := os.ReadFile(p); err != nil || !bytes.Equal(now, bad) {
			t.Errorf("%s read-only: the damaged file is not left in place (%v)", open.name, err)
		}
	}
}

// Check judges the tree of the meta bbolt uses, that of the later
// transaction, whatever the high-water marks say; of two metas of one
// transaction id, meta page 0's (bbolt takes meta page 1's only when its id
// is the greater). In each case both metas record the same mark, one
// names a tree with a child at the mark, the other a sound leaf.
func TestCheck_TheLaterMetasTree(t *testing.T) {
	for _, tc := range []struct {
		name        string
		damagedMeta int       // the meta page whose tree has a child at the mark
		txids       [2]uint64 // of meta pages 0 and 1
	}{
		{"meta page 1 the later", 1, [2]uint64{2, 3}},
		{"tied: meta page 0", 0, [2]uint64{3, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ne := binary.NativeEndian
			data, hwm, branch := treeFile(t)
			cur := data[16 : 16+64]
			if m1 := data[4096+16 : 4096+16+64]; ne.Uint64(m1[48:]) > ne.Uint64(cur[48:]) {
				cur = m1
			}
			root, free := ne.Uint64(cur[16:]), ne.Uint64(cur[32:])
			leaf := ne.Uint64(data[branch*4096+16+16+8:]) // the branch's second child: a sound leaf
			ne.PutUint64(data[branch*4096+16+8:], hwm)    // the branch's first child at the mark
			for n := range 2 {
				tree := leaf
				if n == tc.damagedMeta {
					tree = root
				}
				setMeta(data, n, 16, tree)
				setMeta(data, n, 32, free)
				setMeta(data, n, 40, hwm)
				setMeta(data, n, 48, tc.txids[n])
			}
			p := filepath.Join(t.TempDir(), "metas.db")
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("page %d is outside the file's pages [2, %d)", hwm, hwm)
			var ce *boltstate.CorruptError
			if err := boltstate.Check(p); !errors.As(err, &ce) || ce.Reason != want {
				t.Errorf("Check = %v, want the reason %q (of meta page %d's tree)", err, want, tc.damagedMeta)
			}
		})
	}
}

// A tree's page references are checked for what they name, each reason
// saying so: a child naming a meta page is outside the file's data pages,
// and a page whose header names another page (a write that landed in the
// wrong place) is damage, though its content looks sound.
func TestCheck_MisdirectedPages(t *testing.T) {
	ne := binary.NativeEndian
	good, hwm, branch := treeFile(t)
	child := func(data []byte, i int) []byte { return data[branch*4096+16+uint64(i)*16+8:] } // element i's page id
	first, second := ne.Uint64(child(good, 0)), ne.Uint64(child(good, 1))
	for _, c := range []struct {
		name string
		edit func(d []byte)
		want string
	}{
		{"a child naming meta page 1", func(d []byte) { ne.PutUint64(child(d, 0), 1) },
			fmt.Sprintf("page 1 is outside the file's pages [2, %d)", hwm)},
		{"a page whose header names another", func(d []byte) { ne.PutUint64(d[first*4096:], second) },
			fmt.Sprintf("page %d says it is page %d", first, second)},
	} {
		bad := bytes.Clone(good)
		c.edit(bad)
		p := filepath.Join(t.TempDir(), "bad.db")
		if err := os.WriteFile(p, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		var ce *boltstate.CorruptError
		if err := boltstate.Check(p); !errors.As(err, &ce) || ce.Reason != c.want {
			t.Errorf("%s: Check = %v, want the reason %q", c.name, err, c.want)
		}
	}
}

// An inline bucket (a small bucket kept in its parent's leaf, its page
// inside the value after the bucket's header) is checked as a page is: an
// element of its page past the end of the value is damage.
func TestCheck_InlineBucketChecked(t *testing.T) {
	ne := binary.NativeEndian
	p := filepath.Join(t.TempDir(), "inline.db")
	db, err := bbolt.Open(p, 0o600, &bbolt.Options{PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("b")) // a page of its own: it holds a bucket
		if err != nil {
			return err
		}
		n, err := b.CreateBucket([]byte("n")) // inline: one small key
		if err != nil {
			return err
		}
		return n.Put([]byte("k"), []byte("v"))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	cur := data[16 : 16+64]
	if m1 := data[4096+16 : 4096+16+64]; ne.Uint64(m1[48:]) > ne.Uint64(cur[48:]) {
		cur = m1
	}
	// value returns the value of element 0 of the leaf page at off.
	value := func(off uint64) []byte {
		e := data[off+16:]
		pos, ksize, vsize := uint64(ne.Uint32(e[4:])), uint64(ne.Uint32(e[8:])), uint64(ne.Uint32(e[12:]))
		return data[off+16+pos+ksize : off+16+pos+ksize+vsize]
	}
	bpage := ne.Uint64(value(ne.Uint64(cur[16:])*4096)) * 4096 // bucket b's root page
	v := value(bpage)                                          // bucket n: its header, then its page
	if ne.Uint64(v) != 0 || ne.Uint16(v[16+10:]) != 1 {
		t.Fatalf("bucket n's value % x: want an inline bucket of one element", v)
	}
	ne.PutUint32(v[16+16+12:], 1000) // its element's value runs past the bucket's value
	os.WriteFile(p, data, 0o600)
	want := fmt.Sprintf("page %d: inline bucket 0: element 0 outside the page", bpage/4096)
	var ce *boltstate.CorruptError
	if err := boltstate.Check(p); !errors.As(err, &ce) || ce.Reason != want {
		t.Errorf("Check = %v, want the reason %q", err, want)
	}
}
