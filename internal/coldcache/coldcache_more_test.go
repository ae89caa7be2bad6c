package coldcache

import (
	"testing"
	"time"
)

// The writes of a Touch are a page plus a cache line apart: each at the
// start of a 64-byte line, and 512 of them cover every line offset of a
// page (64 of them), so that they fall in every cache set.
func TestDisturber_TouchesEveryLineOffset(t *testing.T) {
	var d Disturber
	d.Touch()
	lines := map[int]bool{}
	for i, b := range d.buf {
		if b == 0 {
			continue
		}
		if i%64 != 0 {
			t.Fatalf("byte %d written: not at the start of a cache line", i)
		}
		lines[i%4096] = true
	}
	if len(lines) != 4096/64 {
		t.Errorf("one Touch wrote at %d line offsets of a page; want all %d", len(lines), 4096/64)
	}
}

// EachHost returns the time spent in do, all its calls: at least what the
// calls measure of themselves.
func TestEachHost_ReturnsTimeOfEveryCall(t *testing.T) {
	var inside time.Duration
	var spent time.Duration
	calls := 0
	testing.Benchmark(func(b *testing.B) {
		inside, calls = 0, 0
		spent = EachHost(b, 10, func(int) {
			t0 := time.Now()
			x := 0
			for i := range 2000 {
				x += i * i
			}
			_ = x
			inside += time.Since(t0)
			calls++
		})
	})
	if calls < 2 {
		t.Fatalf("%d calls of do", calls)
	}
	if spent < inside {
		t.Errorf("EachHost returned %v for %d calls that measured %v in themselves", spent, calls, inside)
	}
}

// gcd is Euclid's: EachHost's step is coprime with hosts only if it is.
func TestGCD(t *testing.T) {
	for _, tc := range []struct{ a, b, want int }{
		{7, 10, 1}, {7, 14, 7}, {8, 14, 2}, {9, 14, 1}, {12, 18, 6}, {18, 12, 6}, {10, 4, 2}, {13, 13, 13}, {5, 0, 5}, {1, 97, 1},
	} {
		if got := gcd(tc.a, tc.b); got != tc.want {
			t.Errorf("gcd(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
