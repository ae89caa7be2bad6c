package boltstate

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"testing"
)

// A table answers as a map of keys to values (nil: deleted) would, through
// rewrites, deletions, empty values and values larger than an arena block,
// and its refs name each key's latest entry once.
func TestTable_AsAMap(t *testing.T) {
	var a arena
	tb := newTable(&a, maphash.MakeSeed(), 0)
	want := map[string][]byte{}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20_000 {
		key := fmt.Sprintf("http://h%d.test/p/%d", r.IntN(50), r.IntN(2000))
		var val []byte
		switch n := r.IntN(10); {
		case n == 0: // deleted
		case n == 1:
			val = []byte{}
		case i == 10_000:
			val = bytes.Repeat([]byte{'x'}, blockSize+1) // a block of its own
		default:
			val = fmt.Appendf(nil, "v%d-%s", i, bytes.Repeat([]byte{'y'}, r.IntN(3000)))
		}
		tb.set(key, val)
		want[key] = val
	}
	if len(a.blocks) < 10 {
		t.Fatalf("%d arena blocks: the writes should have spread over many", len(a.blocks))
	}
	if tb.len() != len(want) {
		t.Errorf("len = %d, want %d", tb.len(), len(want))
	}
	for k, w := range want {
		got, ok := tb.get(k)
		if !ok || !bytes.Equal(got, w) || (got == nil) != (w == nil) {
			t.Errorf("get(%s) = %.20q (nil %v), %v; want %.20q (nil %v)", k, got, got == nil, ok, w, w == nil)
		}
	}
	if _, ok := tb.get("http://h0.test/never"); ok {
		t.Error("get of a key never set: ok")
	}
	var keys []string
	for _, r := range tb.refs() {
		k, v := a.entry(r)
		if w := want[string(k)]; !bytes.Equal(v, w) || (v == nil) != (w == nil) {
			t.Errorf("refs: %s's entry holds %.20q, want its latest value %.20q", k, v, w)
		}
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	if n, distinct := len(keys), len(slices.Compact(slices.Clone(keys))); n != len(want) || distinct != len(want) {
		t.Errorf("refs name %d distinct keys in %d refs; want each of the %d keys once", distinct, n, len(want))
	}
	tb.clear()
	if _, ok := tb.get(keys[0]); ok || tb.len() != 0 {
		t.Errorf("after clear: len %d, get found %s", tb.len(), keys[0])
	}
}

// Two keys whose hashes are equal are both kept: the second in overflow,
// found, rewritten and deleted there. (The collision is made by filing
// the first key's entry under the second key's hash as well.)
func TestTable_HashCollision(t *testing.T) {
	var a arena
	tb := newTable(&a, maphash.MakeSeed(), 0)
	tb.set("k1", []byte("one"))
	tb.index[maphash.String(tb.seed, "k2")] = tb.index[maphash.String(tb.seed, "k1")]
	for _, step := range []struct {
		val  []byte
		want string
	}{{[]byte("two"), "two"}, {[]byte("three"), "three"}, {nil, ""}} {
		tb.set("k2", step.val)
		got, ok := tb.get("k2")
		if !ok || string(got) != step.want || (got == nil) != (step.val == nil) {
			t.Errorf("after set(k2, %q): get(k2) = %q, %v", step.val, got, ok)
		}
		if got, ok := tb.get("k1"); !ok || string(got) != "one" {
			t.Errorf("after set(k2, %q): get(k1) = %q, %v; want one", step.val, got, ok)
		}
	}
	if len(tb.overflow) != 1 {
		t.Errorf("overflow holds %d keys, want k2 alone", len(tb.overflow))
	}
	if _, ok := tb.get("k3"); ok {
		t.Error("get(k3), never set: ok")
	}
	refs := tb.refs()
	if tb.len() != len(refs) {
		t.Errorf("len = %d, refs %d: the overflow counts in both", tb.len(), len(refs))
	}
	if !slices.ContainsFunc(refs, func(r ref) bool { k, v := a.entry(r); return string(k) == "k2" && v == nil }) {
		t.Error("refs lack k2's latest entry (its deletion), kept in overflow")
	}
	tb.clear()
	if _, ok := tb.get("k2"); ok || tb.len() != 0 {
		t.Errorf("after clear: len %d, get(k2) found", tb.len())
	}
}

// An entry's key and value are cut to their own bytes: appending to one
// cannot reach the next entry.
func TestArena_EntriesCapped(t *testing.T) {
	var a arena
	r1 := a.add("a", []byte("1"))
	r2 := a.add("b", []byte("2"))
	k, v := a.entry(r1)
	_ = append(k, 'X')
	_ = append(v, 'Y')
	for _, e := range []struct {
		r        ref
		key, val string
	}{{r1, "a", "1"}, {r2, "b", "2"}} {
		if k, v := a.entry(e.r); string(k) != e.key || string(v) != e.val {
			t.Errorf("entry = %q, %q after appending to the first's key and value; want %s, %s", k, v, e.key, e.val)
		}
	}
	if _, v := a.entry(a.add("c", []byte{})); v == nil || len(v) != 0 {
		t.Errorf("an empty value reads as %v (nil %v); want empty, not deleted", v, v == nil)
	}
}

// An entry stays where it was written: an entry that does not fit in what
// is left of a block starts the next one, so bbolt may keep the slices it
// was given until it commits, and a value read stays the arena's.
func TestArena_EntriesNeverMove(t *testing.T) {
	var a arena
	r1 := a.add("k", make([]byte, blockSize-entryHeader-1-10)) // leaves 10 bytes of the block
	_, before := a.entry(r1)
	r2 := a.add("k2", []byte("v")) // 11 bytes
	if _, after := a.entry(r1); &after[0] != &before[0] {
		t.Error("the first entry moved when the second was added")
	}
	if r2>>32 != 1 || len(a.blocks) != 2 {
		t.Errorf("the second entry is in block %d of %d; want block 1, the first full", r2>>32, len(a.blocks))
	}
}

// FuzzTable runs the writes the input spells (three bytes a write: a key
// out of 16, whether it deletes, a value's length) on a table and on a
// map, and compares every key's value after each write.
func FuzzTable(f *testing.F) {
	f.Add([]byte{0, 0, 3, 1, 0, 0, 0, 1, 0, 2, 0, 255})
	f.Add(bytes.Repeat([]byte{7, 0, 200}, 50))
	f.Fuzz(func(t *testing.T, ops []byte) {
		var a arena
		tb := newTable(&a, maphash.MakeSeed(), 0)
		want := map[string][]byte{}
		for i := 0; i+2 < len(ops); i += 3 {
			key := fmt.Sprintf("k%d", ops[i]%16)
			var val []byte
			if ops[i+1]%4 != 0 { // a put; else a deletion
				val = bytes.Repeat([]byte{byte(i)}, int(ops[i+2]))
			}
			tb.set(key, val)
			want[key] = val
			for k, w := range want {
				got, ok := tb.get(k)
				if !ok || !bytes.Equal(got, w) || (got == nil) != (w == nil) {
					t.Fatalf("after write %d: get(%s) = %v (nil %v), %v; want %v (nil %v)", i/3, k, got, got == nil, ok, w, w == nil)
				}
			}
			if tb.len() != len(want) {
				t.Fatalf("after write %d: len %d, want %d", i/3, tb.len(), len(want))
			}
		}
	})
}
