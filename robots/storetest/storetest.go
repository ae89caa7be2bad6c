// Package storetest checks that a [robots.Store] implementation behaves as
// the robots.Cache expects, in the manner of testing/fstest.TestFS.
package storetest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/robots"
)

// Run runs the conformance tests against stores made by newStore, one fresh
// store per subtest.
func Run(t *testing.T, newStore func(t *testing.T) robots.Store) {
	t.Helper()
	ctx := context.Background()
	const origin = "https://example.com:443"

	t.Run("Missing", func(t *testing.T) {
		s := newStore(t)
		if _, ok, err := s.Load(ctx, origin); ok || err != nil {
			t.Fatalf("Load of a missing origin = ok %v, err %v; want false, nil", ok, err)
		}
	})

	t.Run("RoundTrip", func(t *testing.T) {
		s := newStore(t)
		for _, want := range []robots.Entry{
			{Fetched: time.Date(2026, 11, 30, 10, 0, 0, 5, time.UTC), Status: 200, Body: []byte("User-agent: *\nDisallow: /x\n")},
			{Fetched: time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC), Status: 503},
			{Fetched: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Status: 0},
		} {
			if err := s.Save(ctx, origin, want); err != nil {
				t.Fatalf("Save: %v", err)
			}
			got, ok, err := s.Load(ctx, origin)
			if !ok || err != nil {
				t.Fatalf("Load = ok %v, err %v", ok, err)
			}
			if !got.Fetched.Equal(want.Fetched) || got.Status != want.Status || !bytes.Equal(got.Body, want.Body) {
				t.Errorf("Load = %+v; want %+v", got, want)
			}
		}
	})

	t.Run("OriginsAreSeparate", func(t *testing.T) {
		s := newStore(t)
		s.Save(ctx, "https://a.example:443", robots.Entry{Status: 200, Body: []byte("a")})
		s.Save(ctx, "http://a.example:80", robots.Entry{Status: 404})
		got, ok, _ := s.Load(ctx, "https://a.example:443")
		if !ok || string(got.Body) != "a" {
			t.Errorf("https origin = %+v, %v", got, ok)
		}
		got, ok, _ = s.Load(ctx, "http://a.example:80")
		if !ok || got.Status != 404 {
			t.Errorf("http origin = %+v, %v", got, ok)
		}
	})

	t.Run("BodyIsCopied", func(t *testing.T) {
		s := newStore(t)
		body := []byte("User-agent: *\nDisallow: /\n")
		s.Save(ctx, origin, robots.Entry{Status: 200, Body: body})
		body[0] = 'X'
		got, _, _ := s.Load(ctx, origin)
		if len(got.Body) == 0 || got.Body[0] != 'U' {
			t.Fatalf("the Store kept the caller's slice: %q", got.Body)
		}
		got.Body[0] = 'Y'
		again, _, _ := s.Load(ctx, origin)
		if again.Body[0] != 'U' {
			t.Fatalf("Load returned the Store's own slice")
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		s := newStore(t)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				o := fmt.Sprintf("https://h%d.example:443", i%3)
				for range 20 {
					if err := s.Save(ctx, o, robots.Entry{Status: 200, Body: []byte(o)}); err != nil {
						t.Errorf("Save: %v", err)
					}
					if e, ok, err := s.Load(ctx, o); err != nil || !ok || string(e.Body) != o {
						t.Errorf("Load = %q, %v, %v", e.Body, ok, err)
					}
				}
			})
		}
		wg.Wait()
	})
}
