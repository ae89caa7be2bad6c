// Package oncetest checks that a [fetch.FetchedSet] implementation behaves
// as [fetch.Fetcher] expects with Bot.Once, in the manner of
// testing/fstest.TestFS: Add reports a URL new to exactly one caller, Has
// agrees with Add, URLs are kept byte for byte, and Remove (every set must
// be a [fetch.FetchedRemover]) gives a mark back so that a fetch which ended
// without a definitive answer is made again later.
package oncetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
)

// Run runs the conformance tests against sets made by newSet, one fresh,
// empty set per subtest.
func Run(t *testing.T, newSet func(t *testing.T) fetch.FetchedSet) {
	t.Helper()
	ctx := context.Background()
	const u = "https://example.com/page"

	t.Run("Missing", func(t *testing.T) {
		s := newSet(t)
		if ok, err := s.Has(ctx, u); ok || err != nil {
			t.Fatalf("Has on an empty set = %v, %v; want false, nil", ok, err)
		}
	})

	t.Run("AddOnce", func(t *testing.T) {
		s := newSet(t)
		for i, want := range []bool{true, false, false} {
			ok, err := s.Add(ctx, u)
			if err != nil || ok != want {
				t.Fatalf("Add #%d = %v, %v; want %v, nil", i+1, ok, err, want)
			}
		}
		if ok, err := s.Has(ctx, u); !ok || err != nil {
			t.Fatalf("Has after Add = %v, %v; want true, nil", ok, err)
		}
	})

	t.Run("URLsAreDistinct", func(t *testing.T) {
		s := newSet(t)
		// Keys are exact: the caller normalises, the set never does.
		urls := []string{
			"https://example.com/a", "https://example.com/A", "https://example.com/a/",
			"http://example.com/a", "https://example.com/a?x=1", "https://example.com/a?x=2",
			"https://example.com/a%20b", "https://example.com/a b", "https://example.com/é",
			"https://example.com/" + strings.Repeat("x", 8000), "https://example.com/" + strings.Repeat("x", 8001),
		}
		for _, v := range urls {
			if ok, err := s.Add(ctx, v); !ok || err != nil {
				t.Errorf("Add(%.60q) = %v, %v; want true, nil (a different URL was added before)", v, ok, err)
			}
		}
		for _, v := range urls {
			if ok, err := s.Has(ctx, v); !ok || err != nil {
				t.Errorf("Has(%.60q) = %v, %v; want true, nil", v, ok, err)
			}
		}
		if ok, _ := s.Has(ctx, "https://example.com/b"); ok {
			t.Error("Has of a URL never added = true")
		}
	})

	t.Run("ConcurrentAddsOneWinner", func(t *testing.T) {
		s := newSet(t)
		const urls, callers = 10, 8
		var wins [urls]atomic.Int32
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				for i := range urls {
					ok, err := s.Add(ctx, fmt.Sprintf("https://example.com/p%d", i))
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
						wins[i].Add(1)
					}
				}
			})
		}
		wg.Wait()
		for i := range urls {
			if n := wins[i].Load(); n != 1 {
				t.Errorf("URL %d: Add reported new to %d callers, want 1", i, n)
			}
		}
	})

	t.Run("Remove", func(t *testing.T) {
		s := remover(t, newSet(t))
		if err := s.Remove(ctx, u); err != nil {
			t.Fatalf("Remove of an absent URL: %v", err)
		}
		if ok, err := s.Add(ctx, u); !ok || err != nil {
			t.Fatalf("Add = %v, %v", ok, err)
		}
		if ok, _ := s.Add(ctx, u+"/other"); !ok {
			t.Fatal("Add of a second URL not new")
		}
		if err := s.Remove(ctx, u); err != nil {
			t.Fatalf("Remove: %v", err)
		}
		if ok, err := s.Has(ctx, u); ok || err != nil {
			t.Errorf("Has after Remove = %v, %v; want false, nil", ok, err)
		}
		if ok, _ := s.Has(ctx, u+"/other"); !ok {
			t.Error("Remove took another URL out too")
		}
		if ok, err := s.Add(ctx, u); !ok || err != nil {
			t.Errorf("Add after Remove = %v, %v; want true (the page is fetched again)", ok, err)
		}
	})

	t.Run("ConcurrentReleaseAndRetake", func(t *testing.T) {
		// Each caller takes the mark, gives it back and takes it again, as
		// Fetchers do with a page that keeps failing: a mark is never held by
		// two callers at once.
		s := remover(t, newSet(t))
		var held, overlaps atomic.Int32
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 20 {
					ok, err := s.Add(ctx, u)
					if err != nil {
						t.Error(err)
						return
					}
					if !ok {
						continue
					}
					if held.Add(1) > 1 {
						overlaps.Add(1)
					}
					held.Add(-1)
					if err := s.Remove(ctx, u); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if n := overlaps.Load(); n > 0 {
			t.Errorf("the mark was held by two callers at once %d times", n)
		}
		if ok, _ := s.Has(ctx, u); ok {
			t.Error("mark left behind after every caller gave it back")
		}
	})
}

func remover(t *testing.T, s fetch.FetchedSet) fetch.FetchedRemover {
	t.Helper()
	r, ok := s.(fetch.FetchedRemover)
	if !ok {
		t.Fatalf("%T has no Remove: a page whose fetch failed for now would be a duplicate forever", s)
	}
	return r
}
