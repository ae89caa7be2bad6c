package robots

import (
	"errors"
	"fmt"
	"net/http"
)

var (
	// AllowAll allows every URL: what a robots.txt that is "unavailable"
	// (4xx, RFC 9309 §2.3.1.3) means.
	AllowAll = &Robots{mode: modeAllowAll}
	// DisallowAll disallows every URL but /robots.txt: what an "unreachable"
	// robots.txt (5xx, network error, timeout; RFC 9309 §2.3.1.4) means. Its
	// [Robots.Unreachable] is true, since that is the only reason to use it.
	DisallowAll = &Robots{mode: modeDisallowAll, unreachable: true}
)

// FromResponse maps the outcome of fetching robots.txt to the rules to obey
// (RFC 9309 §2.3.1), given the final status after redirects, what was read of
// the body, and the transport error, if any:
//
//   - an error (network failure, timeout): [DisallowAll] (unreachable);
//   - 2xx: the body, parsed;
//   - 3xx (redirects that were not followed, or more than the limit; §2.3.1.2
//     allows treating that as unavailable): [AllowAll];
//   - 429 Too Many Requests: [DisallowAll]. RFC 9309 lets a crawler access
//     anything after a 4xx but does not require it; a server asking us to
//     slow down gets no crawl until it answers properly;
//   - any other 4xx: [AllowAll];
//   - 5xx and anything else: [DisallowAll] (unreachable).
func FromResponse(status int, body []byte, err error) *Robots {
	switch {
	case err != nil:
		return DisallowAll
	case status >= 200 && status <= 299:
		return Parse(body)
	case status >= 300 && status <= 399:
		return AllowAll
	case status == http.StatusTooManyRequests:
		return DisallowAll
	case status >= 400 && status <= 499:
		return AllowAll
	}
	return DisallowAll
}

var (
	// ErrDisallowed is matched (errors.Is) by every [*DisallowedError].
	ErrDisallowed = errors.New("robots: disallowed by robots.txt")
	// ErrUnreachable is matched by a [*DisallowedError] whose robots.txt
	// could not be fetched (5xx, network error, timeout).
	ErrUnreachable = errors.New("robots: robots.txt unreachable")
	// ErrBadURL is returned by the [Cache] for a URL without an http or https
	// origin.
	ErrBadURL = errors.New("robots: URL has no http(s) origin")
)

// DisallowedError reports a URL that robots.txt does not let the agent fetch.
// errors.Is(err, ErrDisallowed) is always true for it, and errors.Is(err,
// ErrUnreachable) is true when Unreachable is.
//
// It is plain data; the zero value reads "robots:  disallowed for " and is
// never returned.
type DisallowedError struct {
	URL   string // the URL asked about
	Agent string // the agent's product token
	// Rule is the deciding rule, such as "Disallow: /private"; empty when the
	// whole site is closed.
	Rule string
	// Unreachable is true when robots.txt could not be fetched (5xx, network
	// error, timeout), so the whole site is closed until it can.
	Unreachable bool
	// Err is the fetch error behind an unreachable robots.txt, if known.
	Err error
}

func (e *DisallowedError) Error() string {
	if e.Unreachable {
		if e.Err != nil {
			return fmt.Sprintf("robots: %s: robots.txt unreachable, site closed: %v", e.URL, e.Err)
		}
		return fmt.Sprintf("robots: %s: robots.txt unreachable, site closed", e.URL)
	}
	if e.Rule != "" {
		return fmt.Sprintf("robots: %s disallowed for %s by %q", e.URL, e.Agent, e.Rule)
	}
	return fmt.Sprintf("robots: %s disallowed for %s", e.URL, e.Agent)
}

// Is makes errors.Is match [ErrDisallowed], and [ErrUnreachable] when
// Unreachable is set.
func (e *DisallowedError) Is(target error) bool {
	return target == ErrDisallowed || (e.Unreachable && target == ErrUnreachable)
}

// Unwrap returns the fetch error behind an unreachable robots.txt, or nil.
func (e *DisallowedError) Unwrap() error { return e.Err }
