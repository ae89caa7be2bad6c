package sitemap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestCheck_UnreadIndexKeepsItsChildren: when an index cannot be read, the
// sitemaps it listed are not visited; what the last check knew of them is
// kept, so their pages are neither lost nor reported gone.
func TestCheck_UnreadIndexKeepsItsChildren(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/index.xml": indexOf("/one.xml", "/two.xml"),
		"/one.xml":   urlsetOf("/a 2024-01-01"),
		"/two.xml":   urlsetOf("/b 2024-01-01"),
	})
	w := &Walker{Client: s.srv.Client()}
	ctx := context.Background()
	decl := []string{s.srv.URL + "/index.xml"}
	if res, err := w.Check(ctx, s.srv.URL, decl); err != nil || res.Listed != 2 {
		t.Fatalf("first check: %+v, %v", res, err)
	}
	s.mu.Lock()
	delete(s.files, "/index.xml")
	s.mu.Unlock()
	res, err := w.Check(ctx, s.srv.URL, decl)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || res.Listed != 2 || res.Unchanged != 2 || len(res.Gone) != 0 {
		t.Errorf("index unreadable: Complete %v, Listed %d, Unchanged %d, Gone %v; want false, 2, 2, none", res.Complete, res.Listed, res.Unchanged, res.Gone)
	}
}

// TestWalk_RedirectToASitemapAlreadyRead: a sitemap that redirects to one
// already read is a duplicate: its pages are not read twice.
func TestWalk_RedirectToASitemapAlreadyRead(t *testing.T) {
	var srv *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("/index.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.ReplaceAll(indexOf("/a.xml", "/b.xml"), "{{base}}", srv.URL)))
	})
	mux.HandleFunc("/a.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<urlset><url><loc>` + srv.URL + `/p1</loc></url><url><loc>` + srv.URL + `/p2</loc></url></urlset>`))
	})
	mux.Handle("/b.xml", http.RedirectHandler("/a.xml", http.StatusMovedPermanently))
	srv = httptest.NewServer(mux)
	defer srv.Close()
	w := &Walker{Client: srv.Client()}
	var pages []string
	rep, err := w.WalkReport(context.Background(), []string{srv.URL + "/index.xml"}, func(e Entry) error {
		pages = append(pages, e.Loc)
		return nil
	})
	if err != nil || len(pages) != 2 || rep.Duplicates != 1 {
		t.Fatalf("pages %q, Duplicates %d, err %v; want 2 pages, 1 duplicate", pages, rep.Duplicates, err)
	}
	if len(rep.Files) != 3 || rep.Files[2].Outcome != FileDuplicate || rep.Fetched != 2 || !rep.Complete {
		t.Errorf("files %+v, fetched %d, complete %v; want /b.xml a duplicate, 2 fetched, complete", rep.Files, rep.Fetched, rep.Complete)
	}
}

// TestWalk_NotModifiedWithoutValidators: a 304 to a request without
// validators (nothing was kept from before) is a failed read, not an empty
// sitemap.
func TestWalk_NotModifiedWithoutValidators(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotModified)
	}))
	defer srv.Close()
	w := &Walker{Client: srv.Client()}
	rep, err := w.WalkReport(context.Background(), []string{srv.URL + "/sitemap.xml"}, func(Entry) error { return nil })
	var se *StatusError
	if err != nil || rep.Complete || len(rep.Errors) != 1 || !errors.As(rep.Errors[0], &se) || se.Status != http.StatusNotModified {
		t.Fatalf("report %+v, err %v; want one StatusError 304", rep, err)
	}
}

