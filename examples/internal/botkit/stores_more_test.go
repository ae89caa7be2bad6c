package botkit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/sitemap"
)

// SitemapPages lists the pages of the site's last sitemap read, sorted, and
// nothing without a store or a read.
func TestSitemapPages(t *testing.T) {
	ctx := context.Background()
	if got := SitemapPages(ctx, &sitemap.Walker{}, "https://a.test"); got != nil {
		t.Errorf("no store: %v", got)
	}
	st := &sitemap.MemoryStore{}
	w := &sitemap.Walker{Store: st}
	if got := SitemapPages(ctx, w, "https://a.test"); got != nil {
		t.Errorf("never read: %v", got)
	}
	st.Save(ctx, "https://a.test", &sitemap.State{Sitemaps: map[string]*sitemap.SitemapState{
		"https://a.test/s1.xml": {Pages: map[string]time.Time{"https://a.test/c": {}, "https://a.test/a": {}}},
		"https://a.test/s2.xml": {Pages: map[string]time.Time{"https://a.test/b": {}, "https://a.test/a": {}}},
	}})
	if got := strings.Join(SitemapPages(ctx, w, "https://a.test"), " "); got != "https://a.test/a https://a.test/b https://a.test/c" {
		t.Errorf("pages %q", got)
	}
}

// Without a state file the stores are in memory; with one and resume, the
// fetched set and validators are staged by the journal.
func TestOpenStores(t *testing.T) {
	s, err := openStores(nil, true)
	if err != nil || s.robots == nil || s.validators == nil || s.fetched == nil || s.sitemaps == nil || s.journal != nil || s.state != nil {
		t.Fatalf("memory stores %+v, %v", s, err)
	}
	for _, resume := range []bool{false, true} {
		db, err := OpenState(t.TempDir()+"/s.db", nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := openStores(db, resume)
		if err != nil {
			t.Fatal(err)
		}
		if s.state == nil || s.robots == nil || s.sitemaps == nil {
			t.Errorf("resume=%v: %+v", resume, s)
		}
		if got := s.journal != nil; got != resume {
			t.Errorf("resume=%v: journal %v", resume, got)
		}
		if got := s.fetched != s.state.Fetched; got != resume {
			t.Errorf("resume=%v: fetched set staged: %v", resume, got)
		}
		if got := s.validators != s.state.Validators; got != resume {
			t.Errorf("resume=%v: validators staged: %v", resume, got)
		}
		if err := s.state.Close(); err != nil {
			t.Error(err)
		}
	}
}
