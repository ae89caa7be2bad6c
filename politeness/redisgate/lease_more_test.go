package redisgate

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/internal/syncbuf"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/redis/go-redis/v9"
)

// A renewal that finds the lease taken over logs the loss once and stops
// renewing (it does not fight the new holder); the late Release then
// reports ErrLeaseLost and leaves the new holder's lease alone.
func TestLease_C3_RenewalStopsWhenLost(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	var logs syncbuf.Buffer
	g := newTestGate(t, c, testPrefix(), &Options{LeaseTTL: 30 * time.Millisecond, Fence: -1, // renewals every 10ms
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	const host = "http://taken-over.test:80"
	l, err := g.Acquire(ctx, host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, g.leaseKey(host), "other", time.Minute).Err(); err != nil { // taken over
		t.Fatal(err)
	}
	done := l.(*lease).done
	waitUntil(t, "renewals stopped", func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
	if n := strings.Count(logs.String(), "lease lost"); n != 1 {
		t.Errorf("the loss logged %d times, want 1:\n%s", n, logs.String())
	}
	if err := l.Release(politeness.State{Strikes: 9}); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Release of a lease taken over = %v, want ErrLeaseLost", err)
	}
	if got := c.Get(ctx, g.leaseKey(host)).Val(); got != "other" {
		t.Errorf("lease held by %q after the late Release, want %q", got, "other")
	}
}

// A renewal cut short because the lease is being released is no failure:
// it logs nothing.
func TestLease_RenewalEndedByReleaseIsQuiet(t *testing.T) {
	c := newClient(t, needRedis(t))
	ctx := context.Background()
	var logs syncbuf.Buffer
	s := &scriptHook{Client: c}
	g := newTestGate(t, s, testPrefix(), &Options{LeaseTTL: 30 * time.Millisecond, Fence: -1, // renewals every 10ms
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	const host = "http://renewing.test:80"
	l, err := g.Acquire(ctx, host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	le := l.(*lease)
	s.after = func(cmd *redis.Cmd) {
		le.stop() // the release begins while the renewal runs
		cmd.SetErr(context.Canceled)
	}
	s.armed.Store(true) // the next script is a renewal
	waitUntil(t, "a renewal cut short", func() bool { return !s.armed.Load() })
	<-le.done
	if err := l.Release(politeness.State{}); err != nil {
		t.Fatal(err)
	}
	if s := logs.String(); s != "" {
		t.Errorf("logged:\n%s\nwant nothing", s)
	}
}

// A second Release of a lease does nothing: it returns ErrLeaseReleased
// (not a lost lease), and it does not free the host again, which the next
// holder now has, for the caller waiting behind that holder.
func TestLease_SecondReleaseDoesNothing(t *testing.T) {
	g := newTestGate(t, newClient(t, needRedis(t)), testPrefix(), &Options{Fence: -1})
	ctx := context.Background()
	const host = "http://released-twice.test:80"
	first, err := g.Acquire(ctx, host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Release(politeness.State{}); err != nil {
		t.Fatal(err)
	}
	next, err := g.Acquire(ctx, host, proceed)
	if err != nil {
		t.Fatal(err)
	}
	waiting := func() int {
		g.local.mu.Lock()
		defer g.local.mu.Unlock()
		if h := g.local.hosts[host]; h != nil {
			return len(h.waiters)
		}
		return 0
	}
	behind := make(chan error, 1)
	go func() {
		l, err := g.Acquire(ctx, host, proceed)
		if err == nil {
			err = l.Release(politeness.State{})
		}
		behind <- err
	}()
	waitUntil(t, "a caller waiting behind the next holder", func() bool { return waiting() == 1 })
	err = first.Release(politeness.State{Strikes: 9})
	if !errors.Is(err, politeness.ErrLeaseReleased) || errors.Is(err, ErrLeaseLost) {
		t.Errorf("second Release = %v, want ErrLeaseReleased, not ErrLeaseLost", err)
	}
	if n := waiting(); n != 1 {
		t.Errorf("%d callers waiting after the second Release, want 1: it handed on the next holder's turn", n)
	}
	if err := next.Release(politeness.State{}); err != nil {
		t.Fatal(err)
	}
	if err := <-behind; err != nil {
		t.Fatal(err)
	}
}
