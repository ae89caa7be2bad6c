package boltstate_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
)

// A page's element count and its overflow are bounded by the page and the
// high-water mark, whatever page the tree names: a branch page counting
// more elements than its 4 KiB hold (16-byte header, 16-byte elements:
// 255 at most), or a leaf page near the mark whose overflow pages reach
// it, is damage, named, never a panic.
func TestDamage_CountsAndOverflowsBounded(t *testing.T) {
	good, hwm, branch := treeFile(t)
	ne := binary.NativeEndian
	bp := good[branch*4096:]
	last := uint64(0) // the branch's child of the highest id: a leaf
	for i := range int(ne.Uint16(bp[10:])) {
		last = max(last, ne.Uint64(bp[16+16*i+8:]))
	}
	if 2*last <= hwm {
		t.Fatalf("the branch's last child is page %d, want one past the middle of the %d pages", last, hwm)
	}
	for _, c := range []struct {
		name string
		edit func(data []byte)
		want string
	}{
		{"a branch of 256 elements", func(d []byte) { ne.PutUint16(d[branch*4096+10:], 256) },
			fmt.Sprintf("page %d: 256 elements do not fit", branch)},
		{"a branch of 65535 elements", func(d []byte) { ne.PutUint16(d[branch*4096+10:], 0xFFFF) },
			fmt.Sprintf("page %d: 65535 elements do not fit", branch)},
		{"a leaf's overflow to the high-water mark", func(d []byte) { ne.PutUint32(d[last*4096+12:], uint32(hwm-last)) },
			fmt.Sprintf("page %d runs past the high-water mark", last)},
		{"a leaf's overflow past it", func(d []byte) { ne.PutUint32(d[last*4096+12:], uint32(hwm-last+1)) },
			fmt.Sprintf("page %d runs past the high-water mark", last)},
	} {
		p := filepath.Join(t.TempDir(), "bad.db")
		bad := bytes.Clone(good)
		c.edit(bad)
		if err := os.WriteFile(p, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		var ce *boltstate.CorruptError
		if err := boltstate.Check(p); !errors.As(err, &ce) || ce.Reason != c.want {
			t.Errorf("%s: Check = %v, want the reason %q", c.name, err, c.want)
		}
	}
}

// Of two metas of one transaction id, bbolt uses meta page 0's (it takes
// meta page 1's only when its id is the greater), so Check judges that
// tree: here meta page 0's has a child at the high-water mark, meta page
// 1's is a sound leaf.
func TestCheck_TiedMetasTakePageZero(t *testing.T) {
	ne := binary.NativeEndian
	data, hwm, branch := treeFile(t)
	cur := data[16 : 16+64]
	if m1 := data[4096+16 : 4096+16+64]; ne.Uint64(m1[48:]) > ne.Uint64(cur[48:]) {
		cur = m1
	}
	root, free := ne.Uint64(cur[16:]), ne.Uint64(cur[32:])
	leaf := ne.Uint64(data[branch*4096+16+16+8:]) // the branch's second child: a sound leaf
	ne.PutUint64(data[branch*4096+16+8:], hwm)    // the branch's first child at the mark
	for n, m := range []struct{ root, txid uint64 }{{root, 3}, {leaf, 3}} {
		setMeta(data, n, 16, m.root)
		setMeta(data, n, 32, free)
		setMeta(data, n, 40, hwm)
		setMeta(data, n, 48, m.txid)
	}
	p := filepath.Join(t.TempDir(), "tied.db")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("page %d is outside the file's pages [2, %d)", hwm, hwm)
	var ce *boltstate.CorruptError
	if err := boltstate.Check(p); !errors.As(err, &ce) || ce.Reason != want {
		t.Errorf("Check = %v, want the reason %q (of meta page 0's tree)", err, want)
	}
}
