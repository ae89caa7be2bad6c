// Package gatetest checks that a [politeness.Gate] implementation keeps the
// Gate contract, in the manner of testing/fstest: a gate package calls [Run]
// from one of its tests.
//
//	func TestConformance(t *testing.T) {
//		gatetest.Run(t, func(t *testing.T) politeness.Gate { return newTestGate(t) })
//	}
//
// The checks use real time with short waits (tens of milliseconds), since a
// gate may sit behind a network connection; each subtest uses host keys of its
// own, so a shared backing store is fine. A gate that also implements
// [Queuer] lets the FIFO check see each waiter join the queue instead of
// allowing it a moment to, which keeps that check exact on a busy machine.
package gatetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// Run runs the conformance tests as subtests of t. newGate returns the gate
// under test; it is called once per subtest.
func Run(t *testing.T, newGate func(t *testing.T) politeness.Gate) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*testing.T, politeness.Gate, func(string) string)
	}{
		{"ZeroStateForNewHost", testZeroState},
		{"StateRoundTrip", testRoundTrip},
		{"MutualExclusion", testMutualExclusion},
		{"HostsIndependent", testHostsIndependent},
		{"ReadyError", testReadyError},
		{"ReadyWaitRereads", testReadyWait},
		{"CanceledBeforeAcquire", testCanceledBefore},
		{"CancelWhileQueued", testCancelQueued},
		{"CancelWhileReadyWaits", testCancelReadyWait},
		{"CancelAnywhereInQueue", testCancelInQueue},
		{"FIFO", testFIFO},
		{"DoubleRelease", testDoubleRelease},
	}
	run := rand.Uint64()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGate(t)
			host := func(s string) string {
				return fmt.Sprintf("https://gatetest-%x-%s-%s.example:443", run, tc.name, s)
			}
			tc.fn(t, g, host)
		})
	}
}

// Queuer is an optional capability of a gate under test:
// [politeness.MemoryGate] has it. Waiting returns the number of callers
// queued for host's lease, not counting its holder.
type Queuer interface {
	Waiting(host string) int
}

// waitQueued returns once n callers are queued for host. Without [Queuer] it
// can only allow the last one a moment to get there.
func waitQueued(t *testing.T, g politeness.Gate, host string, n int) {
	t.Helper()
	q, ok := g.(Queuer)
	if !ok {
		time.Sleep(20 * time.Millisecond)
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for q.Waiting(host) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d callers queued for %s after 10s, want %d", q.Waiting(host), host, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func proceed(politeness.State) (time.Duration, error) { return 0, nil }

// acquire acquires host with ready = proceed and fails the test on error.
func acquire(t *testing.T, g politeness.Gate, host string) politeness.Lease {
	t.Helper()
	l := tryAcquire(t, g, host)
	if l == nil {
		t.FailNow()
	}
	return l
}

// tryAcquire is acquire for other goroutines than the test's: it reports a
// failure with t.Errorf and returns nil.
func tryAcquire(t *testing.T, g politeness.Gate, host string) politeness.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := g.Acquire(ctx, host, proceed)
	if err == nil && l == nil {
		err = errors.New("nil lease and nil error")
	}
	if err != nil {
		t.Errorf("Acquire(%s): %v", host, err)
		return nil
	}
	return l
}

func release(t *testing.T, l politeness.Lease, s politeness.State) {
	t.Helper()
	if err := l.Release(s); err != nil {
		t.Errorf("Release: %v", err)
	}
}

// sameState compares States field by field, times by instant (a gate may
// drop locations and monotonic readings, and keep only nanoseconds). It walks
// every field, so a field a gate forgets to store fails the round trip.
func sameState(a, b politeness.State) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		fa, fb := va.Field(i).Interface(), vb.Field(i).Interface()
		if ta, ok := fa.(time.Time); ok {
			if !ta.Equal(fb.(time.Time)) {
				return false
			}
		} else if fa != fb {
			return false
		}
	}
	return true
}

func testZeroState(t *testing.T, g politeness.Gate, host func(string) string) {
	l := acquire(t, g, host("a"))
	if s := l.State(); !s.IsZero() {
		t.Errorf("new host State = %+v, want zero", s)
	}
	release(t, l, politeness.State{})
}

