package redisgate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/robots"
	"github.com/redis/go-redis/v9"
)

func TestRobotsStore(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	s := &RobotsStore{Client: c, Prefix: testPrefix()}
	const origin = "https://example.test:443"
	if _, ok, err := s.Load(ctx, origin); ok || err != nil {
		t.Fatalf("Load of a missing origin = %v, %v; want not ok, nil", ok, err)
	}
	want := robots.Entry{Fetched: time.Now().Round(0), Status: 200, Body: []byte("User-agent: *\nDisallow: /x\n")}
	if err := s.Save(ctx, origin, want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Load(ctx, origin)
	if err != nil || !ok {
		t.Fatalf("Load = %v, %v", ok, err)
	}
	if !got.Fetched.Equal(want.Fetched) || got.Status != want.Status || string(got.Body) != string(want.Body) {
		t.Errorf("Load = %+v, want %+v", got, want)
	}
	if ttl := c.PTTL(ctx, s.key(origin)).Val(); ttl < 6*24*time.Hour {
		t.Errorf("copy expires in %v, want the 7-day default", ttl)
	}
}

// Two robots caches (two processes) sharing one RobotsStore fetch an origin's
// robots.txt once between them (C1, B11, D9 across the fleet).
func TestRobotsStore_C1_FleetFetchesOnce(t *testing.T) {
	c := newClient(t, needRedis(t))
	var fetches atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fetches.Add(1)
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		http.NotFound(w, r)
	}))
	defer site.Close()
	store := &RobotsStore{Client: c, Prefix: testPrefix()}
	target, _ := url.Parse(site.URL + "/private/page")
	agent := robots.Agent{Token: "TestBot"}
	for i := range 2 {
		cache := &robots.Cache{Store: store}
		err := cache.Check(context.Background(), agent, target)
		if !errors.Is(err, robots.ErrDisallowed) {
			t.Errorf("process %d: Check = %v, want ErrDisallowed", i+1, err)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times by two processes, want 1", n)
	}
}

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
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	_, _, err1 := (&RobotsStore{Client: c}).Load(ctx, "https://a.test:443")
	_, err2 := (&FetchedSet{Client: c}).Add(ctx, "https://a.test/")
	for _, err := range []error{err1, err2} {
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("error %v does not match ErrUnavailable", err)
		}
	}
}
