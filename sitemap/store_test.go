package sitemap_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/sitemap"
	"github.com/goodbot-go/goodbot/sitemap/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) sitemap.Store { return new(sitemap.MemoryStore) })
}

// TestStateClone: Clone of nil is nil; otherwise a deep copy, so that
// changing the copy's maps and slices leaves the original as it was.
func TestStateClone(t *testing.T) {
	var nilState *sitemap.State
	if nilState.Clone() != nil {
		t.Error("nil.Clone() != nil")
	}
	read := time.Date(2024, 5, 6, 0, 0, 0, 0, time.UTC)
	s := &sitemap.State{Read: read, Complete: true, Sitemaps: map[string]*sitemap.SitemapState{
		"https://a.test/s.xml": {ETag: `"e"`, LastModified: "Mon, 06 May 2024 00:00:00 GMT", Cut: 2,
			Children: []string{"https://a.test/c.xml"}, Pages: map[string]time.Time{"https://a.test/1": read}},
	}}
	c := s.Clone()
	if !reflect.DeepEqual(c, s) {
		t.Fatalf("Clone = %+v, want %+v", c, s)
	}
	sm := c.Sitemaps["https://a.test/s.xml"]
	sm.Children[0] = "changed"
	sm.Pages["https://a.test/2"] = read
	sm.ETag = "changed"
	c.Sitemaps["https://a.test/other.xml"] = &sitemap.SitemapState{}
	orig := s.Sitemaps["https://a.test/s.xml"]
	if len(s.Sitemaps) != 1 || orig.Children[0] != "https://a.test/c.xml" || len(orig.Pages) != 1 || orig.ETag != `"e"` {
		t.Errorf("changing the clone changed the original: %+v", orig)
	}
}
