package politeness

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"
)

// Quota is what a response's RateLimit and RateLimit-Policy fields
// (draft-ietf-httpapi-ratelimit-headers-11) say about how fast the host may
// be asked, reduced to the two facts a polite client acts on. The zero Quota
// says nothing.
//
// It is plain data.
type Quota struct {
	// Pause: the host has no quota left; no request before this wait has
	// passed (a RateLimit item with r=0, its t, or its policy's window w
	// when t is missing).
	Pause time.Duration
	// Gap and GapFor: until GapFor has passed, requests are spaced at least
	// Gap apart (t/r of a RateLimit item with r > 0, or w/q of a
	// RateLimit-Policy item counting requests, for the policy's window).
	Gap    time.Duration
	GapFor time.Duration
}

// IsZero reports whether q says nothing.
func (q Quota) IsZero() bool { return q == Quota{} }

// Canonical header keys, read straight from the map so that a response
// without these fields costs a few map lookups and no allocation.
const (
	rateLimitKey       = "Ratelimit"        // http.CanonicalHeaderKey("RateLimit")
	rateLimitPolicyKey = "Ratelimit-Policy" // http.CanonicalHeaderKey("RateLimit-Policy")
)

// The pre-standard pairs of fields: the draft's separate fields before
// -08, and the X- form that API gateways and APIs send.
var legacyQuotaKeys = [...]struct{ remaining, reset string }{
	{"Ratelimit-Remaining", "Ratelimit-Reset"},
	{"X-Ratelimit-Remaining", "X-Ratelimit-Reset"},
}

// maxQuotaItems bounds the items read from each field; a server that lists
// more policies than this is not describing a quota a client can follow.
const maxQuotaItems = 16

// maxQuotaField bounds the bytes of each field that are parsed.
const maxQuotaField = 4096

// ParseQuota reads the RateLimit and RateLimit-Policy fields of h, or, in
// a response that has neither, the pre-standard pairs of fields sites send
// instead (see below).
//
// Both are Structured Field Lists (RFC 9651) of policy items: RateLimit
// items carry r (remaining quota units, required) and t (seconds until the
// quota resets); RateLimit-Policy items carry q (quota, required), w (window
// in seconds) and qu (quota unit, "requests" when absent). Only request
// quotas are followed: items whose unit is not "requests" are ignored. When
// several items apply, the most restrictive wins: the longest pause, the
// widest gap. A field that is not a valid List, is longer than 4 KiB or has
// more than 16 items is ignored whole, as are items whose parameters are
// missing, negative or of the wrong type; the fields never cause an error.
//
// The pre-standard pairs are RateLimit-Remaining with RateLimit-Reset (the
// draft before -08) and X-RateLimit-Remaining with X-RateLimit-Reset (API
// gateways, GitHub, Reddit): remaining requests (a number, "0.0" too) and
// the reset, either seconds from now or, as many APIs send it, a Unix time
// (a value from 10^9, in seconds, or from 10^12, in milliseconds) that is
// read against the response's Date field, so that the two clocks never
// meet (without a Date such a reset is ignored). Remaining 0 pauses until
// the reset; more spaces requests reset/remaining apart until then. A pair
// missing a half, not a number, negative, or resetting now or in the past
// says nothing.
func ParseQuota(h http.Header) Quota {
	limit, policy := h[rateLimitKey], h[rateLimitPolicyKey]
	if len(limit) == 0 && len(policy) == 0 {
		return legacyQuota(h)
	}
	windows := map[string]int64{} // policy name -> window, for RateLimit items without t
	var q Quota
	for _, m := range parseQuotaList(policy) {
		quota, ok1 := intParam(m.Params, "q")
		window, ok2 := intParam(m.Params, "w")
		if !ok1 || !ok2 || !requestUnit(m.Params) {
			continue
		}
		if name, ok := m.Value.(string); ok {
			windows[name] = window
		}
		if quota > 0 && window > 0 {
			q.widen(seconds(window)/time.Duration(quota), seconds(window))
		}
	}
	for _, m := range parseQuotaList(limit) {
		remaining, ok := intParam(m.Params, "r")
		if !ok {
			continue
		}
		reset, ok := intParam(m.Params, "t")
		if !ok {
			name, _ := m.Value.(string)
			if reset, ok = windows[name]; !ok {
				continue // no idea when the quota comes back: nothing to act on
			}
		}
		if reset == 0 {
			continue // the quota resets now
		}
		if remaining == 0 {
			q.Pause = max(q.Pause, seconds(reset))
			continue
		}
		q.widen(seconds(reset)/time.Duration(remaining), seconds(reset))
	}
	return q
}