// TestCheck_KeptWithinMaxURLs: what is kept from the last check for
// sitemaps not read this time stays within MaxURLs pages in all, whole
// sitemaps at a time.
func TestCheck_KeptWithinMaxURLs(t *testing.T) {
	for _, tc := range []struct{ maxURLs, listed int }{
		{1, 0}, // neither sitemap of two pages fits
		{3, 2}, // one does
		{4, 4}, // both do, exactly
	} {
		t.Run(fmt.Sprint("MaxURLs ", tc.maxURLs), func(t *testing.T) {
			s := newTestSite(t, map[string]string{
				"/index.xml": indexOf("/one.xml", "/two.xml"),
				"/one.xml":   urlsetOf("/a 2024-01-01", "/b 2024-01-01"),
				"/two.xml":   urlsetOf("/c 2024-01-01", "/d 2024-01-01"),
			})
			w := &Walker{Client: s.srv.Client()}
			ctx := context.Background()
			decl := []string{s.srv.URL + "/index.xml"}
			if res, err := w.Check(ctx, s.srv.URL, decl); err != nil || res.Listed != 4 {
				t.Fatalf("first check: %+v, %v", res, err)
			}
			s.mu.Lock()
			delete(s.files, "/index.xml")
			s.mu.Unlock()
			w.MaxURLs = tc.maxURLs
			res, err := w.Check(ctx, s.srv.URL, decl)
			if err != nil || res.Listed != tc.listed {
				t.Fatalf("index unreadable, MaxURLs %d: Listed %d, %v; want %d", tc.maxURLs, res.Listed, err, tc.listed)
			}
		})
	}
}

// TestWalk_ReusesConnections: the walker drains what it does not read
// (an error page), so one connection serves the whole walk.
func TestWalk_ReusesConnections(t *testing.T) {
	s := &testSite{files: map[string]string{
		"/index.xml": indexOf("/missing1.xml", "/missing2.xml", "/missing3.xml", "/ok.xml"),
		"/ok.xml":    urlsetOf("/1"),
	}, gzipped: map[string]bool{}, encoded: map[string]bool{}, hits: map[string]int{}}
	var mu sync.Mutex
	conns := 0
	s.srv = httptest.NewUnstartedServer(s)
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	s.srv.Start()
	defer s.srv.Close()
	got, err := walkAll(t, &Walker{Client: s.srv.Client()}, s.srv.URL+"/index.xml")
	req, _ := s.counts()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || req != 5 || !errors.Is(err, ErrStatus) || conns != 1 {
		t.Errorf("pages %q, %d requests, err %v, %d connections; want 1 page, 5 requests, 404s, 1 connection", got, req, err, conns)
	}
}

// TestCheck_CutIsNotComplete: a read cut at MaxURLs, even of the last
// file, is not Complete and says why: nothing past the cut is Gone.
func TestCheck_CutIsNotComplete(t *testing.T) {
	s := newTestSite(t, map[string]string{"/sitemap.xml": urlsetOf("/a", "/b", "/c")})
	w := &Walker{Client: s.srv.Client()}
	ctx := context.Background()
	if res, err := w.Check(ctx, s.srv.URL, nil); err != nil || res.Listed != 3 || !res.Complete {
		t.Fatalf("first check: %+v, %v", res, err)
	}
	s.set("/sitemap.xml", urlsetOf("/a", "/b", "/c", "/d")) // read in full again
	w.MaxURLs = 2
	res, err := w.Check(ctx, s.srv.URL, nil)
	if err != nil || res.Pages != 2 || len(res.Files) != 1 {
		t.Fatalf("cut check: %+v, %v", res, err)
	}
	var le *LimitError
	f := res.Files[0]
	if res.Complete || len(res.Gone) != 0 || len(res.Errors) != 1 || !errors.As(res.Errors[0], &le) || le.Err != ErrTooManyURLs || le.Limit != 2 ||
		f.Outcome != FileCut || f.Err != res.Errors[0] || f.Pages != 2 {
		t.Errorf("cut check: complete %v, gone %q, errors %v, file %+v; want not complete, none gone, one ErrTooManyURLs at 2, FileCut", res.Complete, res.Gone, res.Errors, f)
	}
}

// TestWalk_CutFileKeepsItsChildren: a file cut at MaxURLs still reports
// the child sitemaps it listed before the cut, skipped for MaxURLs.
func TestWalk_CutFileKeepsItsChildren(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/sitemap.xml": `<urlset><sitemap><loc>{{base}}/child.xml</loc></sitemap><url><loc>{{base}}/1</loc></url><url><loc>{{base}}/2</loc></url></urlset>`,
		"/child.xml":   urlsetOf("/3"),
	})
	rep, _ := (&Walker{Client: s.srv.Client(), MaxURLs: 1}).WalkReport(context.Background(), []string{s.srv.URL + "/sitemap.xml"}, func(Entry) error { return nil })
	if rep.Requests != 1 || rep.Pages != 1 || rep.Files[0].Outcome != FileCut || rep.Files[0].Children != 1 || !slices.Equal(rep.Skipped, []string{s.srv.URL + "/child.xml"}) {
		t.Errorf("%d requests, %d pages, files %+v, skipped %q; want 1, 1, cut with 1 child, the child skipped", rep.Requests, rep.Pages, rep.Files, rep.Skipped)
	}
}

