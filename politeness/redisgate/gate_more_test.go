package redisgate

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/internal/syncbuf"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// The keys and the wake channel of a host are what every version of the
// gate in a fleet reads and writes: under the prefix, "epoch", and per host
// "lease:", "queue:", "alive:" and "state:" followed by the host key; the
// releases are published on "wake" with the host as the message.
func TestGate_C3_KeyLayout(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	prefix := testPrefix()
	g := newTestGate(t, c, prefix, &Options{Fence: -1})
	ps := c.Subscribe(ctx, prefix+"wake")
	defer ps.Close()
	if _, err := ps.ReceiveTimeout(ctx, 5*time.Second); err != nil { // subscribed
		t.Fatal(err)
	}
	if code, _ := runAcquire(t, g, "holder"); code != 1 {
		t.Fatalf("acquire of a free host = %d, want 1", code)
	}
	if code, _ := runAcquire(t, g, "waiter"); code != 0 {
		t.Fatalf("acquire of a held host = %d, want 0 (queued)", code)
	}
	keys := func() []string {
		k, err := c.Keys(ctx, prefix+"*").Result()
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(k)
		return k
	}
	held := []string{prefix + "alive:" + scriptHost, prefix + "epoch", prefix + "lease:" + scriptHost, prefix + "queue:" + scriptHost}
	if got := keys(); !slices.Equal(got, held) {
		t.Errorf("keys of a held host with a waiter %q, want %q", got, held)
	}
	if err := g.release(scriptHost, "holder", &politeness.State{Strikes: 1}, skew{}); err != nil {
		t.Fatal(err)
	}
	stored := []string{prefix + "alive:" + scriptHost, prefix + "epoch", prefix + "queue:" + scriptHost, prefix + "state:" + scriptHost}
	if got := keys(); !slices.Equal(got, stored) {
		t.Errorf("keys after the release %q, want %q", got, stored)
	}
	if err := c.Publish(ctx, prefix+"wake", "marker").Err(); err != nil { // the first message seen tells
		t.Fatal(err)
	}
	m, err := ps.ReceiveMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Channel != prefix+"wake" || m.Payload != scriptHost {
		t.Errorf("release published %q on %q, want %q on %q", m.Payload, m.Channel, scriptHost, prefix+"wake")
	}
}

// scriptHook is a Client whose next EVALSHA, once armed, runs and then goes
// through after (which may, say, lose its answer).
type scriptHook struct {
	Client
	armed atomic.Bool
	after func(*redis.Cmd)
}

func (s *scriptHook) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	cmd := s.Client.EvalSha(ctx, sha1, keys, args...)
	if s.armed.CompareAndSwap(true, false) {
		s.after(cmd)
	}
	return cmd
}

// timedOut makes a script's answer a network timeout, as when it is lost on
// the way back.
func timedOut(cmd *redis.Cmd) {
	cmd.SetErr(&net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded})
}

// hostFree checks that other gets host at once (well within the lease TTL
// of 10s a locked host would cost).
func hostFree(t *testing.T, other *Gate, host string) {
	t.Helper()
	short, stop := context.WithTimeout(context.Background(), time.Second)
	defer stop()
	l, err := other.Acquire(short, host, proceed)
	if err != nil {
		t.Fatalf("host still locked: %v", err)
	}
	_ = l.Release(politeness.State{})
}

// An Acquire cut short never leaves the host locked for a lease TTL, and
// says why it failed. A caller whose context ends gets its context's error,
// not one saying Redis is unavailable: when it had ended before the call
// (then not a word goes to Redis), during the look at Redis, during a short
// wait, or during the renewal after it. A look or a renewal whose answer
// timed out (the script may have run unseen) reports Redis unavailable.
func TestGate_C3_CutShortAcquireFreesHost(t *testing.T) {
	addr := needRedis(t)
	prefix := testPrefix()
	for _, tc := range []struct {
		name     string
		when     string // "before", "look", "wait" or "touch"
		canceled bool   // the context ends, else the answer times out
	}{
		{"CanceledBefore", "before", true},
		{"CanceledDuringLook", "look", true},
		{"CanceledDuringWait", "wait", true},
		{"CanceledDuringTouch", "touch", true},
		{"LookTimedOut", "look", false},
		{"TouchTimedOut", "touch", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, addr)
			var n countHook
			c.AddHook(&n)
			s := &scriptHook{Client: c, after: timedOut}
			g := newTestGate(t, s, prefix, nil) // LeaseTTL 10s: no renewal during the test
			other := newTestGate(t, newClient(t, addr), prefix, nil)
			hostFree(t, g, "http://warm.test:80") // loads the scripts

			host := "http://" + strings.ToLower(tc.name) + ".test:80"
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.canceled {
				s.after = func(cmd *redis.Cmd) {
					cancel()
					cmd.SetErr(context.Canceled)
				}
			}
			looks := 0
			ready := func(politeness.State) (time.Duration, error) {
				switch looks++; {
				case looks == 1 && tc.when == "touch":
					s.armed.Store(true) // the next script is the touch after the wait
					return time.Millisecond, nil
				case looks == 1 && tc.when == "wait":
					cancel()
					return time.Second, nil // a short wait (within LeaseTTL) the caller gives up
				}
				return 0, nil
			}
			switch tc.when {
			case "before":
				cancel()
			case "look":
				s.armed.Store(true)
			}
			sent := n.n.Load()
			l, err := g.Acquire(ctx, host, ready)
			if l != nil {
				_ = l.Release(politeness.State{})
				t.Fatal("Acquire granted a lease, want an error")
			}
			switch {
			case tc.when == "before" && n.n.Load() != sent:
				t.Errorf("Acquire with an ended context sent %d commands, want 0", n.n.Load()-sent)
			case s.armed.Load():
				t.Fatalf("the Acquire was not cut short (ready called %d times): %v", looks, err)
			case tc.canceled && (!errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable)):
				t.Errorf("Acquire = %v, want context.Canceled, not ErrUnavailable", err)
			case !tc.canceled && !errors.Is(err, ErrUnavailable):
				t.Errorf("Acquire whose script timed out = %v, want ErrUnavailable", err)
			}
			hostFree(t, other, host)
		})
	}
}

