package fetch

import (
	"fmt"
	"net/http"
	"net/url"
)

// NewTransport returns the bot's transport alone: the http.RoundTripper
// that [New] puts in its client, for a library that builds its own
// *http.Client (or wraps the transport again) around it.
//
// The transport keeps the bot's limits by itself, whatever the client around
// it does: a fetch's total time (Limits.Timeout) runs from its first request
// through every redirect hop and the body, and a redirect past
// Limits.MaxRedirects is refused with a TooManyRedirects [*Error] before it
// is sent (a redirect from https to http with InsecureRedirect when
// Bot.RefuseDowngrade is set). It recognises a redirect hop the way net/http's
// client marks one, by the request's Response field; a client that follows
// redirects with new requests of its own (Response nil) makes each hop a new
// fetch, with a budget of its own.
//
// A client's own CheckRedirect and Timeout still apply on top, so the
// stricter limit wins. Unlike [New]'s client, the refusal comes back as the
// client's error with no response, not as the last redirect answer.
//
// Like [New], each call builds its own robots cache and (unless bot.Gate is
// set) its own pacing state. The transport is safe for concurrent use.
func NewTransport(bot Bot) (http.RoundTripper, error) {
	c, err := newChain(bot)
	if err != nil {
		return nil, err
	}
	return c.outer, nil
}

// checkHop applies the redirect rules to req, a redirect hop when
// req.Response is set: the hop limit, counted back through the previous
// hops' requests, and the https-to-http refusal.
func (c *chain) checkHop(req *http.Request) error {
	if req.Response == nil || req.Response.Request == nil {
		return nil
	}
	max := c.limits.maxRedirects()
	if n := redirectsBefore(req); n > max {
		return tooManyRedirects(req.URL, max)
	}
	prev := req.Response.Request.URL
	if c.noDowngrade && req.URL.Scheme == "http" && prev != nil && prev.Scheme == "https" {
		return insecureRedirect(req.URL, prev)
	}
	return nil
}

// redirectsBefore counts the redirects that led to req: 1 for the first
// redirect target, 2 for the next... It stops at a hop without a response.
func redirectsBefore(req *http.Request) int {
	n := 0
	for r := req; r.Response != nil && r.Response.Request != nil; r = r.Response.Request {
		n++
	}
	return n
}

// tooManyRedirects is the error for a redirect to u past the limit max.
func tooManyRedirects(u *url.URL, max int) error {
	return &Error{Outcome: TooManyRedirects, URL: u.Redacted(),
		Err: fmt.Errorf("fetch: stopped after %d redirects", max)}
}

// insecureRedirect is the error for a redirect from https (from) to http (u).
func insecureRedirect(u, from *url.URL) error {
	return &Error{Outcome: InsecureRedirect, URL: u.Redacted(),
		Err: fmt.Errorf("%w (from %s)", ErrInsecureRedirect, from.Redacted())}
}
