package redisgate

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// A waiter whose context ends just before the turn reaches it (it has woken
// for its context, but has not left the queue yet) passes the turn on to the
// next waiter instead of dropping it.
func TestQueue_D10_TurnPassedOnAfterCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, host := new(queue), "http://handed-over.test:80"
		if err := q.lock(context.Background(), host); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		canceled, next := make(chan error, 1), make(chan error, 1)
		go func() { canceled <- q.lock(ctx, host) }()
		synctest.Wait() // queued first
		go func() { next <- q.lock(context.Background(), host) }()
		synctest.Wait() // queued second
		q.mu.Lock()
		cancel()             // the first waiter wakes for its context and waits for q.mu
		q.unlockLocked(host) // the turn is handed to it before it can leave
		q.mu.Unlock()
		if err := <-canceled; !errors.Is(err, context.Canceled) {
			t.Fatalf("waiter canceled before its turn arrived = %v, want context.Canceled", err)
		}
		if err := <-next; err != nil { // a dropped turn: the bubble deadlocks here
			t.Fatalf("next waiter = %v, want its turn", err)
		}
		q.unlock(host)
		if len(q.hosts) != 0 {
			t.Errorf("queue keeps %d hosts after all left, want 0", len(q.hosts))
		}
	})
}
