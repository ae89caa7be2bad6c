package politeness

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/goodbot-go/goodbot/internal/sitekey"
)

// A Gate stores the per-host [State] and serialises access to each host: at
// most one holder of a host's [Lease] at a time. It keeps no policy; the
// [Transport] decides delays, pauses, slow-down and the breaker, and the Gate
// only stores what the Transport hands back in [Lease.Release].
//
// The in-memory default is [MemoryGate]; politeness/redisgate shares the state
// between processes. Implementations must be safe for concurrent use and should
// pass the conformance tests in politeness/gatetest.
type Gate interface {
	// Acquire waits until the caller holds host's lease, then calls ready
	// with the host's current State. Waiters for one host are served in
	// arrival order (at least within one process). When ctx ends while the
	// caller waits, Acquire returns ctx.Err() at once and leaves the queue.
	//
	// ready decides: it returns 0 to proceed now (Acquire returns the held
	// Lease); d > 0 to have Acquire wait d and call ready again (meanwhile the
	// gate may keep or release the lease, but it re-reads the State before the
	// next call); or an error, upon which the lease is released unchanged and
	// Acquire returns that error as is. ready is never called after Acquire
	// returns, and never concurrently for one Acquire call.
	//
	// host is a key as made by [HostKey]; the gate treats it as opaque.
	Acquire(ctx context.Context, host string, ready func(State) (time.Duration, error)) (Lease, error)
}

// A Lease is one holder's exclusive turn on a host, from [Gate.Acquire] until
// Release.
//
// Implementations must make Release safe to call from any goroutine and
// safe to call twice (the second call returns [ErrLeaseReleased]); State
// may be called at any time.
type Lease interface {
	// State returns the host's State as read when the lease was granted
	// (the one the last ready call saw).
	State() State
	// Release stores next as the host's State and frees the host for the next
	// caller in line. Only the first Release of a lease has effect; later
	// calls return an error wrapping [ErrLeaseReleased].
	Release(next State) error
}

// ErrLeaseReleased is returned by [Lease.Release] on a lease that was already
// released (or, for shared gates, that expired).
var ErrLeaseReleased = errors.New("politeness: lease already released")

// State is the per-host pacing state. It is plain data, small and
// JSON-serialisable, so a [Gate] can keep it anywhere. Times are wall-clock
// instants; a zero time means "not set". The zero State is a host never seen
// (or forgotten): no wait, no pause, no slow-down.
//
// The fields are written only by the [Transport]; a Gate stores them as they
// are, except that it may forget a State after Expires.
//
// A State is a value; the Transport passes copies around and never shares
// one between goroutines.
type State struct {
	// NotBefore: no request to the host starts before this instant. It covers
	// the gap after the last response and any pause.
	NotBefore time.Time `json:"not_before,omitzero"`
	// PauseUntil: end of the current rate-limit pause (429/503/...), if any.
	PauseUntil time.Time `json:"pause_until,omitzero"`
	// Strikes counts consecutive rate-limit answers (default backoff doubling).
	Strikes int `json:"strikes,omitempty"`
	// Slow is the slow-down level after pauses: the host's delay is
	// multiplied by 2^Slow.
	Slow int `json:"slow,omitempty"`
	// Successes counts consecutive non-rate-limited answers since Slow last
	// changed (used to ease the slow-down back).
	Successes int `json:"successes,omitempty"`
	// Failures counts consecutive connection errors and timeouts (breaker).
	Failures int `json:"failures,omitempty"`
	// DownUntil: the breaker holds the host down until this instant.
	DownUntil time.Time `json:"down_until,omitzero"`
	// GaveUpUntil: the Transport has given up on the host until this
	// instant (give-up policy for long Retry-After values).
	GaveUpUntil time.Time `json:"gave_up_until,omitzero"`
	// QuotaGap and QuotaUntil: until QuotaUntil, gaps on the host are at
	// least QuotaGap (from the host's RateLimit or RateLimit-Policy fields,
	// see [ParseQuota]).
	QuotaGap   time.Duration `json:"quota_gap,omitempty"`
	QuotaUntil time.Time     `json:"quota_until,omitzero"`
	// Expires: after this instant the gate may forget the State (a
	// forgotten State reads as the zero State). Zero means keep it.
	Expires time.Time `json:"expires,omitzero"`
}

// IsZero reports whether s is the zero State.
func (s State) IsZero() bool { return s == State{} }

// SiteOrigin returns u's site key ([HostKey]) as an origin is written:
// the default port of http (80) and https (443) left out, so
// "HTTPS://Example.COM.:443/x" gives "https://example.com".
func SiteOrigin(u *url.URL) string {
	k := HostKey(u)
	switch {
	case strings.HasPrefix(k, "http://"):
		return strings.TrimSuffix(k, ":80")
	case strings.HasPrefix(k, "https://"):
		return strings.TrimSuffix(k, ":443")
	}
	return k
}

// HostKey returns the key of u's site, the pacing unit: scheme, host and
// port, as "scheme://host:port". It is the one definition of "the same
// site" in this module: every spelling of one host gives one key. The
// scheme is lowercased. The host is canonical: a name goes through IDNA
// (UTS #46 lookup mapping) to its lowercase ASCII form, so case, full-width
// letters, the ideographic full stops (U+3002, U+FF0E, U+FF61) and the
// Unicode and punycode spellings of one name agree, and trailing dots are
// dropped; a name IDNA rejects keeps its partly mapped, lowercased form
// (HostKey never fails). IP addresses are written as net/netip writes them
// (IPv6 in brackets, an IPv4-mapped IPv6 address as IPv4); dotted forms
// netip does not read as IPv4 ("010.0.0.1") are names. The port is read as
// a number ("080" is 80) and the default one is explicit for http (80) and
// https (443); for other schemes without a port the key has no port.
func HostKey(u *url.URL) string {
	var buf [128]byte
	return string(sitekey.Append(buf[:0], u))
}
