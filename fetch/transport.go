package fetch

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/goodbot-go/goodbot/robots"
)

// botTransport is the outermost layer, run once per hop.
type botTransport struct{ c *chain }

func (t *botTransport) CloseIdleConnections() { closeIdle(t.c.base) }

func closeIdle(rt http.RoundTripper) {
	if ci, ok := rt.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

func (t *botTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := t.c
	if req.Method != http.MethodGet && req.Method != http.MethodHead && req.Method != "" {
		closeBody(req)
		return nil, fmt.Errorf("%w (got %s)", ErrMethod, req.Method)
	}
	// The first hop of a Fetcher's Get was admitted before the Get waited
	// for the host's gap (Fetcher.admit): not again.
	get := fetcherGet(req.Context()) // nil: not a Fetcher's Get
	admitted := req.Response == nil && get != nil && get.admitted == req.URL
	if !admitted {
		if err := c.admitURL(req.URL); err != nil {
			closeBody(req)
			return nil, err
		}
	}
	if err := c.checkHop(req); err != nil { // the limits of a client without CheckRedirect
		closeBody(req)
		return nil, err
	}

	// The fetch's time budget: made on the first hop, found again on later
	// hops through the previous hop's response.
	ctx := req.Context()
	var b *budget
	if req.Response != nil && req.Response.Request != nil {
		b, _ = req.Response.Request.Context().Value(budgetKey{}).(*budget)
	}
	bctx := &budgetCtx{b: b} // carries b down the chain
	cancel, timed := nop, false
	if b == nil {
		// The fetch's first hop: its budget starts when the request is
		// sent (limitsTransport).
		bctx.own.timeout = c.limits.timeout()
		bctx.b = &bctx.own
	} else if d, ok := b.deadline(); ok {
		timed = true
		if !time.Now().Before(d) {
			closeBody(req)
			return nil, &Error{Outcome: Timeout, URL: req.URL.Redacted(), Err: context.DeadlineExceeded}
		}
		ctx, cancel = withDeadline(ctx, d)
	}
	if !admitted {
		if _, _, err := c.admitSite(ctx, req.URL); err != nil {
			cancel()
			closeBody(req)
			return nil, err
		}
	}

	// A shallow copy with its own header: the layers below clone again
	// before changing anything else.
	bctx.Context = ctx
	out := req.WithContext(bctx)
	plain := admitted && c.plainHeader != nil && c.plainFirstHop(req, get)
	if plain {
		out.Header = c.plainHeader // never written: see chain.plainHeader
	} else {
		out.Header = cloneHeader(req.Header)
	}
	if h, ok := sendHost(req.URL); ok {
		// Sent to the site key's spelling of the host: net/http would dial
		// a full-width or ideographic spelling as another name.
		u := *req.URL
		u.Host = h
		out.URL = &u
		if out.Host == req.URL.Host {
			out.Host = ""
		}
	}
	if !plain {
		if err := c.setHeaders(out, req.Response != nil); err != nil {
			cancel()
			closeBody(req)
			return nil, err
		}
	}
	resp, err := c.send(out)
	if err == nil {
		resp, err = c.answerChallenge(out, resp) // Accept-Signature
	}
	if err != nil {
		cancel()
		return nil, wrap(err, req.URL.Redacted())
	}
	if timed {
		resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	}
	resp.Request = out
	if err := c.inspect(resp, &bctx.pre, get != nil); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// admitURL applies the URL rules (checkURL) to a request's URL.
func (c *chain) admitURL(u *url.URL) error {
	if err := c.checkURL(u); err != nil {
		c.log.Debug("fetch: refused", "url", u.Redacted(), "err", err)
		return err
	}
	return nil
}

// admitSite applies the site's rules to a request for u that passed
// admitURL: the payment budget, robots.txt (fetched first if need be) and
// the usage it states. It returns the robots.txt copy that allowed u, with
// the cache's hold on it, or nil (and the zero Held) when the copy changed
// while it decided.
func (c *chain) admitSite(ctx context.Context, u *url.URL) (*robots.Robots, robots.Held, error) {
	if c.pay != nil {
		if err := c.pay.check(u); err != nil {
			return nil, robots.Held{}, err
		}
	}
	r, held, err := c.robots.GetHeld(ctx, u)
	if err == nil && !r.Allowed(c.agent, requestTarget(u)) {
		// Check states the refusal (its rule, why robots.txt is
		// unreachable), or allows u under a copy that came meanwhile.
		r, held, err = nil, robots.Held{}, c.robots.Check(ctx, c.agent, u)
	}
	if err != nil {
		c.log.Debug("fetch: robots.txt refused", "url", u.Redacted(), "err", err)
		// Classified as a robots outcome even when the robots.txt fetch
		// failed on one of this chain's own errors.
		return nil, robots.Held{}, &Error{Outcome: classify(err), URL: u.Redacted(), Err: err}
	}
	if err := c.checkRobotsUsage(u, r); err != nil {
		c.log.Debug("fetch: usage refused", "url", u.String(), "err", err)
		return nil, robots.Held{}, err
	}
	return r, held, nil
}

// cloneHeader is Header.Clone with room for the headers setHeaders adds.
func cloneHeader(h http.Header) http.Header {
	n := 0
	for _, vv := range h {
		n += len(vv)
	}
	out := make(http.Header, len(h)+4)
	all := make([]string, n)
	for k, vv := range h {
		if vv == nil {
			out[k] = nil
			continue
		}
		m := copy(all, vv)
		out[k] = all[:m:m]
		all = all[m:]
	}
	return out
}

func closeBody(req *http.Request) {
	if req.Body != nil && req.Body != http.NoBody {
		req.Body.Close()
	}
}
