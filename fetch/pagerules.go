package fetch

import (
	"net/http"
	"time"

	"github.com/goodbot-go/goodbot/robots"
)

// pageRules is what a page says to the bot about keeping it and following
// its links: its Robots-Tag and X-Robots-Tag fields and, for an HTML body
// (or one without a Content-Type), the robots meta elements of its head,
// for every bot and for the bot's token and former names, as they stand at
// now (a past unavailable_after is noindex). body is the body already read.
func (c *chain) pageRules(h http.Header, body []byte, now time.Time) robots.PageRules {
	r := robots.PageRulesFromHeader(h, c.agent)
	if ct := h.Get("Content-Type"); ct == "" || isHTML(ct) {
		r = r.Union(robots.PageRulesFromHTML(body, c.agent))
	}
	return r.At(now)
}
