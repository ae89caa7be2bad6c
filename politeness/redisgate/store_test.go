package redisgate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/politeness/redisgate/redistest"
	"github.com/redis/go-redis/v9"
)

// Concurrent Adds of one URL from two processes report true to exactly one
// (S8 across the fleet).
func TestFetchedSet_S8_OncePerFleet(t *testing.T) {
	addr := needRedis(t)
	key := testPrefix() + "fetched"
	sets := []*FetchedSet{{Client: newClient(t, addr), Key: key}, {Client: newClient(t, addr), Key: key}}
	ctx := context.Background()
	const urls, callers = 20, 8
	var added [urls]atomic.Int32
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			s := sets[i%2]
			for u := range urls {
				ok, err := s.Add(ctx, fmt.Sprintf("https://example.test/p%d", u))
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					added[u].Add(1)
				}
			}
		})
	}
	wg.Wait()
	for u := range urls {
		if n := added[u].Load(); n != 1 {
			t.Errorf("URL %d added %d times, want 1", u, n)
		}
	}
	if ok, err := sets[0].Has(ctx, "https://example.test/p3"); !ok || err != nil {
		t.Errorf("Has(fetched) = %v, %v", ok, err)
	}
	if ok, err := sets[1].Has(ctx, "https://example.test/never"); ok || err != nil {
		t.Errorf("Has(unfetched) = %v, %v", ok, err)
	}
}

func TestStores_C7_Unreachable(t *testing.T) {
	addr, err := redistest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if _, err := (&FetchedSet{Client: c}).Add(ctx, "https://a.test/"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("error %v does not match ErrUnavailable", err)
	}
}
