package politeness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goodbot-go/goodbot/internal/sleep"
)

// Transport is an [http.RoundTripper] that paces requests per host: one
// request in flight per host, a gap between requests, pauses on rate-limit
// answers and a breaker for hosts that stop answering. See [Policy] for the
// rules and their defaults.
//
// A host's turn lasts from the start of its request until the response body is
// closed or read to EOF (or the request fails): callers must close response
// bodies, as net/http requires anyway, or the host stays busy.
//
// The zero value is ready to use, with polite defaults and an in-memory gate.
// A Transport is safe for concurrent use; its fields must not change after
// first use.
type Transport struct {
	// Base sends the requests. Nil means [http.DefaultTransport].
	Base http.RoundTripper
	// Policy is the pacing policy; the zero value is polite.
	Policy Policy
	// Gate stores per-host state and serialises hosts. Nil means a
	// [MemoryGate] private to this Transport.
	Gate Gate
	// CrawlDelay, when set, returns the Crawl-delay that applies to u's host
	// (typically from its robots.txt). It is called after each response to
	// compute the host's next gap, and must not block on I/O.
	CrawlDelay func(u *url.URL) (time.Duration, bool)
	// CrawlDelayFor, when set, is called instead of CrawlDelay, with the
	// request whose turn ends (as RoundTrip got it): for a caller that
	// knows the host's Crawl-delay from the request itself, its context
	// for instance. The same rules apply: called after each response (or
	// failure), it must not block on I/O.
	CrawlDelayFor func(req *http.Request) (time.Duration, bool)
	// Logger, when set, receives pauses, give-ups and breaker trips at Info
	// or Warn level and waits at Debug level. Nil means silent.
	Logger *slog.Logger
	// Observe, when set, is called for each [Event], possibly from several
	// goroutines at once. It must be quick and must not call back into the
	// Transport.
	Observe func(Event)

	initOnce sync.Once
	gate     Gate
	readyers sync.Pool // of *readyer

	mu  sync.Mutex // guards rng
	rng *rand.Rand

	keysMu sync.RWMutex         // guards keys
	keys   map[rawHost]*hostRef // interned host keys; cleared when large

	track tracker // what Hosts reports
}

type rawHost struct{ scheme, host string }

const maxInternedKeys = 4096

// EventKind is the kind of an [Event].
//
// The zero value is no kind (String ""); it is never reported.
type EventKind int

const (
	// EventWait: a request waits for its host (Duration: the wait).
	EventWait EventKind = iota + 1
	// EventPause: a rate-limit answer paused the host until Until.
	EventPause
	// EventGiveUp: the Transport gave up on the host until Until.
	EventGiveUp
	// EventBreakerTrip: the host stopped answering and is down until Until.
	EventBreakerTrip
	// EventRefused: a request failed fast (Err says why).
	EventRefused
)

var eventNames = [...]string{"", "wait", "pause", "give_up", "breaker_trip", "refused"}

// String returns "wait", "pause", "give_up", "breaker_trip" or "refused".
func (k EventKind) String() string {
	if k < 0 || int(k) >= len(eventNames) {
		return "event(" + fmt.Sprint(int(k)) + ")"
	}
	return eventNames[k]
}

// Event reports a decision of the Transport about a host.
//
// It is plain data, passed by value to [Transport.Observe]; the zero Event
// is never reported.
type Event struct {
	Kind     EventKind
	Host     string        // host key, see HostKey
	Reason   string        // e.g. "delay", "pause", "retry-after", "ratelimit", "backoff", "connection errors"
	Duration time.Duration // wait or pause length
	Until    time.Time     // end of a pause, give-up or breaker window
	Status   int           // HTTP status that caused a pause or give-up
	Err      error         // for EventRefused and EventBreakerTrip
}

// Errors reported by [Transport.RoundTrip], always inside a [*HostError].
var (
	// ErrRateLimited: the host is paused after a rate-limit answer and the
	// request's deadline ends before the pause does.
	ErrRateLimited = errors.New("politeness: host is rate-limited")
	// ErrGaveUp: the host asked for a longer pause than the policy accepts
	// and the policy is GiveUp.
	ErrGaveUp = errors.New("politeness: gave up on host")
	// ErrHostDown: the host stopped answering (breaker open).
	ErrHostDown = errors.New("politeness: host is down")
)

