package redisgate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/internal/syncbuf"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/politeness/gatetest"
	"github.com/goodbot-go/goodbot/politeness/redisgate/redistest"
	"github.com/redis/go-redis/v9"
)

func proceed(politeness.State) (time.Duration, error) { return 0, nil }

// waitUntil polls cond (a state, not a duration) until it holds; a test that
// needs an order of events waits for each event instead of sleeping.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// The Gate contract, as the in-memory gate keeps it: C3, D10 (one holder per
// host, FIFO within a process, State round trip, ready semantics).
func TestGate_C3_D10_Conformance(t *testing.T) {
	c := newClient(t, needRedis(t))
	gatetest.Run(t, func(t *testing.T) politeness.Gate {
		return newTestGate(t, c, testPrefix(), nil)
	})
}

// Two gates on one prefix stand for two processes: a host held by one is not
// granted by the other until released, and the waiter is woken by the
// release (not by MaxWait), then sees the State the first stored (C3).
func TestGate_C3_TwoProcessesShareHost(t *testing.T) {
	c := newClient(t, needRedis(t))
	prefix := testPrefix()
	a := newTestGate(t, c, prefix, nil)
	b := newTestGate(t, newClient(t, redisAddr), prefix, &Options{MaxWait: 10 * time.Second})
	ctx := context.Background()
	const host = "http://shared.test:80"

	la, err := a.Acquire(ctx, host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if lb, err := b.Acquire(short, host, proceed); !errors.Is(err, context.DeadlineExceeded) {
		if lb != nil {
			_ = lb.Release(politeness.State{})
		}
		t.Fatalf("second process got the held host: %v", err)
	}

	type got struct {
		l   politeness.Lease
		err error
		at  time.Time
	}
	done := make(chan got, 1)
	go func() {
		l, err := b.Acquire(ctx, host, proceed)
		done <- got{l, err, time.Now()}
	}()
	// Until b waits in Redis; the check is the wake-up below.
	waitUntil(t, "second process queued in Redis", func() bool { return c.ZCard(ctx, a.queueKey(host)).Val() == 1 })
	want := politeness.State{NotBefore: time.Now().Add(time.Minute).Round(0), Strikes: 2}
	released := time.Now()
	if err := la.Release(want); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if d := r.at.Sub(released); d > 3*time.Second { // roomy on a busy machine; missing the wake-up costs 10s
		t.Errorf("waiter took %v to notice the release (MaxWait 10s): no wake-up", d)
	}
	if st := r.l.State(); !st.NotBefore.Equal(want.NotBefore) || st.Strikes != 2 {
		t.Errorf("second process saw %+v, want %+v", st, want)
	}
	if err := r.l.Release(politeness.State{}); err != nil {
		t.Fatal(err)
	}
}

// A holder that stops renewing (a crashed process) blocks its host for about
// one LeaseTTL, no longer; a live holder keeps its host however long its
// request takes.
func TestGate_C3_LeaseTTL(t *testing.T) {
	c := newClient(t, needRedis(t))
	const ttl = time.Second // renewals every 333ms: a holder loses its host only after a 667ms stall (-race, busy 2-core CI)
	prefix := testPrefix()
	a := newTestGate(t, c, prefix, &Options{LeaseTTL: ttl})
	b := newTestGate(t, c, prefix, &Options{LeaseTTL: ttl})
	ctx := context.Background()

	t.Run("LiveHolderKeepsHost", func(t *testing.T) {
		const host = "http://slow.test:80"
		la, err := a.Acquire(ctx, host, proceed)
		if err != nil {
			t.Fatal(err)
		}
		// The request outlasts two TTLs; b must not get in meanwhile.
		short, cancel := context.WithTimeout(ctx, 2*ttl)
		defer cancel()
		if lb, err := b.Acquire(short, host, proceed); !errors.Is(err, context.DeadlineExceeded) {
			if lb != nil {
				_ = lb.Release(politeness.State{})
			}
			t.Fatalf("host granted while its holder renews: %v", err)
		}
		if err := la.Release(politeness.State{}); err != nil {
			t.Fatalf("release after renewals: %v", err)
		}
	})

	t.Run("CrashedHolderExpires", func(t *testing.T) {
		const host = "http://crash.test:80"
		la, err := a.Acquire(ctx, host, proceed)
		if err != nil {
			t.Fatal(err)
		}
		crashed := time.Now()
		la.(*lease).stopRenewing() // the process dies: no renewal, no release
		lb, err := b.Acquire(ctx, host, proceed)
		if err != nil {
			t.Fatal(err)
		}
		waited := time.Since(crashed)
		if waited < ttl/2 || waited > ttl+time.Second {
			t.Errorf("host free %v after its holder died, want about the TTL %v", waited, ttl)
		}
		if err := la.Release(politeness.State{Strikes: 9}); !errors.Is(err, ErrLeaseLost) ||
			!errors.Is(err, politeness.ErrLeaseReleased) {
			t.Errorf("release of an expired, taken-over lease = %v, want ErrLeaseLost", err)
		}
		if err := lb.Release(politeness.State{}); err != nil {
			t.Fatal(err)
		}
	})
}

// A wait longer than LeaseTTL (a pause) lets the others read the State
// meanwhile; a short one keeps the lease.
func TestGate_C4_LongWaitFreesLease(t *testing.T) {
	c := newClient(t, needRedis(t))
	const ttl = 200 * time.Millisecond
	prefix := testPrefix()
	a := newTestGate(t, c, prefix, &Options{LeaseTTL: ttl})
	b := newTestGate(t, c, prefix, &Options{LeaseTTL: ttl})
	ctx := context.Background()
	const host = "http://paused.test:80"
	// The pause outlasts the TTL by far, so a's wait is still a long one when
	// a busy machine starts it late.
	pause := politeness.State{NotBefore: time.Now().Add(5 * ttl), PauseUntil: time.Now().Add(5 * ttl)}
	l, err := a.Acquire(ctx, host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(pause); err != nil {
		t.Fatal(err)
	}
	until := func(s politeness.State) (time.Duration, error) { return time.Until(s.NotBefore), nil }
	first := make(chan error, 1)
	go func() {
		l, err := a.Acquire(ctx, host, until)
		if err == nil {
			err = l.Release(l.State())
		}
		first <- err
	}()
	time.Sleep(ttl / 4) // a is now in its long wait
	seen := make(chan politeness.State, 1)
	short, cancel := context.WithTimeout(ctx, 3*ttl) // well within the pause (5 TTLs)
	defer cancel()
	_, err = b.Acquire(short, host, func(s politeness.State) (time.Duration, error) {
		seen <- s
		return 0, errors.New("only looking")
	})
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("other process could not read the State during a long wait: %v", err)
	}
	if s := <-seen; !s.PauseUntil.Equal(pause.PauseUntil) {
		t.Errorf("other process saw %+v, want the pause", s)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}

// Fail closed: with Redis unreachable, Acquire returns a typed error that
// errors.Is/As see through wrapping (C7), and ready is never called.
func TestGate_C7_UnreachableFailsClosed(t *testing.T) {
	addr, err := redistest.FreeAddr() // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = c.Close() })
	g := newTestGate(t, c, testPrefix(), nil)
	called := false
	l, err := g.Acquire(context.Background(), "http://down.test:80", func(politeness.State) (time.Duration, error) {
		called = true
		return 0, nil
	})
	if l != nil || called {
		t.Fatal("lease granted without Redis")
	}
	wrapped := &url.Error{Op: "Get", URL: "http://down.test/", Err: fmt.Errorf("politeness: %w", err)}
	var ge *Error
	switch {
	case !errors.Is(wrapped, ErrUnavailable):
		t.Errorf("error %v does not match ErrUnavailable", err)
	case !errors.Is(wrapped, syscall.ECONNREFUSED):
		t.Errorf("error %v does not carry the network cause", err)
	case !errors.As(wrapped, &ge) || ge.Op != "acquire" || ge.Host != "http://down.test:80":
		t.Errorf("errors.As(*Error) = %+v", ge)
	}
	t.Log(err)
}

func TestGate_BadStateAndClose(t *testing.T) {
	c := newClient(t, needRedis(t))
	prefix := testPrefix()
	var logs syncbuf.Buffer
	g := newTestGate(t, c, prefix, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	const host = "http://garbled.test:80"
	if err := c.Set(ctx, g.stateKey(host), "{not json", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Acquire(ctx, host, proceed); !errors.Is(err, ErrBadState) {
		t.Fatalf("Acquire on garbled State = %v, want ErrBadState", err)
	}
	if n, _ := c.Exists(ctx, g.leaseKey(host)).Result(); n != 0 {
		t.Error("lease kept after a bad State")
	}
	if s := logs.String(); strings.Contains(s, "failed") {
		t.Errorf("the release after a bad State worked, yet logged:\n%s", s)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Acquire(ctx, "http://other.test:80", proceed); !errors.Is(err, ErrClosed) {
		t.Errorf("Acquire after Close = %v, want ErrClosed", err)
	}
}

// After Redis lost its data, a holder's renewal re-asserts its lease (so no
// one else gets the host) and its release still stores the State (so the gap
// is kept). The re-assertion is logged once, and no other renewal is.
func TestGate_C3_ReassertAfterDataLoss(t *testing.T) {
	c := newClient(t, needRedis(t))
	const ttl = 150 * time.Millisecond
	var logs syncbuf.Buffer
	g := newTestGate(t, c, testPrefix(), &Options{LeaseTTL: ttl, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	const host = "http://lost.test:80"
	l, err := g.Acquire(ctx, host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	token := l.(*lease).token
	if err := c.Del(ctx, g.leaseKey(host), g.stateKey(host)).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.Get(ctx, g.leaseKey(host)).Val() != token {
		if time.Now().After(deadline) {
			t.Fatal("lease not re-asserted after the data loss")
		}
		time.Sleep(ttl / 10) // waiting for the renewal goroutine
	}
	next := politeness.State{NotBefore: time.Now().Add(time.Minute).Round(0)}
	if err := l.Release(next); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "re-asserted"); n != 1 {
		t.Errorf("the re-assertion logged %d times, want 1:\n%s", n, logs.String())
	}
	l, err = g.Acquire(ctx, host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	if !l.State().NotBefore.Equal(next.NotBefore) {
		t.Errorf("State after loss = %+v, want %+v", l.State(), next)
	}
	_ = l.Release(politeness.State{})
}

// countHook counts the commands a client sends.
type countHook struct{ n atomic.Int64 }

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}
func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// Waiting does not poll: a waiter behind a busy host and a caller sleeping
// until the host's NotBefore each send a handful of commands, however long
// they wait.
func TestGate_WaitsWithoutPolling(t *testing.T) {
	addr := needRedis(t)
	prefix := testPrefix()
	holder := newTestGate(t, newClient(t, addr), prefix, nil)
	c := newClient(t, addr)
	var h countHook
	c.AddHook(&h)
	waiter := newTestGate(t, c, prefix, nil) // MaxWait 2s, LeaseTTL 10s
	ctx := context.Background()

	const busy = "http://busy.test:80"
	l, err := holder.Acquire(ctx, busy, proceed)
	if err != nil {
		t.Fatal(err)
	}
	wait := func(d time.Duration) {
		short, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		if _, err := waiter.Acquire(short, busy, proceed); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("waiter: %v", err)
		}
	}
	subscribed := func() bool {
		waiter.mu.Lock()
		defer waiter.mu.Unlock()
		return waiter.ps != nil
	}
	for deadline := time.Now().Add(10 * time.Second); !subscribed(); { // connects and subscribes
		if time.Now().After(deadline) {
			t.Fatal("waiter never subscribed")
		}
		wait(50 * time.Millisecond) // on a busy machine one try may end before its first look
	}
	flushWakes(t, waiter, holder)
	h.n.Store(0)
	wait(800 * time.Millisecond)
	if n := h.n.Load(); n > 2 {
		t.Errorf("waiting 800ms behind a busy host took %d commands, want 2 (look, leave): polling", n)
	}
	_ = l.Release(politeness.State{NotBefore: time.Now().Add(800 * time.Millisecond)})

	h.n.Store(0)
	const paced = "http://paced.test:80"
	l, err = holder.Acquire(ctx, paced, proceed)
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Release(politeness.State{NotBefore: time.Now().Add(800 * time.Millisecond)})
	until := func(s politeness.State) (time.Duration, error) { return time.Until(s.NotBefore), nil }
	l, err = waiter.Acquire(ctx, paced, until)
	if err != nil {
		t.Fatal(err)
	}
	if n := h.n.Load(); n > 2 {
		t.Errorf("sleeping 800ms until NotBefore took %d commands, want 2 (take, re-read)", n)
	}
	_ = l.Release(politeness.State{})

	// A free host with another process's waiter ahead: the waiter behind
	// sleeps until woken (or MaxWait), it does not poll.
	const queued = "http://queued.test:80"
	ahead := newTestGate(t, newClient(t, addr), prefix, nil)
	l, err = ahead.Acquire(ctx, queued, proceed)
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Release(politeness.State{})
	flushWakes(t, waiter, ahead)
	rdb := newClient(t, addr)
	queueTicket(t, rdb, ahead, queued, "ahead", rdb.Time(ctx).Val())
	h.n.Store(0)
	short, cancel := context.WithTimeout(ctx, 800*time.Millisecond)
	defer cancel()
	if _, err := waiter.Acquire(short, queued, proceed); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiter behind another process's turn: %v", err)
	}
	if n := h.n.Load(); n > 2 {
		t.Errorf("waiting 800ms behind another process's turn took %d commands, want 2 (look, leave): polling", n)
	}
}

// flushWakes returns once every wake published before it has reached
// waiter's subscription. A release's wake arrives when it will: one that
// arrives while the waiter waits for that host makes it look again, an
// extra command that is not polling (a queued waiter once counted 3 so on
// a loaded machine). Wakes come on one channel, in order, so once a wake
// publisher sends after them has arrived, they all have.
func flushWakes(t *testing.T, waiter, publisher *Gate) {
	t.Helper()
	const host = "http://flush.test:80"
	woken := waiter.listen(host)
	defer waiter.unlisten(host)
	l, err := publisher.Acquire(context.Background(), host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Release(politeness.State{})
	select {
	case <-woken:
	case <-time.After(10 * time.Second):
		t.Fatal("the flush's wake never reached the waiter")
	}
}

// cancelHook makes the next command look interrupted: it runs, then its
// caller's context is canceled and the answer is lost.
type cancelHook struct {
	countHook
	armed  atomic.Bool
	cancel context.CancelFunc
}

func (h *cancelHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.armed.CompareAndSwap(true, false) {
			h.cancel()
			return context.Canceled
		}
		return err
	}
}

// An Acquire whose context ends while its script runs does not leave the
// host locked for a lease TTL.
func TestGate_C3_InterruptedAcquireFreesHost(t *testing.T) {
	addr := needRedis(t)
	prefix := testPrefix()
	c := newClient(t, addr)
	h := new(cancelHook)
	c.AddHook(h)
	g := newTestGate(t, c, prefix, nil) // LeaseTTL 10s
	other := newTestGate(t, newClient(t, addr), prefix, nil)
	l, err := g.Acquire(context.Background(), "http://warm.test:80", proceed) // loads the scripts
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Release(politeness.State{})

	const host = "http://interrupted.test:80"
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.armed.Store(true)
	if _, err := g.Acquire(ctx, host, proceed); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted Acquire = %v, want context.Canceled", err)
	}
	hostFree(t, other, host)
}

// Processes are served in the order they started waiting: when a process
// with more callers for a host releases it, the process that has waited
// longer goes first (D10 across the fleet; no starvation).
func TestGate_D10_ProcessesServedInArrivalOrder(t *testing.T) {
	addr := needRedis(t)
	prefix := testPrefix()
	a := newTestGate(t, newClient(t, addr), prefix, nil)
	b := newTestGate(t, newClient(t, addr), prefix, nil)
	ctx := context.Background()
	const host = "http://fair.test:80"
	held, err := a.Acquire(ctx, host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	// start starts a caller and waits until it is queued (arrived): no
	// sleeps, so a slow goroutine on a busy machine cannot swap arrivals.
	start := func(g *Gate, name string, queued func() bool) {
		wg.Go(func() {
			l, err := g.Acquire(ctx, host, proceed)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			_ = l.Release(politeness.State{})
		})
		waitUntil(t, name+" queued", queued)
	}
	rdb := newClient(t, addr)
	inRedis := func() bool { return rdb.ZCard(ctx, a.queueKey(host)).Val() == 1 }
	waitingIn := func(g *Gate, n int) func() bool {
		return func() bool {
			g.local.mu.Lock()
			defer g.local.mu.Unlock()
			h := g.local.hosts[host]
			return h != nil && len(h.waiters) == n
		}
	}
	start(b, "b1", inRedis)         // b queues in Redis while a holds the host
	start(a, "a1", waitingIn(a, 1)) // a's later callers wait in a's local queue
	start(a, "a2", waitingIn(a, 2))
	_ = held.Release(politeness.State{})
	wg.Wait()
	if got := strings.Join(order, " "); got != "b1 a1 a2" {
		t.Errorf("served %s, want b1 a1 a2 (b waited first)", got)
	}
}

// Zero options take the documented defaults; a tiny LeaseTTL is raised to
// 3ms (renewals every TTL/3) and OpTimeout is at most half the TTL.
func TestGate_NewDefaults(t *testing.T) {
	for _, c := range []struct {
		name  string
		opts  *Options
		ttl   time.Duration
		fence time.Duration
		wait  time.Duration
		opTO  time.Duration
	}{
		{name: "nil", opts: nil, ttl: 10 * time.Second, fence: 10*time.Second + time.Minute, wait: 2 * time.Second, opTO: 5 * time.Second},
		{name: "zero", opts: &Options{}, ttl: 10 * time.Second, fence: 10*time.Second + time.Minute, wait: 2 * time.Second, opTO: 5 * time.Second},
		{name: "negative", opts: &Options{LeaseTTL: -1, Fence: -1, MaxWait: -1, OpTimeout: -1},
			ttl: 10 * time.Second, fence: -1, wait: 2 * time.Second, opTO: 5 * time.Second},
		{name: "tiny TTL", opts: &Options{LeaseTTL: time.Millisecond}, ttl: 3 * time.Millisecond,
			fence: 3*time.Millisecond + time.Minute, wait: 2 * time.Second, opTO: 1500 * time.Microsecond},
		{name: "set", opts: &Options{Prefix: "p:", LeaseTTL: time.Second, Fence: time.Hour, MaxWait: time.Minute, OpTimeout: 100 * time.Millisecond},
			ttl: time.Second, fence: time.Hour, wait: time.Minute, opTO: 100 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := New(nil, c.opts)
			wantPrefix := "{goodbot:politeness}:"
			if c.opts != nil && c.opts.Prefix != "" {
				wantPrefix = c.opts.Prefix
			}
			if g.prefix != wantPrefix || g.ttl != c.ttl || g.fence != c.fence || g.wait != c.wait || g.opTO != c.opTO || g.log == nil {
				t.Errorf("New = prefix %q ttl %v fence %v wait %v opTO %v log %v; want %q %v %v %v %v and a logger",
					g.prefix, g.ttl, g.fence, g.wait, g.opTO, g.log, wantPrefix, c.ttl, c.fence, c.wait, c.opTO)
			}
		})
	}
}

// subscribeHook is a Client whose Subscribe is sub's.
type subscribeHook struct {
	Client
	sub func(ctx context.Context, channels ...string) *redis.PubSub
}

func (h *subscribeHook) Subscribe(ctx context.Context, channels ...string) *redis.PubSub {
	return h.sub(ctx, channels...)
}

// A release between a waiter's first look and its subscription cannot be
// heard: having subscribed, the waiter looks again at once instead of
// sleeping until MaxWait.
func TestGate_C3_ReleaseBeforeSubscribeNotMissed(t *testing.T) {
	addr := needRedis(t)
	prefix := testPrefix()
	holder := newTestGate(t, newClient(t, addr), prefix, nil) // LeaseTTL 10s
	ctx := context.Background()
	const host = "http://racing.test:80"
	l, err := holder.Acquire(ctx, host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, addr)
	var once sync.Once
	hook := &subscribeHook{Client: c, sub: func(ctx context.Context, channels ...string) *redis.PubSub {
		once.Do(func() {
			if err := l.Release(politeness.State{}); err != nil {
				t.Error(err)
			}
		})
		return c.Subscribe(ctx, channels...)
	}}
	waiter := newTestGate(t, hook, prefix, &Options{MaxWait: 10 * time.Second})
	start := time.Now()
	got, err := waiter.Acquire(ctx, host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release(politeness.State{})
	if d := time.Since(start); d > 3*time.Second { // roomy on a busy machine; missing the release costs 10s
		t.Errorf("waiter took %v to get a host released before it subscribed (MaxWait 10s)", d)
	}
}

// A gate that works logs no warning: not for a lease renewed and touched
// during a short wait and then released, nor for waiters that give up
// behind a holder or behind another process's turn.
func TestGate_QuietWhenAllIsWell(t *testing.T) {
	addr := needRedis(t)
	prefix := testPrefix()
	c := newClient(t, addr)
	var h countHook
	c.AddHook(&h)
	var logs syncbuf.Buffer
	g := newTestGate(t, c, prefix, &Options{LeaseTTL: 30 * time.Millisecond, Fence: -1,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	ctx := context.Background()

	const host = "http://quiet.test:80"
	looks := 0
	l, err := g.Acquire(ctx, host, func(politeness.State) (time.Duration, error) {
		if looks++; looks == 1 {
			return time.Millisecond, nil // a short wait: the lease is kept and touched
		}
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if looks != 2 {
		t.Fatalf("ready called %d times, want 2 (a short wait, then go)", looks)
	}
	held := h.n.Load()
	waitUntil(t, "two renewals", func() bool { return h.n.Load() >= held+2 })
	if err := l.Release(politeness.State{Strikes: 1}); err != nil {
		t.Fatal(err)
	}

	other := newTestGate(t, newClient(t, addr), prefix, nil)
	busy, err := other.Acquire(ctx, host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Release(politeness.State{})
	const queued = "http://quiet-queued.test:80"
	queueTicket(t, c, g, queued, "ahead", c.Time(ctx).Val())
	for _, behind := range []string{host, queued} {
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		_, err := g.Acquire(short, behind, proceed)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("waiter behind %s: %v", behind, err)
		}
	}
	if s := logs.String(); s != "" {
		t.Errorf("logged:\n%s", s)
	}
}

// Without a subscription (Redis refuses it, the scripts still run), a
// waiter falls back to MaxWait between looks: it does not spin.
func TestGate_NoSubscriptionNoPolling(t *testing.T) {
	addr := needRedis(t)
	prefix := testPrefix()
	holder := newTestGate(t, newClient(t, addr), prefix, nil)
	ctx := context.Background()
	const host = "http://unsubscribed.test:80"
	l, err := holder.Acquire(ctx, host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(politeness.State{})
	dead, err := redistest.FreeAddr() // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	down := redis.NewClient(&redis.Options{Addr: dead, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = down.Close() })
	c := newClient(t, addr)
	var h countHook
	c.AddHook(&h)
	waiter := newTestGate(t, &subscribeHook{Client: c, sub: down.Subscribe}, prefix, &Options{MaxWait: time.Second})
	if err := releaseScript.Load(ctx, c).Err(); err != nil { // connects, and loads the script of the leave
		t.Fatal(err)
	}
	h.n.Store(0)
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if _, err := waiter.Acquire(short, host, proceed); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiter: %v", err)
	}
	if n := h.n.Load(); n > 2 {
		t.Errorf("waiting 500ms without a subscription took %d commands, want 2 (look, leave): polling", n)
	}
}
