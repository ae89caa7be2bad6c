package redisqueue

import (
	"context"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch/crawl"
)

// The fetched-once set: one claim at a time per URL, given back by Remove,
// made permanent by the Finish that records the outcome, and dropped by
// Redis when its worker died (the claim's TTL).
func TestFetched_ClaimsAndDone(t *testing.T) {
	ctx := context.Background()
	c := needRedis(t)
	q := open(t, c, crawlName())
	f := q.Fetched(time.Minute)
	short := q.Fetched(30 * time.Millisecond)
	const a, b = "http://a.test/1", "http://a.test/redirected"
	steps := []struct {
		what string
		do   func() (bool, error)
		want bool
	}{
		{"first claim", func() (bool, error) { return f.Add(ctx, a) }, true},
		{"second claim while the first runs", func() (bool, error) { return f.Add(ctx, a) }, false},
		{"not done yet", func() (bool, error) { return f.Has(ctx, a) }, false},
		{"claim given back", func() (bool, error) { return true, f.Remove(ctx, a) }, true},
		{"claimed again", func() (bool, error) { return f.Add(ctx, a) }, true},
		{"redirect target claimed", func() (bool, error) { return f.Add(ctx, b) }, true},
		{"recorded by Finish", func() (bool, error) {
			mustAdd(t, q, items(a), 0)
			it := mustLease(t, q, t0)
			return true, q.Finish(ctx, it, crawl.Step{Done: []string{a, b}}, time.Time{})
		}, true},
		{"done", func() (bool, error) { return f.Has(ctx, a) }, true},
		{"target done", func() (bool, error) { return f.Has(ctx, b) }, true},
		{"claims become the done mark", func() (bool, error) {
			n, err := c.Exists(ctx, q.Prefix()+"claim:"+a, q.Prefix()+"claim:"+b).Result()
			return n == 0, err
		}, true},
		{"no claim once done", func() (bool, error) { return f.Add(ctx, a) }, false},
		{"a dead worker's claim", func() (bool, error) { return short.Add(ctx, "http://a.test/dead") }, true},
		{"expires", func() (bool, error) {
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				if ok, err := f.Add(ctx, "http://a.test/dead"); ok || err != nil {
					return ok, err
				}
				time.Sleep(10 * time.Millisecond) // polling for Redis's expiry
			}
			return false, nil
		}, true},
	}
	for _, s := range steps {
		got, err := s.do()
		if err != nil || got != s.want {
			t.Fatalf("%s: %v, %v; want %v", s.what, got, err, s.want)
		}
	}
}

// A worker that died mid-fetch: when its lease is taken back, its claim on
// the item's URL goes too, and the next worker fetches the page.
func TestFetched_ClaimOfATakenBackLease(t *testing.T) {
	ctx := context.Background()
	c := needRedis(t)
	name := crawlName()
	dead, next := open(t, c, name), open(t, c, name)
	mustAdd(t, dead, items("http://a.test/1"), 0)
	it, _, ok, err := dead.Lease(ctx, t0, time.Second)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, err := dead.Fetched(time.Hour).Add(ctx, it.Key); !ok || err != nil {
		t.Fatal("claim:", ok, err)
	}
	_ = dead.Close() // its renewals stop, as a killed worker's do
	again := mustLease(t, next, t0.Add(time.Second))
	if ok, err := next.Fetched(time.Hour).Add(ctx, again.Key); !ok || err != nil {
		t.Errorf("claim after the lease was taken back = %v, %v; want true (the page must be fetched)", ok, err)
	}
}

// A claim lasts the TTL given, at least a millisecond; no positive TTL
// means the default one.
func TestFetched_ClaimTTL(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		ttl      time.Duration
		min, max time.Duration // of the claim's PTTL right after it is made
	}{
		{-time.Second, crawl.DefaultLeaseTTL - time.Minute, crawl.DefaultLeaseTTL},
		{time.Nanosecond, -2, time.Millisecond}, // -2: gone already
		{time.Hour, time.Hour - time.Minute, time.Hour},
	} {
		t.Run(c.ttl.String(), func(t *testing.T) {
			rdb := needRedis(t)
			q := open(t, rdb, crawlName())
			if ok, err := q.Fetched(c.ttl).Add(ctx, "http://a.test/1"); !ok || err != nil {
				t.Fatalf("claim = %v, %v; want true", ok, err)
			}
			if left := rdb.PTTL(ctx, q.Prefix()+"claim:http://a.test/1").Val(); left < c.min || left > c.max {
				t.Errorf("claim PTTL %v; want within [%v, %v]", left, c.min, c.max)
			}
		})
	}
}
