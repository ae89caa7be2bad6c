package bloom

import (
	"fmt"
	"math"
	"testing"
)

// Each layer has the geometry the package doc gives: layer i has twice the
// room of layer i-1, probes 7+i times and takes 1.44·(7+i) bits a key of
// room, rounded up to a whole bit (never fewer bits than the rate needs,
// at most one more), held in whole 64-bit words.
func TestFilter_LayerGeometry(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    *Filter
		room int
	}{
		{"zero value", &Filter{}, 1024},
		{"New(1500)", New(1500), 1500},
		{"New(3001)", New(3001), 3001},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys := tc.room * (1 + 2 + 4 + 8)
			for i := range keys + 1 {
				tc.f.Add(fmt.Sprintf("http://a.test/%d", i))
			}
			if len(tc.f.layers) != 5 {
				t.Fatalf("%d layers after %d keys, want 5", len(tc.f.layers), keys+1)
			}
			for i, l := range tc.f.layers {
				room := tc.room << i
				bits := float64(room) * 1.44 * float64(7+i)
				if l.room != room || l.k != 7+i {
					t.Errorf("layer %d: room %d, %d probes; want %d, %d", i, l.room, l.k, room, 7+i)
				}
				if m := float64(l.m); m < bits || m > math.Floor(bits)+1 {
					t.Errorf("layer %d: %d bits, want 1.44·%d·%d = %.2f rounded up", i, l.m, 7+i, room, bits)
				}
				if want := int(math.Ceil(float64(l.m) / 64)); len(l.bits) != want {
					t.Errorf("layer %d: %d words for %d bits, want %d", i, len(l.bits), l.m, want)
				}
			}
		})
	}
}

// Seen from outside, the first layer of New(n) holds at least the
// 1.44·7 bits a key of room its rate of 2^-7 needs, for every room.
func TestNew_FirstLayerBitsCoverTheRoom(t *testing.T) {
	for n := 1024; n < 1024+512; n++ {
		if got, want := 8*New(n).Bytes(), 1.44*7*float64(n); float64(got) < want {
			t.Errorf("New(%d): %d bits, want at least %.2f", n, got, want)
		}
	}
}
