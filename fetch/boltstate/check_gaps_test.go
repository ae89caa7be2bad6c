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
