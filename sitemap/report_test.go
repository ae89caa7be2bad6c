package sitemap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
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

// TestWalkError_Message: the error line counts the failures ("1 sitemap",
// "N sitemaps"), lists those carried separated by "; " without repeating
// the package prefix, and says how many more there were.
func TestWalkError_Message(t *testing.T) {
	a, b := errors.New("sitemap: a.xml: HTTP status 404"), errors.New("b.xml: broken")
	tests := []struct {
		name string
		err  *WalkError
		want string
	}{
		{"one", &WalkError{Errors: []error{a}, Count: 1}, "sitemap: 1 sitemap failed: a.xml: HTTP status 404"},
		{"two", &WalkError{Errors: []error{a, b}, Count: 2}, "sitemap: 2 sitemaps failed: a.xml: HTTP status 404; b.xml: broken"},
		{"more than carried", &WalkError{Errors: []error{a, b}, Count: 5}, "sitemap: 5 sitemaps failed: a.xml: HTTP status 404; b.xml: broken; and 3 more"},
		{"one more", &WalkError{Errors: []error{a}, Count: 2}, "sitemap: 2 sitemaps failed: a.xml: HTTP status 404; and 1 more"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestReport_ErrBounded: Err carries the first 10 failures, then the
// first *LimitError of each kind among the rest (not one already carried),
// and counts them all.
func TestReport_ErrBounded(t *testing.T) {
	var errs []error
	for i := range 12 {
		errs = append(errs, &StatusError{URL: fmt.Sprintf("https://a.test/%d.xml", i), Status: 404})
	}
	urls1 := &LimitError{Err: ErrTooManyURLs, Limit: 5}
	errs[3] = urls1 // among the first ten: carried there, not again
	deep := &LimitError{Err: ErrTooDeep, Limit: 3}
	errs = append(errs, deep, &LimitError{Err: ErrTooDeep, Limit: 3}, &LimitError{Err: ErrTooManyURLs, Limit: 5}, &LimitError{Err: ErrTooManySitemaps, Limit: 7})
	rep := &Report{Errors: errs}
	var we *WalkError
	if !errors.As(rep.Err(), &we) {
		t.Fatalf("Err() = %v, want a *WalkError", rep.Err())
	}
	if we.Count != 16 || len(we.Errors) != 12 {
		t.Fatalf("Count %d, carried %d; want 16, 12 (10 first, one ErrTooDeep, one ErrTooManySitemaps)", we.Count, len(we.Errors))
	}
	for i := range 10 {
		if we.Errors[i] != errs[i] {
			t.Errorf("carried[%d] = %v, want %v", i, we.Errors[i], errs[i])
		}
	}
	if we.Errors[10] != deep || !errors.Is(we.Errors[11], ErrTooManySitemaps) {
		t.Errorf("limits carried after the first ten: %v, %v", we.Errors[10], we.Errors[11])
	}
	if (&Report{}).Err() != nil || (*Report)(nil).Err() != nil {
		t.Error("a report without errors has an Err")
	}
}

// TestReport_Failed counts the files whose outcome is FileFailed, and only
// those.
func TestReport_Failed(t *testing.T) {
	rep := &Report{Files: []FileReport{{Outcome: FileFailed}, {Outcome: FileFetched}, {Outcome: FileCut}, {Outcome: FileFailed}, {Outcome: FileSkippedDepth}}}
	if n := rep.Failed(); n != 2 {
		t.Errorf("Failed() = %d, want 2", n)
	}
}

// recordHandler keeps the message and the url attribute of each record.
type recordHandler struct {
	mu   sync.Mutex
	logs []string
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordHandler) WithGroup(string) slog.Handler            { return h }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	line := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.Key + "=" + a.Value.String()
		return true
	})
	h.mu.Lock()
	h.logs = append(h.logs, line)
	h.mu.Unlock()
	return nil
}

// TestWalk_Logger: the report counts the entries dropped by the location
// rule or invalid, and the Logger hears of skipped sitemaps, failed reads
// and those entries, once each, and of nothing else.
func TestWalk_Logger(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/blog/index.xml": indexOf("/blog/missing.xml", "/blog/pages.xml", "/blog/deep.xml"),
		"/blog/pages.xml": `<urlset><url><loc>{{base}}/blog/1</loc></url><url><loc>{{base}}/shop/2</loc></url><url><loc>::</loc></url></urlset>`,
		"/blog/deep.xml":  indexOf("/blog/deeper.xml"),
		"/blog/ok.xml":    `<urlset><url><loc>{{base}}/blog/3</loc></url><url><loc>::</loc></url></urlset>`,
	})
	h := &recordHandler{}
	w := &Walker{Client: s.srv.Client(), Logger: slog.New(h), MaxDepth: 1}
	rep, _ := w.WalkReport(context.Background(), []string{s.srv.URL + "/blog/index.xml", s.srv.URL + "/blog/ok.xml"}, func(Entry) error { return nil })
	if rep.Pages != 2 || rep.Dropped != 1 || rep.Invalid != 2 || len(rep.Files) != 6 || rep.Files[2].Dropped != 1 || rep.Files[2].Invalid != 1 {
		t.Fatalf("pages %d, dropped %d, invalid %d, files %+v; want 2, 1, 2, pages.xml dropping 1, 1 invalid", rep.Pages, rep.Dropped, rep.Invalid, rep.Files)
	}
	u := s.srv.URL
	want := []string{
		"WARN sitemap: read failed url=" + u + "/blog/missing.xml err=sitemap: " + u + "/blog/missing.xml: HTTP status 404",
		"INFO sitemap: entries skipped url=" + u + "/blog/pages.xml outside_location=1 invalid=1",
		"INFO sitemap: skipped url=" + u + "/blog/deeper.xml reason=skipped-depth",
		"INFO sitemap: entries skipped url=" + u + "/blog/ok.xml outside_location=0 invalid=1",
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !slices.Equal(h.logs, want) {
		t.Errorf("logged:\n%s\nwant:\n%s", strings.Join(h.logs, "\n"), strings.Join(want, "\n"))
	}
}

// TestWalk_SkippedChildDepth: a child skipped for MaxSitemaps is reported
// one level below its index.
func TestWalk_SkippedChildDepth(t *testing.T) {
	s := newTestSite(t, map[string]string{"/index.xml": indexOf("/a.xml", "/b.xml", "/c.xml"), "/a.xml": urlsetOf("/1")})
	rep, _ := (&Walker{Client: s.srv.Client(), MaxSitemaps: 2}).WalkReport(context.Background(), []string{s.srv.URL + "/index.xml"}, func(Entry) error { return nil })
	var depths []int
	for _, f := range rep.Files {
		if f.Outcome == FileSkippedMaxSitemaps {
			depths = append(depths, f.Depth)
		}
	}
	if rep.Requests != 2 || rep.Pages != 1 || !slices.Equal(depths, []int{1, 1}) {
		t.Errorf("%d requests, %d pages, skipped at depths %v; want 2, 1, [1 1]", rep.Requests, rep.Pages, depths)
	}
}
