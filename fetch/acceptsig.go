package fetch

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/goodbot-go/goodbot/signing"
)

// Accept-Signature (RFC 9421 section 5.1): a site that answers 401, 403 or
// 429 with an Accept-Signature field naming a web-bot-auth signature asks
// the bot to sign again, with the components and nonce it names. A bot with
// a Signer sends exactly one retry signed that way. The retry goes through
// the same chain as any request: robots.txt is checked again and the
// politeness layer makes it wait its turn (never overlapping another
// request to the host, the gap kept). A second challenge for the same
// request, or a challenge the bot cannot answer (a component it cannot
// sign, another key or tag), ends as AuthRequired with the reason; nothing
// loops.

// errSignatureChallenge is the cause of an AuthRequired outcome that an
// Accept-Signature challenge led to.
var errSignatureChallenge = errors.New("fetch: signature requested (Accept-Signature)")

// isChallenge reports whether resp asks for a signature.
func isChallenge(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
		return len(resp.Header.Values("Accept-Signature")) > 0
	}
	return false
}

// answerChallenge returns resp, or the response to the one signed retry
// resp's Accept-Signature asks for. out is the request resp answers, as
// sent down the inner chain.
func (c *chain) answerChallenge(out *http.Request, resp *http.Response) (*http.Response, error) {
	if c.signer == nil || !isChallenge(resp) {
		return resp, nil
	}
	fail := func(resp *http.Response, format string, args ...any) (*http.Response, error) {
		drain(resp)
		err := fmt.Errorf("%w: "+format, append([]any{errSignatureChallenge}, args...)...)
		c.log.Debug("fetch: signature challenge not answered", "url", out.URL.String(), "err", err)
		return nil, &Error{Outcome: AuthRequired, URL: out.URL.String(), Status: resp.StatusCode, Err: err}
	}
	if _, retried := signing.RequestedFrom(out.Context()); retried {
		return fail(resp, "asked again after the signed retry (status %d)", resp.StatusCode)
	}
	reqs, err := signing.ParseAcceptSignature(resp.Header.Values("Accept-Signature"))
	if err != nil {
		return fail(resp, "cannot be answered: %w", err)
	}
	var r *signing.Requested
	for i := range reqs {
		if reqs[i].Tag == signing.TagWebBotAuth {
			r = &reqs[i]
			break
		}
	}
	if r == nil {
		return resp, nil // not a web-bot-auth signature: the answer stands
	}
	retry := out.Clone(signing.WithRequested(out.Context(), r))
	// Can the Signer honour it? Said now, before any wait.
	if err := c.signer.SignRequested(retry.Clone(retry.Context()), r); err != nil {
		return fail(resp, "cannot sign what the site asks: %w", err)
	}
	drain(resp) // the first exchange is over before the retry queues
	if err := c.robots.Check(retry.Context(), c.agent, retry.URL); err != nil {
		return nil, &Error{Outcome: classify(err), URL: retry.URL.String(), Err: err}
	}
	c.log.Debug("fetch: answering a signature challenge", "url", out.URL.String(), "status", resp.StatusCode, "label", r.Label)
	resp2, err := c.send(retry)
	if err != nil {
		return nil, err
	}
	if isChallenge(resp2) {
		return fail(resp2, "asked again after the signed retry (status %d)", resp2.StatusCode)
	}
	return resp2, nil
}

// drain reads a little of resp's body and closes it, so the connection can
// be reused.
func drain(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	resp.Body.Close()
}
