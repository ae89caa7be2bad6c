// Package hooty is HootyBot's crawler (seeds 001 and 002), run by
// examples/hootybot and by the demo: it reads a site configured as a
// knowledge source, HTML pages only and a bounded number per site; it stops
// the whole site while robots.txt answers a server error, gives up on a
// site that asks for too long a wait or stops answering, and reports every
// block instead of storing it.
package hooty

import (
	"context"
	"crypto/ed25519"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/profiles"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl"
)

const usage = "hootybot [flags] URL...\n\n" +
	"Crawls each knowledge-source site as HootyBot: HTML pages only, at most -max-pages per site."

// Run is hootybot's main. It returns the exit status.
func Run(ctx context.Context, args []string, env botkit.Env) int {
	f := botkit.Flags{Name: "hootybot"}
	fs := f.FlagSet(env, 200)
	maxWait := fs.Duration("max-wait", 10*time.Minute, "longest Retry-After to wait for; a site asking for more is given up (H4)")
	out := fs.String("out", "", "write each page's text into `dir`")
	if code, ok := f.ParseSites(fs, args, usage); !ok {
		return code
	}
	s, fetcher, code, done := botkit.Begin(ctx, &f, env, "",
		func(ed25519.PrivateKey) fetch.Bot { return profiles.Hooty(*maxWait, f.MaxPages, env.Scale) })
	if done {
		return code
	}
	defer s.Close()

	known := map[string]bool{}
	front := &crawl.Frontier{
		MaxPerSite: f.MaxPages,                                    // H7: a bounded number of pages per site
		Allowed:    func(site string) bool { return known[site] }, // knowledge sources only: no wandering
		Accept:     crawl.LooksHTML,                               // H7: HTML pages only
	}
	sites, code := f.Sites(fs, env)
	for _, u := range sites {
		known[crawl.Site(u)] = true
		front.Add(u, 0, "seed")
	}
	c := &botkit.Crawl{Fetcher: fetcher, Frontier: front, FollowLinks: true, Pages: &botkit.PageStore{Dir: *out},
		Use: botkit.UseAssistant, // an assistant's source: noindex and noai pages are not kept
		OnPage: func(it crawl.Item, p *fetch.Page, r botkit.Result) {
			switch r.Outcome {
			case "blocked": // H8: discarded and reported, never stored
				s.Log.Warn("blocked by bot protection: page discarded", "url", r.URL, "why", r.Reason)
			case "gave_up", "unreachable":
				s.Log.Warn("site stopped", "url", r.URL, "outcome", r.Outcome, "why", r.Reason)
			}
		}}
	counts := c.Run(ctx, s)
	s.Log.Info("crawl done", "outcomes", botkit.Summary(counts))
	if counts["ok"] == 0 {
		code = botkit.ExitPartial
	}
	return s.Exit(ctx, code)
}
