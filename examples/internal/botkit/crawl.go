package botkit

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl"
)

// Crawl is one crawl run over a frontier with a bot's fetcher.
type Crawl struct {
	Fetcher     *fetch.Fetcher
	Frontier    *crawl.Frontier
	FollowLinks bool
	CrossSite   bool // follow links to other sites too (Frontier.Allowed decides)
	Parallel    int  // requests in flight at most (0: crawl.Crawler's default)
	// Fleet, if set, is the fleet whose shared Queue the Frontier uses:
	// the crawler then leases items for Fleet.LeaseTTL and asks for the
	// other workers' new items every Fleet.Recheck.
	Fleet *Fleet
	// Fresh sends Cache-Control: no-cache (B9 refetches).
	Fresh bool
	// OnPage, if set, sees every page after its result is printed.
	OnPage func(it crawl.Item, p *fetch.Page, r Result)
	// Pages, if set, stores the text of every page fetched ok and not
	// dropped by its directives (see Use).
	Pages *PageStore
	// Use is what the bot keeps pages for: it decides which page
	// directives drop a page (see [Use.ApplyRules]); nofollow pages' links
	// are never followed.
	Use Use

	mu     sync.Mutex // guards counts, failed
	counts map[string]int
	failed map[string]bool // the URLs whose last fetch failed (see Failed); a URL fetched since leaves it
}

// Failed reports whether a fetch that ended with err leaves work undone: no
// answer about the page (unreachable, timeout, rate limited and not
// retried, gave up) or the site given up (robots.txt unreachable, host
// down).
func Failed(err error) bool {
	return fetch.OutcomeOf(err).Retryable() || StopsSite(err)
}

// Run crawls until the frontier is empty, printing one result per URL and a
// progress line on stderr while it runs. It returns the count of each
// outcome. A URL whose last fetch [Failed], or whose page text could not be
// written, is reported with [Session.WorkFailed], so the run ends with
// ExitPartial.
func (c *Crawl) Run(ctx context.Context, s *Session) map[string]int {
	c.counts, c.failed = map[string]int{}, map[string]bool{}
	cr := &crawl.Crawler{
		Frontier:    c.Frontier,
		Fetcher:     c.Fetcher, // each site is served at its next turn
		FollowLinks: c.FollowLinks,
		CrossSite:   c.CrossSite,
		Parallel:    c.Parallel,
		Log:         s.Log,
		Get: func(ctx context.Context, it crawl.Item) crawl.Page {
			p, err := c.Fetcher.Get(ctx, it.URL.String(), fetch.GetOptions{Fresh: c.Fresh})
			r := ResultOf(it.URL.String(), p, err)
			c.Use.ApplyRules(&r, p)
			s.Out.Emit(r)
			c.mu.Lock()
			c.counts[r.Outcome]++
			// A rate-limited first try is queued again (crawl.Crawler retries
			// once), possibly for another worker of a fleet: it is not a
			// failure of this run; a retry that fails is.
			retry := errors.Is(err, fetch.ErrRateLimited) && it.Tries == 0
			if Failed(err) && !retry {
				c.failed[r.URL] = true
			} else {
				delete(c.failed, r.URL) // only failures are kept: memory does not grow with the crawl
			}
			c.mu.Unlock()
			if c.OnPage != nil {
				c.OnPage(it, p, r)
			}
			if err := c.Pages.Save(it.URL, p, r); err != nil {
				s.WorkFailed("page text not written", "url", r.URL, "err", err)
			}
			cp := crawl.PageOf(p, err)
			cp.Status, cp.Outcome, cp.Bytes, cp.Reason = r.Status, r.Outcome, r.Bytes, r.Reason
			if !FollowsLinks(p, r) {
				cp.Body = nil // a nofollow page's links are not followed
			}
			return cp
		},
	}
	if c.Fleet != nil {
		cr.LeaseTTL, cr.Recheck = c.Fleet.LeaseTTL, c.Fleet.Recheck
	}
	prog := s.Prog
	if prog == nil {
		prog = &Progress{W: s.Env.Stderr}
		s.Prog = prog
	}
	prog.SetCounts(func() (int, int) { return cr.Done(), c.Frontier.Len() })
	stop := prog.Start(ctx)
	if err := cr.Run(ctx); err != nil && ctx.Err() == nil {
		s.WorkFailed("the crawl stopped: its queue failed", "err", err)
	}
	stop()
	if n := len(c.failed); n > 0 {
		s.WorkFailed("some pages were not fetched: no answer, or the site was given up", "urls", n)
	}
	return c.counts
}

// IsHTML reports whether a fetched page is an HTML document.
func IsHTML(p *fetch.Page) bool { return crawl.IsHTML(p) }

// Summary formats outcome counts as "ok=3 blocked=1".
func Summary(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Itoa(counts[k]))
	}
	return b.String()
}
