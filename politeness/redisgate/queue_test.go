package redisgate

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// The in-process queue serves a host's callers in arrival order, lets a
// canceled waiter leave at once, and passes on a turn that reached a waiter
// as its context ended (D10: a check that arrives while another runs waits).
func TestQueue_D10_FIFOAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var q queue
		const host = "http://q.test:80"
		ctx := context.Background()
		if err := q.lock(ctx, host); err != nil {
			t.Fatal(err)
		}
		var order []int
		done := make(chan struct{})
		cctx, cancel := context.WithCancel(ctx)
		canceled := make(chan error, 1)
		for i := range 4 {
			c := ctx
			if i == 1 {
				c = cctx
			}
			go func() {
				err := q.lock(c, host)
				if i == 1 {
					canceled <- err
					return
				}
				order = append(order, i) // guarded by the queue itself
				q.unlock(host)
				done <- struct{}{}
			}()
			synctest.Wait() // arrival order
		}
		cancel()
		if err := <-canceled; !errors.Is(err, context.Canceled) {
			t.Fatalf("canceled waiter: %v", err)
		}
		q.unlock(host)
		for range 3 {
			<-done
		}
		if len(order) != 3 || order[0] != 0 || order[1] != 2 || order[2] != 3 {
			t.Errorf("served in order %v, want [0 2 3]", order)
		}
		if len(q.hosts) != 0 {
			t.Errorf("queue keeps %d hosts after all left", len(q.hosts))
		}
	})
}

// A turn handed to a waiter whose context ends at that moment is passed on.
func TestQueue_HandoffRacingCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var q queue
		const host = "http://q.test:80"
		_ = q.lock(context.Background(), host)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		first := make(chan error, 1)
		go func() { first <- q.lock(ctx, host) }()
		synctest.Wait()
		second := make(chan error, 1)
		go func() { second <- q.lock(context.Background(), host) }()
		synctest.Wait()
		// Hand the turn over and end the first waiter's context together.
		q.mu.Lock()
		q.unlockLocked(host)
		cancel()
		q.mu.Unlock()
		if err := <-first; err != nil {
			// It lost the race to ctx: the turn must have moved on.
			if err := <-second; err != nil {
				t.Fatal(err)
			}
		} else {
			q.unlock(host)
			if err := <-second; err != nil {
				t.Fatal(err)
			}
		}
		q.unlock(host)
		if len(q.hosts) != 0 {
			t.Errorf("queue keeps %d hosts", len(q.hosts))
		}
	})
}

func TestZeroValues_C7_FailClosed(t *testing.T) {
	ctx := context.Background()
	var g Gate
	if _, err := g.Acquire(ctx, "http://z.test:80", proceed); !errors.Is(err, ErrUnavailable) {
		t.Errorf("zero Gate Acquire = %v, want ErrUnavailable", err)
	}
	if _, err := new(FetchedSet).Add(ctx, "http://z.test/"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("zero FetchedSet Add = %v", err)
	}
}

// State JSON read from Redis decodes or fails with an error, never panics.
func FuzzDecodeState(f *testing.F) {
	f.Add(`{"not_before":"2026-11-30T10:00:00Z","strikes":2}`)
	f.Add(`{}`)
	f.Add(`{"slow":"x"}`)
	f.Add(`[`)
	f.Fuzz(func(t *testing.T, s string) {
		st, err := decodeState(s)
		if err != nil && !st.IsZero() {
			t.Errorf("error %v with a non-zero State", err)
		}
		if err == nil && s != "" {
			if _, err := decodeState(mustJSON(t, st)); err != nil {
				t.Errorf("re-encoded State does not decode: %v", err)
			}
		}
	})
}

func mustJSON(t *testing.T, st politeness.State) string {
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