// storeState makes st host's State in Redis, as a holder's Release does.
func storeState(t *testing.T, g *Gate, host string, st politeness.State) {
	t.Helper()
	l, err := g.Acquire(context.Background(), host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(st); err != nil {
		t.Fatal(err)
	}
}

// A State is stored with its Expires (Redis forgets it then), but never
// with one less than a second away, so the next holder still reads it; a
// State without Expires is kept for good.
func TestGate_StateExpiry(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	g := newTestGate(t, c, testPrefix(), &Options{Fence: -1})
	for _, tc := range []struct {
		name     string
		expires  time.Duration // from now; 0: none
		min, max time.Duration // of the State key's PTTL (go-redis answers -1 ns for none)
	}{
		{"None", 0, -1, -1},
		{"Later", time.Hour, 59 * time.Minute, time.Hour},
		{"Past", -time.Hour, time.Millisecond, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := "http://expiry-" + strings.ToLower(tc.name) + ".test:80"
			next := politeness.State{Strikes: 4}
			if tc.expires != 0 {
				next.Expires = time.Now().Add(tc.expires)
			}
			storeState(t, g, host, next)
			l, err := g.Acquire(ctx, host, proceed)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release(politeness.State{})
			if got := l.State().Strikes; got != 4 {
				t.Fatalf("next holder read Strikes %d, want 4: the State was not kept", got)
			}
			if left := c.PTTL(ctx, g.stateKey(host)).Val(); left < tc.min || left > tc.max {
				t.Errorf("State key TTL %v, want %v to %v", left, tc.min, tc.max)
			}
		})
	}
}

// Close may be called again: the second call does nothing and returns nil,
// also for a gate that had subscribed.
func TestGate_CloseTwice(t *testing.T) {
	g := newTestGate(t, newClient(t, needRedis(t)), testPrefix(), nil)
	if !g.subscribe(context.Background()) {
		t.Fatal("the gate did not subscribe")
	}
	for i := range 2 {
		if err := g.Close(); err != nil {
			t.Errorf("Close #%d = %v, want nil", i+1, err)
		}
	}
}

