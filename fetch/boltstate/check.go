package boltstate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"

	"go.etcd.io/bbolt"
)

// ErrCorrupt is matched (errors.Is) by the [*CorruptError] of a damaged
// state file.
var ErrCorrupt = errors.New("boltstate: damaged state file")

// CorruptError says why the bbolt file at Path is damaged. It matches
// [ErrCorrupt].
type CorruptError struct {
	Path   string
	Reason string
	Err    error // the underlying error, if any (a bbolt error, a recovered panic)
}

func (e *CorruptError) Error() string {
	s := fmt.Sprintf("boltstate: %s is damaged: %s", e.Path, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is [ErrCorrupt].
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns the underlying error.
func (e *CorruptError) Unwrap() error { return e.Err }

// bbolt's on-disk layout (go.etcd.io/bbolt/internal/common), in the byte
// order of the machine that wrote it.
const (
	pageHeaderSize  = 16 // id u64, flags u16, count u16, overflow u32
	elementSize     = 16 // branch: pos, ksize u32, pgid u64; leaf: flags, pos, ksize, vsize u32
	metaSize        = 64 // magic, version, pageSize, flags u32; root, sequence, freelist, pgid, txid, checksum u64
	metaSummed      = 56 // bytes of the meta covered by its checksum
	inBucketSize    = 16 // root u64, sequence u64
	magic           = 0xED0CDAED
	version         = 2
	branchPageFlag  = 0x01
	leafPageFlag    = 0x02
	metaPageFlag    = 0x04
	freelistFlag    = 0x10
	bucketLeafFlag  = 0x01
	noFreelist      = ^uint64(0)
	minPageSize     = 512
	maxPageSize     = 1 << 16
	maxCheckedDepth = 64 // deeper trees (or cycles) are damage
)

var ne = binary.NativeEndian

type meta struct {
	pageSize        uint32
	root, freelist  uint64
	highWater, txid uint64
}

func readMeta(b []byte) (meta, error) {
	if len(b) < pageHeaderSize+metaSize {
		return meta{}, errors.New("short meta page")
	}
	m := b[pageHeaderSize : pageHeaderSize+metaSize]
	if ne.Uint32(m[0:]) != magic {
		return meta{}, errors.New("bad magic number")
	}
	if v := ne.Uint32(m[4:]); v != version {
		return meta{}, fmt.Errorf("unknown format version %d", v)
	}
	h := fnv.New64a()
	h.Write(m[:metaSummed])
	if h.Sum64() != ne.Uint64(m[metaSummed:]) {
		return meta{}, errors.New("checksum mismatch")
	}
	return meta{pageSize: ne.Uint32(m[8:]), root: ne.Uint64(m[16:]), freelist: ne.Uint64(m[32:]),
		highWater: ne.Uint64(m[40:]), txid: ne.Uint64(m[48:])}, nil
}

// Check reports whether the bbolt file at path can be used without risk:
// nil for a sound file and for a missing or empty one (bbolt starts it
// afresh), else a [*CorruptError]. It reads the file with plain reads (no
// memory map, so a truncated file cannot fault) and checks that both meta
// pages are intact (magic, version, checksum), that the file holds every
// page below the high-water mark they record, and that every page the tree
// and the freelist refer to lies below that mark, with its elements, keys and
// values inside the page. It does not take bbolt's file lock.
//
// A damaged file that passes (a flipped byte inside a stored value) is
// caught, where it matters, by the stores' record decoding.
func Check(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return checkFile(f, path)
}

func checkFile(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == 0 {
		return nil
	}
	c := checker{f: f, size: fi.Size()}
	if reason := c.check(); reason != "" {
		return &CorruptError{Path: path, Reason: reason}
	}
	return nil
}

type checker struct {
	f     io.ReaderAt
	size  int64
	psize int64
	hwm   uint64
	seen  map[uint64]bool
}

func (c *checker) read(off, n int64) ([]byte, bool) {
	if off < 0 || n < 0 || off+n > c.size {
		return nil, false
	}
	b := make([]byte, n)
	if _, err := c.f.ReadAt(b, off); err != nil {
		return nil, false
	}
	return b, true
}

// check returns why the file is damaged, or "".
func (c *checker) check() string {
	first, ok := c.read(0, pageHeaderSize+metaSize)
	if !ok {
		return fmt.Sprintf("file of %d bytes is shorter than a meta page", c.size)
	}
	m0, err := readMeta(first)
	if err != nil {
		return "meta page 0: " + err.Error()
	}
	if m0.pageSize < minPageSize || m0.pageSize > maxPageSize || m0.pageSize&(m0.pageSize-1) != 0 {
		return fmt.Sprintf("meta page 0: page size %d", m0.pageSize)
	}
	c.psize = int64(m0.pageSize)
	second, ok := c.read(c.psize, pageHeaderSize+metaSize)
	if !ok {
		return fmt.Sprintf("file of %d bytes ends before meta page 1", c.size)
	}
	m1, err := readMeta(second)
	if err != nil {
		return "meta page 1: " + err.Error()
	}
	if m1.pageSize != m0.pageSize {
		return fmt.Sprintf("meta pages disagree on the page size (%d, %d)", m0.pageSize, m1.pageSize)
	}
	for i, m := range []meta{m0, m1} {
		if m.highWater < 4 || m.highWater > uint64(c.size/c.psize) {
			return fmt.Sprintf("meta page %d: high-water mark of %d pages, file holds %d", i, m.highWater, c.size/c.psize)
		}
		if m.root >= m.highWater || (m.freelist >= m.highWater && m.freelist != noFreelist) {
			return fmt.Sprintf("meta page %d: root or freelist page beyond the high-water mark", i)
		}
	}
	cur := m0 // bbolt uses the meta of the latest transaction
	if m1.txid > m0.txid {
		cur = m1
	}
	c.hwm = cur.highWater
	c.seen = map[uint64]bool{}
	if cur.freelist != noFreelist {
		if r := c.freelist(cur.freelist); r != "" {
			return r
		}
	}
	if cur.root != 0 {
		return c.page(cur.root, 0)
	}
	return ""
}

// span reads page id and its overflow pages, checking it lies below the
// high-water mark and has the flags want.
func (c *checker) span(id uint64, want uint16) ([]byte, string) {
	if id < 2 || id >= c.hwm {
		return nil, fmt.Sprintf("page %d is outside the file's pages [2, %d)", id, c.hwm)
	}
	if c.seen[id] {
		return nil, fmt.Sprintf("page %d is referred to twice", id)
	}
	c.seen[id] = true
	head, ok := c.read(int64(id)*c.psize, pageHeaderSize)
	if !ok {
		return nil, fmt.Sprintf("page %d cannot be read", id)
	}
	if got := ne.Uint64(head); got != id {
		return nil, fmt.Sprintf("page %d says it is page %d", id, got)
	}
	if flags := ne.Uint16(head[8:]); flags&want == 0 {
		return nil, fmt.Sprintf("page %d has flags %#x", id, flags)
	}
	overflow := uint64(ne.Uint32(head[12:]))
	if id+overflow >= c.hwm {
		return nil, fmt.Sprintf("page %d runs past the high-water mark", id)
	}
	b, ok := c.read(int64(id)*c.psize, int64(overflow+1)*c.psize)
	if !ok {
		return nil, fmt.Sprintf("page %d cannot be read", id)
	}
	return b, ""
}

func (c *checker) freelist(id uint64) string {
	b, r := c.span(id, freelistFlag)
	if r != "" {
		return "freelist: " + r
	}
	n, start := uint64(ne.Uint16(b[10:])), uint64(pageHeaderSize)
	if n == 0xFFFF { // the count is in the first id's place (a span is a page: 512 bytes or more)
		n, start = ne.Uint64(b[pageHeaderSize:]), start+8
	}
	if n > (uint64(len(b))-start)/8 {
		return fmt.Sprintf("freelist: %d ids do not fit its page", n)
	}
	for i := range n {
		if pid := ne.Uint64(b[start+8*i:]); pid < 2 || pid >= c.hwm {
			return fmt.Sprintf("freelist: page %d outside the file's pages", pid)
		}
	}
	return ""
}

// page checks the branch or leaf page id and everything under it.
func (c *checker) page(id uint64, depth int) string {
	if depth > maxCheckedDepth {
		return "tree too deep"
	}
	b, r := c.span(id, branchPageFlag|leafPageFlag)
	if r != "" {
		return r
	}
	return c.nodes(b, depth, fmt.Sprintf("page %d", id))
}

// nodes checks the elements of the page image b (a page span, or an inline
// bucket's page inside a value).
func (c *checker) nodes(b []byte, depth int, where string) string {
	if len(b) < pageHeaderSize {
		return where + ": short page"
	}
	flags, n := ne.Uint16(b[8:]), int(ne.Uint16(b[10:]))
	if pageHeaderSize+n*elementSize > len(b) {
		return fmt.Sprintf("%s: %d elements do not fit", where, n)
	}
	for i := range n {
		at := pageHeaderSize + i*elementSize
		e := b[at : at+elementSize]
		switch {
		case flags&branchPageFlag != 0:
			pos, ksize := int(ne.Uint32(e[0:])), int(ne.Uint32(e[4:]))
			if at+pos+ksize > len(b) || pos < 0 {
				return fmt.Sprintf("%s: key %d outside the page", where, i)
			}
			if r := c.page(ne.Uint64(e[8:]), depth+1); r != "" {
				return r
			}
		case flags&leafPageFlag != 0:
			eflags, pos, ksize, vsize := ne.Uint32(e[0:]), int(ne.Uint32(e[4:])), int(ne.Uint32(e[8:])), int(ne.Uint32(e[12:]))
			end := at + pos + ksize + vsize
			if pos < 0 || end > len(b) || end < at {
				return fmt.Sprintf("%s: element %d outside the page", where, i)
			}
			if eflags&bucketLeafFlag == 0 {
				continue
			}
			v := b[at+pos+ksize : end]
			if len(v) < inBucketSize {
				return fmt.Sprintf("%s: bucket %d has a short header", where, i)
			}
			if root := ne.Uint64(v); root != 0 {
				if r := c.page(root, depth+1); r != "" {
					return r
				}
			} else if r := c.nodes(v[inBucketSize:], depth+1, fmt.Sprintf("%s: inline bucket %d", where, i)); r != "" {
				return r
			}
		default:
			return fmt.Sprintf("%s: neither branch nor leaf (flags %#x)", where, flags)
		}
	}
	return ""
}

// consistent runs bbolt's own consistency check on db (reachability, double
// frees, key order), with a panic inside bbolt turned into an error.
func consistent(db *bbolt.DB) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return db.View(func(tx *bbolt.Tx) error {
		var errs []error
		for e := range tx.Check() { // drained to the end: Check's goroutine must finish
			if len(errs) < 5 {
				errs = append(errs, e)
			}
		}
		return errors.Join(errs...)
	})
}
