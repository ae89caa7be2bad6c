// Package storetest checks that a [sitemap.Store] implementation keeps
// its promises, in the way of testing/fstest and httpcache's test.Cache.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/sitemap"
)

// Run checks the Store returned by newStore: unknown sites load as nil,
// a saved state loads back equal, a second Save replaces the first,
// sites are independent, and changing a loaded or saved State does not
// change what is stored.
func Run(t *testing.T, newStore func(t *testing.T) sitemap.Store) {
	t.Helper()
	ctx := context.Background()
	lm := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	state := func() *sitemap.State {
		return &sitemap.State{
			Read:     time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC),
			Complete: true,
			Sitemaps: map[string]*sitemap.SitemapState{
				"https://a.test/sitemap.xml": {ETag: `"v1"`, LastModified: "Sat, 01 Jun 2024 00:00:00 GMT", Children: []string{"https://a.test/s1.xml"}},
				"https://a.test/s1.xml":      {Cut: 2, Pages: map[string]time.Time{"https://a.test/1": lm, "https://a.test/2": {}}},
			},
		}
	}
	t.Run("missing", func(t *testing.T) {
		s := newStore(t)
		got, err := s.Load(ctx, "https://none.test")
		if err != nil || got != nil {
			t.Errorf("Load(unknown) = %v, %v; want nil, nil", got, err)
		}
	})
	t.Run("roundtrip", func(t *testing.T) {
		s := newStore(t)
		want := state()
		if err := s.Save(ctx, "https://a.test", want); err != nil {
			t.Fatal(err)
		}
		want.Sitemaps["https://a.test/s1.xml"].Pages["https://a.test/3"] = lm // caller mutation after Save
		got, err := s.Load(ctx, "https://a.test")
		if err != nil || got == nil {
			t.Fatalf("Load = %v, %v", got, err)
		}
		check(t, got, state())
		got.Sitemaps["https://a.test/s1.xml"].Pages["https://a.test/4"] = lm // caller mutation after Load
		again, _ := s.Load(ctx, "https://a.test")
		check(t, again, state())
	})
	t.Run("replace and independent sites", func(t *testing.T) {
		s := newStore(t)
		if err := s.Save(ctx, "https://a.test", state()); err != nil {
			t.Fatal(err)
		}
		other := &sitemap.State{Read: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), Sitemaps: map[string]*sitemap.SitemapState{
			"https://b.test/sitemap.xml": {ETag: `"b"`},
		}}
		if err := s.Save(ctx, "https://b.test", other); err != nil {
			t.Fatal(err)
		}
		newer := state()
		newer.Sitemaps["https://a.test/sitemap.xml"].ETag = `"v2"`
		delete(newer.Sitemaps, "https://a.test/s1.xml")
		if err := s.Save(ctx, "https://a.test", newer); err != nil {
			t.Fatal(err)
		}
		got, _ := s.Load(ctx, "https://a.test")
		check(t, got, newer)
		got, _ = s.Load(ctx, "https://b.test")
		check(t, got, other)
	})
	t.Run("cancelled context", func(t *testing.T) {
		s := newStore(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := s.Save(cctx, "https://a.test", state()); err == nil {
			t.Error("Save with a cancelled context succeeded")
		}
	})
}

func check(t *testing.T, got, want *sitemap.State) {
	t.Helper()
	if got == nil {
		t.Fatal("state is nil")
	}
	if !got.Read.Equal(want.Read) || got.Complete != want.Complete || len(got.Sitemaps) != len(want.Sitemaps) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for u, w := range want.Sitemaps {
		g, ok := got.Sitemaps[u]
		if !ok {
			t.Fatalf("sitemap %s missing", u)
		}
		if g.ETag != w.ETag || g.LastModified != w.LastModified || g.Cut != w.Cut || len(g.Children) != len(w.Children) || len(g.Pages) != len(w.Pages) {
			t.Fatalf("sitemap %s: got %+v, want %+v", u, g, w)
		}
		for i := range w.Children {
			if g.Children[i] != w.Children[i] {
				t.Fatalf("sitemap %s: children %v, want %v", u, g.Children, w.Children)
			}
		}
		for p, lm := range w.Pages {
			if glm, ok := g.Pages[p]; !ok || !glm.Equal(lm) {
				t.Fatalf("page %s: %v (%v), want %v", p, glm, ok, lm)
			}
		}
	}
}
