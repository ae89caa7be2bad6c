package sitemap

import (
	"fmt"
	"testing"
	"time"
)

// TestDiff_TrustThresholds: the lines between a trusted and an untrusted
// read, each on both sides: at least 10 moved pages, more than half of the
// dated pages moved, at least 90% of them to one timestamp or within 5
// minutes of the read, and more than 1% of the dated lastmods over 24
// hours after the read.
func TestDiff_TrustThresholds(t *testing.T) {
	read := date("2024-06-01T00:00:00Z")
	jan := date("2024-01-01T00:00:00Z")
	stamp := date("2024-05-20T10:00:00Z")
	// snap builds prev and cur: moved pages go to the lastmods of at (one
	// per page), the other dated pages stay as they were, undated pages
	// lose their lastmod.
	snap := func(at []time.Time, unchanged, undated int) (Snapshot, Snapshot) {
		prev := Snapshot{Pages: map[string]time.Time{}}
		cur := Snapshot{Read: read, Complete: true, Pages: map[string]time.Time{}}
		for i, lm := range at {
			u := fmt.Sprintf("https://a.test/m%d", i)
			prev.Pages[u], cur.Pages[u] = jan, lm
		}
		for i := range unchanged {
			u := fmt.Sprintf("https://a.test/u%d", i)
			prev.Pages[u], cur.Pages[u] = jan, jan
		}
		for i := range undated {
			u := fmt.Sprintf("https://a.test/n%d", i)
			prev.Pages[u], cur.Pages[u] = jan, time.Time{}
		}
		return prev, cur
	}
	same := func(n int, lm time.Time) []time.Time {
		out := make([]time.Time, n)
		for i := range out {
			out[i] = lm
		}
		return out
	}
	spread := func(n int, from time.Time) []time.Time {
		out := make([]time.Time, n)
		for i := range out {
			out[i] = from.Add(time.Duration(i) * time.Hour)
		}
		return out
	}
	cases := []struct {
		name               string
		at                 []time.Time
		unchanged, undated int
		untrusted          bool
	}{
		{"10 moved to one stamp", same(10, stamp), 0, 0, true},
		{"9 moved to one stamp", same(9, stamp), 0, 0, false},
		{"10 of 20 dated moved", same(10, stamp), 10, 0, false},
		{"10 of 19 dated moved", same(10, stamp), 9, 0, true},
		{"undated pages do not count as dated", same(10, stamp), 0, 30, true},
		{"9 of 10 to one stamp", append(same(9, stamp), jan.Add(time.Hour)), 0, 0, true},
		{"8 of 10 to one stamp", append(same(8, stamp), spread(2, jan.Add(time.Hour))...), 0, 0, false},
		{"10 near the read, 5 min either side", append(same(5, read.Add(-5*time.Minute)), same(5, read.Add(5*time.Minute))...), 0, 0, true},
		{"9 of 10 within 4.5 min of the read", func() []time.Time {
			out := spread(1, jan.Add(time.Hour))
			for i := range 9 {
				out = append(out, read.Add(-4*time.Minute-time.Duration(i)*time.Second))
			}
			return out
		}(), 0, 0, true},
		{"10 just over 5 min from the read", func() []time.Time {
			var out []time.Time
			for i := range 10 {
				out = append(out, read.Add(-5*time.Minute-time.Second-time.Duration(i)*time.Second))
			}
			return out
		}(), 0, 0, false},
		{"1 of 100 dated in the future", same(1, read.Add(48*time.Hour)), 99, 0, false},
		{"2 of 100 dated in the future", same(2, read.Add(48*time.Hour)), 98, 0, true},
		{"23.5 hours ahead is not the future", same(2, read.Add(23*time.Hour+30*time.Minute)), 98, 0, false},
	}
	for _, tc := range cases {
		prev, cur := snap(tc.at, tc.unchanged, tc.undated)
		d := Diff(prev, cur)
		if d.Untrusted != tc.untrusted {
			t.Errorf("%s: Untrusted = %v (%q), want %v; moved %d, unchanged %d", tc.name, d.Untrusted, d.Reason, tc.untrusted, len(d.Moved), d.Unchanged)
		}
	}
}
