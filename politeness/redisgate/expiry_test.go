package redisgate

import (
	"context"
	"testing"
	"time"
)

// A lease in its last millisecond is reported as held for 1 ms, never as 0
// ("free, another waiter ahead"), which sent the waiter to sleep for
// MaxWait: behind a crashed holder the host then stayed idle for MaxWait
// after the lease TTL (C3: the others carry on after the TTL).
//
// The gate has no restart fence: with one, a Redis started less than a
// second ago (uptime_in_seconds 0, as the private server of these tests is)
// fences every acquire for the first Fence, and the loop below, which takes
// about 50 ms without the race detector, never reached the lease at all.
func TestGate_C3_ExpiringLeaseNotMistakenForQueue(t *testing.T) {
	c := newClient(t, needRedis(t))
	g := newTestGate(t, c, testPrefix(), &Options{Fence: -1})
	ctx := context.Background()
	const host = "http://edge.test:80"
	queued := 0
	for range 500 { // about 4% of these hit the last millisecond
		if err := c.Set(ctx, g.leaseKey(host), "crashed", time.Millisecond).Err(); err != nil {
			t.Fatal(err)
		}
		res, err := g.acquireOnce(ctx, host, "waiter")
		if err != nil {
			t.Fatal(err)
		}
		switch code, arg := reply(res); code {
		case 0:
			queued++
			if d := msDuration(arg); d <= 0 {
				t.Fatalf("a held lease answered %v left: the waiter would sleep MaxWait", d)
			}
		case 2:
			t.Fatalf("fenced for %v: the acquire never looked at the lease", msDuration(arg))
		}
		if err := c.Del(ctx, g.releaseKeys(host)...).Err(); err != nil { // the host's keys
			t.Fatal(err)
		}
	}
	if queued == 0 {
		t.Fatal("never queued behind the lease")
	}
}
