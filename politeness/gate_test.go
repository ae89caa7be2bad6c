package politeness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/politeness/gatetest"
)

func TestMemoryGate_Conformance(t *testing.T) {
	gatetest.Run(t, func(*testing.T) politeness.Gate { return politeness.NewMemoryGate() })
}

func TestMemoryGate_ZeroValueConformance(t *testing.T) {
	gatetest.Run(t, func(*testing.T) politeness.Gate { return new(politeness.MemoryGate) })
}

func TestState_JSONRoundTrip(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 123, time.UTC)
	s := politeness.State{NotBefore: now, PauseUntil: now, Strikes: 1, Slow: 2, Successes: 3,
		Failures: 4, DownUntil: now, GaveUpUntil: now.Add(100 * 365 * 24 * time.Hour), Expires: now}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got politeness.State
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got != s {
		t.Errorf("round trip: %+v != %+v", got, s)
	}
	if b, _ := json.Marshal(politeness.State{}); string(b) != "{}" {
		t.Errorf("zero State marshals to %s, want {}", b)
	}
}

func TestMemoryGate_ForgetsIdleHosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &politeness.MemoryGate{SweepEvery: time.Minute}
		proceed := func(politeness.State) (time.Duration, error) { return 0, nil }
		for i := range 1000 {
			l, err := g.Acquire(context.Background(), "h"+string(rune('a'+i%26))+string(rune(i)), proceed)
			if err != nil {
				t.Fatal(err)
			}
			l.Release(politeness.State{NotBefore: time.Now(), Expires: time.Now().Add(time.Hour)})
		}
		// A zero State is not kept at all.
		l, _ := g.Acquire(context.Background(), "zero", proceed)
		l.Release(politeness.State{})
		if n := g.Len(); n != 1000 {
			t.Fatalf("Len = %d, want 1000", n)
		}
		time.Sleep(time.Hour + time.Second)
		for range 300 { // lazy sweep: triggered by later Acquire calls
			l, _ := g.Acquire(context.Background(), "busy", proceed)
			l.Release(politeness.State{Expires: time.Now().Add(time.Hour)})
		}
		if n := g.Len(); n != 1 {
			t.Errorf("Len = %d after the idle time, want 1 (only the busy host)", n)
		}
		// Explicit Sweep; a held host is never forgotten.
		held, _ := g.Acquire(context.Background(), "held", proceed)
		time.Sleep(2 * time.Hour)
		g.Sweep()
		if n := g.Len(); n != 1 {
			t.Errorf("Len = %d after Sweep, want 1 (the held host)", n)
		}
		held.Release(politeness.State{})
	})
}

func TestMemoryGate_C3_FIFOAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := politeness.NewMemoryGate()
		proceed := func(politeness.State) (time.Duration, error) { return 0, nil }
		first, _ := g.Acquire(context.Background(), "h", proceed)
		var mu sync.Mutex
		var order []int
		var wg sync.WaitGroup
		cancels := make([]context.CancelFunc, 6)
		for i := range 6 {
			ctx, cancel := context.WithCancel(context.Background())
			cancels[i] = cancel
			wg.Go(func() {
				l, err := g.Acquire(ctx, "h", proceed)
				if err != nil {
					if i%2 == 0 || !errors.Is(err, context.Canceled) {
						t.Errorf("waiter %d: %v", i, err)
					}
					return
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				l.Release(politeness.State{})
			})
			synctest.Wait()
		}
		for _, i := range []int{5, 1, 3} { // odd waiters leave the queue: the last one first, then two in the middle
			cancels[i]()
			synctest.Wait()
		}
		wg.Go(func() { // and one more joins it, behind the last one left
			l, err := g.Acquire(context.Background(), "h", proceed)
			if err != nil {
				t.Errorf("waiter 6: %v", err)
				return
			}
			mu.Lock()
			order = append(order, 6)
			mu.Unlock()
			l.Release(politeness.State{})
		})
		synctest.Wait()
		first.Release(politeness.State{})
		wg.Wait()
		if fmt.Sprint(order) != "[0 2 4 6]" {
			t.Errorf("served %v, want [0 2 4 6]", order)
		}
		for _, c := range cancels {
			c()
		}
		if n := g.Len(); n != 0 {
			t.Errorf("Len = %d, want 0 (all zero states)", n)
		}
	})
}

func TestMemoryGate_ReadyWaitHoldsTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := politeness.NewMemoryGate()
		calls := 0
		start := time.Now()
		l, err := g.Acquire(context.Background(), "h", func(politeness.State) (time.Duration, error) {
			calls++
			if calls < 3 {
				return time.Minute, nil
			}
			return 0, nil
		})
		if err != nil || calls != 3 || time.Since(start) != 2*time.Minute {
			t.Fatalf("err %v, %d calls, %v", err, calls, time.Since(start))
		}
		l.Release(politeness.State{})
	})
}

// TestMemoryGate_CancelAsGranted: a waiter whose context ends just as the
// lease reaches it passes the lease on: the host is never left held by a
// caller that gave up. (Both arrive before the waiter runs; its select
// takes either, so the case is tried many times.)
func TestMemoryGate_CancelAsGranted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		proceed := func(politeness.State) (time.Duration, error) { return 0, nil }
		for i := range 64 {
			g := politeness.NewMemoryGate()
			first, _ := g.Acquire(context.Background(), "h", proceed)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				l, err := g.Acquire(ctx, "h", proceed)
				if l != nil {
					l.Release(politeness.State{})
				}
				done <- err
			}()
			synctest.Wait() // queued
			cancel()
			first.Release(politeness.State{}) // granted before the waiter runs
			<-done
			ctx2, cancel2 := context.WithTimeout(context.Background(), time.Hour)
			l, err := g.Acquire(ctx2, "h", proceed)
			cancel2()
			if err != nil {
				t.Fatalf("try %d: the host stayed held after its waiter gave up as it was granted: %v", i, err)
			}
			l.Release(politeness.State{})
		}
	})
}
