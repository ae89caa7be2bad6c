package fetch

import (
	"context"
	"errors"
	"net"

	"github.com/goodbot-go/goodbot/challenge"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
)

// Outcome is how one fetch ended. The set is closed: every [Fetcher.Get]
// returns exactly one of the values below, and every non-ok one comes with
// an [*Error] whose errors.Is matches the outcome's sentinel. The zero value
// is not an outcome (String "").
type Outcome int

// The outcomes.
const (
	OK               Outcome = iota + 1 // a page (of any status not listed below), body read to its end
	NotModified                         // 304 to a conditional request
	Disallowed                          // robots.txt disallows the URL, or a deny pattern matched
	Blocked                             // a bot challenge, CAPTCHA or block page
	RateLimited                         // 429/503 (509 if configured), a vendor's rate-limit page, or the host is paused
	GaveUp                              // the bot gave up on the host (Retry-After too long)
	Unreachable                         // network error, 5xx, robots.txt unreachable, host down
	AuthRequired                        // 401, 403, or a redirect to a login page
	NotHTML                             // an HTML-only bot got another content type
	TooLarge                            // the body passed the byte limit (Page.Body holds the part read), or the header did (ErrHeaderTooLarge)
	TooManyRedirects                    // more redirects than the limit
	Timeout                             // the total time limit (or the caller's context) ended the fetch
	BlockedDomain                       // the host is on the bot's block list
	Duplicate                           // the URL was fetched before and the bot fetches each URL once
	InternalAddress                     // the host is, or resolves to, an internal address the bot may not reach (Bot.AllowInternal)
	InsecureRedirect                    // a redirect from https to plain http, refused (Bot.RefuseDowngrade)
	UsageRefused                        // the site's usage preferences refuse one of the bot's purposes, and the bot refuses such pages (Bot.UsageMode)
	PaymentRequired                     // a 402 (the site sells the page: pay per crawl, x402), or a paying bot's budget cannot cover the request (Bot.Pay)
)

var outcomeNames = [...]string{
	OK:               "ok",
	NotModified:      "not_modified",
	Disallowed:       "disallowed",
	Blocked:          "blocked",
	RateLimited:      "rate_limited",
	GaveUp:           "gave_up",
	Unreachable:      "unreachable",
	AuthRequired:     "auth_required",
	NotHTML:          "not_html",
	TooLarge:         "too_large",
	TooManyRedirects: "too_many_redirects",
	Timeout:          "timeout",
	BlockedDomain:    "blocked_domain",
	Duplicate:        "duplicate",
	InternalAddress:  "internal_address",
	InsecureRedirect: "insecure_redirect",
	UsageRefused:     "usage_refused",
	PaymentRequired:  "payment_required",
}

// String returns the outcome's stable name ("ok", "not_modified",
// "disallowed", "blocked", "rate_limited", "gave_up", "unreachable",
// "auth_required", "not_html", "too_large", "too_many_redirects", "timeout",
// "blocked_domain", "duplicate", "internal_address", "insecure_redirect",
// "usage_refused", "payment_required"), or "" for values outside the set.
func (o Outcome) String() string {
	if o <= 0 || int(o) >= len(outcomeNames) {
		return ""
	}
	return outcomeNames[o]
}

// MarshalText encodes the outcome as its name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// ParseOutcome is the inverse of [Outcome.String].
func ParseOutcome(s string) (Outcome, bool) {
	for i, n := range outcomeNames {
		if n != "" && n == s {
			return Outcome(i), true
		}
	}
	return 0, false
}

// Sentinels, one per non-ok outcome. errors.Is(err, ErrX) holds for the
// [*Error] of that outcome, also through *url.Error.
var (
	ErrDisallowed       = errors.New("fetch: disallowed")
	ErrBlocked          = errors.New("fetch: blocked by a challenge")
	ErrRateLimited      = errors.New("fetch: rate-limited")
	ErrGaveUp           = errors.New("fetch: gave up on host")
	ErrUnreachable      = errors.New("fetch: unreachable")
	ErrAuthRequired     = errors.New("fetch: authentication required")
	ErrNotHTML          = errors.New("fetch: not HTML")
	ErrTooLarge         = errors.New("fetch: body too large")
	ErrTooManyRedirects = errors.New("fetch: too many redirects")
	ErrTimeout          = errors.New("fetch: timed out")
	ErrBlockedDomain    = errors.New("fetch: domain is blocked")
	ErrDuplicate        = errors.New("fetch: already fetched")
	ErrInternalAddress  = errors.New("fetch: internal address")
	ErrInsecureRedirect = errors.New("fetch: redirect from https to http")
	ErrUsageRefused     = errors.New("fetch: usage refused by the site")
	ErrPaymentRequired  = errors.New("fetch: payment required")
)

// Usage errors: the request itself is not one a polite bot sends. They are
// returned as they are (wrapped with details), not as an [*Error].
var (
	ErrMethod    = errors.New("fetch: only GET and HEAD are sent")
	ErrBadURL    = errors.New("fetch: URL must be absolute http or https without credentials")
	ErrUserAgent = errors.New("fetch: invalid User-Agent")
)