// TestWalk_RedirectTargetSeen: the target of a redirect is read; listed
// again by its own URL, it is a duplicate, not fetched twice.
func TestWalk_RedirectTargetSeen(t *testing.T) {
	s := newTestSite(t, map[string]string{"/index.xml": indexOf("/old.xml", "/new.xml"), "/new.xml": urlsetOf("/1")})
	s.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old.xml" {
			http.Redirect(w, r, "/new.xml", http.StatusMovedPermanently)
			return
		}
		s.ServeHTTP(w, r)
	})
	rep, err := (&Walker{Client: s.srv.Client()}).WalkReport(context.Background(), []string{s.srv.URL + "/index.xml"}, func(e Entry) error { return nil })
	if err != nil || s.hits["/new.xml"] != 1 || rep.Pages != 1 || rep.Duplicates != 1 {
		t.Errorf("/new.xml fetched %d times, %d pages, %d duplicates, %v; want 1, 1, 1", s.hits["/new.xml"], rep.Pages, rep.Duplicates, err)
	}
}

// TestCheck_SitemapTurnedRedirectToOneRead: a sitemap that now redirects
// to one already read lists that one's pages: its own former pages are no
// longer listed, so they are Gone.
func TestCheck_SitemapTurnedRedirectToOneRead(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/index.xml": indexOf("/a.xml", "/b.xml"),
		"/a.xml":     urlsetOf("/1 2024-01-01"),
		"/b.xml":     urlsetOf("/x 2024-01-01"),
	})
	w := &Walker{Client: s.srv.Client()}
	ctx := context.Background()
	decl := []string{s.srv.URL + "/index.xml"}
	if res, err := w.Check(ctx, s.srv.URL, decl); err != nil || res.Listed != 2 {
		t.Fatalf("first check: %+v, %v", res, err)
	}
	s.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/b.xml" {
			http.Redirect(w, r, "/a.xml", http.StatusMovedPermanently)
			return
		}
		s.ServeHTTP(w, r)
	})
	for i := range 2 { // and it stays gone
		res, err := w.Check(ctx, s.srv.URL, decl)
		if err != nil || !res.Complete || res.Duplicates != 1 || res.Listed != 1 {
			t.Fatalf("check %d: %+v, %v", i+2, res, err)
		}
		if wantGone := []string{s.srv.URL + "/x"}; i == 0 && !slices.Equal(res.Gone, wantGone) || i == 1 && len(res.Gone) != 0 {
			t.Errorf("check %d: Gone %q, Listed %d", i+2, res.Gone, res.Listed)
		}
	}
}

// TestWalk_UnusableURL: a sitemap URL that cannot be requested fails that
// file only, with no request made.
func TestWalk_UnusableURL(t *testing.T) {
	s := newTestSite(t, map[string]string{"/ok.xml": urlsetOf("/1")})
	rep, err := (&Walker{Client: s.srv.Client()}).WalkReport(context.Background(), []string{"%zz", s.srv.URL + "/ok.xml"}, func(Entry) error { return nil })
	if req, _ := s.counts(); err != nil || req != 1 || rep.Requests != 1 || rep.Pages != 1 || rep.Failed() != 1 || len(rep.Errors) != 1 ||
		rep.Files[0].Outcome != FileFailed || !strings.HasPrefix(rep.Files[0].Err.Error(), "sitemap: ") {
		t.Errorf("%d requests (report %d), %d pages, files %+v, err %v; want 1 request, 1 page, the first file failed", req, rep.Requests, rep.Pages, rep.Files, err)
	}
}

