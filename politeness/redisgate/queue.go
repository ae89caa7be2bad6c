package redisgate

import (
	"context"
	"sync"
)

// queue is the in-process FIFO in front of Redis: one caller per host at a
// time talks to Redis, the others wait here in arrival order. It also keeps
// Redis traffic at one waiter per host per process.
type queue struct {
	mu    sync.Mutex            // guards hosts
	hosts map[string]*hostQueue // by host key; present while held
}

type hostQueue struct {
	waiters []chan struct{} // closed when handed the turn
}

// lock waits for host's turn. When ctx ends first it returns ctx.Err() and
// leaves the queue (passing on a turn that arrived meanwhile).
func (q *queue) lock(ctx context.Context, host string) error {
	q.mu.Lock()
	if q.hosts == nil {
		q.hosts = make(map[string]*hostQueue)
	}
	h := q.hosts[host]
	if h == nil {
		q.hosts[host] = new(hostQueue)
		q.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	h.waiters = append(h.waiters, ch)
	q.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	select {
	case <-ch: // handed the turn as ctx ended: pass it on
		q.unlockLocked(host)
	default:
		for i, w := range h.waiters {
			if w == ch {
				h.waiters = append(h.waiters[:i], h.waiters[i+1:]...)
				break
			}
		}
	}
	q.mu.Unlock()
	return ctx.Err()
}

// unlock hands host's turn to the next waiter, if any.
func (q *queue) unlock(host string) {
	q.mu.Lock()
	q.unlockLocked(host)
	q.mu.Unlock()
}

func (q *queue) unlockLocked(host string) {
	h := q.hosts[host]
	if h == nil {
		return
	}
	if len(h.waiters) == 0 {
		delete(q.hosts, host)
		return
	}
	ch := h.waiters[0]
	h.waiters[0] = nil
	h.waiters = h.waiters[1:]
	close(ch)
}
