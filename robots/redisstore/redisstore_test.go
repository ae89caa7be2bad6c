package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/internal/testenv"
	"github.com/goodbot-go/goodbot/politeness/redisgate/redistest"
	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/robots/redisstore"
	"github.com/goodbot-go/goodbot/robots/storetest"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

var redisAddr, noRedis string

func TestMain(m *testing.M) {
	addr, stop, why := redistest.Setup()
	redisAddr, noRedis = addr, why
	code := m.Run()
	stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// newStore returns a Store on a key prefix of its own; without Redis t
// skips, or fails under CI (testenv.Missing).
func newStore(t *testing.T) *redisstore.Store {
	t.Helper()
	if redisAddr == "" {
		testenv.Missing(t, "no Redis: %s", noRedis)
	}
	c := redis.NewClient(&redis.Options{Addr: redisAddr})
	t.Cleanup(func() { _ = c.Close() })
	return &redisstore.Store{Client: c, Prefix: fmt.Sprintf("{goodbot-test-%016x}:", rand.Uint64())}
}

func TestStore_Conformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) robots.Store { return newStore(t) })
}

func TestStore_DefaultExpiry(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	const origin = "https://example.test:443"
	if err := s.Save(ctx, origin, robots.Entry{Fetched: time.Now(), Status: 200}); err != nil {
		t.Fatal(err)
	}
	if ttl := s.Client.PTTL(ctx, s.Prefix+origin).Val(); ttl < 6*24*time.Hour {
		t.Errorf("copy expires in %v, want the 7-day default", ttl)
	}
}

// Expire: a positive one is the copy's lifetime; a negative one keeps it
// for good, also over a copy saved before with a lifetime.
func TestStore_Expire(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	const origin = "https://example.test:443"
	save := func(exp time.Duration) time.Duration {
		t.Helper()
		s.Expire = exp
		if err := s.Save(ctx, origin, robots.Entry{Fetched: time.Now(), Status: 200}); err != nil {
			t.Fatal(err)
		}
		return s.Client.PTTL(ctx, s.Prefix+origin).Val()
	}
	if ttl := save(time.Hour); ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("Expire 1h: the copy expires in %v", ttl)
	}
	for _, exp := range []time.Duration{-1, -time.Second} {
		save(0) // the 7-day default first
		if ttl := save(exp); ttl != -1 {
			t.Errorf("Expire %v: PTTL %v, want -1 (no expiry)", exp, ttl)
		}
	}
}

// Two robots caches (two processes) sharing one Store fetch an origin's
// robots.txt once between them (C1, B11, D9 across the fleet).
func TestStore_C1_FleetFetchesOnce(t *testing.T) {
	store := newStore(t)
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
	target, _ := url.Parse(site.URL + "/private/page")
	agent := robots.Agent{Token: "TestBot"}
	for i := range 2 {
		cache := &robots.Cache{Store: store}
		if err := cache.Check(context.Background(), agent, target); !errors.Is(err, robots.ErrDisallowed) {
			t.Errorf("process %d: Check = %v, want ErrDisallowed", i+1, err)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times by two processes, want 1", n)
	}
}

func TestStore_C7_Errors(t *testing.T) {
	ctx := context.Background()
	if _, _, err := (&redisstore.Store{}).Load(ctx, "https://a.test:443"); err == nil {
		t.Error("Load without a Client succeeded")
	}
	// A Redis that does not answer: the cause reaches the caller.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = c.Close() })
	var op *net.OpError
	if _, _, err := (&redisstore.Store{Client: c}).Load(ctx, "https://a.test:443"); !errors.As(err, &op) {
		t.Errorf("Load from a dead Redis = %v, want a *net.OpError inside", err)
	}
	// A key holding something else.
	s := newStore(t)
	if err := s.Client.Set(ctx, s.Prefix+"https://b.test:443", "not json", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Load(ctx, "https://b.test:443"); !errors.Is(err, redisstore.ErrBadEntry) {
		t.Errorf("Load of garbage = %v, want ErrBadEntry", err)
	}
}
