package boltstate

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
)

// table is the keys of a layer's bucket and their values, held where the
// garbage collector does not look: each write is appended to the layer's
// arena (large blocks of bytes, never written again) and the index maps the
// key's hash to where its latest entry starts. A map of strings to byte
// slices held two objects a key for every collection to mark, a layer's
// hundred thousand keys at every cycle; the index and the arena hold no
// pointer. Keys whose hash another key of the table has (a 64-bit hash:
// rare) are found in overflow, by key. The zero value is not usable: make
// one with newTable.
type table struct {
	a        *arena
	seed     maphash.Seed
	index    map[uint64]ref
	overflow map[string]ref
}

func newTable(a *arena, seed maphash.Seed, room int) *table {
	return &table{a: a, seed: seed, index: make(map[uint64]ref, room)}
}

// len returns the number of keys (each with its value or deleted).
func (t *table) len() int { return len(t.index) + len(t.overflow) }

// get returns key's value, nil if key is deleted; ok is false when the
// table does not hold key. The value is the table's: not to be changed.
func (t *table) get(key string) (val []byte, ok bool) {
	r, ok := t.index[maphash.String(t.seed, key)]
	if !ok {
		return nil, false
	}
	if k, v := t.a.entry(r); string(k) == key {
		return v, true
	}
	if r, ok = t.overflow[key]; !ok {
		return nil, false
	}
	_, val = t.a.entry(r)
	return val, true
}

// set makes val key's value (nil: key is deleted).
func (t *table) set(key string, val []byte) {
	r := t.a.add(key, val)
	h := maphash.String(t.seed, key)
	old, ok := t.index[h]
	if !ok {
		t.index[h] = r
		return
	}
	if k, _ := t.a.entry(old); string(k) == key {
		t.index[h] = r
		return
	}
	if t.overflow == nil {
		t.overflow = map[string]ref{}
	}
	t.overflow[key] = r
}

// clear forgets every key (the arena keeps their bytes until the layer
// goes).
func (t *table) clear() {
	clear(t.index)
	t.overflow = nil
}

// refs returns the refs of every key's latest entry, in no order.
func (t *table) refs() []ref {
	out := make([]ref, 0, t.len())
	for _, r := range t.index {
		out = append(out, r)
	}
	for _, r := range t.overflow {
		out = append(out, r)
	}
	return out
}

// ref is where an entry starts in an arena: its block in the high 32 bits,
// its offset in the low ones.
type ref uint64

// arena holds the entries of a layer's tables, appended to blocks of
// blockSize bytes (an entry larger than that has a block of its own). An
// entry is its key's length and its value's (deletedLen: deleted) as two
// little-endian uint32s, then the key, then the value.
type arena struct {
	blocks [][]byte
}

const (
	blockSize   = 1 << 20
	entryHeader = 8
	deletedLen  = 1<<32 - 1
)

// add appends the entry of key and val (nil: deleted) and returns its ref.
func (a *arena) add(key string, val []byte) ref {
	n := entryHeader + len(key) + len(val)
	last := len(a.blocks) - 1
	if last < 0 || cap(a.blocks[last])-len(a.blocks[last]) < n {
		a.blocks = append(a.blocks, make([]byte, 0, max(blockSize, n)))
		last++
	}
	b := a.blocks[last]
	r := ref(uint64(last)<<32 | uint64(len(b)))
	vlen := uint32(len(val))
	if val == nil {
		vlen = deletedLen
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(key)))
	b = binary.LittleEndian.AppendUint32(b, vlen)
	b = append(b, key...)
	a.blocks[last] = append(b, val...)
	return r
}

// entry returns the key and the value (nil: deleted) of the entry at r.
// Both are the arena's bytes: not to be changed.
func (a *arena) entry(r ref) (key, val []byte) {
	b := a.blocks[r>>32]
	off := int(uint32(r))
	klen := int(binary.LittleEndian.Uint32(b[off:]))
	vlen := binary.LittleEndian.Uint32(b[off+4:])
	k := off + entryHeader
	key = b[k : k+klen : k+klen]
	if vlen == deletedLen {
		return key, nil
	}
	v := k + klen
	return key, b[v : v+int(vlen) : v+int(vlen)]
}

// compare orders the keys of the entries at r and s.
func (a *arena) compare(r, s ref) int {
	k1, _ := a.entry(r)
	k2, _ := a.entry(s)
	return bytes.Compare(k1, k2)
}
