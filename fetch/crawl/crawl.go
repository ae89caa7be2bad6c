package crawl

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/links"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
)

// Page is what a [Crawler]'s Get reports for one item; the crawler acts on
// it after OnPage: it records the outcome, queues the links of Body, queues
// the item again (Retry) or gives up its site (StopSite). The zero value is
// an outcome with nothing to follow.
type Page struct {
	FinalURL *url.URL // after redirects (nil: the item's URL); also the base of Body's links
	Status   int
	Outcome  string // the fetch outcome ("ok", "disallowed", "blocked", ...)
	Body     []byte // HTML to read links from (nil: no links)
	Bytes    int64
	Reason   string // why, for the report
	// StopSite tells the crawler to give up the item's whole site (for
	// example: the host is down, asked for a wait longer than the crawler
	// takes, or its robots.txt is unreachable). Its queued items are dropped.
	StopSite bool
	// Retry asks for one more attempt later (a rate-limit answer: the site
	// is paused, the page is still wanted).
	Retry bool
}

// Crawler runs a [Frontier] to the end: one worker per site with queued
// items, at most Parallel sites at once (see the package doc for the order
// of events). Set Frontier and either Get or Fetcher; the other fields are
// optional. A Crawler is used once; Done may be called from any goroutine
// while it runs.
type Crawler struct {
	Frontier *Frontier
	// Get fetches one item. It is called for one item at a time per site,
	// from that site's worker. nil: Fetcher fetches it and Handle sees it.
	Get func(ctx context.Context, it Item) Page
	// Fetcher fetches each item when Get is nil; its result becomes the
	// item's Page through [PageOf].
	Fetcher *fetch.Fetcher
	// Handle, if set (and Get is nil), sees every page Fetcher fetched
	// without error, before the page's links are queued. It is called from
	// the site's worker, so calls for different sites run concurrently. An
	// error is logged; the crawl goes on.
	Handle func(ctx context.Context, it Item, p *fetch.Page) error
	// FollowLinks queues the same-site links of every HTML page (rel=nofollow
	// links are not followed).
	FollowLinks bool
	// CrossSite also follows links to other sites (the Frontier's Allowed
	// still decides which sites may be queued).
	CrossSite bool
	// MaxDepth bounds link following (0 = no bound).
	MaxDepth int
	// Parallel is how many sites are crawled at once (0 = 16). Each site
	// still gets one request at a time.
	Parallel int
	// OnPage is called after each Get, from the site's worker.
	OnPage func(it Item, p Page)
	Log    *slog.Logger

	done atomic.Int64
	mu   sync.Mutex // guards active
	// active holds the sites with a running worker.
	active map[string]bool
	wg     sync.WaitGroup
	sem    chan struct{}
}

// Done returns the number of items fetched so far.
func (c *Crawler) Done() int { return int(c.done.Load()) }

// ErrNoFetcher is returned by [Crawler.Run] without a Frontier, or
// without Get and Fetcher.
var ErrNoFetcher = errors.New("crawl: Crawler needs a Frontier and a Get or Fetcher")

