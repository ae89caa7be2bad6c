package sitemap

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (the walker's
// HTTP connections included).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testSite serves sitemap files from memory on loopback, with ETags, and
// counts requests on the server side. "{{base}}" in a body becomes the
// server's URL.
type testSite struct {
	mu          sync.Mutex
	files       map[string]string // path -> body
	gzipped     map[string]bool
	encoded     map[string]bool // also sent with Content-Encoding: gzip
	ignoreCond  bool            // answer 200 even when the validators match
	requests    int
	conditional int
	hits        map[string]int
	srv         *httptest.Server
}

func newTestSite(t *testing.T, files map[string]string) *testSite {
	s := &testSite{files: files, gzipped: map[string]bool{}, encoded: map[string]bool{}, hits: map[string]int{}}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *testSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	s.hits[r.URL.Path]++
	body, ok := s.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	body = strings.ReplaceAll(body, "{{base}}", s.srv.URL)
	etag := fmt.Sprintf(`"%x"`, sha256.Sum256([]byte(body)))
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") != "" {
		s.conditional++
		if r.Header.Get("If-None-Match") == etag && !s.ignoreCond {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	data := []byte(body)
	if s.gzipped[r.URL.Path] {
		data = gzBytes(data)
	}
	if s.encoded[r.URL.Path] {
		w.Header().Set("Content-Encoding", "gzip")
		data = gzBytes(data)
	}
	w.Write(data)
}

func (s *testSite) set(path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = body
}

func (s *testSite) counts() (requests, conditional int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, c := s.requests, s.conditional
	s.requests, s.conditional = 0, 0
	return r, c
}

func urlsetOf(pages ...string) string {
	var b strings.Builder
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, p := range pages {
		loc, lm, _ := strings.Cut(p, " ")
		b.WriteString("<url><loc>{{base}}" + loc + "</loc>")
		if lm != "" {
			b.WriteString("<lastmod>" + lm + "</lastmod>")
		}
		b.WriteString("</url>")
	}
	b.WriteString("</urlset>")
	return b.String()
}

func indexOf(children ...string) string {
	var b strings.Builder
	b.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, c := range children {
		b.WriteString("<sitemap><loc>{{base}}" + c + "</loc></sitemap>")
	}
	b.WriteString("</sitemapindex>")
	return b.String()
}

func walkAll(t *testing.T, w *Walker, urls ...string) ([]string, error) {
	t.Helper()
	var got []string
	err := w.Walk(context.Background(), urls, func(e Entry) error {
		got = append(got, e.Loc)
		return nil
	})
	return got, err
}

func TestWalk_B7_IndexRecursion(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/sitemap_index.xml": indexOf("/posts.xml.gz", "/sub/index.xml", "/feed.xml.gz"),
		"/posts.xml.gz":      urlsetOf("/p1 2024-01-01", "/p2"),
		"/feed.xml.gz":       `<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="{{base}}/f1"/></entry></feed>`,
		"/sub/index.xml":     indexOf("/sub/pages.xml"),
		"/sub/pages.xml":     urlsetOf("/sub/a", "/sub/b"),
	})
	s.gzipped["/posts.xml.gz"] = true
	s.gzipped["/feed.xml.gz"] = true
	s.encoded["/feed.xml.gz"] = true // two gzip layers
	got, err := walkAll(t, &Walker{Client: s.srv.Client()}, s.srv.URL+"/sitemap_index.xml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{s.srv.URL + "/p1", s.srv.URL + "/p2", s.srv.URL + "/sub/a", s.srv.URL + "/sub/b", s.srv.URL + "/f1"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWalk_Cycles(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/self.xml":  indexOf("/self.xml", "/a.xml"),
		"/a.xml":     indexOf("/b.xml"),
		"/b.xml":     indexOf("/a.xml", "/self.xml", "/pages.xml"),
		"/pages.xml": urlsetOf("/1"),
	})
	got, err := walkAll(t, &Walker{Client: s.srv.Client()}, s.srv.URL+"/self.xml", strings.Replace(s.srv.URL, "http", "HTTP", 1)+"/self.xml#x")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{s.srv.URL + "/1"}) {
		t.Errorf("got %q", got)
	}
	for path, n := range s.hits {
		if n > 1 {
			t.Errorf("%s fetched %d times", path, n)
		}
	}
	// A redirect back to an index already read is a cycle too.
	s.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/child.xml" {
			http.Redirect(w, r, "/self.xml", http.StatusMovedPermanently)
			return
		}
		s.ServeHTTP(w, r)
	})
	s.set("/self.xml", indexOf("/child.xml", "/pages.xml"))
	got, err = walkAll(t, &Walker{Client: s.srv.Client()}, s.srv.URL+"/self.xml")
	if err != nil || !slices.Equal(got, []string{s.srv.URL + "/1"}) {
		t.Errorf("redirect cycle: %q, %v", got, err)
	}
}

