// Package sofya is SofyaBot's index crawler (seed 003), run by
// examples/sofyabot and by the demo: a frontier over many sites with one
// worker per site, so throughput grows with the number of hosts (S11) while
// each site sees at most one request a second, with jitter, unless its
// Crawl-delay asks for more; each URL is fetched once, ever (the fetched set
// is kept in the state file); 429, 503 and 509 slow the whole site down.
package sofya

import (
	"context"
	"flag"
	"net/netip"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/crawl"
	"github.com/goodbot-go/goodbot/examples/internal/profiles"
	"github.com/goodbot-go/goodbot/fetch"
)

const usage = "sofyabot [flags] URL...\n\n" +
	"Crawls the given sites (and, with -wander, the sites they link to) for SofyaBot's index."

// Run is sofyabot's main. It returns the exit status.
func Run(ctx context.Context, args []string, env botkit.Env) int {
	fs := flag.NewFlagSet("sofyabot", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	f := botkit.Flags{Name: "sofyabot"}
	f.Register(fs, botkit.DefaultStatePath("sofyabot"), 1000)
	source := fs.String("source", "", "published source `address` to connect from (S2), e.g. 159.195.72.86")
	parallel := fs.Int("parallel", 64, "sites crawled at once (each site still gets one request at a time)")
	wander := fs.Bool("wander", false, "follow links to other sites too")
	out := fs.String("out", "", "write each page's text into `dir`")
	if code, ok := botkit.Parse(fs, args, usage); !ok {
		return code
	}
	if len(fs.Args()) == 0 {
		fs.Usage()
		return botkit.ExitUsage
	}
	var local netip.Addr
	if *source != "" {
		a, err := netip.ParseAddr(*source)
		if err != nil {
			botkit.Fail(env.Stderr, f.Name, "-source %q is not an IP address", *source)
			return botkit.ExitUsage
		}
		local = a
	}
	s, code, done := botkit.Start(&f, env, "")
	if done {
		return code
	}
	defer s.Close()
	bot := profiles.Sofya(local, env.Scale)
	if err := s.Apply(&bot); err != nil {
		botkit.Fail(env.Stderr, f.Name, "%v", err)
		return botkit.ExitFailure
	}
	fetcher, err := fetch.NewFetcher(bot)
	if err != nil {
		botkit.Fail(env.Stderr, f.Name, "%v", err)
		return botkit.ExitFailure
	}
	defer fetcher.CloseIdleConnections()

	seeds := map[string]bool{}
	front := &crawl.Frontier{MaxPerSite: f.MaxPages, Accept: crawl.LooksHTML}
	if !*wander {
		front.Allowed = func(site string) bool { return seeds[site] }
	}
	code = botkit.ExitOK
	for _, arg := range fs.Args() {
		u, err := botkit.SiteURL(arg)
		if err != nil {
			botkit.Fail(env.Stderr, f.Name, "%v; skipped", err)
			code = botkit.ExitPartial
			continue
		}
		seeds[crawl.Site(u)] = true
		front.Add(u, 0, "seed")
	}
	pages := &botkit.PageStore{Dir: *out, Log: s.Log}
	c := &botkit.Crawl{Fetcher: fetcher, Frontier: front, FollowLinks: true, CrossSite: *wander, Parallel: *parallel,
		OnPage: func(it crawl.Item, p *fetch.Page, r botkit.Result) { pages.Save(it.URL, p, r) }}
	counts := c.Run(ctx, s)
	s.Log.Info("crawl done", "sites", len(seeds), "outcomes", botkit.Summary(counts))
	return code
}
