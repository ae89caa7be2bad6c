package fetch

import (
	"net/http"
)

// setHeaders sets the bot's headers on out (a clone).
func (c *chain) setHeaders(out *http.Request, redirected bool) error {
	ua, err := c.ua.expand(out.Context())
	if err != nil {
		return err
	}
	h := out.Header
	// Fixed values share one slice per chain (len == cap, so an Add below
	// copies rather than writes into it).
	if c.ua.parts == nil {
		h["User-Agent"] = c.uaVals
	} else {
		h["User-Agent"] = []string{ua}
	}
	if c.from != "" {
		h["From"] = c.fromVals
	} else {
		delete(h, "From")
	}
	if len(h["Accept"]) == 0 {
		if c.htmlOnly && isMachineFile(out.Context()) {
			h["Accept"] = c.machineAcceptVals
		} else {
			h["Accept"] = c.acceptVals
		}
	}
	// The keys are canonical already: delete, not Del.
	if c.jar == nil {
		delete(h, "Cookie")
	}
	delete(h, "Authorization")
	delete(h, "Proxy-Authorization")
	if redirected {
		// Validators belong to the URL first asked for, not to this one.
		delete(h, "If-None-Match")
		delete(h, "If-Modified-Since")
	}
	if v, ok := out.Context().Value(validatorsKey{}).(*conditional); ok {
		v.apply(out)
	}
	if isFresh(out.Context()) {
		h.Set("Cache-Control", "no-cache")
	}
	return nil
}

// plainFirstHop reports whether setHeaders would give req, the first
// request of a Fetcher's Get (get), exactly the chain's plainHeader: req
// has no header of its own, and nothing asks for more (validators to send,
// Cache-Control: no-cache, an HTML-only bot's Accept for machine files).
func (c *chain) plainFirstHop(req *http.Request, get *conditional) bool {
	ctx := req.Context()
	return len(req.Header) == 0 && get.v.IsZero() && !isFresh(ctx) && !(c.htmlOnly && isMachineFile(ctx))
}

// newPlainHeader returns what setHeaders gives an empty header with no
// per-request additions, for chain.plainHeader; nil when the User-Agent
// has placeholders.
func (c *chain) newPlainHeader() http.Header {
	if c.ua.parts != nil {
		return nil
	}
	h := http.Header{"User-Agent": c.uaVals, "Accept": c.acceptVals}
	if c.from != "" {
		h["From"] = c.fromVals
	}
	return h
}