func TestWalk_DepthAndCaps(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/i0.xml": indexOf("/i1.xml", "/p0.xml"),
		"/i1.xml": indexOf("/i2.xml", "/p1.xml"),
		"/i2.xml": indexOf("/p2.xml"),
		"/p0.xml": urlsetOf("/a", "/b", "/c"),
		"/p1.xml": urlsetOf("/d"),
		"/p2.xml": urlsetOf("/e"),
	})
	w := &Walker{Client: s.srv.Client(), MaxDepth: 2}
	rep, err := w.walk(context.Background(), []string{s.srv.URL + "/i0.xml"}, false, nil, nil, func(Entry) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Skipped, []string{s.srv.URL + "/p2.xml"}) || rep.Complete || rep.Pages != 4 || !errors.Is(errors.Join(rep.Errors...), ErrTooDeep) {
		t.Errorf("MaxDepth 2: %+v", rep)
	}
	got, err := walkAll(t, &Walker{Client: s.srv.Client(), MaxSitemaps: 2}, s.srv.URL+"/i0.xml")
	if !errors.Is(err, ErrTooManySitemaps) || len(got) != 0 {
		t.Errorf("MaxSitemaps 2: %q %v", got, err)
	}
	got, err = walkAll(t, &Walker{Client: s.srv.Client(), MaxURLs: 2}, s.srv.URL+"/i0.xml")
	if !errors.Is(err, ErrTooManyURLs) || len(got) != 2 {
		t.Errorf("MaxURLs 2: %q %v", got, err)
	}
}

func TestWalk_LocationRule(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/blog/sitemap.xml": `<urlset><url><loc>{{base}}/blog/1</loc></url><url><loc>{{base}}/shop/2</loc></url><url><loc>https://other.test/3</loc></url></urlset>`,
	})
	w := &Walker{Client: s.srv.Client()}
	got, err := walkAll(t, w, s.srv.URL+"/blog/sitemap.xml")
	if err != nil || !slices.Equal(got, []string{s.srv.URL + "/blog/1"}) {
		t.Errorf("location rule: %q %v", got, err)
	}
	w.CrossHost = true // declared in robots.txt
	got, _ = walkAll(t, w, s.srv.URL+"/blog/sitemap.xml")
	if len(got) != 3 {
		t.Errorf("CrossHost: %q", got)
	}
}

func TestWalk_Errors(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/index.xml": indexOf("/missing.xml", "/ok.xml", "/cut.xml"),
		"/ok.xml":    urlsetOf("/1"),
		"/cut.xml":   `<urlset><url><loc>{{base}}/2</loc></url><url><loc>{{base}}/3`,
	})
	got, err := walkAll(t, &Walker{Client: s.srv.Client()}, s.srv.URL+"/index.xml")
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 404 || !errors.Is(err, ErrStatus) || !errors.Is(err, ErrSyntax) {
		t.Errorf("err = %v", err)
	}
	if !slices.Equal(got, []string{s.srv.URL + "/1", s.srv.URL + "/2"}) {
		t.Errorf("got %q", got)
	}
	stop := errors.New("stop")
	err = (&Walker{Client: s.srv.Client()}).Walk(context.Background(), []string{s.srv.URL + "/ok.xml"}, func(Entry) error { return stop })
	if err != stop {
		t.Errorf("fn error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (&Walker{Client: s.srv.Client()}).Walk(ctx, []string{s.srv.URL + "/ok.xml"}, func(Entry) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	// A network error carries the package prefix and stays reachable with
	// errors.As.
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	err = (&Walker{Client: s.srv.Client()}).Walk(context.Background(), []string{gone.URL + "/sitemap.xml"}, func(Entry) error { return nil })
	var ue *url.Error
	if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "sitemap: ") {
		t.Errorf("unreachable sitemap: %v", err)
	}
}