// TestCheck_TruncatedRead: what a truncated file gave before it broke is
// merged with its last read, its children are visited, and its validators
// are dropped so that the next check reads it in full.
func TestCheck_TruncatedRead(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/index.xml": indexOf("/p.xml"),
		"/p.xml":     urlsetOf("/a 2024-01-01", "/c 2024-01-01"),
		"/q.xml":     urlsetOf("/q"),
	})
	ctx := context.Background()
	store := &MemoryStore{}
	w := &Walker{Client: s.srv.Client(), Store: store}
	decl := []string{"/index.xml"}
	if res, err := w.Check(ctx, s.srv.URL, decl); err != nil || res.Listed != 2 {
		t.Fatalf("first check: %+v, %v", res, err)
	}
	s.set("/index.xml", strings.TrimSuffix(indexOf("/p.xml", "/q.xml"), "</sitemapindex>"))
	s.set("/p.xml", strings.TrimSuffix(urlsetOf("/a 2024-01-01", "/b 2024-01-01"), "</urlset>"))
	res, err := w.Check(ctx, s.srv.URL, decl)
	if err != nil || res.Complete || res.Failed() != 2 || res.Listed != 4 || !slices.Equal(res.New, []string{s.srv.URL + "/b", s.srv.URL + "/q"}) || len(res.Gone) != 0 {
		t.Fatalf("truncated: complete %v, failed %d, listed %d, new %q, gone %q, %v; want false, 2, 4, [b q], none", res.Complete, res.Failed(), res.Listed, res.New, res.Gone, err)
	}
	st, _ := store.Load(ctx, s.srv.URL)
	if p := st.Sitemaps[s.srv.URL+"/p.xml"]; p == nil || p.ETag != "" || len(p.Pages) != 3 {
		t.Errorf("p.xml state %+v; want its 3 pages, no ETag", p)
	}
}

// TestCheck_TruncatedAfterNoPages: a file whose last read kept no pages
// (an index, or an empty urlset: its stored state has no page map) and
// that now breaks after some pages keeps those pages, and its validators
// are dropped.
func TestCheck_TruncatedAfterNoPages(t *testing.T) {
	tests := []struct {
		name       string
		first      map[string]string
		wantListed int
		wantNew    []string
	}{
		{"was an index", map[string]string{"/sitemap.xml": indexOf("/child.xml"), "/child.xml": urlsetOf("/c")}, 3, []string{"/a", "/b"}},
		{"was an empty urlset", map[string]string{"/sitemap.xml": urlsetOf()}, 2, []string{"/a", "/b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSite(t, tt.first)
			ctx := context.Background()
			store := &MemoryStore{}
			w := &Walker{Client: s.srv.Client(), Store: store}
			if res, err := w.Check(ctx, s.srv.URL, nil); err != nil || !res.Complete || s.hits["/sitemap.xml"] != 1 {
				t.Fatalf("first check: %+v, %v, /sitemap.xml fetched %d times", res, err, s.hits["/sitemap.xml"])
			}
			if st, _ := store.Load(ctx, s.srv.URL); st == nil || st.Sitemaps[s.srv.URL+"/sitemap.xml"] == nil || st.Sitemaps[s.srv.URL+"/sitemap.xml"].Pages != nil {
				t.Fatalf("state after the first check %+v; want /sitemap.xml with no page map", st)
			}
			s.set("/sitemap.xml", strings.TrimSuffix(urlsetOf("/a", "/b"), "</urlset>"))
			res, err := w.Check(ctx, s.srv.URL, nil)
			if err != nil || s.hits["/sitemap.xml"] != 2 {
				t.Fatalf("truncated check: %v, /sitemap.xml fetched %d times; want no error, 2", err, s.hits["/sitemap.xml"])
			}
			var wantNew []string
			for _, p := range tt.wantNew {
				wantNew = append(wantNew, s.srv.URL+p)
			}
			if res.Complete || res.Failed() != 1 || res.Listed != tt.wantListed || !slices.Equal(res.New, wantNew) || len(res.Gone) != 0 {
				t.Errorf("truncated check: complete %v, failed %d, listed %d, new %q, gone %q; want false, 1, %d, %q, none",
					res.Complete, res.Failed(), res.Listed, res.New, res.Gone, tt.wantListed, wantNew)
			}
			st, _ := store.Load(ctx, s.srv.URL)
			p := st.Sitemaps[s.srv.URL+"/sitemap.xml"]
			if p == nil || p.ETag != "" || len(p.Pages) != 2 {
				t.Errorf("/sitemap.xml state %+v; want its 2 pages, no ETag", p)
			}
		})
	}
}