// ErrHeaderTooLarge is the cause of a TooLarge [*Error] for an answer
// whose header passed Limits.MaxHeaderBytes (or a Transport's own bound):
// no status and no body were read.
var ErrHeaderTooLarge = errors.New("fetch: response header too large")

// ErrDenied is the cause of a Disallowed [*Error] for a URL that matches
// one of the bot's deny words (Bot.Deny), rather than robots.txt.
var ErrDenied = errors.New("fetch: URL matches a deny pattern")

var sentinels = [...]error{
	Disallowed:       ErrDisallowed,
	Blocked:          ErrBlocked,
	RateLimited:      ErrRateLimited,
	GaveUp:           ErrGaveUp,
	Unreachable:      ErrUnreachable,
	AuthRequired:     ErrAuthRequired,
	NotHTML:          ErrNotHTML,
	TooLarge:         ErrTooLarge,
	TooManyRedirects: ErrTooManyRedirects,
	Timeout:          ErrTimeout,
	BlockedDomain:    ErrBlockedDomain,
	Duplicate:        ErrDuplicate,
	InternalAddress:  ErrInternalAddress,
	InsecureRedirect: ErrInsecureRedirect,
	UsageRefused:     ErrUsageRefused,
	PaymentRequired:  ErrPaymentRequired,
}

// Err returns the outcome's sentinel error (nil for OK, NotModified and
// values outside the set).
func (o Outcome) Err() error {
	if o <= 0 || int(o) >= len(sentinels) {
		return nil
	}
	return sentinels[o]
}

// Retryable reports whether the outcome is no answer about the page yet:
// RateLimited, GaveUp, Unreachable and Timeout. A later fetch may succeed;
// with Bot.Once, [Fetcher.Get] does not count such a fetch as done.
func (o Outcome) Retryable() bool {
	switch o {
	case RateLimited, GaveUp, Unreachable, Timeout:
		return true
	}
	return false
}

// Error is the typed error of a fetch that did not end with a page: the
// outcome, the URL of the hop that failed, the status if an answer caused
// it, and the cause (a *robots.DisallowedError, *challenge.ChallengeError,
// *politeness.HostError, context error, network error...). errors.Is matches
// the outcome's sentinel and, through Unwrap, the cause's own sentinels
// (robots.ErrDisallowed, challenge.ErrChallenged, politeness.ErrGaveUp...).
type Error struct {
	Outcome Outcome
	URL     string
	Status  int   // HTTP status behind the outcome, 0 if none
	Err     error // cause, may be nil
}

func (e *Error) Error() string {
	msg := "fetch: " + e.Outcome.String()
	if e.URL != "" {
		msg += " " + e.URL
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's outcome.
func (e *Error) Is(target error) bool {
	s := e.Outcome.Err()
	return s != nil && target == s
}

// Verdict returns the challenge verdict behind a Blocked error, or a
// RateLimited one that came from a vendor's rate-limit page (zero if none).
func (e *Error) Verdict() challenge.Verdict {
	var ce *challenge.ChallengeError
	if errors.As(e.Err, &ce) {
		return ce.Verdict
	}
	return challenge.Verdict{}
}

// OutcomeOf returns the outcome err stands for: the Outcome of an [*Error]
// in its chain, else a classification of the cause (robots, challenge,
// politeness, context and network errors); OK for nil.
func OutcomeOf(err error) Outcome {
	if err == nil {
		return OK
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Outcome
	}
	return classify(err)
}

// classify maps a cause from the packages below to an outcome.
func classify(err error) Outcome {
	var ne net.Error
	switch {
	case errors.Is(err, ErrInternalAddress):
		// Before robots: a robots.txt on an internal address is refused
		// for that reason, not because the site is down.
		return InternalAddress
	case errors.Is(err, robots.ErrUnreachable):
		return Unreachable
	case errors.Is(err, robots.ErrDisallowed), errors.Is(err, ErrDenied):
		return Disallowed
	case errors.Is(err, ErrUsageRefused):
		return UsageRefused
	case errors.Is(err, ErrPaymentRequired), errors.Is(err, ErrBudgetSpent):
		return PaymentRequired
	case errors.Is(err, challenge.ErrChallenged):
		return Blocked
	case errors.Is(err, politeness.ErrGaveUp):
		return GaveUp
	case errors.Is(err, politeness.ErrRateLimited):
		return RateLimited
	case errors.Is(err, politeness.ErrHostDown):
		return Unreachable
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return Timeout
	case errors.As(err, &ne) && ne.Timeout():
		return Timeout
	}
	return Unreachable
}

// wrap turns err into an [*Error] for url (keeping an *Error as it is).
func wrap(err error, url string) error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) {
		return err
	}
	return &Error{Outcome: classify(err), URL: url, Err: err}
}