func TestCheck_B9_OneRequestWhenUnchanged(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/sitemap.xml": urlsetOf("/a 2024-01-01", "/b 2024-01-02", "/c"),
	})
	w := &Walker{Client: s.srv.Client()}
	ctx := context.Background()
	res, err := w.Check(ctx, s.srv.URL, []string{s.srv.URL + "/sitemap.xml"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.First || len(res.New) != 3 || res.Requests != 1 {
		t.Fatalf("first check: %+v", res)
	}
	s.counts()
	res, err = w.Check(ctx, s.srv.URL, []string{s.srv.URL + "/sitemap.xml"})
	if err != nil {
		t.Fatal(err)
	}
	requests, conditional := s.counts()
	if requests != 1 || conditional != 1 || res.NotModified != 1 || res.Listed != 3 {
		t.Errorf("second check: %d requests (%d conditional), NotModified %d; want 1, 1, 1", requests, conditional, res.NotModified)
	}
	if len(res.New)+len(res.Moved)+len(res.Gone) != 0 || res.Unchanged != 2 || len(res.Unknown) != 1 || res.First {
		t.Errorf("second check: %+v", res.DiffResult)
	}
	// A server that ignores the validators: 200, and nothing moved.
	s.ignoreCond = true
	res, _ = w.Check(ctx, s.srv.URL, []string{s.srv.URL + "/sitemap.xml"})
	if requests, _ := s.counts(); requests != 1 || res.Fetched != 1 || len(res.New)+len(res.Moved)+len(res.Gone) != 0 {
		t.Errorf("200 unchanged: %d requests, %+v", requests, res)
	}
}

func TestCheck_B9_MovedNewGone(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/sitemap.xml": urlsetOf("/a 2024-01-01", "/b 2024-01-02", "/c 2024-01-03"),
	})
	w := &Walker{Client: s.srv.Client()}
	ctx := context.Background()
	if _, err := w.Check(ctx, s.srv.URL, nil); err != nil { // fallback: /sitemap.xml
		t.Fatal(err)
	}
	s.set("/sitemap.xml", urlsetOf("/a 2024-01-01", "/b 2024-02-02T10:00:00Z", "/d 2024-02-01"))
	res, err := w.Check(ctx, s.srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := s.srv.URL
	if !slices.Equal(res.New, []string{u + "/d"}) || !slices.Equal(res.Moved, []string{u + "/b"}) || !slices.Equal(res.Gone, []string{u + "/c"}) || res.Unchanged != 1 || res.Untrusted {
		t.Errorf("diff: %+v", res.DiffResult)
	}
}

func TestCheck_PartialReadKeepsState(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/index.xml": indexOf("/one.xml", "/two.xml"),
		"/one.xml":   urlsetOf("/a 2024-01-01"),
		"/two.xml":   urlsetOf("/b 2024-01-01"),
	})
	w := &Walker{Client: s.srv.Client()}
	ctx := context.Background()
	decl := []string{s.srv.URL + "/index.xml"}
	if _, err := w.Check(ctx, s.srv.URL, decl); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	delete(s.files, "/two.xml") // a 404 is not "all its pages are gone"
	s.mu.Unlock()
	res, err := w.Check(ctx, s.srv.URL, decl)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || len(res.Gone) != 0 || len(res.Errors) != 1 || res.Unchanged != 2 {
		t.Errorf("partial: %+v", res)
	}
}

// A site that stamps every URL with the build time (a static site
// generator's sitemap, rebuilt nightly with no content change): B9 must
// not turn that into a refetch of the whole site.
func TestCheck_B9_BuildTimeStampUntrusted(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	s := newTestSite(t, map[string]string{"/sitemap.xml": read("buildstamp_monday.xml")})
	w := &Walker{Client: s.srv.Client()}
	ctx := context.Background()
	if _, err := w.Check(ctx, s.srv.URL, nil); err != nil {
		t.Fatal(err)
	}
	s.set("/sitemap.xml", read("buildstamp_tuesday.xml"))
	res, err := w.Check(ctx, s.srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Untrusted || len(res.Moved) != 14 || !strings.Contains(res.Reason, "build") {
		t.Errorf("build stamp: untrusted=%v reason=%q moved=%d", res.Untrusted, res.Reason, len(res.Moved))
	}
}

func TestDiff(t *testing.T) {
	d := func(s string) time.Time { return date(s) }
	read := d("2024-06-01T00:00:00Z")
	many := func(n int, lm func(i int) time.Time) map[string]time.Time {
		m := make(map[string]time.Time, n)
		for i := range n {
			m[fmt.Sprintf("https://a.test/%d", i)] = lm(i)
		}
		return m
	}
	tests := []struct {
		name      string
		prev, cur Snapshot
		check     func(DiffResult) bool
	}{
		{"first read: all new", Snapshot{}, Snapshot{Read: read, Pages: map[string]time.Time{"https://a.test/1": {}}, Complete: true},
			func(r DiffResult) bool { return len(r.New) == 1 && !r.Untrusted }},
		{"no lastmod: unknown, never moved", Snapshot{Pages: map[string]time.Time{"https://a.test/1": {}, "https://a.test/2": d("2024-01-01T00:00:00Z")}},
			Snapshot{Read: read, Pages: map[string]time.Time{"https://a.test/1": {}, "https://a.test/2": {}}, Complete: true},
			func(r DiffResult) bool { return len(r.Unknown) == 2 && len(r.Moved) == 0 }},
		{"incomplete read: nothing gone", Snapshot{Pages: map[string]time.Time{"https://a.test/1": {}}}, Snapshot{Read: read, Pages: map[string]time.Time{}},
			func(r DiffResult) bool { return len(r.Gone) == 0 }},
		{"real edits: a few moved to different times", Snapshot{Pages: many(100, func(int) time.Time { return d("2024-01-01T00:00:00Z") })},
			Snapshot{Read: read, Complete: true, Pages: many(100, func(i int) time.Time {
				if i < 30 {
					return d("2024-05-01T00:00:00Z").Add(time.Duration(i) * time.Hour)
				}
				return d("2024-01-01T00:00:00Z")
			})},
			func(r DiffResult) bool { return len(r.Moved) == 30 && !r.Untrusted }},
		{"a small real release: 8 pages moved to one time", Snapshot{Pages: many(10, func(int) time.Time { return d("2024-01-01T00:00:00Z") })},
			Snapshot{Read: read, Complete: true, Pages: many(10, func(i int) time.Time {
				if i < 8 {
					return d("2024-05-01T00:00:00Z")
				}
				return d("2024-01-01T00:00:00Z")
			})},
			func(r DiffResult) bool { return len(r.Moved) == 8 && !r.Untrusted }},
		{"build stamp", Snapshot{Pages: many(100, func(int) time.Time { return d("2024-05-01T00:00:00Z") })},
			Snapshot{Read: read, Complete: true, Pages: many(100, func(int) time.Time { return d("2024-05-31T23:59:00Z") })},
			func(r DiffResult) bool { return r.Untrusted && len(r.Moved) == 100 }},
		{"stamped on request: lastmod = now, seconds apart", Snapshot{Pages: many(100, func(int) time.Time { return d("2024-05-01T00:00:00Z") })},
			Snapshot{Read: read, Complete: true, Pages: many(100, func(i int) time.Time { return read.Add(-time.Duration(i) * time.Second) })},
			func(r DiffResult) bool { return r.Untrusted && strings.Contains(r.Reason, "request") }},
		{"lastmods in the future", Snapshot{Pages: many(10, func(int) time.Time { return d("2024-05-01T00:00:00Z") })},
			Snapshot{Read: read, Complete: true, Pages: many(10, func(i int) time.Time {
				if i == 0 {
					return d("2030-01-01T00:00:00Z")
				}
				return d("2024-05-01T00:00:00Z")
			})},
			func(r DiffResult) bool { return r.Untrusted && strings.Contains(r.Reason, "future") }},
		{"a few hours ahead is not the future", Snapshot{}, Snapshot{Read: read, Pages: many(10, func(int) time.Time { return read.Add(10 * time.Hour) })},
			func(r DiffResult) bool { return !r.Untrusted }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := Diff(tc.prev, tc.cur); !tc.check(r) {
				t.Errorf("%+v", r)
			}
		})
	}
}

