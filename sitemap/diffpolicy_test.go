package sitemap

import (
	"context"
	"testing"
	"time"
)

// TestDiff_Policy: per page, a lastmod is evidence of change only when it
// moved forward and is not in the future; a page that gained a lastmod has
// moved; every page carries its reason.
func TestDiff_Policy(t *testing.T) {
	read := date("2024-06-01T00:00:00Z")
	jan, may := date("2024-01-01T00:00:00Z"), date("2024-05-01T00:00:00Z")
	future := date("2031-01-01T00:00:00Z")
	tests := []struct {
		name     string
		old, now time.Time
		inPrev   bool
		want     Change
		list     string
	}{
		{"forward", jan, may, true, ChangeMoved, "moved"},
		{"backwards", may, jan, true, ChangeBackwards, "unknown"},
		{"future", jan, future, true, ChangeFuture, "unknown"},
		{"gained a lastmod", time.Time{}, may, true, ChangeGainedLastMod, "moved"},
		{"gained one in the future", time.Time{}, future, true, ChangeFuture, "unknown"},
		{"lost its lastmod", may, time.Time{}, true, ChangeNoLastMod, "unknown"},
		{"never had one", time.Time{}, time.Time{}, true, ChangeNoLastMod, "unknown"},
		{"same", may, may, true, ChangeUnchanged, "unchanged"},
		{"zero instant kept as a date", ZeroInstant, ZeroInstant, true, ChangeUnchanged, "unchanged"},
		{"from the zero instant forward", ZeroInstant, may, true, ChangeMoved, "moved"},
		{"back to the zero instant", may, ZeroInstant, true, ChangeBackwards, "unknown"},
		{"new", time.Time{}, may, false, ChangeNew, "new"},
	}
	for _, tc := range tests {
		const u = "https://a.test/p"
		prev := Snapshot{Pages: map[string]time.Time{}}
		if tc.inPrev {
			prev.Pages[u] = tc.old
		}
		r := Diff(prev, Snapshot{Read: read, Complete: true, Pages: map[string]time.Time{u: tc.now}})
		lists := map[string]int{"moved": len(r.Moved), "unknown": len(r.Unknown), "new": len(r.New), "unchanged": r.Unchanged}
		if r.Changes[u] != tc.want || lists[tc.list] != 1 || len(r.Moved)+len(r.Unknown)+len(r.New)+r.Unchanged != 1 {
			t.Errorf("%s: Changes[u] = %q, lists %v; want %q in %s", tc.name, r.Changes[u], lists, tc.want, tc.list)
		}
	}
	// Gone carries its reason; without cur.Read, the future is judged
	// against the time Diff runs.
	r := Diff(Snapshot{Pages: map[string]time.Time{"https://a.test/g": jan, "https://a.test/f": jan}},
		Snapshot{Complete: true, Pages: map[string]time.Time{"https://a.test/f": time.Now().Add(48 * time.Hour)}})
	if r.Changes["https://a.test/g"] != ChangeGone || len(r.Gone) != 1 || r.Changes["https://a.test/f"] != ChangeFuture || len(r.Moved) != 0 {
		t.Errorf("gone/future without Read: %+v", r)
	}
	// The strings are stable.
	for c, s := range map[Change]string{ChangeNew: "new", ChangeGone: "gone", ChangeMoved: "moved", ChangeGainedLastMod: "gained-lastmod",
		ChangeUnchanged: "unchanged", ChangeBackwards: "lastmod-backwards", ChangeFuture: "lastmod-in-future", ChangeNoLastMod: "no-lastmod"} {
		if string(c) != s {
			t.Errorf("%q != %q", c, s)
		}
	}
}

// TestCheck_DuplicateAndZeroLastMod: within one file the latest lastmod of
// a URL listed twice wins, whatever the order; a lastmod written as
// 0001-01-01 is kept as a date.
func TestCheck_DuplicateAndZeroLastMod(t *testing.T) {
	s := newTestSite(t, map[string]string{"/sitemap.xml": `<urlset>` +
		`<url><loc>{{base}}/a</loc><lastmod>2024-05-01</lastmod></url><url><loc>{{base}}/a</loc><lastmod>2024-01-01</lastmod></url>` +
		`<url><loc>{{base}}/b</loc><lastmod>2024-01-01</lastmod></url><url><loc>{{base}}/b</loc><lastmod>2024-05-01</lastmod></url>` +
		`<url><loc>{{base}}/c</loc><lastmod>2024-05-01</lastmod></url><url><loc>{{base}}/c</loc></url>` +
		`<url><loc>{{base}}/z</loc><lastmod>0001-01-01</lastmod></url></urlset>`})
	w := &Walker{Client: s.srv.Client()}
	ctx := context.Background()
	if _, err := w.Check(ctx, s.srv.URL, nil); err != nil {
		t.Fatal(err)
	}
	st, err := w.store().Load(ctx, s.srv.URL)
	if err != nil || st == nil {
		t.Fatal(st, err)
	}
	pages := st.Snapshot().Pages
	may := date("2024-05-01T00:00:00Z")
	for _, p := range []string{"/a", "/b", "/c"} {
		if got := pages[s.srv.URL+p]; !got.Equal(may) {
			t.Errorf("%s: lastmod %v, want the latest, %v", p, got, may)
		}
	}
	if got := pages[s.srv.URL+"/z"]; got.IsZero() || got.Year() != 1 {
		t.Errorf("/z: lastmod %v, want 0001-01-01 kept as a date", got)
	}
	// Read again unchanged (the server ignores validators): /z is
	// Unchanged, not Unknown.
	s.ignoreCond = true
	res, err := w.Check(ctx, s.srv.URL, nil)
	if err != nil || res.Fetched != 1 {
		t.Fatal(res, err)
	}
	if res.Changes[s.srv.URL+"/z"] != ChangeUnchanged || res.Unchanged != 4 || len(res.Unknown) != 0 {
		t.Errorf("second read: /z %q, unchanged %d, unknown %q", res.Changes[s.srv.URL+"/z"], res.Unchanged, res.Unknown)
	}
}