// Run crawls until the frontier is empty (it returns nil) or ctx ends (it
// returns ctx.Err() once every worker has finished its current item; items
// not recorded stay queued, see the package doc).
func (c *Crawler) Run(ctx context.Context) error {
	if c.Frontier == nil || (c.Get == nil && c.Fetcher == nil) {
		return ErrNoFetcher
	}
	if c.Get == nil {
		c.Get = c.fetch
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	n := c.Parallel
	if n <= 0 {
		n = 16
	}
	c.sem = make(chan struct{}, n)
	c.active = map[string]bool{}
	c.schedule(ctx)
	c.wg.Wait()
	return ctx.Err()
}

// fetch is Get with the Fetcher and Handle.
func (c *Crawler) fetch(ctx context.Context, it Item) Page {
	p, err := c.Fetcher.Get(ctx, it.URL.String())
	if err == nil && c.Handle != nil {
		if herr := c.Handle(ctx, it, p); herr != nil {
			c.Log.Warn("page handler failed", "url", it.URL.Redacted(), "err", herr)
		}
	}
	return PageOf(p, err)
}

// PageOf turns the result of [fetch.Fetcher.Get] into the Page a Crawler
// acts on: the outcome, status, final URL and size; the body only for an
// HTML page fetched without error whose directives allow following (its
// links are followed; a nofollow page gives none); StopSite for an
// error that gives up the whole site ([StopsSite]); Retry for a
// rate-limited fetch ([fetch.ErrRateLimited]).
func PageOf(p *fetch.Page, err error) Page {
	cp := Page{Outcome: fetch.OutcomeOf(err).String(), StopSite: StopsSite(err), Retry: errors.Is(err, fetch.ErrRateLimited)}
	if err != nil {
		cp.Reason = err.Error()
	}
	if p == nil {
		return cp
	}
	cp.Status, cp.Bytes = p.Status, int64(len(p.Body))
	if p.FinalURL != "" {
		if u, perr := url.Parse(p.FinalURL); perr == nil {
			cp.FinalURL = u
		}
	}
	if err == nil && IsHTML(p) && !p.Rules.NoFollow {
		cp.Body = p.Body // links to follow; a nofollow page gives none
	}
	return cp
}

// StopsSite reports whether a fetch that ended with err gives up its whole
// site: the fetcher or the politeness transport gave up on the host, the
// host is down, or its robots.txt is unreachable.
func StopsSite(err error) bool {
	var de *robots.DisallowedError
	return errors.Is(err, fetch.ErrGaveUp) || errors.Is(err, politeness.ErrGaveUp) ||
		errors.Is(err, politeness.ErrHostDown) ||
		(errors.As(err, &de) && de.Unreachable)
}

// IsHTML reports whether a fetched page is an HTML document (by its
// Content-Type).
func IsHTML(p *fetch.Page) bool {
	if p == nil || p.Header == nil {
		return false
	}
	mt, _, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
	return err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}

// schedule starts a worker for every site with work and no worker.
func (c *Crawler) schedule(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.Frontier.Sites() {
		if !c.active[s] {
			c.active[s] = true
			c.wg.Add(1)
			go c.worker(ctx, s)
		}
	}
}

func (c *Crawler) worker(ctx context.Context, site string) {
	defer c.wg.Done()
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		c.finish(site)
		return
	}
	defer func() { <-c.sem }()
	for ctx.Err() == nil {
		c.mu.Lock()
		it, ok := c.Frontier.Next(site)
		if !ok {
			delete(c.active, site)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		p := c.Get(ctx, it)
		if ctx.Err() != nil {
			// Interrupted: the outcome is not recorded, so a journaled
			// item stays queued for the next run.
			break
		}
		c.done.Add(1)
		if c.OnPage != nil {
			c.OnPage(it, p)
		}
		// One journal step records the outcome: the item leaves the queue
		// (unless it is retried) together with the links it queued.
		var step Step
		if again, ok := c.retry(it, p); ok {
			step.Queued = append(step.Queued, again)
		} else {
			step.Done = append(step.Done, it.Key)
			if p.FinalURL != nil {
				if k := links.Normalize(p.FinalURL); k != it.Key {
					step.Done = append(step.Done, k)
				}
			}
		}
		if p.StopSite {
			step.Dropped = c.Frontier.drop(site)
			if n := len(step.Dropped); n > 0 {
				c.Log.Warn("giving up on site", "site", site, "dropped", n, "reason", p.Reason)
			}
		} else if c.FollowLinks && len(p.Body) > 0 && (c.MaxDepth == 0 || it.Depth < c.MaxDepth) {
			base := p.FinalURL
			if base == nil {
				base = it.URL
			}
			only := site
			if c.CrossSite {
				only = ""
			}
			step.Queued = append(step.Queued, c.Frontier.links(base, p.Body, it.Depth+1, only)...)
		}
		if err := c.Frontier.Record(ctx, step); err != nil {
			c.Log.Error("recording a page's outcome in the crawl journal", "url", it.URL.Redacted(), "err", err)
		}
		if len(step.Queued) > 0 {
			c.schedule(ctx) // starts workers for other sites' new links
		}
	}
	c.finish(site)
}

// retry queues it again when p asks for it (and it was not retried yet).
func (c *Crawler) retry(it Item, p Page) (Item, bool) {
	if !p.Retry {
		return Item{}, false
	}
	return c.Frontier.retry(it)
}

func (c *Crawler) finish(site string) {
	c.mu.Lock()
	delete(c.active, site)
	c.mu.Unlock()
}
