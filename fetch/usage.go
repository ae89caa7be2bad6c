package fetch

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/goodbot-go/goodbot/robots"
)

// UsageMode is what a bot does when a site's usage preferences refuse one of
// its purposes (Bot.Purposes). The zero value is [UsageRecord].
type UsageMode uint8

const (
	// UsageRecord fetches as if no preference were stated and lets the
	// caller decide: [Page.Usage] carries the verdict.
	UsageRecord UsageMode = iota
	// UsageRefuse does not use what the site refuses: a URL whose robots.txt
	// refuses a purpose is not requested at all, and a response whose
	// header refuses one is dropped. Both end as UsageRefused.
	UsageRefuse
)

// String returns "record" or "refuse".
func (m UsageMode) String() string {
	switch m {
	case UsageRecord:
		return "record"
	case UsageRefuse:
		return "refuse"
	}
	return fmt.Sprintf("UsageMode(%d)", uint8(m))
}

// UsageError is the cause of a UsageRefused [*Error]: which of the bot's
// purposes the site refuses, what it says in full, and where it says it. It
// is plain data.
type UsageError struct {
	Purpose robots.Purpose // the first of the bot's purposes refused
	Usage   robots.Usage   // the combined statement
	Source  string         // "robots.txt" or "header"
}

func (e *UsageError) Error() string {
	return fmt.Sprintf("fetch: %s refuses %s (%s)", e.Source, e.Purpose, e.Usage)
}

// Is reports whether target is ErrUsageRefused.
func (e *UsageError) Is(target error) bool { return target == ErrUsageRefused }

// usagePolicy is the part of the chain that reads usage preferences.
type usagePolicy struct {
	purposes []robots.Purpose
	mode     UsageMode
}

func newUsagePolicy(bot *Bot) (usagePolicy, error) {
	if bot.UsageMode > UsageRefuse {
		return usagePolicy{}, fmt.Errorf("fetch: unknown %v", bot.UsageMode)
	}
	for _, p := range append(append([]robots.Purpose(nil), bot.Purposes...), purposesOf(bot.PurposeTokens)...) {
		if _, ok := robots.ParsePurpose(p.String()); !ok {
			return usagePolicy{}, fmt.Errorf("fetch: unknown %v", p)
		}
	}
	return usagePolicy{purposes: append([]robots.Purpose(nil), bot.Purposes...), mode: bot.UsageMode}, nil
}

func purposesOf(ts []robots.PurposeToken) []robots.Purpose {
	ps := make([]robots.Purpose, len(ts))
	for i, t := range ts {
		ps[i] = t.Purpose
	}
	return ps
}

// refuses reports whether the policy refuses a URL or response that u
// describes.
func (p *usagePolicy) refuses(u robots.Usage, source string) error {
	if p.mode != UsageRefuse {
		return nil
	}
	if pu, ok := u.Disallows(p.purposes); ok {
		return &UsageError{Purpose: pu, Usage: u, Source: source}
	}
	return nil
}

// robotsUsage is what robots.txt says about the use of u: r, the copy
// that admitted u, or when r is nil the cached copy of u's origin (nothing
// if there is none).
func (c *chain) robotsUsage(u *url.URL, r *robots.Robots) robots.Usage {
	if r == nil {
		var ok bool
		if r, ok = c.robots.Cached(u); !ok {
			return robots.Usage{}
		}
	}
	return r.Usage(c.agent, requestTarget(u))
}

// requestTarget is u.RequestURI without building a string when u has no
// query (the path alone is the target then).
func requestTarget(u *url.URL) string {
	if u.RawQuery == "" && !u.ForceQuery && u.Opaque == "" {
		if p := u.EscapedPath(); p != "" {
			return p
		}
	}
	return u.RequestURI()
}

// checkRobotsUsage refuses, before any request, a URL whose robots.txt
// refuses one of the bot's purposes. It runs after the robots.txt gate, so
// the copy is in the cache; r is the copy that admitted u (nil: the cached
// one).
func (c *chain) checkRobotsUsage(u *url.URL, r *robots.Robots) error {
	if c.usage.mode != UsageRefuse || len(c.usage.purposes) == 0 {
		return nil
	}
	if err := c.usage.refuses(c.robotsUsage(u, r), "robots.txt"); err != nil {
		return &Error{Outcome: UsageRefused, URL: u.String(), Err: err}
	}
	return nil
}

// checkHeaderUsage refuses a response whose header refuses one of the bot's
// purposes.
func (c *chain) checkHeaderUsage(resp *http.Response) error {
	if c.usage.mode != UsageRefuse || len(c.usage.purposes) == 0 {
		return nil
	}
	if err := c.usage.refuses(robots.UsageFromHeader(resp.Header), "header"); err != nil {
		return &Error{Outcome: UsageRefused, URL: resp.Request.URL.String(), Status: resp.StatusCode, Err: err}
	}
	return nil
}

// pageUsage is the verdict a page carries: what robots.txt says about its
// final URL (use: from the copy that admitted it, as robotsUsage gives it,
// when known; otherwise from the cached copy) and what its header says,
// combined most restrictively.
func (c *chain) pageUsage(resp *http.Response, use robots.Usage, known bool) robots.Usage {
	if !known {
		use = c.robotsUsage(resp.Request.URL, nil)
	}
	return use.Combine(robots.UsageFromHeader(resp.Header))
}

// usage returns the statement behind a UsageRefused error (zero otherwise).
func (e *Error) usage() robots.Usage {
	if ue, ok := e.Err.(*UsageError); ok {
		return ue.Usage
	}
	return robots.Usage{}
}