// TestCheck_RelativeDeclaredSitemaps: relative robots.txt Sitemap lines
// are resolved against the robots.txt URL and read once.
func TestCheck_RelativeDeclaredSitemaps(t *testing.T) {
	s := newTestSite(t, map[string]string{"/sitemap.xml": urlsetOf("/1", "/2")})
	w := &Walker{Client: s.srv.Client()}
	res, err := w.Check(context.Background(), s.srv.URL, []string{"/sitemap.xml", "sitemap.xml", s.srv.URL + "/sitemap.xml"})
	if err != nil {
		t.Fatal(err)
	}
	if req, _ := s.counts(); req != 1 || res.Requests != 1 || len(res.Errors) != 0 || len(res.New) != 2 {
		t.Errorf("requests %d (report %d), errors %v, new %q; want 1 request, no error, 2 new pages", req, res.Requests, res.Errors, res.New)
	}
}

// TestOriginURLs: a site's sitemap and robots.txt are at its origin,
// whatever path the site URL has; a site that is not an absolute URL gets
// the path appended.
func TestOriginURLs(t *testing.T) {
	tests := []struct {
		name       string
		fn         func(string) string
		site, want string
	}{
		{"sitemap", DefaultSitemapURL, "https://example.com", "https://example.com/sitemap.xml"},
		{"sitemap", DefaultSitemapURL, "https://example.com/blog/?q=1#f", "https://example.com/sitemap.xml"},
		{"sitemap", DefaultSitemapURL, "http://example.com:8080/x", "http://example.com:8080/sitemap.xml"},
		{"sitemap", DefaultSitemapURL, "example.com/", "example.com/sitemap.xml"},
		{"sitemap", DefaultSitemapURL, "%zz", "%zz/sitemap.xml"},
		{"robots", robotsURL, "https://example.com", "https://example.com/robots.txt"},
		{"robots", robotsURL, "https://example.com/blog/?q=1", "https://example.com/robots.txt"},
		{"robots", robotsURL, "example.com/", "example.com/robots.txt"},
		{"robots", robotsURL, "%zz", "%zz/robots.txt"},
	}
	for _, tc := range tests {
		if got := tc.fn(tc.site); got != tc.want {
			t.Errorf("%s of %q = %q, want %q", tc.name, tc.site, got, tc.want)
		}
	}
}

