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
func TestGate_C3_ExpiringLeaseNotMistakenForQueue(t *testing.T) {
	c := newClient(t, needRedis(t))
	g := newTestGate(t, c, testPrefix(), nil)
	ctx := context.Background()
	const host = "http://edge.test:80"
	keys := []string{g.epochKey(), g.leaseKey(host), g.stateKey(host), g.queueKey(host), g.aliveKey(host)}
	queued := 0
	for range 500 { // about 4% of these hit the last millisecond
		if err := c.Set(ctx, g.leaseKey(host), "crashed", time.Millisecond).Err(); err != nil {
			t.Fatal(err)
		}
		res, err := acquireScript.Run(ctx, c, keys, "waiter", g.ttl.Milliseconds(), g.fence.Milliseconds(),
			g.ticketLife().Milliseconds()).Slice()
		if err != nil {
			t.Fatal(err)
		}
		if code, arg := reply(res); code == 0 {
			queued++
			if d := msDuration(arg); d <= 0 {
				t.Fatalf("a held lease answered %v left: the waiter would sleep MaxWait", d)
			}
		}
		if err := c.Del(ctx, keys[1:]...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if queued == 0 {
		t.Fatal("never queued behind the lease")
	}
}
