package journaltest

import (
	"context"
	"fmt"
	"testing"

	"github.com/goodbot-go/goodbot/fetch/crawl"
)

// RunSpill runs the conformance tests of a [crawl.Spill] against spills
// made by newSpill, one fresh, empty spill per subtest.
func RunSpill(t *testing.T, newSpill func(t *testing.T) crawl.Spill) {
	t.Helper()
	ctx := context.Background()
	items := func(site string, from, to int) []crawl.Item {
		var out []crawl.Item
		for i := from; i < to; i++ {
			out = append(out, item(fmt.Sprintf("%s/%d", site, i), i%3))
		}
		return out
	}

	t.Run("EmptyPop", func(t *testing.T) {
		s := newSpill(t)
		if got, err := s.Pop(ctx, "http://a.test", 5); len(got) != 0 || err != nil {
			t.Fatalf("Pop of an empty spill = %v, %v", keys(got), err)
		}
	})

	t.Run("FIFOPerSite", func(t *testing.T) {
		s := newSpill(t)
		a, b := items("http://a.test", 0, 5), items("http://b.test", 0, 2)
		for _, p := range []struct {
			site string
			its  []crawl.Item
		}{{"http://a.test", a[:2]}, {"http://b.test", b}, {"http://a.test", a[2:]}} {
			if err := s.Push(ctx, p.site, p.its); err != nil {
				t.Fatalf("Push: %v", err)
			}
		}
		got, err := s.Pop(ctx, "http://a.test", 3)
		if err != nil {
			t.Fatal(err)
		}
		want(t, got, a[:3]...)
		got, _ = s.Pop(ctx, "http://a.test", 10)
		want(t, got, a[3:]...)
		got, _ = s.Pop(ctx, "http://a.test", 10)
		want(t, got)
		got, _ = s.Pop(ctx, "http://b.test", 10)
		want(t, got, b...)
	})

	t.Run("CanceledPushKeepsNothing", func(t *testing.T) {
		s := newSpill(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := s.Push(cctx, "http://a.test", items("http://a.test", 0, 1)); err == nil {
			t.Error("Push with a canceled context returned nil")
		}
		if got, _ := s.Pop(ctx, "http://a.test", 5); len(got) != 0 {
			t.Errorf("a canceled Push kept %v", keys(got))
		}
	})
}
