package politeness

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RetryAfterMode says what to do when a host asks for a longer pause than
// [Policy.MaxRetryAfter].
//
// The zero value is [Clamp].
type RetryAfterMode int

const (
	// Clamp waits at most MaxRetryAfter, then comes back (an hour, for example).
	Clamp RetryAfterMode = iota
	// GiveUp gives up on the host instead of coming back earlier than asked:
	// requests fail with [ErrGaveUp] until the asked-for time or
	// GiveUpFor has passed, whichever is later.
	GiveUp
)

// String returns "clamp" or "give_up".
func (m RetryAfterMode) String() string {
	if m == GiveUp {
		return "give_up"
	}
	return "clamp"
}

// Policy is the pacing policy of a [Transport]. The zero value is polite; each
// field documents its default. Durations that are zero mean the default; where
// a negative value means something else, the field says so.
//
// # Delay
//
// The gap from the end of one response on a host (its body closed or read to
// EOF, or the request failed) to the start of the next request there is
//
//	max(MinDelay, min(CrawlDelay, MaxCrawlDelay)) * 2^Slow + jitter
//
// where jitter is uniform in [0, Jitter) and Slow is the host's slow-down
// level (see below).
//
// # Rate limits
//
// A response whose status is in RateLimitStatuses pauses the whole host. The
// pause is the Retry-After value: delta-seconds counted from the moment the
// response arrived, or an HTTP-date measured against the response's own Date
// header when it has a valid one (so clock skew between bot and server does not
// shorten the pause), else against the local clock. A missing, unparsable,
// negative or past value means the default backoff: DefaultBackoff doubled for
// each consecutive rate-limit answer (1, 2, 4 minutes...); any other answer
// resets the count. A pause longer than MaxRetryAfter (asked for, or reached
// by the doubling backoff) is clamped to it, or, with RetryAfterMode GiveUp,
// makes the Transport give up on the host. The rate-limit response itself is
// returned to the caller unchanged. Later requests to the host wait for the
// pause; one whose context deadline comes before the pause ends fails at once
// with [ErrRateLimited] (with the default [MemoryGate] even while queued behind
// other requests; with other gates when its turn comes).
//
// # Quota signals
//
// A response's RateLimit and RateLimit-Policy fields
// (draft-ietf-httpapi-ratelimit-headers, read by [ParseQuota]) slow the host
// down before it has to refuse: an exhausted quota (r=0;t=30) pauses the host
// for its reset time, as a Retry-After would, but without counting as a
// rate-limit answer (no backoff strike, no slow-down); a quota that is
// running low (r=5;t=10) spaces the following requests at least t/r apart
// until the reset, and a request policy (q=100;w=10) at least w/q apart. These
// gaps only ever lengthen the delay above: never below MinDelay or the
// Crawl-delay. On a rate-limit answer, Retry-After takes precedence over
// RateLimit's reset, which takes precedence over the default backoff. The
// MaxRetryAfter clamp or give-up applies to these pauses too. Malformed fields
// are ignored. A response with neither field is read for the pre-standard
// pairs sites send instead (X-RateLimit-Remaining and X-RateLimit-Reset, or
// RateLimit-Remaining and RateLimit-Reset: see [ParseQuota]), with the same
// effect. The quota lives in the host's [State], so every process sharing
// a [Gate] sees it.
//
// # Slow-down and recovery
//
// Each pause raises the host's slow-down level by one, up to MaxSlowdown, which
// doubles its delay (afterwards the host is crawled more slowly). After
// EaseAfter consecutive answers without a rate limit the level drops by one,
// so a host recovers one halving at a time. With no delay at all (MinDelay
// negative and no Crawl-delay) there is nothing to double.
//
// # Breaker
//
// BreakerThreshold consecutive connection errors or timeouts (errors from the
// base RoundTripper, not counting requests canceled by their caller) mark the
// host down for BreakerCoolOff: requests fail fast with [ErrHostDown]. The
// first request after the cool-off is a probe; if it fails too, the host is
// down for another cool-off. Any response resets the count.
//
// A Policy is plain data, read but never modified by the Transport: do not
// change it while the Transport is in use.
type Policy struct {
	// MinDelay is the least gap between requests to one host. Zero means
	// one second; negative means none.
	MinDelay time.Duration
	// Jitter adds a random extra in [0, Jitter) to every gap. Zero means
	// none. Jitter only ever adds time.
	Jitter time.Duration
	// MaxCrawlDelay caps the Crawl-delay from [Transport.CrawlDelay] (or
	// [Transport.CrawlDelayFor]). Zero (or negative) means 60 seconds.
	MaxCrawlDelay time.Duration
	// MaxRetryAfter is the longest pause the Transport accepts. Zero (or
	// negative) means one hour.
	MaxRetryAfter time.Duration
	// RetryAfterMode says what happens to longer pauses: Clamp (default)
	// or GiveUp.
	RetryAfterMode RetryAfterMode
	// GiveUpFor is how long a given-up host stays given up, at least (never
	// less than the pause asked for). Zero means for the rest of the
	// Transport's life (in practice: until the gate forgets the host, which
	// for a given-up host is a century).
	GiveUpFor time.Duration
	// RateLimitStatuses are the statuses that pause a host. Nil means 429
	// and 503; list 429, 503 and 509 where a bot promises 509 too.
	RateLimitStatuses []int
	// DefaultBackoff is the pause after a rate-limit answer without a usable
	// Retry-After, doubled for each consecutive one. Zero means one minute.
	DefaultBackoff time.Duration
	// MaxSlowdown is the highest slow-down level (delay * 2^level). Zero
	// means 3 (eight times slower); negative disables the slow-down.
	MaxSlowdown int
	// EaseAfter is the number of consecutive answers without a rate limit
	// after which the slow-down level drops by one. Zero means 10.
	EaseAfter int
	// BreakerThreshold is the number of consecutive connection errors or
	// timeouts that mark a host down. Zero means 3; negative disables the
	// breaker.
	BreakerThreshold int
	// BreakerCoolOff is how long a host stays down. Zero means 10 minutes.
	BreakerCoolOff time.Duration
	// Limiter, when set, is a global budget across all hosts: every request
	// waits for it (after its host's turn came, holding that turn). A
	// *rate.Limiter from golang.org/x/time/rate is one; share one Limiter
	// between Transports for a fleet-wide budget.
	Limiter Limiter
	// IdleTime is how long a host's state is kept after its last pause,
	// give-up or breaker window has passed; then it is forgotten (including
	// its slow-down level). Zero means one hour.
	IdleTime time.Duration
}