// TestSiteStoreKey: one key per site, the default port dropped; a site
// that is not an absolute URL is its own key.
func TestSiteStoreKey(t *testing.T) {
	tests := []struct{ site, want string }{
		{"HTTPS://Example.COM.:0443", "https://example.com"},
		{"https://example.com/", "https://example.com"},
		{"http://example.com:80/x", "http://example.com"},
		{"http://example.com", "http://example.com"},
		{"http://example.com:8080", "http://example.com:8080"},
		{"https://example.com:8443", "https://example.com:8443"},
		{"example.com", "example.com"},
		{"%zz", "%zz"},
	}
	for _, tc := range tests {
		if got := siteStoreKey(tc.site); got != tc.want {
			t.Errorf("siteStoreKey(%q) = %q, want %q", tc.site, got, tc.want)
		}
	}
}

// uaTransport sets the User-Agent, as a bot's client would.
type uaTransport struct{ rt http.RoundTripper }

func (t uaTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("User-Agent", "goodbot-test/1")
	return t.rt.RoundTrip(r)
}

// TestWalker_Client: the Walker's requests go through its Client; a nil
// Client means http.DefaultClient.
func TestWalker_Client(t *testing.T) {
	var mu sync.Mutex
	var agents []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.UserAgent())
		mu.Unlock()
		w.Write([]byte(`<urlset><url><loc>http://` + r.Host + `/1</loc></url></urlset>`))
	}))
	defer srv.Close()
	defer http.DefaultClient.CloseIdleConnections()
	for _, tc := range []struct {
		name   string
		client *http.Client
		agent  string
	}{
		{"own client", &http.Client{Transport: uaTransport{srv.Client().Transport}}, "goodbot-test/1"},
		{"nil client", nil, "Go-http-client/1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			agents = nil
			mu.Unlock()
			got, err := walkAll(t, &Walker{Client: tc.client}, srv.URL+"/sitemap.xml")
			mu.Lock()
			defer mu.Unlock()
			if err != nil || len(got) != 1 || !slices.Equal(agents, []string{tc.agent}) {
				t.Errorf("pages %q, err %v, User-Agents %q; want 1 page, %q", got, err, agents, tc.agent)
			}
		})
	}
}

// TestWalk_Limits: each walk limit, at one and at its default (zero):
// what is read, and what is skipped, for a chain of indexes
// i0 > i1 > i2 > i3 > p4, where i2 also lists p3 and i0 lists p1.
func TestWalk_Limits(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/i0.xml": indexOf("/i1.xml", "/p1.xml"),
		"/i1.xml": indexOf("/i2.xml"),
		"/i2.xml": indexOf("/i3.xml", "/p3.xml"),
		"/i3.xml": indexOf("/p4.xml"),
		"/p1.xml": urlsetOf("/1a", "/1b"),
		"/p3.xml": urlsetOf("/3a", "/3b"),
		"/p4.xml": urlsetOf("/4"),
	})
	tests := []struct {
		name     string
		limits   [3]int // MaxDepth, MaxSitemaps, MaxURLs
		pages    []string
		requests int
		skipped  []string
		limit    error
	}{
		{"defaults: depth 3", [3]int{}, []string{"/3a", "/3b", "/1a", "/1b"}, 6, []string{"/p4.xml"}, ErrTooDeep},
		{"MaxDepth 1", [3]int{1, 0, 0}, []string{"/1a", "/1b"}, 3, []string{"/i2.xml"}, ErrTooDeep},
		{"MaxSitemaps 1", [3]int{0, 1, 0}, nil, 1, []string{"/p1.xml", "/i1.xml"}, ErrTooManySitemaps},
		{"MaxURLs 1", [3]int{0, 0, 1}, []string{"/3a"}, 5, []string{"/p4.xml", "/p1.xml"}, ErrTooManyURLs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.counts()
			w := &Walker{Client: s.srv.Client(), MaxDepth: tc.limits[0], MaxSitemaps: tc.limits[1], MaxURLs: tc.limits[2]}
			var pages []string
			rep, err := w.WalkReport(context.Background(), []string{s.srv.URL + "/i0.xml"}, func(e Entry) error {
				pages = append(pages, strings.TrimPrefix(e.Loc, s.srv.URL))
				return nil
			})
			req, _ := s.counts()
			var skipped []string
			for _, u := range rep.Skipped {
				skipped = append(skipped, strings.TrimPrefix(u, s.srv.URL))
			}
			if err != nil || req != tc.requests || !slices.Equal(pages, tc.pages) {
				t.Fatalf("%d requests, pages %q, err %v; want %d, %q", req, pages, err, tc.requests, tc.pages)
			}
			if !slices.Equal(skipped, tc.skipped) || rep.SkippedCount != len(tc.skipped) || rep.Complete || !errors.Is(rep.Err(), tc.limit) {
				t.Errorf("skipped %q (%d), complete %v, err %v; want %q, %v", skipped, rep.SkippedCount, rep.Complete, rep.Err(), tc.skipped, tc.limit)
			}
		})
	}
}

