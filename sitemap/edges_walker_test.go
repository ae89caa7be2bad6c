package sitemap

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
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
	w.MaxURLs = 3
	res, err := w.Check(ctx, s.srv.URL, decl)
	if err != nil || res.Listed != 2 {
		t.Fatalf("index unreadable, MaxURLs 3: Listed %d, %v; want 2 (one sitemap of two pages kept)", res.Listed, err)
	}
}
