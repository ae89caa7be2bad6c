// Package bloom is a Bloom filter that grows with what it holds: it
// answers "certainly not added" or "maybe added", never "not added" for a
// key that was. The module's sets kept on disk put one in front of their
// lookups, so that a key never added costs no read.
//
// A Filter starts with room for a first batch of keys and adds a layer of
// twice the room each time the last one fills. Layer i probes 7+i bits a
// key in 1.44·(7+i) bits a key, so its false-positive rate is about
// 2^-(7+i) and the rates of all layers sum to under 2 % whatever the
// filter holds; the bits cost 1.26 bytes a key of room in the first layer
// and 0.18 more in each next one: 2 to 4 bytes a key added, for a filter
// grown from its first room to a hundred times it. The
// zero value is an empty filter with room for 1,024 keys first; a Filter
// is not safe for concurrent use.
package bloom

import (
	"hash/maphash"
	"math/bits"
)

// Filter is a growing Bloom filter (see the package doc).
type Filter struct {
	seed   maphash.Seed
	layers []layer
	keys   int
}

type layer struct {
	bits  []uint64
	m     uint64 // bits in use: a probe is a bit in [0, m)
	k     int    // probes
	room  int    // keys the layer takes at its rate
	count int
}

// firstRoom is the room of a zero Filter's first layer.
const firstRoom = 1024

// New returns an empty filter whose first layer has room for n keys, or
// for 1,024 if n is fewer: the rate of a smaller layer varies too much
// from one filter to the next (a layer of 64 keys ends between 1.3 and
// 2.1 % for the filter it starts) for the sum to stay under 2 %.
func New(n int) *Filter {
	f := &Filter{}
	f.grow(max(n, firstRoom))
	return f
}

// grow adds a layer with room for n keys; layer i probes more times than
// layer i-1, so that the rates of all layers sum to under 2 %.
func (f *Filter) grow(n int) {
	if len(f.layers) == 0 {
		f.seed = maphash.MakeSeed()
	}
	k := 7 + len(f.layers) // rate of layer i ≈ 0.5^(7+i) at 1.44·(7+i) bits a key
	m := uint64(float64(n)*1.44*float64(k)) + 1
	f.layers = append(f.layers, layer{bits: make([]uint64, (m+63)/64), m: m, k: k, room: n})
}

// probes returns the two hashes the probes of key derive from.
func (f *Filter) probes(key string) (uint64, uint64) {
	h := maphash.String(f.seed, key)
	return h, h>>32 | h<<32 | 1
}

// bit maps a probe's hash onto [0, m) (multiply and shift: no division).
func (l *layer) bit(h uint64) uint64 {
	hi, _ := bits.Mul64(h, l.m)
	return hi
}

// Add adds key.
func (f *Filter) Add(key string) {
	if len(f.layers) == 0 {
		f.grow(firstRoom)
	}
	l := &f.layers[len(f.layers)-1]
	if l.count >= l.room {
		f.grow(2 * l.room)
		l = &f.layers[len(f.layers)-1]
	}
	h1, h2 := f.probes(key)
	for i := range l.k {
		p := l.bit(h1 + uint64(i)*h2)
		l.bits[p/64] |= 1 << (p % 64)
	}
	l.count++
	f.keys++
}

// MayContain reports whether key may have been added: false means it
// certainly was not.
func (f *Filter) MayContain(key string) bool {
	if len(f.layers) == 0 {
		return false
	}
	h1, h2 := f.probes(key)
	for li := range f.layers {
		l := &f.layers[li]
		in := true
		for i := range l.k {
			p := l.bit(h1 + uint64(i)*h2)
			if l.bits[p/64]&(1<<(p%64)) == 0 {
				in = false
				break
			}
		}
		if in {
			return true
		}
	}
	return false
}

// Len returns the number of keys added.
func (f *Filter) Len() int { return f.keys }

// Bytes returns the memory the filter's bits take.
func (f *Filter) Bytes() int {
	n := 0
	for _, l := range f.layers {
		n += 8 * len(l.bits)
	}
	return n
}