// TestWalk_DefaultMaxSitemaps: a walk fetches at most 1000 sitemaps.
func TestWalk_DefaultMaxSitemaps(t *testing.T) {
	children := make([]string, 1000)
	files := map[string]string{}
	for i := range children {
		children[i] = fmt.Sprintf("/s%d.xml", i)
		files[children[i]] = `<urlset></urlset>`
	}
	files["/index.xml"] = indexOf(children...)
	s := newTestSite(t, files)
	rep, err := (&Walker{Client: s.srv.Client()}).WalkReport(context.Background(), []string{s.srv.URL + "/index.xml"}, func(Entry) error { return nil })
	req, _ := s.counts()
	if err != nil || req != 1000 || rep.Requests != 1000 || rep.Fetched != 1000 {
		t.Fatalf("%d requests (report %d, fetched %d), %v; want 1000", req, rep.Requests, rep.Fetched, err)
	}
	if !slices.Equal(rep.Skipped, []string{s.srv.URL + "/s999.xml"}) || rep.SkippedCount != 1 || !errors.Is(rep.Err(), ErrTooManySitemaps) {
		t.Errorf("skipped %q (%d), err %v; want the last child, ErrTooManySitemaps", rep.Skipped, rep.SkippedCount, rep.Err())
	}
}

// TestWalk_Options: Walker.Options bounds each file.
func TestWalk_Options(t *testing.T) {
	s := newTestSite(t, map[string]string{"/sitemap.xml": urlsetOf("/1", "/2")})
	got, err := walkAll(t, &Walker{Client: s.srv.Client(), Options: &Options{MaxURLs: 1}}, s.srv.URL+"/sitemap.xml")
	var le *LimitError
	if len(got) != 1 || !errors.As(err, &le) || le.Err != ErrTooManyURLs || le.Limit != 1 {
		t.Errorf("Options.MaxURLs 1: pages %q, err %v; want 1 page, ErrTooManyURLs at 1", got, err)
	}
}

// TestWalk_ContextEnds: the end of ctx stops a walk with ctx's error; it
// is not a per-file failure, and a walk whose ctx has ended before it
// starts makes no request.
func TestWalk_ContextEnds(t *testing.T) {
	s := newTestSite(t, map[string]string{"/index.xml": indexOf("/a.xml", "/b.xml"), "/b.xml": urlsetOf("/2")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.cancelAt("/a.xml", cancel)
	rep, err := (&Walker{Client: s.srv.Client()}).WalkReport(ctx, []string{s.srv.URL + "/index.xml"}, func(Entry) error { return nil })
	if req, _ := s.counts(); req != 1 || rep.Requests != 2 || !errors.Is(err, context.Canceled) || len(rep.Errors) != 0 || rep.Failed() != 0 {
		t.Errorf("ended during a.xml: %d requests served (report %d), err %v, errors %v, failed %d; want 1 (2), context.Canceled, none, 0",
			req, rep.Requests, err, rep.Errors, rep.Failed())
	}
	rep, err = (&Walker{Client: s.srv.Client()}).WalkReport(ctx, []string{s.srv.URL + "/index.xml"}, func(Entry) error { return nil })
	if req, _ := s.counts(); req != 0 || rep.Requests != 0 || len(rep.Files) != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("ended before: %d requests (report %d), files %+v, err %v; want none, context.Canceled", req, rep.Requests, rep.Files, err)
	}
}

// failingStore fails Load or Save, and counts the Saves.
type failingStore struct {
	MemoryStore
	load, save error
	saves      int
}

func (s *failingStore) Load(ctx context.Context, site string) (*State, error) {
	if s.load != nil {
		return nil, s.load
	}
	return s.MemoryStore.Load(ctx, site)
}

func (s *failingStore) Save(ctx context.Context, site string, st *State) error {
	s.saves++
	if s.save != nil {
		return s.save
	}
	return s.MemoryStore.Save(ctx, site, st)
}

// TestCheck_StoreErrors: a Store that cannot Load fails the check before
// any request; one that cannot Save fails it after the read.
func TestCheck_StoreErrors(t *testing.T) {
	s := newTestSite(t, map[string]string{"/sitemap.xml": urlsetOf("/a")})
	boom := errors.New("store down")
	for _, tc := range []struct {
		name     string
		store    *failingStore
		requests int
	}{
		{"load", &failingStore{load: boom}, 0},
		{"save", &failingStore{save: boom}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.counts()
			res, err := (&Walker{Client: s.srv.Client(), Store: tc.store}).Check(context.Background(), s.srv.URL, nil)
			if req, _ := s.counts(); req != tc.requests || res != nil || err != boom {
				t.Errorf("%d requests, result %+v, err %v; want %d requests, no result, %v", req, res, err, tc.requests, boom)
			}
		})
	}
}

