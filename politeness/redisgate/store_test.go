package redisgate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/oncetest"
	"github.com/goodbot-go/goodbot/politeness"
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

// S8: the fleet's set behaves as fetch expects, Remove included: a page
// whose fetch failed for now (500, timeout) is fetched again later, not
// reported a duplicate forever.
func TestFetchedSet_S8_Conformance(t *testing.T) {
	addr := needRedis(t)
	oncetest.Run(t, func(t *testing.T) fetch.FetchedSet {
		return &FetchedSet{Client: newClient(t, addr), Key: testPrefix() + "fetched"}
	})
}

// S8: with the fleet's set, fetch.Fetcher gives back the mark of a fetch
// that got a 500, so the next Get fetches the page again.
func TestFetchedSet_S8_FailedPageFetchedAgain(t *testing.T) {
	addr := needRedis(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		if calls.Add(1) == 1 {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "<p>up</p>")
	}))
	defer srv.Close()
	bot := fetch.Bot{UserAgent: "TestBot/1.0", Once: true, Politeness: politeness.Policy{MinDelay: -1, BreakerThreshold: -1},
		AllowInternal: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, // the test server is on loopback
		Fetched:       &FetchedSet{Client: newClient(t, addr), Key: testPrefix() + "fetched"}}
	f, err := fetch.NewFetcher(bot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.CloseIdleConnections()
	ctx := context.Background()
	for i, want := range []fetch.Outcome{fetch.Unreachable, fetch.OK, fetch.Duplicate} {
		p, _ := f.Get(ctx, srv.URL+"/page")
		if p == nil || p.Outcome != want {
			t.Fatalf("Get #%d: %v, want %v", i+1, p, want)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d requests for the page, want 2 (the failed one, then the page)", n)
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