// After a short wait with the lease kept, ready sees the State in Redis as
// it is then (it may have expired meanwhile), and a State that cannot be
// read then fails the Acquire with ErrBadState and frees the host.
func TestGate_ShortWaitRereadsState(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	g := newTestGate(t, c, testPrefix(), &Options{Fence: -1})
	for _, tc := range []struct {
		name    string
		set     func(key string) error // the State key meanwhile
		strikes int                    // seen after the wait
		bad     bool                   // ErrBadState
	}{
		{"Expired", func(key string) error { return c.Del(ctx, key).Err() }, 0, false},
		{"Changed", func(key string) error { return c.Set(ctx, key, `{"strikes":7}`, 0).Err() }, 7, false},
		{"Garbled", func(key string) error { return c.Set(ctx, key, "{not json", 0).Err() }, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := "http://reread-" + strings.ToLower(tc.name) + ".test:80"
			storeState(t, g, host, politeness.State{Strikes: 3})
			var seen []int
			l, err := g.Acquire(ctx, host, func(s politeness.State) (time.Duration, error) {
				seen = append(seen, s.Strikes)
				if len(seen) == 1 {
					if err := tc.set(g.stateKey(host)); err != nil {
						t.Fatal(err)
					}
					return time.Millisecond, nil // a short wait: the lease is kept
				}
				return 0, nil
			})
			if tc.bad {
				if !errors.Is(err, ErrBadState) {
					t.Errorf("Acquire with a State garbled during the wait = %v, want ErrBadState", err)
				}
				if n := c.Exists(ctx, g.leaseKey(host)).Val(); n != 0 {
					t.Error("lease kept after a bad State")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release(politeness.State{})
			if want := []int{3, tc.strikes}; !slices.Equal(seen, want) {
				t.Errorf("ready saw Strikes %v, want %v (the State re-read after the wait)", seen, want)
			}
			if got := l.State().Strikes; got != tc.strikes {
				t.Errorf("lease State Strikes %d, want %d", got, tc.strikes)
			}
		})
	}
}

// A holder that loses its lease during a short wait (it stalled, the lease
// ran out and another took it) queues again: ready is not called again
// until the host is its own once more, and the lost lease's renewals end
// then (none is left running after the Release).
func TestGate_C3_LeaseLostDuringShortWait(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	var logs syncbuf.Buffer
	g := newTestGate(t, c, testPrefix(), &Options{Fence: -1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	const host = "http://stolen.test:80"
	if err := c.Ping(ctx).Err(); err != nil { // connects
		t.Fatal(err)
	}
	before := goleak.IgnoreCurrent()
	var heldByOther []bool
	l, err := g.Acquire(ctx, host, func(politeness.State) (time.Duration, error) {
		if heldByOther = append(heldByOther, c.Get(ctx, g.leaseKey(host)).Val() == "other"); len(heldByOther) == 1 {
			// Another holder takes the host for a moment.
			if err := c.Set(ctx, g.leaseKey(host), "other", 200*time.Millisecond).Err(); err != nil {
				t.Fatal(err)
			}
			return time.Millisecond, nil
		}
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(heldByOther) != 2 {
		t.Fatalf("ready called %d times, want 2 (before the wait, then with the host again)", len(heldByOther))
	}
	if heldByOther[1] {
		t.Error("ready called again while another held the host")
	}
	if got := c.Get(ctx, g.leaseKey(host)).Val(); got != l.(*lease).token {
		t.Errorf("lease held by %q after Acquire, want the caller's token", got)
	}
	if s := logs.String(); !strings.Contains(s, "lease lost while waiting") {
		t.Errorf("logged %q, want the lost lease", s)
	}
	if err := l.Release(politeness.State{}); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil { // ends the gate's subscription
		t.Fatal(err)
	}
	goleak.VerifyNone(t, before)
}

// A wait of at most LeaseTTL keeps the lease (nothing is released, no one
// is woken); a longer one releases it for the wait, which wakes the others.
func TestGate_C4_WaitUpToTTLKeepsLease(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	g := newTestGate(t, c, testPrefix(), &Options{LeaseTTL: ttl, Fence: -1})
	for _, tc := range []struct {
		name string
		wait time.Duration
		wake bool
	}{
		{"TTL", ttl, false},
		{"LongerThanTTL", ttl + time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := "http://wait-" + strings.ToLower(tc.name) + ".test:80"
			ps := c.Subscribe(ctx, g.channel())
			defer ps.Close()
			if _, err := ps.ReceiveTimeout(ctx, 5*time.Second); err != nil { // subscribed
				t.Fatal(err)
			}
			looks := 0
			l, err := g.Acquire(ctx, host, func(politeness.State) (time.Duration, error) {
				if looks++; looks == 1 {
					return tc.wait, nil
				}
				return 0, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release(politeness.State{})
			if looks != 2 {
				t.Fatalf("ready called %d times, want 2 (a wait, then go)", looks)
			}
			// A message of our own after the Acquire: the first one seen
			// tells whether the Acquire released the host.
			if err := c.Publish(ctx, g.channel(), "marker").Err(); err != nil {
				t.Fatal(err)
			}
			m, err := ps.ReceiveMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if woke := m.Payload == host; woke != tc.wake {
				t.Errorf("a wait of %v released the host: %v, want %v", tc.wait, woke, tc.wake)
			}
		})
	}
}

// A waiter on a fenced Redis sleeps until the fence ends, it does not poll.
func TestGate_C3_FencedWaiterDoesNotPoll(t *testing.T) {
	addr := needRedis(t)
	c := newClient(t, addr)
	var h countHook
	c.AddHook(&h)
	g := newTestGate(t, c, testPrefix(), nil)
	ctx := context.Background()
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	const fence = 500 * time.Millisecond
	if err := c.Set(ctx, g.epochKey(), strconv.FormatInt(now.Add(fence).UnixMilli(), 10), 0).Err(); err != nil {
		t.Fatal(err)
	}
	h.n.Store(0)
	start := time.Now()
	l, err := g.Acquire(ctx, "http://fenced.test:80", proceed)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(politeness.State{})
	if d := time.Since(start); d < fence/2 {
		t.Fatalf("lease granted %v after a fence of %v was set: not fenced", d, fence)
	}
	if n := h.n.Load(); n > 6 {
		t.Errorf("waiting out a fence of %v took %d commands, want a handful (look, look after subscribing, look after the fence): polling", fence, n)
	}
}

// Without a subscription a waiter behind a lease with a long TTL looks again
// after MaxWait, not after the TTL: it gets the host soon after the holder
// releases it.
func TestGate_C3_UnsubscribedWaiterLooksEveryMaxWait(t *testing.T) {
	addr := needRedis(t)
	prefix := testPrefix()
	holder := newTestGate(t, newClient(t, addr), prefix, nil) // LeaseTTL 10s
	ctx := context.Background()
	const host = "http://long-lease.test:80"
	l, err := holder.Acquire(ctx, host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	closed := redis.NewClient(&redis.Options{Addr: addr})
	_ = closed.Close() // its subscriptions fail at once
	c := newClient(t, addr)
	waiter := newTestGate(t, &subscribeHook{Client: c, sub: closed.Subscribe}, prefix, &Options{MaxWait: 100 * time.Millisecond})
	got := make(chan error, 1)
	go func() {
		l, err := waiter.Acquire(ctx, host, proceed)
		if err == nil {
			err = l.Release(politeness.State{})
		}
		got <- err
	}()
	waitUntil(t, "waiter queued in Redis", func() bool { return c.ZCard(ctx, holder.queueKey(host)).Val() == 1 })
	released := time.Now()
	if err := l.Release(politeness.State{}); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if d := time.Since(released); d > 3*time.Second { // roomy on a busy machine; sleeping the TTL costs 10s
		t.Errorf("unsubscribed waiter took %v to get a released host (MaxWait 100ms, LeaseTTL 10s)", d)
	}
}

// Two waiters that subscribe at once leave the gate one subscription: the
// one overtaken by the other closes its own and reports that it did not
// subscribe, so Close ends every subscription of the gate.
func TestGate_RacingSubscribesKeepOne(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	var calls atomic.Int32
	overtaken := make(chan struct{})
	hook := &subscribeHook{Client: c, sub: func(ctx context.Context, channels ...string) *redis.PubSub {
		if calls.Add(1) == 1 {
			<-overtaken // the first to subscribe is overtaken by a second
		}
		return c.Subscribe(ctx, channels...)
	}}
	g := newTestGate(t, hook, testPrefix(), nil)
	first := make(chan bool, 1)
	go func() { first <- g.subscribe(ctx) }()
	waitUntil(t, "first subscribe under way", func() bool { return calls.Load() == 1 })
	if !g.subscribe(ctx) {
		t.Fatal("the second subscribe did not subscribe")
	}
	close(overtaken)
	if <-first {
		t.Error("the overtaken subscribe reported that it subscribed, want false")
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "no subscription left after Close", func() bool {
		return c.PubSubNumSub(ctx, g.channel()).Val()[g.channel()] == 0
	})
}

// A nil ready proceeds at once: Acquire returns the held lease with the
// host's State.
func TestGate_NilReadyProceeds(t *testing.T) {
	g := newTestGate(t, newClient(t, needRedis(t)), testPrefix(), &Options{Fence: -1})
	ctx := context.Background()
	const host = "http://nil-ready.test:80"
	storeState(t, g, host, politeness.State{Strikes: 2})
	l, err := g.Acquire(ctx, host, nil)
	if err != nil {
		t.Fatalf("Acquire with a nil ready = %v, want a lease", err)
	}
	defer l.Release(politeness.State{})
	if got := l.State().Strikes; got != 2 {
		t.Errorf("lease State Strikes %d, want 2", got)
	}
}

// A gate forgets the wake-up registration of a host once its caller stops
// waiting, whether it got the host or gave up, so a crawl over many hosts
// does not grow the gate.
func TestGate_ForgetsWaitersWhenDone(t *testing.T) {
	addr := needRedis(t)
	prefix := testPrefix()
	g := newTestGate(t, newClient(t, addr), prefix, &Options{Fence: -1})
	holder := newTestGate(t, newClient(t, addr), prefix, &Options{Fence: -1})
	ctx := context.Background()
	storeState(t, g, "http://got.test:80", politeness.State{})
	const busy = "http://gave-up.test:80"
	held, err := holder.Acquire(ctx, busy, proceed)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(politeness.State{})
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := g.Acquire(short, busy, proceed); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire of a held host = %v, want context.DeadlineExceeded", err)
	}
	g.mu.Lock()
	n := len(g.waiters)
	g.mu.Unlock()
	if n != 0 {
		t.Errorf("gate keeps %d wake-up registrations after its callers are done, want 0", n)
	}
}
