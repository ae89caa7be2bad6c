package sitemap

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDiff_TrustThresholds: the lines between a trusted and an untrusted
// read, each on both sides: at least 10 moved pages, more than half of the
// dated pages moved, at least 90% of them to one timestamp or within 5
// minutes of the read, and more than 1% of the dated lastmods over 24
// hours after the read. The shares are checked at 100 and 1,000 pages,
// where one page is less than the step between two shares.
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
	// nearRead is n lastmods within 5 minutes of the read, no two the same.
	nearRead := func(n int) []time.Time {
		out := make([]time.Time, n)
		for i := range out {
			out[i] = read.Add(-time.Duration(i+1) * time.Second)
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
		{"1 of 20 moved pages near the read, the rest spread", append(spread(19, jan.Add(time.Hour)), read), 0, 0, false},
		{"1 of 100 dated in the future", same(1, read.Add(48*time.Hour)), 99, 0, false},
		{"2 of 100 dated in the future", same(2, read.Add(48*time.Hour)), 98, 0, true},
		{"23.5 hours ahead is not the future", same(2, read.Add(23*time.Hour+30*time.Minute)), 98, 0, false},
		{"exactly 24 hours ahead is not the future", same(2, read.Add(24*time.Hour)), 98, 0, false},
		{"24 hours and a second ahead is", same(2, read.Add(24*time.Hour+time.Second)), 98, 0, true},
		{"90 of 100 to one stamp", append(same(90, stamp), spread(10, jan.Add(time.Hour))...), 0, 0, true},
		{"89 of 100 to one stamp", append(same(89, stamp), spread(11, jan.Add(time.Hour))...), 0, 0, false},
		{"90 of 100 near the read", append(nearRead(90), spread(10, jan.Add(time.Hour))...), 0, 0, true},
		{"89 of 100 near the read", append(nearRead(89), spread(11, jan.Add(time.Hour))...), 0, 0, false},
		{"10 of 1,000 dated in the future (1%)", same(10, read.Add(48*time.Hour)), 990, 0, false},
		{"11 of 1,000 dated in the future", same(11, read.Add(48*time.Hour)), 989, 0, true},
	}
	for _, tc := range cases {
		prev, cur := snap(tc.at, tc.unchanged, tc.undated)
		d := Diff(prev, cur)
		if d.Untrusted != tc.untrusted {
			t.Errorf("%s: Untrusted = %v (%q), want %v; moved %d, unchanged %d", tc.name, d.Untrusted, d.Reason, tc.untrusted, len(d.Moved), d.Unchanged)
		}
	}
}

// TestParseLastMod_Limits: a leap second is the instant just before the
// next second; 24:00 only as 24:00:00 (the next midnight); offsets with at
// most 59 minutes.
func TestParseLastMod_Limits(t *testing.T) {
	cases := []struct {
		in   string
		want string // RFC 3339 with nanoseconds; "" for an error
	}{
		{"2016-12-31T23:59:60Z", "2016-12-31T23:59:59.999999999Z"},
		{"2016-12-31T23:59:61Z", ""},
		{"2016-12-31T24:00:00Z", "2017-01-01T00:00:00Z"},
		{"2016-12-31T24:00Z", "2017-01-01T00:00:00Z"},
		{"2016-12-31T24:30:00Z", ""},
		{"2016-12-31T24:00:01Z", ""},
		{"2016-12-31T24:00:00.5Z", ""},
		{"2016-12-31T12:00:00+05:59", "2016-12-31T06:01:00Z"},
		{"2016-12-31T12:00:00+05:60", ""},
		{"2016-12-31T12:00:00+0560", ""},
		{"2016-12-31T12:00:00+23:00", "2016-12-30T13:00:00Z"},
		{"2016-12-31T12:00:00-23:59", "2017-01-01T11:59:00Z"},
		{"2016-12-31T12:00:00+24:00", ""},
		{"2016-12-31T12:00:00+xx:00", ""},
		{"2016-12-31T12:00:00+01xx", ""},
		{"2016-12-31T12:00:00+01x00", ""},
		{"2016-12-31T12:00:00+01:xx", ""},
		{"2016-12-31T12:00:00+010", ""},
		{"2016-12-31T12:00:00+01:000", ""},
		// A date is short: more than 64 bytes is not one, whatever a
		// layout would make of it (time.Parse takes any number of
		// fractional digits).
		{"Sat, 19 Oct 2024 11:21:53." + strings.Repeat("0", 40) + " +0000", ""},
		{"Sat, 19 Oct 2024 11:21:53.000 +0000", "2024-10-19T11:21:53Z"},
		{"Sat, 19 Oct 2024 11:21:53." + strings.Repeat("0", 32) + " +0000", "2024-10-19T11:21:53Z"}, // 64 bytes
		{"Sat, 19 Oct 2024 11:21:53." + strings.Repeat("0", 33) + " +0000", ""},                     // 65
	}
	for _, c := range cases {
		got, err := ParseLastMod(c.in)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("ParseLastMod(%q) = %v, want an error", c.in, got)
		case c.want != "" && (err != nil || got.Format(time.RFC3339Nano) != c.want):
			t.Errorf("ParseLastMod(%q) = %v, %v; want %s", c.in, got.Format(time.RFC3339Nano), err, c.want)
		}
	}
}

