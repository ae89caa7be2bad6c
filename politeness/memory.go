package politeness

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/goodbot-go/goodbot/internal/sleep"
)

// MemoryGate is the in-process [Gate], the default of [Transport]. Waiters for
// a host are served strictly in arrival order; a waiter whose context ends
// leaves the queue at once. No goroutine is started: each waiter blocks in its
// own call.
//
// Memory stays bounded: a State that is zero is dropped at release, and a State
// whose Expires has passed is forgotten by a lazy sweep (at most once per
// SweepEvery, triggered by Acquire) or by [MemoryGate.Sweep]. A tracked host
// costs about 200 bytes.
//
// The zero value is ready to use; a MemoryGate must not be copied after first
// use. It is safe for concurrent use.
type MemoryGate struct {
	// SweepEvery is the least time between two lazy sweeps of expired hosts.
	// Zero means one minute; negative disables lazy sweeps (call Sweep).
	SweepEvery time.Duration

	mu        sync.Mutex           // guards hosts, peak, ops, nextSweep and every entry
	hosts     map[string]*memEntry // by host key
	peak      int                  // most hosts since the map was made
	ops       int                  // Acquire calls since the last sweep check
	nextSweep int64                // unix nanos; earliest next lazy sweep
}

// NewMemoryGate returns an empty MemoryGate (the same as new(MemoryGate)).
func NewMemoryGate() *MemoryGate { return new(MemoryGate) }

// memEntry is one host: its compact State, whether a lease is out, and the
// FIFO of waiters.
type memEntry struct {
	st         packedState
	held       bool
	gone       bool // dropped from MemoryGate.hosts (a hostRef holding it looks again)
	head, tail *memWaiter
}

type memWaiter struct {
	next    *memWaiter
	ch      chan struct{} // buffered 1; signalled when granted
	granted bool          // guarded by MemoryGate.mu
}

// packedState is State in 64 bytes: times as unix nanoseconds (0 = zero
// time, clamped to the int64 range), counters as int32.
type packedState struct {
	notBefore, pauseUntil, downUntil, gaveUpUntil, expires int64
	quotaGap, quotaUntil                                   int64
	strikes, slow, successes, failures                     int32
}

// Bounds of the instants that fit int64 nanoseconds, in Unix seconds.
const (
	minPackSec = math.MinInt64/int64(time.Second) + 1
	maxPackSec = math.MaxInt64/int64(time.Second) - 1
)

func packTime(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	switch sec := t.Unix(); {
	case sec > maxPackSec:
		return math.MaxInt64
	case sec < minPackSec:
		return math.MinInt64
	}
	if n := t.UnixNano(); n != 0 {
		return n
	}
	return 1 // keep "set" distinct from "zero"
}

func unpackTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func packInt(n int) int32 { return int32(max(math.MinInt32, min(n, math.MaxInt32))) }

func pack(s State) packedState {
	return packedState{
		notBefore:   packTime(s.NotBefore),
		pauseUntil:  packTime(s.PauseUntil),
		downUntil:   packTime(s.DownUntil),
		gaveUpUntil: packTime(s.GaveUpUntil),
		expires:     packTime(s.Expires),
		quotaGap:    int64(s.QuotaGap),
		quotaUntil:  packTime(s.QuotaUntil),
		strikes:     packInt(s.Strikes),
		slow:        packInt(s.Slow),
		successes:   packInt(s.Successes),
		failures:    packInt(s.Failures),
	}
}

func (p packedState) unpack() State {
	return State{
		NotBefore:   unpackTime(p.notBefore),
		PauseUntil:  unpackTime(p.pauseUntil),
		DownUntil:   unpackTime(p.downUntil),
		GaveUpUntil: unpackTime(p.gaveUpUntil),
		Expires:     unpackTime(p.expires),
		QuotaGap:    time.Duration(p.quotaGap),
		QuotaUntil:  unpackTime(p.quotaUntil),
		Strikes:     int(p.strikes),
		Slow:        int(p.slow),
		Successes:   int(p.successes),
		Failures:    int(p.failures),
	}
}

const sweepCheckEvery = 256 // Acquire calls between two looks at the clock

// Acquire implements [Gate]. While ready asks to wait, the lease stays held,
// so the waiters behind keep their order.
func (g *MemoryGate) Acquire(ctx context.Context, host string, ready func(State) (time.Duration, error)) (Lease, error) {
	l := new(memLease)
	if err := g.acquire(ctx, host, nil, ready, l); err != nil {
		return nil, err
	}
	return l, nil
}

// acquire is Acquire filling in a lease the caller allocated (the Transport
// embeds it in its response body wrapper to save an allocation); ref, when
// not nil, is the Transport's handle on host (see entryLocked).
func (g *MemoryGate) acquire(ctx context.Context, host string, ref *hostRef, ready func(State) (time.Duration, error), l *memLease) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.mu.Lock()
	g.maybeSweepLocked()
	e := g.entryLocked(host, ref)
	if e == nil {
		if g.hosts == nil {
			g.hosts = make(map[string]*memEntry)
		}
		e = new(memEntry)
		g.hosts[host] = e
		g.peak = max(g.peak, len(g.hosts))
		if ref != nil {
			ref.entry = e
		}
	}
	var packed packedState
	if !e.held && e.head == nil {
		e.held = true
		packed = e.st
		g.mu.Unlock()
	} else {
		if err := g.waitTurnLocked(ctx, host, e); err != nil {
			return err
		}
		g.mu.Lock()
		packed = e.st
		g.mu.Unlock()
	}
	// While this caller holds the lease nobody else writes e.st, so the
	// State read once stays current through ready's waits.
	st := packed.unpack()
	for {
		d, err := ready(st)
		if err != nil {
			g.releaseLocking(e, host, packed)
			return err
		}
		if d <= 0 {
			*l = memLease{g: g, host: host, e: e, st: packed}
			return nil
		}
		if err := sleep.For(ctx, d); err != nil {
			g.releaseLocking(e, host, packed)
			return err
		}
	}
}

