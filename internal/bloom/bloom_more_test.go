package bloom

import (
	"fmt"
	"math"
	"testing"
)

// The bits cost what the package doc says: 1.26 bytes a key of room in the
// first layer (7 probes at 1.44 bits a probe), 1.44 in the second (8
// probes), which has twice the room and is added only when the first has
// taken its room's keys.
func TestFilter_BytesPerLayer(t *testing.T) {
	near := func(got int, want float64) bool { return math.Abs(float64(got)-want) <= 0.01*want+8 }
	for _, tc := range []struct {
		name string
		f    *Filter
		room int
	}{
		{"New(100000)", New(100_000), 100_000},
		{"New(5000)", New(5000), 5000},
		{"zero value", &Filter{}, 1024},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.Add("http://a.test/0")
			if got, want := tc.f.Bytes(), 1.26*float64(tc.room); !near(got, want) {
				t.Errorf("first layer: %d bytes, want about %.0f (1.26 a key of room %d)", got, want, tc.room)
			}
			for i := 1; i < tc.room; i++ {
				tc.f.Add(fmt.Sprintf("http://a.test/%d", i))
			}
			if got, want := tc.f.Bytes(), 1.26*float64(tc.room); !near(got, want) {
				t.Errorf("first layer full (%d keys): %d bytes, want about %.0f (no second layer yet)", tc.room, got, want)
			}
			tc.f.Add("http://a.test/one-more")
			if got, want := tc.f.Bytes(), 1.26*float64(tc.room)+1.44*float64(2*tc.room); !near(got, want) {
				t.Errorf("two layers: %d bytes, want about %.0f (1.44 a key of room %d in the second)", got, want, 2*tc.room)
			}
			if tc.f.Len() != tc.room+1 {
				t.Errorf("Len = %d, want %d", tc.f.Len(), tc.room+1)
			}
		})
	}
}

// A full first layer's false-positive rate is about 2^-7 (0.8 %): under
// 1.1 % over 200,000 keys never added.
func TestFilter_FirstLayerRate(t *testing.T) {
	const room, probes = 100_000, 200_000
	f := New(room)
	for i := range room {
		f.Add(fmt.Sprintf("http://h%d.test/p/%d", i%2000, i))
	}
	fp := 0
	for i := range probes {
		if f.MayContain(fmt.Sprintf("http://other%d.test/q/%d", i%977, i)) {
			fp++
		}
	}
	if rate := float64(fp) / probes; rate > 0.011 {
		t.Errorf("false-positive rate of a full first layer %.4f, want about 2^-7 (at most 0.011)", rate)
	}
}

// New with room for few or no keys makes the zero value's first layer
// (1,024 keys): a filter of the documented rate, with no false negatives,
// not one layer a key. The rate is checked against its bound on a seed
// drawn at random, so the bound must hold for the worst of many filters:
// grown from 64 keys, one filter in a hundred went over it.
func TestNew_SmallRoom(t *testing.T) {
	for _, n := range []int{-5, 0, 1, 10, 1023} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			f := New(n)
			var zero Filter
			zero.Add("http://a.test/0")
			if got, want := f.Bytes(), zero.Bytes(); got != want {
				t.Errorf("New(%d): %d bytes, want the zero value's first layer's %d", n, got, want)
			}
			const keys, probes = 5000, 50_000
			for i := range keys {
				f.Add(fmt.Sprintf("http://a.test/%d", i))
			}
			for i := range keys {
				if !f.MayContain(fmt.Sprintf("http://a.test/%d", i)) {
					t.Fatalf("key %d added, then not contained", i)
				}
			}
			fp := 0
			for i := range probes {
				if f.MayContain(fmt.Sprintf("http://b.test/%d", i)) {
					fp++
				}
			}
			if rate := float64(fp) / probes; rate > 0.02 {
				t.Errorf("New(%d): false-positive rate %.4f after %d keys, want at most 0.02", n, rate, keys)
			}
			if per := float64(f.Bytes()) / keys; per > 4.1 {
				t.Errorf("New(%d): %.2f bytes a key after %d keys, want at most 4.1", n, per, keys)
			}
		})
	}
}