// legacyQuota reads the pre-standard pairs of fields (see ParseQuota).
func legacyQuota(h http.Header) Quota {
	var q Quota
	for _, k := range legacyQuotaKeys {
		rem, reset := h[k.remaining], h[k.reset]
		if len(rem) == 0 || len(reset) == 0 {
			continue
		}
		remaining, ok1 := nonNegative(rem[0])
		wait, ok2 := resetIn(reset[0], h)
		if !ok1 || !ok2 {
			continue
		}
		// A reset now or past (wait <= 0) lengthens no pause and widens no
		// gap below.
		if remaining < 1 {
			q.Pause = max(q.Pause, wait)
			continue
		}
		q.widen(nanoseconds(float64(wait)/remaining), wait)
	}
	return q
}

// Unix times in a reset field: seconds from 10^9 (September 2001), and
// milliseconds from 10^12; below, seconds from now.
const (
	unixSeconds = 1e9
	unixMillis  = 1e12
)

// resetIn reads a pre-standard reset field: the wait until the reset,
// saturating.
func resetIn(v string, h http.Header) (time.Duration, bool) {
	n, ok := nonNegative(v)
	if !ok {
		return 0, false
	}
	if n < unixSeconds {
		return floatSeconds(n), true
	}
	date, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return 0, false
	}
	if n >= unixMillis {
		n /= 1000
	}
	return floatSeconds(n - float64(date.Unix())), true
}

// nonNegative parses a number field (optional white space around it).
func nonNegative(v string) (float64, bool) {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	return n, err == nil && n >= 0 && !math.IsInf(n, 0)
}

// floatSeconds converts seconds to a Duration, saturating; negative stays
// negative (a reset in the past).
func floatSeconds(s float64) time.Duration { return nanoseconds(s * float64(time.Second)) }

// nanoseconds converts to a Duration, saturating at maxDuration (a float
// that large does not convert).
func nanoseconds(ns float64) time.Duration {
	if ns >= float64(maxDuration) {
		return maxDuration
	}
	return time.Duration(ns)
}

// widen keeps the wider of q's gap and (gap, gapFor); on a tie, the longer
// period.
func (q *Quota) widen(gap, gapFor time.Duration) {
	if gap > q.Gap || (gap == q.Gap && gapFor > q.GapFor) {
		q.Gap, q.GapFor = gap, gapFor
	}
}

func parseQuotaList(values []string) []httpsfv.Item {
	if len(values) == 0 {
		return nil
	}
	n := 0
	for _, v := range values {
		n += len(v)
	}
	if n > maxQuotaField {
		return nil
	}
	l, err := httpsfv.UnmarshalList(values)
	if err != nil || len(l) > maxQuotaItems {
		return nil
	}
	items := make([]httpsfv.Item, 0, len(l))
	for _, m := range l {
		if it, ok := m.(httpsfv.Item); ok && it.Params != nil {
			items = append(items, it)
		}
	}
	return items
}

func intParam(p *httpsfv.Params, key string) (int64, bool) {
	v, ok := p.Get(key)
	if !ok {
		return 0, false
	}
	n, ok := v.(int64)
	return n, ok && n >= 0
}

func requestUnit(p *httpsfv.Params) bool {
	v, ok := p.Get("qu")
	if !ok {
		return true
	}
	s, ok := v.(string)
	return ok && s == "requests"
}

// seconds converts n seconds to a Duration, saturating.
func seconds(n int64) time.Duration {
	if n > int64(maxDuration/time.Second) {
		return maxDuration
	}
	return time.Duration(n) * time.Second
}
