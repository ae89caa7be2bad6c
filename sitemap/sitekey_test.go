package sitemap

import (
	"context"
	"net/url"
	"slices"
	"strings"
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
