package sitemap

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// bigSite serves an index of files children, each listing per pages.
func bigSite(t *testing.T, files, per int) *testSite {
	m := map[string]string{}
	var children []string
	for i := range files {
		p := fmt.Sprintf("/s%d.xml", i)
		children = append(children, p)
		var pages []string
		for j := range per {
			pages = append(pages, fmt.Sprintf("/f%d/p%d", i, j))
		}
		m[p] = urlsetOf(pages...)
	}
	m["/sitemap.xml"] = indexOf(children...)
	return newTestSite(t, m)
}

// TestCheck_KeptBoundedByMaxURLs: Check keeps, stores and diffs no more
// page entries than MaxURLs, stops reading there (no further request), is
// not a failure, and an unchanged site still costs only conditional
// requests answered 304; Keep chooses what counts.
func TestCheck_KeptBoundedByMaxURLs(t *testing.T) {
	s := bigSite(t, 20, 500)
	ctx := context.Background()
	store := &MemoryStore{}
	w := &Walker{Client: s.srv.Client(), Store: store, MaxURLs: 3}
	res, err := w.Check(ctx, s.srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := s.counts()
	st, _ := store.Load(ctx, s.srv.URL)
	stored := len(st.Snapshot().Pages)
	if req != 2 || res.Listed != 3 || len(res.New) != 3 || stored != 3 || res.Failed() != 0 || res.SkippedCount != 19 || res.Complete {
		t.Fatalf("first check: %d requests, listed %d, new %d, stored %d, failed %d, skipped %d; want 2, 3, 3, 3, 0, 19",
			req, res.Listed, len(res.New), stored, res.Failed(), res.SkippedCount)
	}
	if res.Files[1].Outcome != FileCut || res.Files[1].Pages != 3 {
		t.Errorf("first child: %+v", res.Files[1])
	}
	// Unchanged: two conditional requests, both 304, the same three pages.
	res, err = w.Check(ctx, s.srv.URL, nil)
	req2, cond := s.counts()
	if err != nil || req2 != 2 || cond != 2 || res.NotModified != 2 || res.Listed != 3 || res.Unchanged != 0 || len(res.Unknown) != 3 || len(res.New) != 0 {
		t.Errorf("second check: %d requests (%d conditional), 304s %d, listed %d, new %q, err %v",
			req2, cond, res.NotModified, res.Listed, res.New, err)
	}
	// A larger cap reads the cut file in full again.
	w.MaxURLs = 5
	res, err = w.Check(ctx, s.srv.URL, nil)
	if err != nil || res.Listed != 5 || res.Fetched != 1 || res.NotModified != 1 {
		t.Errorf("larger cap: listed %d, fetched %d, 304 %d, err %v", res.Listed, res.Fetched, res.NotModified, err)
	}
	// Keep: only the pages the caller would crawl count and are kept.
	w2 := &Walker{Client: s.srv.Client(), MaxURLs: 4, Keep: func(e Entry) bool { return strings.HasSuffix(e.Loc, "7") }}
	res, err = w2.Check(ctx, s.srv.URL, nil)
	if err != nil || res.Listed != 4 || res.Filtered < 30 || res.Pages != 4 {
		t.Errorf("Keep: listed %d, filtered %d, pages %d, err %v", res.Listed, res.Filtered, res.Pages, err)
	}
	for _, u := range res.New {
		if !strings.HasSuffix(u, "7") {
			t.Errorf("Keep: kept %s", u)
		}
	}
}

// TestCheck_IndexChildrenBoundedByMaxSitemaps: an index listing more
// children than a walk may fetch keeps (in memory and in the Store) no
// more than MaxSitemaps of them, counts the rest as skipped, and is read
// in full next time.
func TestCheck_IndexChildrenBoundedByMaxSitemaps(t *testing.T) {
	s := bigSite(t, 50, 1)
	ctx := context.Background()
	store := &MemoryStore{}
	w := &Walker{Client: s.srv.Client(), Store: store, MaxSitemaps: 5}
	res, err := w.Check(ctx, s.srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := s.counts()
	st, _ := store.Load(ctx, s.srv.URL)
	idx := st.Sitemaps[s.srv.URL+"/sitemap.xml"]
	if req != 5 || idx == nil || len(idx.Children) != 5 || idx.ETag != "" || res.SkippedCount != 46 || res.Listed != 4 {
		t.Fatalf("requests %d, index state %+v, skipped %d, listed %d; want 5 requests, 5 children kept without validators, 46 skipped, 4 listed",
			req, idx, res.SkippedCount, res.Listed)
	}
	if _, err := w.Check(ctx, s.srv.URL, nil); err != nil {
		t.Fatal(err)
	}
	if req, cond := s.counts(); req != 5 || cond != 4 {
		t.Errorf("second check: %d requests, %d conditional; want 5, 4 (the index in full)", req, cond)
	}
}
