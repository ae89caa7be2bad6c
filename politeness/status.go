package politeness

import (
	"cmp"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// HostStatus is what a [Transport] knows about one host at one instant: the
// requests it holds for the host, the last answer, and the host's pacing
// [State]. It is plain data, a copy owned by the caller.
//
// The zero HostStatus is a host with nothing queued, nothing in flight, no
// answer yet and the zero State.
type HostStatus struct {
	// Host is the host key (see [HostKey]).
	Host string `json:"host"`
	// Queued counts this Transport's requests that wait for the host's
	// turn: queued behind another request, or holding the turn while the
	// gap or a pause runs out.
	Queued int `json:"queued"`
	// InFlight is the URL (password redacted) of the request that holds
	// the host's turn and has been sent, from the moment it leaves until
	// its response body is closed; "" when none.
	InFlight string `json:"in_flight,omitempty"`
	// InFlightSince is when InFlight was sent (zero when none).
	InFlightSince time.Time `json:"in_flight_since,omitzero"`
	// LastStatus is the HTTP status of the host's last answer; 0 when
	// there was none yet or the last request failed without one.
	LastStatus int `json:"last_status,omitempty"`
	// LastAt is when the last request ended (answer read or failure).
	LastAt time.Time `json:"last_at,omitzero"`
	// PauseKind, PauseReason, PauseStatus and PauseUntil describe the
	// host's latest pause, give-up or breaker trip as reported by the
	// [Event] of that kind ([EventPause], [EventGiveUp],
	// [EventBreakerTrip]; reason "retry-after", "ratelimit", "backoff" or
	// "connection errors"; status the HTTP status that caused it). They are
	// kept after the pause ends: compare PauseUntil with the time, or use
	// [HostStatus.Paused].
	PauseKind   EventKind `json:"-"`
	PauseReason string    `json:"pause_reason,omitempty"`
	PauseStatus int       `json:"pause_status,omitempty"`
	PauseUntil  time.Time `json:"pause_until,omitzero"`
	// State is the host's pacing state (slow-down level, breaker failures,
	// pause ends). With a [MemoryGate] it is the gate's current State; with
	// another gate it is the State this Transport last read or stored,
	// which other processes sharing the gate may since have changed.
	State State `json:"state"`
}

// Paused reports whether the host is paused, given up on or held down by the
// breaker at now, and if so the reason ("retry-after", "ratelimit",
// "backoff", "give-up" for a give-up, "connection errors" for the breaker)
// and when requests may go again. A pause whose reason the Transport did not
// see itself (set by another process sharing the gate) has reason "pause".
func (h HostStatus) Paused(now time.Time) (reason string, until time.Time, ok bool) {
	st := h.State
	switch {
	case st.GaveUpUntil.After(now):
		return "give-up", st.GaveUpUntil, true
	case st.DownUntil.After(now):
		return "connection errors", st.DownUntil, true
	case st.PauseUntil.After(now):
		reason = "pause"
		if h.PauseKind == EventPause && h.PauseUntil.Equal(st.PauseUntil) {
			reason = h.PauseReason
		}
		return reason, st.PauseUntil, true
	}
	return "", time.Time{}, false
}

// Breaker returns the breaker's state at now: "open" while the host is held
// down after connection errors, "closed" otherwise.
func (h HostStatus) Breaker(now time.Time) string {
	if h.State.DownUntil.After(now) {
		return "open"
	}
	return "closed"
}

// tracker is the Transport's own view of its hosts, for [Transport.Hosts].
// Its lock guards the map only; each host has its own lock, so requests to
// different hosts do not contend beyond one map lookup.
type tracker struct {
	mu    sync.Mutex // guards hosts; taken before a hostTrack's
	hosts map[string]*hostTrack
	ops   atomic.Int32 // request ends since the last sweep
}

type hostTrack struct {
	mu          sync.Mutex
	gone        bool // forgotten by a sweep (a hostRef holding it looks again)
	queued      int
	inFlight    *url.URL // the request's own URL, redacted only when shown
	since       time.Time
	lastStatus  int
	lastAt      time.Time
	pauseKind   EventKind
	pauseReason string
	pauseStatus int
	pauseUntil  time.Time
	st          State // last State read or stored by this Transport
}

// trackerSweepEvery is how many request ends pass between two sweeps of idle
// hosts.
const trackerSweepEvery = 1024

// queue counts one request waiting for host and returns its track. ref is
// the Transport's handle on host: the track it last found is used while the
// tracker still has it.
func (tr *tracker) queue(host string, ref *hostRef) *hostTrack {
	if h := ref.track.Load(); h != nil {
		h.mu.Lock()
		if !h.gone {
			h.queued++
			h.mu.Unlock()
			return h
		}
		h.mu.Unlock()
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.hosts == nil {
		tr.hosts = make(map[string]*hostTrack)
	}
	h := tr.hosts[host]
	if h == nil {
		h = new(hostTrack)
		tr.hosts[host] = h
	}
	h.mu.Lock()
	h.queued++
	h.mu.Unlock()
	ref.track.Store(h)
	return h
}

// unqueue ends a wait that did not lead to a request.
func (tr *tracker) unqueue(h *hostTrack) {
	h.mu.Lock()
	h.queued--
	h.mu.Unlock()
}

// send moves one request of h from the queue to the wire.
func (tr *tracker) send(h *hostTrack, u *url.URL, st State, now time.Time) {
	h.mu.Lock()
	h.queued--
	h.inFlight, h.since, h.st = u, now, st
	h.mu.Unlock()
}

// done ends h's request at now with status (0: no answer) and the State
// stored for the host; idle is the Policy's idle time, after which an idle
// host is forgotten by a sweep (one per trackerSweepEvery request ends).
func (tr *tracker) done(h *hostTrack, status int, st State, now time.Time, idle time.Duration) {
	h.mu.Lock()
	h.inFlight, h.since = nil, time.Time{}
	h.lastStatus, h.lastAt, h.st = status, now, st
	h.mu.Unlock()
	if tr.ops.Add(1) < trackerSweepEvery {
		return
	}
	tr.ops.Store(0)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for k, e := range tr.hosts {
		e.mu.Lock()
		forget := e.queued == 0 && e.inFlight == nil && now.Sub(e.lastAt) > idle && !e.st.Expires.After(now)
		e.gone = forget
		e.mu.Unlock()
		if forget {
			delete(tr.hosts, k)
		}
	}
}

// paused records a pause, give-up or breaker trip of host.
func (tr *tracker) paused(host string, ev Event) {
	tr.mu.Lock()
	h := tr.hosts[host]
	tr.mu.Unlock()
	if h != nil {
		h.mu.Lock()
		h.pauseKind, h.pauseReason, h.pauseStatus, h.pauseUntil = ev.Kind, ev.Reason, ev.Status, ev.Until
		h.mu.Unlock()
	}
}

// Hosts returns a snapshot of every host the Transport knows: those with
// requests queued or in flight, those it sent requests to lately, and, with a
// [MemoryGate], every host the gate remembers. Hosts are sorted by key.
//
// Consistency: each host's fields are read together under its lock, but
// hosts change while the snapshot is taken and right after; a shared gate's
// State is as this process last saw it. Cost: one pass over the hosts, O(hosts)
// time and allocation, holding the Transport's host map (and the MemoryGate's)
// lock, so new requests wait meanwhile: call it for a status page or a metric
// scrape (every few seconds), not per request (BenchmarkHosts: about 17 ms
// and 5.7 MB for 10,000 hosts on a busy 2-core machine). The bookkeeping behind it costs
// each request one map lookup and three short per-host locks, without an
// allocation (about 0.2 µs in BenchmarkOverhead). The Transport remembers an
// idle host until its State expires (the Policy's idle time after its last
// pause), then forgets it on a later request.
//
// It is safe for concurrent use, also with RoundTrip.
func (t *Transport) Hosts() []HostStatus {
	t.init()
	t.track.mu.Lock()
	out := make([]HostStatus, 0, len(t.track.hosts))
	for k, h := range t.track.hosts {
		h.mu.Lock()
		hs := HostStatus{
			Host: k, Queued: h.queued, InFlightSince: h.since,
			LastStatus: h.lastStatus, LastAt: h.lastAt,
			PauseKind: h.pauseKind, PauseReason: h.pauseReason, PauseStatus: h.pauseStatus, PauseUntil: h.pauseUntil,
			State: h.st,
		}
		u := h.inFlight
		h.mu.Unlock()
		if u != nil {
			hs.InFlight = u.Redacted()
		}
		out = append(out, hs)
	}
	t.track.mu.Unlock()
	if mg, ok := t.gate.(*MemoryGate); ok {
		states := mg.states()
		for i := range out {
			if st, ok := states[out[i].Host]; ok {
				out[i].State = st
				delete(states, out[i].Host)
			}
		}
		for k, st := range states {
			out = append(out, HostStatus{Host: k, State: st})
		}
	}
	slices.SortFunc(out, func(a, b HostStatus) int { return cmp.Compare(a.Host, b.Host) })
	return out
}

// states returns a copy of every host's State.
func (g *MemoryGate) states() map[string]State {
	g.mu.Lock()
	defer g.mu.Unlock()
	m := make(map[string]State, len(g.hosts))
	for k, e := range g.hosts {
		m[k] = e.st.unpack()
	}
	return m
}

// NextTurn returns the instant before which no request to u's host may
// start, as this Transport last read or stored the host's [State]
// (NotBefore: the gap after the last answer, Crawl-delay and slow-down
// included, or the end of a pause). It is the zero time for a host this
// Transport does not track (never asked, or forgotten after its idle
// time). With a shared gate other processes may have moved it since. A
// caller that waits until then before its request holds nothing while the
// host's gap runs. It costs one map lookup and is safe for concurrent use.
func (t *Transport) NextTurn(u *url.URL) time.Time {
	key := t.hostKey(u)
	t.track.mu.Lock()
	h := t.track.hosts[key]
	t.track.mu.Unlock()
	if h == nil {
		return time.Time{}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.st.NotBefore
}
