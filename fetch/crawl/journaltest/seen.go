package journaltest

import (
	"context"
	"fmt"
	"testing"

	"github.com/goodbot-go/goodbot/fetch/crawl"
)

// RunSeen runs the conformance tests of a [crawl.SeenStore] against stores
// made by newStore, one fresh, empty store per subtest.
func RunSeen(t *testing.T, newStore func(t *testing.T) crawl.SeenStore) {
	t.Helper()
	ctx := context.Background()
	has := func(t *testing.T, s crawl.SeenStore, key string, want bool) {
		t.Helper()
		if got, err := s.HasSeen(ctx, key); got != want || err != nil {
			t.Errorf("HasSeen(%s) = %v, %v; want %v", key, got, err, want)
		}
	}

	t.Run("AddHasClear", func(t *testing.T) {
		s := newStore(t)
		has(t, s, "http://a.test/0", false)
		var keys []string
		for i := range 100 {
			keys = append(keys, fmt.Sprintf("http://a.test/%d", i))
		}
		if err := s.AddSeen(ctx, keys); err != nil {
			t.Fatal(err)
		}
		has(t, s, "http://a.test/0", true)
		has(t, s, "http://a.test/99", true)
		has(t, s, "http://a.test/100", false)
		has(t, s, "http://a.test/", false)
		if err := s.ClearSeen(ctx); err != nil {
			t.Fatal(err)
		}
		has(t, s, "http://a.test/0", false)
		if err := s.AddSeen(ctx, keys[:1]); err != nil {
			t.Fatal(err)
		}
		has(t, s, "http://a.test/0", true)
	})

	t.Run("CanceledAddKeepsNothing", func(t *testing.T) {
		s := newStore(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := s.AddSeen(cctx, []string{"http://a.test/0"}); err == nil {
			t.Error("AddSeen with a canceled context returned nil")
		}
		has(t, s, "http://a.test/0", false)
	})
}