// HostError is a request refused because of its host's state. Err is
// [ErrRateLimited], [ErrGaveUp] or [ErrHostDown].
//
// It is plain data; the zero HostError (no Err) is never returned and
// matches none of the sentinels.
type HostError struct {
	Host  string    // host key
	Err   error     // the sentinel
	Until time.Time // when the host reopens
}

func (e *HostError) Error() string {
	return fmt.Sprintf("%v: %s until %s", e.Err, e.Host, e.Until.UTC().Format(time.RFC3339))
}

func (e *HostError) Unwrap() error { return e.Err }

func (t *Transport) init() {
	t.initOnce.Do(func() {
		t.gate = t.Gate
		if t.gate == nil {
			t.gate = new(MemoryGate)
		}
		t.readyers.New = func() any {
			r := new(readyer)
			r.fn = r.ready
			return r
		}
	})
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// CloseIdleConnections calls CloseIdleConnections on Base when it has it.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base().(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// hostRef is the Transport's handle on one host: its key (HostKey), with
// the host's tracker record and MemoryGate entry as last found, so that a
// request reaches them without looking them up again while they stay the
// ones in use (the tracker may forget a host, the gate drop its entry; each
// marks what it let go, and the handle then looks the host up anew).
type hostRef struct {
	key   string
	track atomic.Pointer[hostTrack] // nil: not found yet
	entry *memEntry                 // guarded by the gate's MemoryGate.mu; nil: not found yet
}

// hostRef returns u's host handle, interned, so the common case neither
// allocates nor computes HostKey.
func (t *Transport) hostRef(u *url.URL) *hostRef {
	raw := rawHost{u.Scheme, u.Host}
	t.keysMu.RLock()
	ref := t.keys[raw]
	t.keysMu.RUnlock()
	if ref != nil {
		return ref
	}
	ref = &hostRef{key: HostKey(u)}
	t.keysMu.Lock()
	if t.keys == nil || len(t.keys) >= maxInternedKeys {
		t.keys = make(map[rawHost]*hostRef)
	}
	if r := t.keys[raw]; r != nil {
		ref = r // interned meanwhile
	} else {
		t.keys[raw] = ref
	}
	t.keysMu.Unlock()
	return ref
}

// hostKey is HostKey with interning.
func (t *Transport) hostKey(u *url.URL) string { return t.hostRef(u).key }

// readyer carries one request's view into Gate.Acquire without a closure
// allocation per request (pooled per Transport).
type readyer struct {
	t           *Transport
	host        string
	deadline    time.Time
	hasDeadline bool
	fn          func(State) (time.Duration, error)
}

func (r *readyer) ready(s State) (time.Duration, error) {
	now := time.Now()
	if err := r.refusal(s, now); err != nil {
		return 0, err
	}
	d, reason := wait(s, now)
	if d > 0 {
		r.t.emit(Event{Kind: EventWait, Host: r.host, Reason: reason, Duration: d, Until: s.NotBefore})
	}
	return d, nil
}

// wait returns how long a request to a host in State s must wait from now
// before it starts, and why ("delay" or "pause"); 0 when it may start.
func wait(s State, now time.Time) (time.Duration, string) {
	if !s.NotBefore.After(now) {
		return 0, ""
	}
	if s.PauseUntil.After(now) {
		return s.NotBefore.Sub(now), "pause"
	}
	return s.NotBefore.Sub(now), "delay"
}

// refusal returns the error for a request that must not wait for s: the
// host is given up on or down, or paused beyond the request's deadline.
func (r *readyer) refusal(s State, now time.Time) error {
	if until, sentinel := refused(s, now, r.deadline, r.hasDeadline); sentinel != nil {
		return r.t.refuse(r.host, sentinel, until)
	}
	return nil
}

// refused returns the sentinel and reopening time for a request, with the
// given deadline, that must not wait for a host in State s; nil if none.
func refused(s State, now, deadline time.Time, hasDeadline bool) (time.Time, error) {
	switch {
	case s.GaveUpUntil.After(now):
		return s.GaveUpUntil, ErrGaveUp
	case s.DownUntil.After(now):
		return s.DownUntil, ErrHostDown
	case hasDeadline && s.PauseUntil.After(now) && deadline.Before(s.PauseUntil):
		return s.PauseUntil, ErrRateLimited
	}
	return time.Time{}, nil
}

func (t *Transport) refuse(host string, sentinel error, until time.Time) error {
	err := &HostError{Host: host, Err: sentinel, Until: until}
	t.emit(Event{Kind: EventRefused, Host: host, Until: until, Err: err})
	return err
}

func (t *Transport) emit(ev Event) {
	switch ev.Kind {
	case EventPause, EventGiveUp, EventBreakerTrip:
		t.track.paused(ev.Host, ev)
	}
	if t.Observe != nil {
		t.Observe(ev)
	}
	if t.Logger == nil {
		return
	}
	level := slog.LevelInfo
	switch ev.Kind {
	case EventWait, EventRefused:
		level = slog.LevelDebug
	case EventGiveUp, EventBreakerTrip:
		level = slog.LevelWarn
	}
	ctx := context.Background()
	if !t.Logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{slog.String("host", ev.Host), slog.String("reason", ev.Reason)}
	if ev.Duration != 0 {
		attrs = append(attrs, slog.Duration("duration", ev.Duration))
	}
	if !ev.Until.IsZero() {
		attrs = append(attrs, slog.Time("until", ev.Until))
	}
	if ev.Status != 0 {
		attrs = append(attrs, slog.Int("status", ev.Status))
	}
	if ev.Err != nil {
		attrs = append(attrs, slog.Any("err", ev.Err))
	}
	t.Logger.LogAttrs(ctx, level, "politeness: "+ev.Kind.String(), attrs...)
}

// Wait returns when a request to u's host may start as far as the host's
// pacing goes: the gap after its last answer and any rate-limit pause have
// passed (it reports the wait as an [EventWait], as RoundTrip does). It
// takes no turn and keeps no promise by itself: [Transport.RoundTrip] still
// waits for the host's turn and applies every rule, but after Wait it
// usually finds the host ready. A caller that builds its request after Wait
// holds nothing (no request, headers or context values) while it waits, so
// thousands of hosts waiting for their gap cost little memory.
//
// Wait returns at once, with nil, when RoundTrip would not wait for a
// delay: the host is new, busy with another request (RoundTrip queues for
// it), given up on or down, or paused beyond ctx's deadline (RoundTrip
// refuses the request). It returns ctx.Err() when ctx ends first. Only the
// in-memory gate ([MemoryGate], the default) can be looked at without
// taking a host's turn; with any other Gate, Wait returns at once and
// RoundTrip waits as before. It is safe for concurrent use.
func (t *Transport) Wait(ctx context.Context, u *url.URL) error {
	t.init()
	mg, ok := t.gate.(*MemoryGate)
	if !ok || u == nil {
		return ctx.Err()
	}
	ref := t.hostRef(u)
	host := ref.key
	deadline, hasDeadline := ctx.Deadline()
	var h *hostTrack // queued while it sleeps
	defer func() {
		if h != nil {
			t.track.unqueue(h)
		}
	}()
	for {
		st, busy, found := mg.peek(host, ref)
		if !found || busy {
			return ctx.Err()
		}
		now := time.Now()
		if _, err := refused(st, now, deadline, hasDeadline); err != nil {
			return ctx.Err()
		}
		d, reason := wait(st, now)
		if d <= 0 {
			return ctx.Err()
		}
		if h == nil {
			h = t.track.queue(host, ref)
		}
		t.emit(Event{Kind: EventWait, Host: host, Reason: reason, Duration: d, Until: st.NotBefore})
		if err := sleep.For(ctx, d); err != nil {
			return err
		}
	}
}

// RoundTrip waits for the host's turn, sends req through Base and learns from
// the answer. It does not modify req. A rate-limit response is returned as
// is; the host's later requests wait for the pause. Errors for refused
// requests are [*HostError]; a context that ends while waiting gives ctx.Err().
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.init()
	if req.URL == nil {
		closeBody(req)
		return nil, errors.New("politeness: nil Request.URL")
	}
	ctx := req.Context()
	ref := t.hostRef(req.URL)
	host := ref.key
	h := t.track.queue(host, ref)

	r := t.readyers.Get().(*readyer)
	r.t, r.host = t, host
	r.deadline, r.hasDeadline = ctx.Deadline()
	var lease Lease
	var b *body
	var err error
	if mg, ok := t.gate.(*MemoryGate); ok {
		// A request with a deadline need not queue behind others to learn
		// that the host is paused beyond it: look first.
		if r.hasDeadline {
			if st, _, found := mg.peek(host, ref); found {
				err = r.refusal(st, time.Now())
			}
		}
		if err == nil {
			b = new(body) // holds the lease too: one allocation
			if err = mg.acquire(ctx, host, ref, r.fn, &b.mem); err == nil {
				lease = &b.mem
			}
		}
	} else {
		lease, err = t.gate.Acquire(ctx, host, r.fn)
	}
	*r = readyer{fn: r.fn}
	t.readyers.Put(r)
	if err != nil {
		t.track.unqueue(h)
		closeBody(req)
		return nil, err
	}
	if lim := t.Policy.Limiter; lim != nil {
		if err := lim.Wait(ctx); err != nil {
			t.track.unqueue(h)
			_ = lease.Release(lease.State())
			closeBody(req)
			return nil, err
		}
	}

	st := lease.State()
	t.track.send(h, req.URL, st, time.Now())
	resp, err := t.base().RoundTrip(req)
	if err != nil {
		now := time.Now()
		st = t.afterFailure(ctx, host, st, now, err)
		t.release(lease, h, 0, st, req, now)
		return nil, err
	}
	st = t.afterResponse(host, st, resp)
	if resp.Body == nil || resp.Body == http.NoBody || resp.StatusCode == http.StatusSwitchingProtocols {
		// Nothing to wait for (a 101 body is a connection; keep its type).
		t.release(lease, h, resp.StatusCode, st, req, time.Now())
		return resp, nil
	}
	if b == nil {
		b = new(body)
	}
	b.rc, b.t, b.lease, b.next, b.req = resp.Body, t, lease, st, req
	b.track, b.status = h, resp.StatusCode
	resp.Body = b
	return resp, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// afterFailure counts a connection error or timeout for the breaker.
func (t *Transport) afterFailure(ctx context.Context, host string, st State, now time.Time, err error) State {
	if errors.Is(ctx.Err(), context.Canceled) {
		return st // the caller gave up; not the host's fault
	}
	st.Failures++
	th := t.Policy.breakerThreshold()
	if th > 0 && st.Failures >= th {
		st.DownUntil = now.Add(t.Policy.coolOff())
		t.emit(Event{Kind: EventBreakerTrip, Host: host, Reason: "connection errors",
			Duration: t.Policy.coolOff(), Until: st.DownUntil, Err: err})
	}
	return st
}

// afterResponse updates the state for an answer received now: a pause,
// give-up and slow-down for a rate limit, easing and resets otherwise.
func (t *Transport) afterResponse(host string, st State, resp *http.Response) State {
	p := &t.Policy
	st.Failures = 0
	st.DownUntil = time.Time{}
	quota := ParseQuota(resp.Header)
	now := time.Now()
	if quota.Gap > 0 {
		st.QuotaGap, st.QuotaUntil = quota.Gap, now.Add(min(quota.GapFor, p.maxRetryAfter()))
	}
	if !p.isRateLimit(resp.StatusCode) {
		st.Strikes = 0
		if st.Slow > 0 {
			st.Successes++
			if st.Successes >= p.easeAfter() {
				st.Slow--
				st.Successes = 0
			}
		}
		if quota.Pause > 0 {
			// The host says its quota is spent: wait for the reset before the
			// rate-limit answer comes. Not a strike: nothing was refused.
			return t.pause(host, st, resp.StatusCode, now, quota.Pause, "ratelimit")
		}
		return st
	}
	st.Strikes++
	st.Successes = 0
	st.Slow = min(st.Slow+1, p.maxSlowdown())
	wait, asked := RetryAfter(resp.Header.Get("Retry-After"), resp.Header.Get("Date"), now)
	reason := "retry-after"
	switch {
	case asked:
	case quota.Pause > 0:
		wait, reason = quota.Pause, "ratelimit"
	default:
		wait, reason = p.backoff(st.Strikes), "backoff"
	}
	return t.pause(host, st, resp.StatusCode, now, wait, reason)
}

// pause stops requests to the host for wait from now, under the policy's
// MaxRetryAfter: clamped, or given up on.
func (t *Transport) pause(host string, st State, status int, now time.Time, wait time.Duration, reason string) State {
	p := &t.Policy
	if limit := p.maxRetryAfter(); wait > limit {
		if p.RetryAfterMode == GiveUp {
			until := now.Add(max(wait, orDefault(p.GiveUpFor, century)))
			if wait == maxDuration || until.Before(now) {
				until = now.Add(century)
			}
			st.GaveUpUntil = until
			t.emit(Event{Kind: EventGiveUp, Host: host, Reason: reason, Duration: wait, Until: until, Status: status})
			return st
		}
		wait = limit
	}
	st.PauseUntil = now.Add(wait)
	t.emit(Event{Kind: EventPause, Host: host, Reason: reason, Duration: wait, Until: st.PauseUntil, Status: status})
	return st
}

// release ends the host's turn of req at end: it sets the gap, the
// expiry, and stores the state. status is the answer's (0: none), for
// Hosts.
func (t *Transport) release(l Lease, h *hostTrack, status int, st State, req *http.Request, end time.Time) {
	var crawl time.Duration
	var ok bool
	switch {
	case t.CrawlDelayFor != nil:
		crawl, ok = t.CrawlDelayFor(req)
	case t.CrawlDelay != nil:
		crawl, ok = t.CrawlDelay(req.URL)
	}
	gap := doubled(t.Policy.baseDelay(crawl, ok), st.Slow)
	if end.Before(st.QuotaUntil) {
		gap = max(gap, st.QuotaGap)
	} else {
		st.QuotaGap, st.QuotaUntil = 0, time.Time{}
	}
	if j := t.Policy.Jitter; j > 0 {
		t.mu.Lock()
		if t.rng == nil {
			t.rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
		}
		gap = plus(gap, time.Duration(t.rng.Int64N(int64(j))))
		t.mu.Unlock()
	}
	st.NotBefore = end.Add(gap)
	if st.PauseUntil.After(st.NotBefore) {
		st.NotBefore = st.PauseUntil
	} else if !st.PauseUntil.IsZero() && st.PauseUntil.Before(end) {
		st.PauseUntil = time.Time{}
	}
	last := st.NotBefore
	for _, x := range [...]time.Time{st.DownUntil, st.GaveUpUntil, st.QuotaUntil} {
		if x.After(last) {
			last = x
		}
	}
	st.Expires = last.Add(t.Policy.idleTime())
	t.track.done(h, status, st, end, t.Policy.idleTime())
	if err := l.Release(st); err != nil && t.Logger != nil {
		// The gate could not store the host's state (a shared gate lost its
		// lease or its server): the next request re-reads whatever it has.
		t.Logger.Warn("politeness: storing host state failed", slog.String("host", HostKey(req.URL)), slog.Any("err", err))
	}
}

// body holds the host's turn until it is read to EOF or closed.
type body struct {
	rc     io.ReadCloser
	t      *Transport
	lease  Lease
	next   State
	req    *http.Request
	track  *hostTrack
	status int
	done   atomic.Bool
	mem    memLease // the lease when the gate is a MemoryGate
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.finish()
	}
	return n, err
}

func (b *body) Close() error {
	err := b.rc.Close()
	b.finish()
	return err
}

func (b *body) finish() {
	if b.done.CompareAndSwap(false, true) {
		b.t.release(b.lease, b.track, b.status, b.next, b.req, time.Now())
	}
}
