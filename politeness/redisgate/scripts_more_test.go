package redisgate

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The acquire script keeps the queue of waiting processes: a waiter whose
// ticket has run out is swept from it (so a crashed waiter does not hold up
// a free host), the waiter at the head that takes the lease leaves the
// queue (so its ticket cannot block the host once its lease runs out), and
// a waiter that looks again keeps its place.
func TestScripts_C3_D10_AcquireQueue(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, g *Gate) // Redis before the last look
		looks []string                    // tokens looking, in order; the last one's answer is checked
		code  int64
		queue string // the queue after, by arrival
	}{
		{name: "DeadTicketSwept", setup: func(t *testing.T, g *Gate) {
			now := c.Time(ctx).Val()
			queueTicket(t, c, g, scriptHost, "crashed", now)
			// The crashed waiter stopped looking: its ticket ran out a moment ago.
			if err := c.ZAdd(ctx, g.aliveKey(scriptHost), redis.Z{Score: float64(now.Add(-time.Millisecond).UnixMilli()), Member: "crashed"}).Err(); err != nil {
				t.Fatal(err)
			}
		}, looks: []string{"mine"}, code: 1, queue: ""},
		{name: "HeadTakesAndLeaves", setup: func(t *testing.T, g *Gate) {
			queueTicket(t, c, g, scriptHost, "mine", c.Time(ctx).Val())
		}, looks: []string{"mine"}, code: 1, queue: ""},
		{name: "LookingAgainKeepsPlace", setup: func(t *testing.T, g *Gate) {
			setHost(t, c, g, "holder", "")
			// b arrived first; on a tie of arrival times a would come first.
			queueTicket(t, c, g, scriptHost, "waiter-b", c.Time(ctx).Val())
		}, looks: []string{"waiter-a", "waiter-b"}, code: 0, queue: "waiter-b waiter-a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newTestGate(t, c, testPrefix(), &Options{Fence: -1})
			tc.setup(t, g)
			var code int64
			for _, token := range tc.looks {
				code, _ = runAcquire(t, g, token)
			}
			if code != tc.code {
				t.Fatalf("acquire by %s = %d, want %d", tc.looks[len(tc.looks)-1], code, tc.code)
			}
			if got := strings.Join(c.ZRange(ctx, g.queueKey(scriptHost), 0, -1).Val(), " "); got != tc.queue {
				t.Errorf("queue after %q, want %q", got, tc.queue)
			}
			alive, queued := c.ZRange(ctx, g.aliveKey(scriptHost), 0, -1).Val(), strings.Fields(tc.queue)
			slices.Sort(alive)
			slices.Sort(queued)
			if !slices.Equal(alive, queued) {
				t.Errorf("tickets alive after %q, want those of the queue %q", alive, queued)
			}
		})
	}
}

// A waiter's ticket outlives its MaxWait (a waiter that missed its wake-up
// looks again only then, and must still have its place); the queue and its
// tickets expire after a ticket's life, so a host whose waiters all crashed
// leaves no keys behind.
func TestScripts_QueueKeysExpire(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	g := newTestGate(t, c, testPrefix(), &Options{Fence: -1})
	setHost(t, c, g, "holder", "")
	looked := c.Time(ctx).Val()
	if code, _ := runAcquire(t, g, "waiter"); code != 0 {
		t.Fatalf("acquire of a held host = %d, want 0 (queued)", code)
	}
	if n := c.ZCard(ctx, g.queueKey(scriptHost)).Val(); n != 1 {
		t.Fatalf("%d waiters queued, want 1", n)
	}
	deadline := time.UnixMilli(int64(c.ZScore(ctx, g.aliveKey(scriptHost), "waiter").Val()))
	if life := deadline.Sub(looked); life <= g.wait {
		t.Errorf("ticket lives %v after the look, want more than MaxWait %v", life, g.wait)
	}
	for _, key := range []string{g.queueKey(scriptHost), g.aliveKey(scriptHost)} {
		if left := c.PTTL(ctx, key).Val(); left <= 0 || left > g.ticketLife() {
			t.Errorf("%s expires in %v, want within the ticket life %v", key, left, g.ticketLife())
		}
	}
}

// A lease has the lease TTL whether the acquire script granted it, the
// touch script renewed it (a holder's renewal restarts the TTL, so a slow
// request keeps its turn) or re-asserted it after Redis lost its data, so a
// holder that then crashes frees the host after one TTL like any other.
func TestScripts_C3_LeaseHasTheTTL(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	touch := func(_ *testing.T, g *Gate) (int64, error) {
		code, _, _, err := g.touch(ctx, scriptHost, "mine")
		return code, err
	}
	for _, tc := range []struct {
		name string
		held time.Duration // the TTL left of a lease already ours (0: none)
		take func(t *testing.T, g *Gate) (int64, error)
		code int64
	}{
		{"Granted", 0, func(t *testing.T, g *Gate) (int64, error) { code, _ := runAcquire(t, g, "mine"); return code, nil }, 1},
		{"Renewed", time.Second, touch, 1},
		{"Reasserted", 0, touch, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newTestGate(t, c, testPrefix(), &Options{Fence: -1})
			if tc.held > 0 {
				if err := c.Set(ctx, g.leaseKey(scriptHost), "mine", tc.held).Err(); err != nil {
					t.Fatal(err)
				}
			}
			code, err := tc.take(t, g)
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || c.Get(ctx, g.leaseKey(scriptHost)).Val() != "mine" {
				t.Fatalf("script answered %d, want %d with the lease ours", code, tc.code)
			}
			if left := c.PTTL(ctx, g.leaseKey(scriptHost)).Val(); left <= g.ttl-time.Second || left > g.ttl {
				t.Errorf("lease expires in %v, want about the lease TTL %v", left, g.ttl)
			}
		})
	}
}

// The first look at a Redis records its fence for the whole fleet: a gate
// with no fence marks the Redis as seen, and a gate with a fence that looks
// later is not fenced.
func TestScripts_C3_FirstLookSetsTheFence(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	prefix := testPrefix()
	first := newTestGate(t, c, prefix, &Options{Fence: -1})
	if code, _ := runAcquire(t, first, "first"); code != 1 {
		t.Fatalf("acquire by a gate with no fence = %d, want 1", code)
	}
	if got := c.Get(ctx, first.epochKey()).Val(); got != "0" {
		t.Errorf("epoch after the first look %q, want \"0\" (no fence)", got)
	}
	later := newTestGate(t, c, prefix, &Options{Fence: time.Hour})
	const host = "http://later.test:80"
	res, err := later.acquireOnce(ctx, host, "later")
	if err != nil {
		t.Fatal(err)
	}
	if code, arg := reply(res); code != 1 {
		t.Errorf("acquire by a fenced gate on a Redis already seen = {%d, %v}, want {1, nil}: fenced again", code, arg)
	}
}
