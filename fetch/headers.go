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