func testRoundTrip(t *testing.T, g politeness.Gate, host func(string) string) {
	now := time.Now().Round(0)
	want := politeness.State{
		NotBefore:   now.Add(1500 * time.Millisecond),
		PauseUntil:  now.Add(time.Second),
		Strikes:     2,
		Slow:        3,
		Successes:   4,
		Failures:    5,
		DownUntil:   now.Add(2 * time.Second).UTC(),
		GaveUpUntil: now.Add(3 * time.Second),
		Expires:     now.Add(time.Hour),
		QuotaGap:    1234 * time.Millisecond,
		QuotaUntil:  now.Add(4 * time.Second),
	}
	l := acquire(t, g, host("a"))
	release(t, l, want)
	var seen politeness.State
	l, err := g.Acquire(context.Background(), host("a"), func(s politeness.State) (time.Duration, error) {
		seen = s
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sameState(seen, want) {
		t.Errorf("ready saw %+v, want %+v", seen, want)
	}
	if !sameState(l.State(), want) {
		t.Errorf("Lease.State() = %+v, want %+v", l.State(), want)
	}
	release(t, l, politeness.State{Strikes: 1, Expires: now.Add(time.Hour)})
	l = acquire(t, g, host("a"))
	if s := l.State(); s.Strikes != 1 || !s.NotBefore.IsZero() {
		t.Errorf("after second release State = %+v, want only Strikes 1", s)
	}
	release(t, l, politeness.State{})
}

func testMutualExclusion(t *testing.T, g politeness.Gate, host func(string) string) {
	const workers, rounds = 8, 10
	var inUse, maxInUse, total atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				l := tryAcquire(t, g, host("a"))
				if l == nil {
					return
				}
				n := inUse.Add(1)
				if n > maxInUse.Load() {
					maxInUse.Store(n)
				}
				st := l.State()
				st.Successes++ // a read-modify-write that must not be lost
				time.Sleep(time.Millisecond)
				inUse.Add(-1)
				total.Add(1)
				release(t, l, st)
			}
		})
	}
	wg.Wait()
	if m := maxInUse.Load(); m != 1 {
		t.Errorf("%d leases held at once on one host, want 1", m)
	}
	l := acquire(t, g, host("a"))
	if got := l.State().Successes; got != workers*rounds {
		t.Errorf("counter = %d after %d serialised increments: updates lost", got, workers*rounds)
	}
	release(t, l, politeness.State{})
}

