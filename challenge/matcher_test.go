package challenge

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMatcher_AgainstNaive: the gram index finds exactly the needles, and
// the occurrences, that a plain case-insensitive search at every offset
// finds: needles shorter than a gram and longer, overlapping ones, at the
// first and the last byte of the body, in any case.
func TestMatcher_AgainstNaive(t *testing.T) {
	needles := [][]byte{[]byte("ab"), []byte("b"), []byte("abc"), []byte("abcd"), []byte("cdab"),
		[]byte("bcdabcda"), []byte("dddd"), []byte("a-b"), []byte("zz")}
	m := newMatcher(needles)
	if len(m.short) == 0 || m.stride == 0 {
		t.Fatalf("the needles exercise one path only: %d short, stride %d", len(m.short), m.stride)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("abcdABCD-z")
	tried := 0
	for size := range 40 {
		for range 50 {
			body := make([]byte, size)
			for i := range body {
				body[i] = alphabet[rng.IntN(len(alphabet))]
			}
			found := make([]uint64, 1)
			occ := make([]occurrence, 4096)
			nocc := m.scan(body, found, occ)
			var got, want []string
			for _, o := range occ[:nocc] {
				got = append(got, fmt.Sprint(o.start, ":", o.needle))
			}
			var wantFound uint64
			lower := bytes.ToLower(body)
			for id, n := range needles {
				for at := 0; at+len(n) <= len(lower); at++ {
					if bytes.Equal(lower[at:at+len(n)], n) {
						wantFound |= 1 << id
						want = append(want, fmt.Sprint(at, ":", id))
					}
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if found[0] != wantFound || !slices.Equal(got, want) {
				t.Fatalf("body %q: found %b, occurrences %v; want %b, %v", body, found[0], got, wantFound, want)
			}
			// With room for two occurrences only, every needle is still
			// found, and two occurrences kept.
			small := make([]uint64, 1)
			if n := m.scan(body, small, make([]occurrence, 2)); small[0] != wantFound || n != min(2, len(want)) {
				t.Fatalf("body %q, room for 2: found %b, %d kept; want %b, %d", body, small[0], n, wantFound, min(2, len(want)))
			}
			if wantFound != 0 {
				tried++
			}
		}
	}
	if tried < 1000 {
		t.Errorf("%d bodies held a needle, want at least 1000", tried)
	}
}
