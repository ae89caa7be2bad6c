package redisgate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/politeness/redisgate/redistest"
	"github.com/redis/go-redis/v9"
)

// A FetchedSet with no Key keeps its URLs in the Redis set
// "goodbot:fetched", as documented, so processes configured without a Key
// share one set.
func TestFetchedSet_DefaultKey(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	u := fmt.Sprintf("https://default-key.test/%016x", rand.Uint64())
	t.Cleanup(func() { _ = c.SRem(context.Background(), "goodbot:fetched", u).Err() })
	if added, err := (&FetchedSet{Client: c}).Add(ctx, u); !added || err != nil {
		t.Fatalf("Add = %v, %v; want true, nil", added, err)
	}
	if in, err := c.SIsMember(ctx, "goodbot:fetched", u).Result(); !in || err != nil {
		t.Errorf("SISMEMBER goodbot:fetched = %v, %v; want true, nil", in, err)
	}
}

// Every FetchedSet call fails closed with ErrUnavailable, the operation and
// the URL, both without a client and with a Redis that cannot be reached;
// none reports success.
func TestFetchedSet_C7_EveryCallFailsClosed(t *testing.T) {
	addr, err := redistest.FreeAddr() // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	down := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = down.Close() })
	const u = "https://down.test/"
	calls := []struct {
		op   string
		call func(*FetchedSet) (bool, error)
	}{
		{"fetched-add", func(s *FetchedSet) (bool, error) { return s.Add(context.Background(), u) }},
		{"fetched-has", func(s *FetchedSet) (bool, error) { return s.Has(context.Background(), u) }},
		{"fetched-remove", func(s *FetchedSet) (bool, error) { return false, s.Remove(context.Background(), u) }},
	}
	for _, set := range []struct {
		name string
		s    *FetchedSet
	}{
		{"no client", &FetchedSet{}},
		{"unreachable", &FetchedSet{Client: down, Key: testPrefix() + "fetched"}},
	} {
		for _, c := range calls {
			t.Run(set.name+"/"+c.op, func(t *testing.T) {
				ok, err := c.call(set.s)
				var ge *Error
				switch {
				case err == nil:
					t.Fatalf("%s = %v, nil; want an error matching ErrUnavailable", c.op, ok)
				case ok:
					t.Errorf("%s reported true with error %v, want false", c.op, err)
				case !errors.Is(err, ErrUnavailable):
					t.Errorf("%s error %v does not match ErrUnavailable", c.op, err)
				case !errors.As(err, &ge) || ge.Op != c.op || ge.Host != u:
					t.Errorf("%s error = %+v, want Op %q Host %q", c.op, ge, c.op, u)
				}
			})
		}
	}
}
