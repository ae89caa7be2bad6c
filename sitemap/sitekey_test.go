package sitemap

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goodbot-go/goodbot/politeness/sitekeytest"
)

// withPath returns the URL s with its path replaced by p.
func withPath(t *testing.T, s, p string) string {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	u.Path, u.RawPath = p, ""
	return u.String()
}

// TestInScope_SpellingsOfOneSite: under the location rule a sitemap
// describes the pages of its site in every spelling of the host, and no
// page of another site.
func TestInScope_SpellingsOfOneSite(t *testing.T) {
	groups := sitekeytest.Spellings(t)
	if len(groups) < 8 {
		t.Fatalf("%d sites with several spellings in the table, want at least 8", len(groups))
	}
	tried := 0
	for key, spellings := range groups {
		for _, sm := range spellings {
			sitemapURL := withPath(t, sm, "/blog/sitemap.xml")
			for other, pages := range groups {
				for _, p := range pages {
					tried++
					page := withPath(t, p, "/blog/post")
					if got, want := InScope(sitemapURL, page), other == key; got != want {
						t.Errorf("InScope(%s, %s) = %v, want %v", sitemapURL, page, got, want)
					}
					if InScope(sitemapURL, withPath(t, p, "/admin")) {
						t.Errorf("InScope(%s, %s/admin) = true", sitemapURL, p)
					}
				}
			}
		}
	}
	if tried < 100 {
		t.Errorf("%d pairs tried", tried)
	}
}

func TestInScope_CanonicalHostDoesNotAllocate(t *testing.T) {
	s, ok := newScope("https://example.com/blog/sitemap.xml")
	if !ok {
		t.Fatal("newScope failed")
	}
	for _, loc := range []string{"https://example.com/blog/a", "https://example.com:443/blog/a", "https://other.example/blog/a"} {
		if n := testing.AllocsPerRun(100, func() { s.contains(loc) }); n != 0 {
			t.Errorf("contains(%s) allocates %v times, want 0", loc, n)
		}
	}
}

// TestWalk_CyclesAcrossSpellings: an index that lists one child sitemap
// under several spellings of its own host (none of them the index's) reads
// it, once.
func TestWalk_CyclesAcrossSpellings(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/pages.xml": urlsetOf("/1"),
	})
	u, _ := url.Parse(s.srv.URL)
	port := u.Port()
	spellings := []string{
		"HTTP://127.0.0.1:0" + port,
		"http://127.0.0.1:00" + port,
		"http://[::ffff:127.0.0.1]:" + port,
	}
	var b strings.Builder
	b.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, sp := range spellings {
		b.WriteString("<sitemap><loc>" + sp + "/pages.xml</loc></sitemap>")
	}
	b.WriteString("</sitemapindex>")
	s.set("/index.xml", b.String())
	got, err := walkAll(t, &Walker{Client: s.srv.Client()}, s.srv.URL+"/index.xml")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{s.srv.URL + "/1"}) {
		t.Errorf("got %q, want the one page once", got)
	}
	if n := s.hits["/pages.xml"]; n != 1 {
		t.Errorf("/pages.xml fetched %d times under %d spellings, want 1", n, len(spellings))
	}
}

// B9: Check keeps one state per site, whatever the spelling of the site it
// is given: the second check, under another spelling, is a freshness check
// (one conditional request, nothing new), not a first read.
func TestCheck_B9_OneStateAcrossSpellings(t *testing.T) {
	s := newTestSite(t, map[string]string{
		"/sitemap.xml": urlsetOf("/a 2024-01-01", "/b"),
	})
	u, _ := url.Parse(s.srv.URL)
	w := &Walker{Client: s.srv.Client()}
	ctx := context.Background()
	res, err := w.Check(ctx, s.srv.URL, nil)
	if err != nil || !res.First || len(res.New) != 2 {
		t.Fatalf("first check: %+v, %v", res, err)
	}
	for _, site := range []string{"HTTP://127.0.0.1:0" + u.Port(), "http://127.0.0.1.:" + u.Port() + "/", "http://[::ffff:127.0.0.1]:" + u.Port()} {
		s.counts()
		res, err := w.Check(ctx, site, []string{s.srv.URL + "/sitemap.xml"})
		if err != nil {
			t.Fatal(err)
		}
		requests, conditional := s.counts()
		if res.First || len(res.New) != 0 || requests != 1 || conditional != 1 || res.NotModified != 1 {
			t.Errorf("check as %s: First %v, %d new, %d requests (%d conditional), NotModified %d; want false, 0, 1 (1), 1",
				site, res.First, len(res.New), requests, conditional, res.NotModified)
		}
	}
}

