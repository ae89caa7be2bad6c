// Package sofya is SofyaBot's index crawler (seed 003), run by
// examples/sofyabot and by the demo: a frontier over many sites whose
// workers take each site at its turn, so throughput grows with the number
// of hosts (S11) while
// each site sees at most one request a second, with jitter, unless its
// Crawl-delay asks for more; each URL is fetched once, ever (the fetched set
// is kept in the state file); 429, 503 and 509 slow the whole site down.
// With -redis it is one worker of a fleet: the frontier, the politeness
// gate, robots.txt copies and the fetched set live in Redis (botkit.Fleet),
// and the worker exits 0 when nothing is queued or leased any more.
package sofya

import (
	"context"
	"crypto/ed25519"
	"net/netip"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/profiles"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl"
)

const usage = "sofyabot [flags] URL...\n\n" +
	"Crawls the given sites (and, with -wander, the sites they link to) for SofyaBot's index."

// Run is sofyabot's main. It returns the exit status.
func Run(ctx context.Context, args []string, env botkit.Env) int {
	f := botkit.Flags{Name: "sofyabot", Resume: true}
	fs := f.FlagSet(env, 1000)
	f.RegisterFleet(fs)
	source := fs.String("source", "", "published source `address` to connect from (S2), e.g. 159.195.72.86")
	parallel := fs.Int("parallel", 256, "`N` requests in flight at most (each site still gets one request at a time, at its turn)")
	wander := fs.Bool("wander", false, "follow links to other sites too")
	out := fs.String("out", "", "write each page's text into `dir`")
	if code, ok := f.ParseSites(fs, args, usage); !ok {
		return code
	}
	var local netip.Addr
	if *source != "" {
		a, err := netip.ParseAddr(*source)
		if err != nil {
			botkit.UsageError(fs, "-source %q is not an IP address", *source)
			return botkit.ExitUsage
		}
		local = a
	}
	s, fetcher, code, done := botkit.Begin(ctx, &f, env, "",
		func(ed25519.PrivateKey) fetch.Bot { return profiles.Sofya(local, env.Scale) })
	if done {
		return code
	}
	defer s.Close()

	seeds := map[string]bool{}
	// Beyond 100,000 queued URLs the queue waits in the state file.
	front := &crawl.Frontier{MaxPerSite: f.MaxPages, Accept: crawl.LooksHTML, Journal: s.Journal(),
		Spill: s.Spill(), MaxInMemory: 100_000}
	if !*wander && s.Fleet == nil {
		front.Allowed = func(site string) bool { return seeds[site] }
	}
	if s.Fleet != nil {
		// One crawl for the whole fleet: the frontier lives in Redis (links
		// stay on their own site unless -wander, so a worker that joins
		// without seeds needs no list of sites).
		front.Queue = s.Fleet.Queue
	}
	sites, code := f.Sites(fs, env)
	for _, u := range sites {
		seeds[crawl.Site(u)] = true
	}
	// The state file keeps the frontier: a crawl stopped at any moment
	// (even by SIGKILL) continues where it stopped.
	if n, err := front.Resume(ctx); err != nil {
		s.Log.Warn("could not resume the last crawl; starting from the seeds", "err", err)
	} else if n > 0 && s.Fleet != nil {
		s.Log.Info("joining the fleet's crawl", "crawl", f.Crawl, "queued", n)
	} else if n > 0 {
		s.Log.Info("resuming the last crawl", "queued", n)
	}
	front.AddAll(sites, "seed")
	if err := front.Err(); err != nil {
		s.WorkFailed("the seeds could not be queued in the crawl journal or the fleet's queue", "err", err)
	}
	c := &botkit.Crawl{Fetcher: fetcher, Frontier: front, FollowLinks: true, CrossSite: *wander, Parallel: *parallel, Fleet: s.Fleet,
		Pages: &botkit.PageStore{Dir: *out},
		Use:   botkit.UseIndex} // a search index: noindex pages are not kept; noai does not concern search
	counts := c.Run(ctx, s)
	s.Log.Info("crawl done", "sites", len(seeds), "outcomes", botkit.Summary(counts))
	return s.Exit(ctx, code)
}