func testHostsIndependent(t *testing.T, g politeness.Gate, host func(string) string) {
	la := acquire(t, g, host("a"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // generous: a busy machine
	defer cancel()
	lb, err := g.Acquire(ctx, host("b"), proceed)
	if err != nil {
		t.Fatalf("host b blocked while host a is held: %v", err)
	}
	release(t, lb, politeness.State{})
	release(t, la, politeness.State{})
}

func testReadyError(t *testing.T, g politeness.Gate, host func(string) string) {
	seed := politeness.State{Strikes: 7, Expires: time.Now().Add(time.Hour)}
	release(t, acquire(t, g, host("a")), seed)
	boom := errors.New("boom")
	l, err := g.Acquire(context.Background(), host("a"), func(politeness.State) (time.Duration, error) {
		return 0, boom
	})
	if !errors.Is(err, boom) || l != nil {
		t.Fatalf("Acquire with failing ready = %v, %v; want nil, boom", l, err)
	}
	l = acquire(t, g, host("a")) // must not block: the lease was released
	if l.State().Strikes != 7 {
		t.Errorf("State after refused Acquire = %+v, want unchanged", l.State())
	}
	release(t, l, politeness.State{})
}

func testReadyWait(t *testing.T, g politeness.Gate, host func(string) string) {
	const d = 30 * time.Millisecond
	release(t, acquire(t, g, host("a")), politeness.State{Strikes: 1, Expires: time.Now().Add(time.Hour)})
	var calls []time.Time
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := g.Acquire(ctx, host("a"), func(s politeness.State) (time.Duration, error) {
		calls = append(calls, time.Now())
		if s.Strikes != 1 {
			t.Errorf("ready call %d saw %+v, want Strikes 1", len(calls), s)
		}
		if len(calls) == 1 {
			return d, nil
		}
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 {
		t.Fatalf("ready called %d times, want 2", len(calls))
	}
	if gap := calls[1].Sub(start); gap < d {
		t.Errorf("ready called again after %v, want >= %v", gap, d)
	}
	release(t, l, politeness.State{})
}

func testCanceledBefore(t *testing.T, g politeness.Gate, host func(string) string) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l, err := g.Acquire(ctx, host("a"), proceed)
	if !errors.Is(err, context.Canceled) || l != nil {
		t.Fatalf("Acquire(canceled) = %v, %v; want nil, context.Canceled", l, err)
	}
	release(t, acquire(t, g, host("a")), politeness.State{})
}

func testCancelQueued(t *testing.T, g politeness.Gate, host func(string) string) {
	held := acquire(t, g, host("a"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		l, err := g.Acquire(ctx, host("a"), proceed)
		if l != nil {
			_ = l.Release(politeness.State{})
		}
		done <- err
	}()
	waitQueued(t, g, host("a"), 1) // the check is the return below
	cancel()
	waitCanceled(t, done, "queued Acquire")
	release(t, held, politeness.State{})
	release(t, acquire(t, g, host("a")), politeness.State{}) // queue not stuck
}

// waitCanceled checks that an Acquire whose context was canceled returns
// context.Canceled. The bound is generous (a busy machine running the race
// detector); how promptly a gate returns is the Transport's fake-time tests'
// business.
func waitCanceled(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s = %v, want context.Canceled", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return within 10s of its context's cancel", what)
	}
}

// testCancelInQueue: waiters that leave the queue (the last one, then one
// in the middle) leave the others in their order, and a caller that joins
// after them is served after the others, not lost behind a waiter gone.
func testCancelInQueue(t *testing.T, g politeness.Gate, host func(string) string) {
	held := acquire(t, g, host("a"))
	order := make(chan int, 5)
	var wg sync.WaitGroup
	join := func(i int, ctx context.Context) <-chan error {
		done := make(chan error, 1)
		wg.Go(func() {
			l, err := g.Acquire(ctx, host("a"), proceed)
			if err == nil {
				order <- i
				release(t, l, politeness.State{})
			}
			done <- err
		})
		return done
	}
	var cancels [4]context.CancelFunc
	var dones [4]<-chan error
	for i := range 4 {
		var ctx context.Context
		ctx, cancels[i] = context.WithCancel(context.Background())
		dones[i] = join(i, ctx)
		waitQueued(t, g, host("a"), i+1)
	}
	for _, i := range []int{3, 1} {
		cancels[i]()
		waitCanceled(t, dones[i], fmt.Sprintf("queued Acquire %d", i))
	}
	join(4, context.Background())
	waitQueued(t, g, host("a"), 3)
	release(t, held, politeness.State{})
	wg.Wait()
	close(order)
	var got []int
	for i := range order {
		got = append(got, i)
	}
	if fmt.Sprint(got) != "[0 2 4]" {
		t.Errorf("served %v, want [0 2 4]", got)
	}
	for _, c := range cancels {
		c()
	}
}

func testCancelReadyWait(t *testing.T, g politeness.Gate, host func(string) string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var called atomic.Bool
	go func() {
		_, err := g.Acquire(ctx, host("a"), func(politeness.State) (time.Duration, error) {
			called.Store(true)
			return time.Hour, nil
		})
		done <- err
	}()
	for !called.Load() {
		time.Sleep(time.Millisecond)
	}
	cancel()
	waitCanceled(t, done, "Acquire canceled during ready's wait")
	release(t, acquire(t, g, host("a")), politeness.State{}) // lease was freed
}

func testFIFO(t *testing.T, g politeness.Gate, host func(string) string) {
	const n = 5
	held := acquire(t, g, host("a"))
	order := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		started := make(chan struct{})
		wg.Go(func() {
			close(started)
			l := tryAcquire(t, g, host("a"))
			if l == nil {
				return
			}
			order <- i
			release(t, l, politeness.State{})
		})
		<-started
		waitQueued(t, g, host("a"), i+1) // it reached the queue: arrival order
	}
	release(t, held, politeness.State{})
	wg.Wait()
	close(order)
	want := 0
	for got := range order {
		if got != want {
			t.Errorf("waiter %d served in place %d: not FIFO", got, want)
		}
		want++
	}
}

func testDoubleRelease(t *testing.T, g politeness.Gate, host func(string) string) {
	l := acquire(t, g, host("a"))
	release(t, l, politeness.State{Strikes: 1, Expires: time.Now().Add(time.Hour)})
	l2 := acquire(t, g, host("a"))
	if err := l.Release(politeness.State{Strikes: 9}); !errors.Is(err, politeness.ErrLeaseReleased) {
		t.Errorf("second Release = %v, want ErrLeaseReleased", err)
	}
	if s := l2.State(); s.Strikes != 1 {
		t.Errorf("State = %+v after a stale Release, want Strikes 1", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if l3, err := g.Acquire(ctx, host("a"), proceed); err == nil {
		_ = l3.Release(politeness.State{})
		t.Error("a stale Release freed the host while another lease held it")
	}
	release(t, l2, politeness.State{})
}