// TestCheck_BadStoredState: a Store whose Load says the site's state does
// not decode (ErrBadState, wrapped) does not fail the check, unlike any
// other Load error: the site is read as never read, the result carries the
// error, a Warn line names the site, and the read is saved in its place.
func TestCheck_BadStoredState(t *testing.T) {
	s := newTestSite(t, map[string]string{"/sitemap.xml": urlsetOf("/a", "/b")})
	bad := fmt.Errorf("store: loading x: %w: unexpected end of JSON input", ErrBadState)
	store := &failingStore{load: bad}
	var logs strings.Builder
	w := &Walker{Client: s.srv.Client(), Store: store, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	res, err := w.Check(context.Background(), s.srv.URL, nil)
	if req, _ := s.counts(); err != nil || req != 1 || store.saves != 1 {
		t.Fatalf("Check = %v, %d requests, %d saves; want no error, 1 request, 1 save", err, req, store.saves)
	}
	if !res.First || len(res.New) != 2 || res.StateErr != bad {
		t.Errorf("result: first %v, new %v, StateErr %v; want a first read of 2 pages and %v", res.First, res.New, res.StateErr, bad)
	}
	if line := logs.String(); !strings.Contains(line, "level=WARN") || !strings.Contains(line, "site="+s.srv.URL) {
		t.Errorf("log: %q; want a Warn line naming the site", line)
	}
	store.load = nil
	if res, err = w.Check(context.Background(), s.srv.URL, nil); err != nil || res.First || res.StateErr != nil {
		t.Errorf("the next check: %+v, %v; want the saved read, no StateErr", res, err)
	}
}

// cancelAt makes s call cancel when path is asked for, and hold that
// request until the walker hangs up.
func (s *testSite) cancelAt(path string, cancel context.CancelFunc) {
	s.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == path {
			cancel()
			<-r.Context().Done()
			return
		}
		s.ServeHTTP(w, r)
	})
}

// TestCheck_ContextEndsDuringRead: a check whose context ends while it
// reads returns the context's error and saves nothing.
func TestCheck_ContextEndsDuringRead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newTestSite(t, map[string]string{"/index.xml": indexOf("/a.xml", "/b.xml"), "/a.xml": urlsetOf("/1"), "/b.xml": urlsetOf("/2")})
	s.cancelAt("/a.xml", cancel)
	store := &failingStore{}
	res, err := (&Walker{Client: s.srv.Client(), Store: store}).Check(ctx, s.srv.URL, []string{"/index.xml"})
	if req, _ := s.counts(); req != 1 || res != nil || !errors.Is(err, context.Canceled) || store.saves != 0 {
		t.Errorf("%d requests, result %+v, err %v, %d saves; want 1 request served, no result, context.Canceled, no save", req, res, err, store.saves)
	}
}

// TestCheck_DeclaredSitemapsAreCrossHost: a sitemap declared in robots.txt
// may list pages anywhere (the location rule is off); the fallback
// /sitemap.xml, not declared, is under the rule.
func TestCheck_DeclaredSitemapsAreCrossHost(t *testing.T) {
	body := `<urlset><url><loc>{{base}}/blog/1</loc></url><url><loc>https://other.test/2</loc></url></urlset>`
	s := newTestSite(t, map[string]string{"/blog/sitemap.xml": body, "/sitemap.xml": body})
	res, err := (&Walker{Client: s.srv.Client()}).Check(context.Background(), s.srv.URL, []string{"/blog/sitemap.xml"})
	if err != nil || res.Fetched != 1 || res.Listed != 2 || res.Dropped != 0 {
		t.Errorf("declared: fetched %d, listed %d, dropped %d, %v; want 1, 2, 0", res.Fetched, res.Listed, res.Dropped, err)
	}
	res, err = (&Walker{Client: s.srv.Client()}).Check(context.Background(), s.srv.URL, nil)
	if err != nil || res.Fetched != 1 || res.Listed != 1 || res.Dropped != 1 {
		t.Errorf("fallback: fetched %d, listed %d, dropped %d, %v; want 1, 1, 1", res.Fetched, res.Listed, res.Dropped, err)
	}
}

// TestCheck_IfModifiedSince: a sitemap served with Last-Modified only is
// asked for again with If-Modified-Since, and a 304 keeps its pages.
func TestCheck_IfModifiedSince(t *testing.T) {
	const lm = "Mon, 01 Jan 2024 00:00:00 GMT"
	var mu sync.Mutex
	var ims []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ims = append(ims, r.Header.Get("If-Modified-Since"))
		mu.Unlock()
		if r.Header.Get("If-None-Match") != "" {
			t.Errorf("If-None-Match %q sent, no ETag was given", r.Header.Get("If-None-Match"))
		}
		if r.Header.Get("If-Modified-Since") == lm {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Last-Modified", lm)
		w.Write([]byte(`<urlset><url><loc>http://` + r.Host + `/1</loc><lastmod>2024-01-01</lastmod></url></urlset>`))
	}))
	defer srv.Close()
	w := &Walker{Client: srv.Client()}
	ctx := context.Background()
	if res, err := w.Check(ctx, srv.URL, nil); err != nil || res.Fetched != 1 || res.Listed != 1 {
		t.Fatalf("first check: %+v, %v", res, err)
	}
	res, err := w.Check(ctx, srv.URL, nil)
	mu.Lock()
	defer mu.Unlock()
	if err != nil || !slices.Equal(ims, []string{"", lm}) || res.NotModified != 1 || res.Listed != 1 || res.Unchanged != 1 || res.Files[0].Outcome != FileNotModified {
		t.Errorf("second check: If-Modified-Since %q, NotModified %d, Listed %d, Unchanged %d, %v; want [\"\" %q], 1, 1, 1", ims, res.NotModified, res.Listed, res.Unchanged, err, lm)
	}
}