// hostsSite serves files by host and path ("a.test/sitemap.xml") over one
// loopback server; its client dials that server whatever the host.
type hostsSite struct {
	srv    *httptest.Server
	client *http.Client
	mu     sync.Mutex
	hits   map[string]int // guarded by mu: host+path -> requests
}

func newHostsSite(t *testing.T, files map[string]string) *hostsSite {
	t.Helper()
	s := &hostsSite{hits: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.Host+r.URL.Path]++
		s.mu.Unlock()
		body, ok := files[r.Host+r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	addr := s.srv.Listener.Addr().String()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	s.client = &http.Client{Transport: tr}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		s.srv.Close()
	})
	return s
}

func (s *hostsSite) hitsOf(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[key]
}

// TestWalk_HostsDifferingInTheirFirstLetter: sitemaps on a.test and
// b.test, which differ only in their first letter, are two sitemaps, not
// one sitemap met twice: both are read and both lists are reported, as
// roots of a walk, as the Sitemap lines of a Check, and as children of
// one index.
func TestWalk_HostsDifferingInTheirFirstLetter(t *testing.T) {
	files := map[string]string{
		"a.test/index.xml":   `<sitemapindex><sitemap><loc>http://a.test/sitemap.xml</loc></sitemap><sitemap><loc>http://b.test/sitemap.xml</loc></sitemap></sitemapindex>`,
		"a.test/sitemap.xml": `<urlset><url><loc>http://a.test/1</loc></url></urlset>`,
		"b.test/sitemap.xml": `<urlset><url><loc>http://b.test/1</loc></url></urlset>`,
	}
	both := []string{"http://a.test/sitemap.xml", "http://b.test/sitemap.xml"}
	ctx := context.Background()
	walk := func(roots ...string) func(w *Walker) ([]string, *Report, error) {
		return func(w *Walker) ([]string, *Report, error) {
			var got []string
			rep, err := w.WalkReport(ctx, roots, func(e Entry) error {
				got = append(got, e.Loc)
				return nil
			})
			return got, rep, err
		}
	}
	tests := []struct {
		name string
		run  func(w *Walker) ([]string, *Report, error)
	}{
		{"two roots", walk(both...)},
		{"one index", walk("http://a.test/index.xml")},
		{"Check with two Sitemap lines", func(w *Walker) ([]string, *Report, error) {
			w.Store = &MemoryStore{}
			res, err := w.Check(ctx, "http://a.test", both)
			if err != nil {
				return nil, nil, err
			}
			st, _ := w.Store.Load(ctx, "http://a.test")
			for _, u := range both {
				if sm := st.Sitemaps[u]; sm == nil || len(sm.Pages) != 1 {
					t.Errorf("state of %s %+v; want its one page", u, sm)
				}
			}
			return res.New, &res.Report, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newHostsSite(t, files)
			got, rep, err := tt.run(&Walker{Client: s.client, CrossHost: true})
			if err != nil {
				t.Fatal(err)
			}
			if a, b := s.hitsOf("a.test/sitemap.xml"), s.hitsOf("b.test/sitemap.xml"); a != 1 || b != 1 {
				t.Fatalf("a.test/sitemap.xml fetched %d times, b.test/sitemap.xml %d; want 1, 1", a, b)
			}
			if !slices.Equal(got, []string{"http://a.test/1", "http://b.test/1"}) || rep.Duplicates != 0 || len(rep.Errors) != 0 {
				t.Errorf("pages %q, %d duplicates, errors %v; want [http://a.test/1 http://b.test/1], 0, none", got, rep.Duplicates, rep.Errors)
			}
		})
	}
}