// TestInScope_Boundaries: the location rule's directory is the sitemap's
// path up to and including its last '/' ("/blog/" is not a prefix of
// "/blogger/"); a backslash separates path segments as a slash does; the
// host is what follows the last '@'.
func TestInScope_Boundaries(t *testing.T) {
	cases := []struct {
		sitemap, page string
		in            bool
	}{
		{"https://e.test/blog/sitemap.xml", "https://e.test/blog/x", true},
		{"https://e.test/blog/sitemap.xml", "https://e.test/blogger/x", false},
		{"https://e.test/blog/sitemap.xml", "https://e.test/blog", false},
		{"https://e.test/blog/sitemap.xml", `https://e.test\blog\x`, true},
		{"https://e.test/blog/sitemap.xml", `https://e.test\other\x`, false},
		{"https://evil.test/sitemap.xml", "https://u@e.test@evil.test/x", true},
		{"https://e.test/sitemap.xml", "https://u@e.test@evil.test/x", false},
		// The rule is for absolute http(s) URLs with a host, on both sides.
		{"https://e.test/sitemap.xml", "e.test/x", false},
		{"https://e.test/sitemap.xml", "//e.test/x", false},
		{"ftp://e.test/sitemap.xml", "ftp://e.test/x", false},
		{"https:///sitemap.xml", "https:///x", false},
		{"https://e.test/%zz/sitemap.xml", "https://e.test/%zz/x", false},
		{"https://e.test", "https://e.test/x", true},
		{"https://e.test/sitemap.xml", "https://@e.test/x", true}, // empty userinfo (RFC 3986 3.2.1)
		// Dot segments resolve as RFC 3986 5.2.4 says, wherever they are.
		{"https://e.test/blog/sitemap.xml", "https://e.test/./blog/x", true},
		{"https://e.test/blog/sitemap.xml", "https://e.test/blog/.", true},
		{"https://e.test/blog/sitemap.xml", "https://e.test/blog/x/..", true},
	}
	for _, c := range cases {
		if got := InScope(c.sitemap, c.page); got != c.in {
			t.Errorf("InScope(%s, %s) = %v, want %v", c.sitemap, c.page, got, c.in)
		}
	}
}

// TestReader_EntryChecks: what makes an entry invalid (no host, a space or
// DEL, a URL longer than MaxLocBytes), what a priority out of [0, 1]
// becomes, and that entries dropped by the location rule count toward
// MaxURLs.
func TestReader_EntryChecks(t *testing.T) {
	urls := func(locs ...string) []byte {
		s := "<urlset>"
		for _, l := range locs {
			s += "<url><loc>" + l + "</loc></url>"
		}
		return []byte(s + "</urlset>")
	}
	got, r := collect(t, urls("https://?q", "https://#f", "https:///p", "https://e.test/a b", "https://e.test/a\x7fb", "https://e.test/ok"), nil)
	if len(got) != 1 || got[0].Loc != "https://e.test/ok" || r.Invalid() != 5 {
		t.Errorf("got %q, Invalid = %d; want only https://e.test/ok, 5 invalid", locs(got), r.Invalid())
	}
	loc30 := "https://e.test/" + strings.Repeat("a", 15) // 30 bytes
	got, r = collect(t, urls(loc30, loc30+"b"), &Options{MaxLocBytes: 30})
	if len(got) != 1 || got[0].Loc != loc30 || r.Invalid() != 1 {
		t.Errorf("MaxLocBytes 30: got %q, Invalid = %d; want the 30-byte URL only", locs(got), r.Invalid())
	}
	// sitemaps.org: "Valid values range from 0.0 to 1.0", default 0.5;
	// the Entry doc: 0.5 when unparseable or outside that range.
	for in, want := range map[string]float64{"1.5": 0.5, "1.0": 1, "-0.1": 0.5, "0.25": 0.25, "2": 0.5,
		"0": 0, "1": 1, "0.0": 0, "0.00": 0, "1.00": 1, "0.9": 0.9, "0,3": 0.5, "0./": 0.5, "0.:": 0.5, "1.1": 0.5, "&#9;0.4&#10;": 0.4} {
		got, _ := collect(t, []byte("<urlset><url><loc>https://e.test/</loc><priority>"+in+"</priority></url></urlset>"), nil)
		if len(got) != 1 || got[0].Priority != want {
			t.Errorf("priority %s: %+v, want %v", in, got, want)
		}
	}
	_, r = collect(t, urls("https://other.test/1", "https://other.test/2", "https://e.test/1", "https://e.test/2"),
		&Options{Location: "https://e.test/sitemap.xml", MaxURLs: 3})
	if !errors.Is(r.Err(), ErrTooManyURLs) || r.Dropped() != 2 {
		t.Errorf("MaxURLs 3 with 2 dropped: Err = %v, Dropped = %d; want ErrTooManyURLs, 2", r.Err(), r.Dropped())
	}
}

// TestReader_MaxBytesExactly: a document of exactly MaxBytes is read
// whole; one byte less is a limit.
func TestReader_MaxBytesExactly(t *testing.T) {
	doc := []byte(`<urlset><url><loc>https://e.test/a</loc></url><url><loc>https://e.test/b</loc></url></urlset>`)
	got, r := collect(t, doc, &Options{MaxBytes: int64(len(doc))})
	if r.Err() != nil || len(got) != 2 {
		t.Errorf("MaxBytes = len: %d entries, %v; want 2, nil", len(got), r.Err())
	}
	_, r = collect(t, doc, &Options{MaxBytes: int64(len(doc) - 1)})
	if !errors.Is(r.Err(), ErrTooLarge) {
		t.Errorf("MaxBytes = len-1: %v, want ErrTooLarge", r.Err())
	}
}