// TestCheck_ReadTime: a read is dated by the server's clock (the Date of
// the first file read), and by the local clock when no file was read.
func TestCheck_ReadTime(t *testing.T) {
	s := newTestSite(t, map[string]string{"/index.xml": indexOf("/a.xml"), "/a.xml": urlsetOf("/1")})
	s.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		date := "Mon, 01 Jan 2024 10:00:00 GMT"
		if r.URL.Path == "/a.xml" {
			date = "Mon, 01 Jan 2024 11:00:00 GMT"
		}
		w.Header().Set("Date", date)
		s.ServeHTTP(w, r)
	})
	ctx := context.Background()
	store := &MemoryStore{}
	w := &Walker{Client: s.srv.Client(), Store: store}
	if res, err := w.Check(ctx, s.srv.URL, []string{"/index.xml"}); err != nil || res.Listed != 1 {
		t.Fatalf("check: %+v, %v", res, err)
	}
	st, _ := store.Load(ctx, s.srv.URL)
	if want := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC); !st.Read.Equal(want) {
		t.Errorf("Read %v, want the index's Date %v", st.Read, want)
	}
	if res, err := w.Check(ctx, s.srv.URL, []string{"/index.xml"}); err != nil || res.NotModified != 2 {
		t.Fatalf("second check: %+v, %v; want two 304s", res, err)
	}
	st, _ = store.Load(ctx, s.srv.URL)
	if want := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC); !st.Read.Equal(want) {
		t.Errorf("after 304s: Read %v, want the index's Date %v", st.Read, want)
	}
	store = &MemoryStore{}
	w = &Walker{Client: s.srv.Client(), Store: store}
	before := time.Now()
	if res, err := w.Check(ctx, s.srv.URL, []string{"/missing.xml"}); err != nil || res.Failed() != 1 {
		t.Fatalf("check of a missing sitemap: %+v, %v", res, err)
	}
	after := time.Now()
	st, _ = store.Load(ctx, s.srv.URL)
	if st == nil || st.Read.Before(before.Add(-time.Second)) || st.Read.After(after.Add(time.Second)) {
		t.Errorf("nothing read: Read %v, want the local time, between %v and %v", st, before, after)
	}
}

// TestCheck_DamagedStoredValidator: a stored ETag or Last-Modified that
// net/http would refuse to send (a control character: a damaged record) is
// left out of the conditional request, so the check reads the sitemap
// instead of failing on every run; the new read's validators replace it,
// and the next check is a 304 again.
func TestCheck_DamagedStoredValidator(t *testing.T) {
	for _, damage := range []SitemapState{
		{ETag: "\"a\"\r\nCookie: x=1"},
		{ETag: "\"a\x00\"", LastModified: "Mon,\n07 Dec 2026"},
		{LastModified: "\x7f"},
	} {
		s := newTestSite(t, map[string]string{"/sitemap.xml": urlsetOf("/a", "/b")})
		store := &MemoryStore{}
		w := &Walker{Client: s.srv.Client(), Store: store}
		ctx := context.Background()
		if _, err := w.Check(ctx, s.srv.URL, nil); err != nil {
			t.Fatal(err)
		}
		st, err := store.Load(ctx, s.srv.URL)
		if err != nil || st == nil || len(st.Sitemaps) != 1 {
			t.Fatalf("stored %+v, %v; want the sitemap's state", st, err)
		}
		for _, sm := range st.Sitemaps {
			sm.ETag, sm.LastModified = damage.ETag, damage.LastModified
		}
		if err := store.Save(ctx, s.srv.URL, st); err != nil {
			t.Fatal(err)
		}
		res, err := w.Check(ctx, s.srv.URL, nil)
		if req, cond := s.counts(); err != nil || req != 2 || cond != 0 || res.First {
			t.Fatalf("%q %q: Check = %+v, %v after %d requests, %d conditional; want a read of the sitemap, unconditional", damage.ETag, damage.LastModified, res, err, req, cond)
		}
		if _, err := w.Check(ctx, s.srv.URL, nil); err != nil {
			t.Fatal(err)
		}
		if req, cond := s.counts(); req != 1 || cond != 1 {
			t.Errorf("%q %q: the next check: %d requests, %d conditional; want one conditional request", damage.ETag, damage.LastModified, req, cond)
		}
	}
}