// Limiter is a global request budget, such as *rate.Limiter from
// golang.org/x/time/rate. Wait blocks until one request may start or ctx
// ends, and returns an error if it cannot wait.
//
// The Transport calls Wait from many goroutines at once, so an
// implementation must be safe for concurrent use (*rate.Limiter is). A nil
// [Policy.Limiter] means no global budget.
type Limiter interface {
	Wait(ctx context.Context) error
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func (p *Policy) minDelay() time.Duration {
	if p.MinDelay < 0 {
		return 0
	}
	return orDefault(p.MinDelay, time.Second)
}

func (p *Policy) maxCrawlDelay() time.Duration  { return orDefault(p.MaxCrawlDelay, time.Minute) }
func (p *Policy) maxRetryAfter() time.Duration  { return orDefault(p.MaxRetryAfter, time.Hour) }
func (p *Policy) defaultBackoff() time.Duration { return orDefault(p.DefaultBackoff, time.Minute) }
func (p *Policy) coolOff() time.Duration        { return orDefault(p.BreakerCoolOff, 10*time.Minute) }
func (p *Policy) idleTime() time.Duration       { return orDefault(p.IdleTime, time.Hour) }

func (p *Policy) maxSlowdown() int {
	switch {
	case p.MaxSlowdown < 0:
		return 0
	case p.MaxSlowdown == 0:
		return 3
	}
	return min(p.MaxSlowdown, 16)
}

func (p *Policy) easeAfter() int {
	if p.EaseAfter <= 0 {
		return 10
	}
	return p.EaseAfter
}

func (p *Policy) breakerThreshold() int {
	if p.BreakerThreshold == 0 {
		return 3
	}
	return p.BreakerThreshold // negative: off
}

func (p *Policy) isRateLimit(status int) bool {
	if p.RateLimitStatuses == nil {
		return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
	}
	return slices.Contains(p.RateLimitStatuses, status)
}

// LongestGap returns the longest gap between two requests to one host that
// the delays alone can produce: max(MinDelay, MaxCrawlDelay) * 2^MaxSlowdown
// + Jitter, saturating (with the defaults, 8 minutes). Pauses asked for by
// the site (Retry-After, rate-limit back-off) and breaker cool-offs are not
// counted. A transport keeping one idle connection per host for at least
// this long can reuse it for every paced request to that host.
func (p *Policy) LongestGap() time.Duration {
	return plus(doubled(max(p.minDelay(), p.maxCrawlDelay()), p.maxSlowdown()), p.Jitter)
}

// doubled returns d·2^n for d >= 0, saturating at maxDuration.
func doubled(d time.Duration, n int) time.Duration {
	for range n {
		if d > maxDuration/2 {
			return maxDuration
		}
		d *= 2
	}
	return d
}

// plus returns d+e for d >= 0 (a negative e adds nothing), saturating at
// maxDuration.
func plus(d, e time.Duration) time.Duration {
	switch {
	case e <= 0:
		return d
	case d > maxDuration-e:
		return maxDuration
	}
	return d + e
}

// baseDelay is max(MinDelay, min(crawl, MaxCrawlDelay)).
func (p *Policy) baseDelay(crawl time.Duration, ok bool) time.Duration {
	d := p.minDelay()
	if ok {
		d = max(d, min(crawl, p.maxCrawlDelay()))
	}
	return d
}

// backoff is DefaultBackoff * 2^(strikes-1), saturating.
func (p *Policy) backoff(strikes int) time.Duration {
	return doubled(p.defaultBackoff(), strikes-1)
}

const maxDuration = time.Duration(1<<63 - 1)

// century stands for "for the rest of the Transport's life".
const century = 100 * 365 * 24 * time.Hour

// RetryAfter parses a Retry-After header of a response received at now: it
// returns the wait asked for and true, or false when the header is missing,
// unparsable, negative or in the past. An HTTP-date is measured against date
// (the response's Date header) when that parses, else against now.
// Delta-seconds too large for a Duration saturate.
func RetryAfter(retryAfter, date string, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(retryAfter)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > int64(maxDuration/time.Second) {
			return maxDuration, true
		}
		return time.Duration(n) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	base := now
	if d, err := http.ParseTime(strings.TrimSpace(date)); err == nil {
		base = d
	}
	w := at.Sub(base)
	if w < 0 {
		return 0, false
	}
	return w, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
