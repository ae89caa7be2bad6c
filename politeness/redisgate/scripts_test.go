package redisgate

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The scripts hold the gate's decisions; these tests drive them directly
// from the states Redis can be in, and check both the answer and what the
// script left behind.

const scriptHost = "http://script.test:80"

// runAcquire runs acquireScript for token as take does and returns its answer.
func runAcquire(t *testing.T, g *Gate, token string) (int64, any) {
	t.Helper()
	res, err := g.acquireOnce(context.Background(), scriptHost, token)
	if err != nil {
		t.Fatal(err)
	}
	return reply(res)
}

// setHost puts host's lease (held by holder, "" for none) and State ("" for
// none) in Redis.
func setHost(t *testing.T, c *redis.Client, g *Gate, holder, state string) {
	t.Helper()
	ctx := context.Background()
	if holder != "" {
		if err := c.Set(ctx, g.leaseKey(scriptHost), holder, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if state != "" {
		if err := c.Set(ctx, g.stateKey(scriptHost), state, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// queueTicket queues token for host as a live waiter that arrived a second
// before the server time now (so before any waiter that arrives now).
func queueTicket(t *testing.T, c *redis.Client, g *Gate, host, token string, now time.Time) {
	t.Helper()
	ctx := context.Background()
	arrived := float64(now.Add(-time.Second).UnixMilli())
	if err := c.ZAdd(ctx, g.queueKey(host), redis.Z{Score: arrived, Member: token}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ZAdd(ctx, g.aliveKey(host), redis.Z{Score: arrived + float64(time.Hour.Milliseconds()), Member: token}).Err(); err != nil {
		t.Fatal(err)
	}
}

// Acquire: a lease already ours is granted again and renewed; a free host
// with a live waiter ahead is refused with 0 ms left (the waiter sleeps
// MaxWait until woken, it does not poll); a fenced Redis answers the time
// left, counted from the server's start.
func TestScripts_C3_Acquire(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	const state = `{"Strikes":3}`

	t.Run("OursAgain", func(t *testing.T) {
		g := newTestGate(t, c, testPrefix(), &Options{Fence: -1})
		if err := c.Set(ctx, g.leaseKey(scriptHost), "mine", time.Second).Err(); err != nil {
			t.Fatal(err)
		}
		setHost(t, c, g, "", state)
		code, arg := runAcquire(t, g, "mine")
		if code != 1 || arg != state {
			t.Fatalf("acquire of a lease already ours = {%d, %v}, want {1, %s}", code, arg, state)
		}
		if left := c.PTTL(ctx, g.leaseKey(scriptHost)).Val(); left <= time.Second {
			t.Errorf("lease TTL %v after acquiring it again, want it renewed to about %v", left, g.ttl)
		}
	})

	t.Run("FreeButWaiterAhead", func(t *testing.T) {
		g := newTestGate(t, c, testPrefix(), &Options{Fence: -1})
		now := c.Time(ctx).Val()
		queueTicket(t, c, g, scriptHost, "ahead", now)
		code, arg := runAcquire(t, g, "behind")
		if code != 0 || arg != int64(0) {
			t.Fatalf("acquire of a free host with a waiter ahead = {%d, %v}, want {0, 0}", code, arg)
		}
		if got := c.ZRange(ctx, g.queueKey(scriptHost), 0, -1).Val(); strings.Join(got, " ") != "ahead behind" {
			t.Errorf("queue %v, want [ahead behind]", got)
		}
		if c.Exists(ctx, g.leaseKey(scriptHost)).Val() != 0 {
			t.Error("a lease was granted over the waiter ahead")
		}
	})

	t.Run("Fenced", func(t *testing.T) {
		g := newTestGate(t, c, testPrefix(), &Options{Fence: -1})
		now := c.Time(ctx).Val()
		until := now.Add(time.Minute).UnixMilli()
		if err := c.Set(ctx, g.epochKey(), strconv.FormatInt(until, 10), 0).Err(); err != nil {
			t.Fatal(err)
		}
		code, arg := runAcquire(t, g, "mine")
		if left := msDuration(arg); code != 2 || left <= 50*time.Second || left > time.Minute {
			t.Fatalf("acquire while fenced = {%d, %v}, want {2, about 1m}", code, arg)
		}
		if c.Exists(ctx, g.leaseKey(scriptHost)).Val() != 0 {
			t.Error("a lease was granted while fenced")
		}
	})

	t.Run("FenceFromServerStart", func(t *testing.T) {
		const fence = time.Hour
		g := newTestGate(t, c, testPrefix(), &Options{Fence: fence})
		uptime := func() int64 {
			info := c.Info(ctx, "server").Val()
			_, rest, _ := strings.Cut(info, "uptime_in_seconds:")
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]), 10, 64)
			return n
		}
		// The fence runs from the server's start, not from this first look:
		// a server up for a second has a second less of it left.
		waitUntil(t, "the test Redis up for a second", func() bool { return uptime() >= 1 })
		code, arg := runAcquire(t, g, "mine")
		if left := msDuration(arg); code != 2 || left > fence-time.Second {
			t.Fatalf("first acquire on a fresh prefix = {%d, %v}, want {2, at most %v}", code, left, fence-time.Second)
		}
	})
}

// Touch renews only a lease that is still ours, and re-asserts one only when
// it vanished together with the State (Redis lost its data), never over
// another holder.
func TestScripts_C3_Touch(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	const state = `{"Strikes":1}`
	for _, tc := range []struct {
		name          string
		holder, state string // in Redis before ("" none)
		code          int64
		lease         string // holder after
	}{
		{"Ours", "mine", state, 1, "mine"},
		{"OtherHolder", "other", state, 0, "other"},
		{"OtherHolderNoState", "other", "", 0, "other"},
		{"ExpiredAfterOthersHeldIt", "", state, 0, ""},
		{"LostWithTheState", "", "", 2, "mine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newTestGate(t, c, testPrefix(), nil)
			setHost(t, c, g, tc.holder, tc.state)
			code, _, _, err := g.touch(ctx, scriptHost, "mine")
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Errorf("touch = %d, want %d", code, tc.code)
			}
			if got := c.Get(ctx, g.leaseKey(scriptHost)).Val(); got != tc.lease {
				t.Errorf("lease held by %q after touch, want %q", got, tc.lease)
			}
		})
	}
}

// Release stores the next State only for the lease's holder (or a holder
// whose lease vanished with the State), frees only its own lease, leaves
// the queue, and wakes the waiters whenever the host may be free, also when
// a waiter that held nothing gives up its place.
func TestScripts_C3_Release(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	const old, next = `{"Strikes":1}`, `{"Strikes":2}`
	for _, tc := range []struct {
		name          string
		holder, state string // in Redis before ("" none)
		store         bool   // release with next (else keep)
		expires       bool   // next has an expiry
		ok            bool
		wantState     string
		lease         string // holder after
		wake          bool
	}{
		{name: "OursStore", holder: "mine", state: old, store: true, ok: true, wantState: next, wake: true},
		{name: "OursStoreExpiring", holder: "mine", state: old, store: true, expires: true, ok: true, wantState: next, wake: true},
		{name: "OursKeep", holder: "mine", state: old, ok: true, wantState: old, wake: true},
		{name: "OtherHolder", holder: "other", state: old, store: true, wantState: old, lease: "other"},
		{name: "OtherHolderNoState", holder: "other", store: true, lease: "other"},
		{name: "ExpiredAfterOthersHeldIt", state: old, store: true, wantState: old, wake: true},
		{name: "LostWithTheState", store: true, ok: true, wantState: next, wake: true},
		{name: "WaiterGivesUp", ok: true, wake: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newTestGate(t, c, testPrefix(), nil)
			setHost(t, c, g, tc.holder, tc.state)
			queueTicket(t, c, g, scriptHost, "mine", c.Time(ctx).Val())
			ps := c.Subscribe(ctx, g.channel())
			defer ps.Close()
			if _, err := ps.ReceiveTimeout(ctx, 5*time.Second); err != nil { // subscribed
				t.Fatal(err)
			}
			mode, at := "k", "0"
			if tc.store {
				mode = "s"
			}
			if tc.expires {
				at = strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
			}
			n, err := releaseScript.Run(ctx, c, g.releaseKeys(scriptHost),
				"mine", mode, next, at, g.channel(), scriptHost).Int64()
			if err != nil {
				t.Fatal(err)
			}
			if got := n == 1; got != tc.ok {
				t.Errorf("release = %d, want ours %v", n, tc.ok)
			}
			if got := c.Get(ctx, g.stateKey(scriptHost)).Val(); got != tc.wantState {
				t.Errorf("State after release %q, want %q", got, tc.wantState)
			}
			if left := c.PTTL(ctx, g.stateKey(scriptHost)).Val(); tc.expires && left <= 0 {
				t.Errorf("State stored with an expiry has TTL %v", left)
			}
			if got := c.Get(ctx, g.leaseKey(scriptHost)).Val(); got != tc.lease {
				t.Errorf("lease held by %q after release, want %q", got, tc.lease)
			}
			if c.ZCard(ctx, g.queueKey(scriptHost)).Val()+c.ZCard(ctx, g.aliveKey(scriptHost)).Val() != 0 {
				t.Error("the releasing token is still queued")
			}
			// A message of our own after the script's: the first one seen
			// tells whether the script published.
			if err := c.Publish(ctx, g.channel(), "marker").Err(); err != nil {
				t.Fatal(err)
			}
			m, err := ps.ReceiveMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if woke := m.Payload == scriptHost; woke != tc.wake {
				t.Errorf("waiters woken: %v, want %v", woke, tc.wake)
			}
		})
	}
}
