package sitemap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestWalk_ReportOnLargeIndex: on an index of 250 children that all fail,
// under a 120-file cap, Walk's error stays one bounded line that still
// matches the per-file errors, and WalkReport says file by file what was
// fetched, what failed and what was skipped, and why.
func TestWalk_ReportOnLargeIndex(t *testing.T) {
	children := make([]string, 250)
	for i := range children {
		children[i] = fmt.Sprintf("/missing-%d.xml", i)
	}
	files := map[string]string{"/index.xml": indexOf(append([]string{"/ok.xml", "/index.xml"}, children...)...), "/ok.xml": urlsetOf("/1", "/2")}
	s := newTestSite(t, files)
	w := &Walker{Client: s.srv.Client(), MaxSitemaps: 120}
	n := 0
	err := w.Walk(context.Background(), []string{s.srv.URL + "/index.xml"}, func(Entry) error { n++; return nil })
	if req, _ := s.counts(); req != 120 || n != 2 {
		t.Fatalf("requests %d, pages %d; want 120, 2", req, n)
	}
	var we *WalkError
	var se *StatusError
	if !errors.As(err, &we) || !errors.As(err, &se) || se.Status != 404 || !errors.Is(err, ErrTooManySitemaps) {
		t.Fatalf("err = %v; want a *WalkError matching *StatusError and ErrTooManySitemaps", err)
	}
	if we.Count != 119 || len(we.Errors) < MaxReportedErrors || len(we.Errors) > MaxReportedErrors+1 {
		t.Errorf("WalkError count %d, carries %d; want 119, 10 or 11", we.Count, len(we.Errors))
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 4096 || !strings.HasPrefix(msg, "sitemap: 119 sitemaps failed: ") ||
		!strings.HasSuffix(msg, fmt.Sprintf("; and %d more", 119-len(we.Errors))) {
		t.Errorf("error message (%d bytes) not one bounded line: %.300s", len(msg), msg)
	}

	rep, err := w.WalkReport(context.Background(), []string{s.srv.URL + "/index.xml"}, func(Entry) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	count := map[FileOutcome]int{}
	for _, f := range rep.Files {
		count[f.Outcome]++
	}
	want := map[FileOutcome]int{FileFetched: 2, FileFailed: 118, FileSkippedMaxSitemaps: MaxReportedSkips}
	if fmt.Sprint(count) != fmt.Sprint(want) {
		t.Errorf("outcomes %v, want %v", count, want)
	}
	byURL := map[string]FileReport{}
	for _, f := range rep.Files {
		byURL[strings.TrimPrefix(f.URL, s.srv.URL)] = f
	}
	idx, ok, bad, skipped := rep.Files[0], byURL["/ok.xml"], byURL["/missing-0.xml"], byURL["/missing-118.xml"]
	if idx.Children != 120 || idx.Status != 200 || idx.Depth != 0 ||
		ok.URL != s.srv.URL+"/ok.xml" || ok.Pages != 2 || ok.Depth != 1 ||
		bad.Status != 404 || !errors.Is(bad.Err, ErrStatus) ||
		!errors.Is(skipped.Err, ErrTooManySitemaps) || skipped.Status != 0 {
		t.Errorf("file reports: %+v / %+v / %+v / %+v", idx, ok, bad, skipped)
	}
	if rep.SkippedCount != 132 || len(rep.Skipped) != 100 || rep.Duplicates != 1 || rep.Complete || len(rep.Errors) != 119 {
		t.Errorf("skipped %d (%d listed), duplicates %d, complete %v, errors %d", rep.SkippedCount, len(rep.Skipped), rep.Duplicates, rep.Complete, len(rep.Errors))
	}
	// String values are stable.
	for o, s := range map[FileOutcome]string{FileFetched: "fetched", FileNotModified: "not-modified", FileFailed: "failed", FileDuplicate: "duplicate",
		FileSkippedDepth: "skipped-depth", FileSkippedMaxSitemaps: "skipped-max-sitemaps", FileSkippedMaxURLs: "skipped-max-urls"} {
		if string(o) != s {
			t.Errorf("%q != %q", o, s)
		}
	}
}
