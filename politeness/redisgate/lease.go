package redisgate

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// lease is one holder's turn on a host. While it is held, a goroutine renews
// the Redis lease every LeaseTTL/3, so a request may take longer than the TTL
// while a crashed process still frees the host after at most one TTL.
type lease struct {
	g     *Gate
	host  string
	token string
	st    politeness.State // on the process's clock; written only by the Acquire that made it
	skew  skew             // the server's clock against the process's, measured with st

	stop context.CancelFunc // ends the renewals
	done chan struct{}      // closed when the renewals have ended

	mu       sync.Mutex // guards released
	released bool
}

func (g *Gate) newLease(host, token string, st politeness.State) *lease {
	ctx, cancel := context.WithCancel(context.Background())
	l := &lease{g: g, host: host, token: token, st: st, stop: cancel, done: make(chan struct{})}
	go l.renew(ctx)
	return l
}

func (l *lease) renew(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(l.g.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, min(l.g.opTO, l.g.ttl/3))
		code, _, _, err := l.g.touch(rctx, l.host, l.token)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			l.g.log.Warn("redisgate: lease renewal failed", "host", l.host, "err", err)
		case code == 0:
			l.g.log.Warn("redisgate: lease lost", "host", l.host)
			return
		case code == 2:
			l.g.log.Info("redisgate: lease re-asserted after redis lost its data", "host", l.host)
		}
	}
}

// stopRenewing ends the renewal goroutine and waits for it.
func (l *lease) stopRenewing() {
	l.stop()
	<-l.done
}

// free stops the renewals and releases the Redis lease, storing *next (nil:
// keep the State). It does not touch the in-process queue.
func (l *lease) free(next *politeness.State) error {
	l.stopRenewing()
	err := l.g.release(l.host, l.token, next, l.skew)
	if err != nil {
		l.g.log.Warn("redisgate: release failed", "host", l.host, "err", err)
	}
	return err
}

// State implements [politeness.Lease].
func (l *lease) State() politeness.State { return l.st }

// Release implements [politeness.Lease]. It stores next and frees the host,
// waking the waiters of every process. The host is freed in this process even
// when Redis fails; the error (matching [ErrUnavailable] or [ErrLeaseLost])
// then says that next may not have been stored, and the Redis lease runs out
// after at most LeaseTTL.
func (l *lease) Release(next politeness.State) error {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return fmt.Errorf("redisgate: release %s: %w", l.host, politeness.ErrLeaseReleased)
	}
	l.released = true
	l.mu.Unlock()
	err := l.free(&next)
	l.g.local.unlock(l.host)
	return err
}