// waitTurnLocked queues the caller behind e's holder and waits for the lease
// to be handed over. It is called with g.mu held and returns with it released.
func (g *MemoryGate) waitTurnLocked(ctx context.Context, host string, e *memEntry) error {
	w := &memWaiter{ch: make(chan struct{}, 1)}
	if e.tail == nil {
		e.head = w
	} else {
		e.tail.next = w
	}
	e.tail = w
	g.mu.Unlock()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	if w.granted {
		// The lease arrived as ctx ended: pass it on untouched.
		g.releaseLocked(host, e, e.st)
		g.mu.Unlock()
		return ctx.Err()
	}
	var prev *memWaiter
	for p := e.head; p != nil; prev, p = p, p.next {
		if p == w {
			if prev == nil {
				e.head = w.next
			} else {
				prev.next = w.next
			}
			if e.tail == w {
				e.tail = prev
			}
			break
		}
	}
	g.dropIfIdleLocked(host, e)
	g.mu.Unlock()
	return ctx.Err()
}

func (g *MemoryGate) releaseLocking(e *memEntry, host string, st packedState) {
	g.mu.Lock()
	g.releaseLocked(host, e, st)
	g.mu.Unlock()
}

// releaseLocked stores st and hands the lease to the first waiter, if any.
func (g *MemoryGate) releaseLocked(host string, e *memEntry, st packedState) {
	e.st = st
	if w := e.head; w != nil {
		e.head = w.next
		if e.head == nil {
			e.tail = nil
		}
		w.granted = true
		w.ch <- struct{}{}
		return
	}
	e.held = false
	g.dropIfIdleLocked(host, e)
}

// entryLocked returns host's entry, nil if the gate has none: the one ref
// (the Transport's handle on host; nil for none) last found, while it is
// still in the map, else the map's, which ref then keeps. g.mu must be
// held.
func (g *MemoryGate) entryLocked(host string, ref *hostRef) *memEntry {
	if ref == nil {
		return g.hosts[host]
	}
	if e := ref.entry; e != nil && !e.gone {
		return e
	}
	e := g.hosts[host]
	ref.entry = e
	return e
}

// dropIfIdleLocked forgets e when nobody holds or waits for it and its State
// is zero (a zero State reads the same as a missing one).
func (g *MemoryGate) dropIfIdleLocked(host string, e *memEntry) {
	if !e.held && e.head == nil && e.st == (packedState{}) && g.hosts[host] == e {
		delete(g.hosts, host)
		e.gone = true
	}
}

func (g *MemoryGate) maybeSweepLocked() {
	g.ops++
	if g.ops < sweepCheckEvery || g.SweepEvery < 0 {
		return
	}
	g.ops = 0
	now := time.Now().UnixNano()
	if now < g.nextSweep {
		return
	}
	every := g.SweepEvery
	if every == 0 {
		every = time.Minute
	}
	g.nextSweep = now + int64(every)
	g.sweepLocked(now)
}

// Sweep forgets now every host that nobody holds or waits for and whose
// State has expired.
func (g *MemoryGate) Sweep() {
	g.mu.Lock()
	g.sweepLocked(time.Now().UnixNano())
	g.mu.Unlock()
}

func (g *MemoryGate) sweepLocked(now int64) {
	for k, e := range g.hosts {
		if !e.held && e.head == nil && e.st.expires != 0 && e.st.expires < now {
			delete(g.hosts, k)
			e.gone = true
		}
	}
	// Maps do not shrink: after a large drop, move the rest to a new one so
	// the memory of forgotten hosts is returned.
	if n := len(g.hosts); g.peak >= 1024 && n < g.peak/4 {
		m := make(map[string]*memEntry, n)
		for k, e := range g.hosts {
			m[k] = e
		}
		g.hosts, g.peak = m, n
	}
}

// peek returns host's State without waiting for its turn, and whether a
// lease on it is out or wanted (busy); found is false for a host the gate
// does not remember. ref is as for entryLocked.
func (g *MemoryGate) peek(host string, ref *hostRef) (st State, busy, found bool) {
	g.mu.Lock()
	e := g.entryLocked(host, ref)
	if e == nil {
		g.mu.Unlock()
		return State{}, false, false
	}
	p, busy := e.st, e.held || e.head != nil
	g.mu.Unlock()
	return p.unpack(), busy, true
}

// Len returns the number of hosts the gate currently remembers.
func (g *MemoryGate) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.hosts)
}

// Waiting returns the number of callers queued for host's lease, not counting
// the one that holds it. The answer may be stale as soon as it is returned; it
// is for tests (see [gatetest.Queuer]) and status pages.
//
// [gatetest.Queuer]: https://pkg.go.dev/github.com/goodbot-go/goodbot/politeness/gatetest#Queuer
func (g *MemoryGate) Waiting(host string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	if e := g.hosts[host]; e != nil {
		for w := e.head; w != nil; w = w.next {
			n++
		}
	}
	return n
}

type memLease struct {
	g    *MemoryGate
	host string
	e    *memEntry
	st   packedState
	done bool // guarded by g.mu
}

func (l *memLease) State() State { return l.st.unpack() }

func (l *memLease) Release(next State) error {
	l.g.mu.Lock()
	defer l.g.mu.Unlock()
	if l.done {
		return fmt.Errorf("%w (host %s)", ErrLeaseReleased, l.host)
	}
	l.done = true
	l.g.releaseLocked(l.host, l.e, pack(next))
	return nil
}
