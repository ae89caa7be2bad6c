package crawl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

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

// Crawler runs a [Frontier] to the end: a fixed pool of Parallel workers
// takes the sites whose turn has come, the one due longest first, one
// request at a time per site (see the package doc for the order of
// events). Set Frontier and either Get or Fetcher; the other fields are
// optional. A Crawler is used once; Done may be called from any goroutine
// while it runs.
type Crawler struct {
	Frontier *Frontier
	// Get fetches one item. It is called for one item at a time per site,
	// from any of the workers. nil: Fetcher fetches it and Handle sees it.
	Get func(ctx context.Context, it Item) Page
	// Fetcher fetches each item when Get is nil; its result becomes the
	// item's Page through [PageOf]. Set with Get too, it tells when each
	// site's next turn comes ([fetch.Fetcher.NextTurn]): without it a site
	// is due again as soon as its item is done, and Get waits for the
	// site's turn while it holds a worker.
	Fetcher *fetch.Fetcher
	// Handle, if set (and Get is nil), sees every page Fetcher fetched
	// without error, before the page's links are queued. It is called from
	// the workers, so calls for different sites run concurrently. An
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
	// Parallel is the number of workers: how many requests are in flight
	// at most (0 = [DefaultParallel]). A worker holds its slot only for one
	// item's fetch, not while the site waits for its turn, so the rate is
	// bounded by Parallel / (request duration), not by Parallel / (the
	// sites' delay).
	Parallel int
	// LeaseTTL is how long an item stays leased to a worker before the
	// Queue gives it to another (0 = [DefaultLeaseTTL]): it matters for a
	// Queue shared with other processes, where a worker may die.
	LeaseTTL time.Duration
	// Recheck, if positive, is the longest a worker pool waits before it
	// asks the Queue again when no site is due. With the Frontier's own
	// queue leave it 0 (the pool wakes when a site becomes due or an item
	// ends); with a Queue shared with other processes, set it to see their
	// new items sooner than the next ready time this process knows.
	Recheck time.Duration
	// OnPage is called after each Get, from the worker that ran it.
	OnPage func(it Item, p Page)
	Log    *slog.Logger

	done atomic.Int64
}

// DefaultParallel is the number of a [Crawler]'s workers when Parallel is
// 0. A worker is busy only for the duration of one request (the sites'
// delays are waited in the schedule, holding nothing), so 256 workers give
// 256 / latency requests per second: 1,280 per second at 200 ms, enough
// for 2,000 sites at one page a second each with 100 ms answers, each site
// still paced by the politeness layer. An idle worker costs a parked
// goroutine; a busy one, its request and the page it reads.
const DefaultParallel = 256

// Done returns the number of items fetched so far.
func (c *Crawler) Done() int { return int(c.done.Load()) }

// ErrNoFetcher is returned by [Crawler.Run] without a Frontier, or
// without Get and Fetcher.
var ErrNoFetcher = errors.New("crawl: Crawler needs a Frontier and a Get or Fetcher")

// ErrQueue is the sentinel of the error [Crawler.Run] returns when the
// Frontier's Queue fails to lease an item or to record an outcome.
var ErrQueue = errors.New("crawl: queue failed")

// Run crawls until the frontier is empty (it returns nil), ctx ends (it
// returns ctx.Err() once every worker has finished its current item; items
// not recorded stay queued, see the package doc) or the Queue fails (it
// returns an error wrapping [ErrQueue] and the Queue's error, once every
// worker has finished its current item). The Queue fails when it cannot
// lease an item, or when its Finish fails other than with [ErrLeaseLost]
// (a Journal that cannot write, a shared queue's server gone): Run then
// leases nothing more, since every page fetched after that would be
// fetched again when the crawl resumes from what was recorded. Each
// outcome not recorded is logged with its URL.
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
		n = DefaultParallel
	}
	q := c.Frontier.queue()
	fail := new(failure)
	work := make(chan Item)
	freed := make(chan struct{}, n)
	var wg, finishers sync.WaitGroup
	// finishing takes the Finishes made beside the workers (nil: none);
	// finished tells the dispatcher that one returned (its site may be due).
	var finishing chan finishJob
	var finished chan struct{}
	if finishWaits(q) {
		finishing, finished = make(chan finishJob, n), make(chan struct{}, 1)
		for range n {
			finishers.Go(func() {
				for j := range finishing {
					c.finish(ctx, q, fail, j.it, j.step, j.ready)
					select {
					case finished <- struct{}{}: // the dispatcher looks at the schedule again
					default: // it is told already
					}
				}
			})
		}
	}
	for range n {
		wg.Go(func() {
			for it := range work {
				c.run(ctx, q, fail, it, finishing)
				freed <- struct{}{}
			}
		})
	}
	err := c.dispatch(ctx, q, fail, n, work, freed, finished)
	close(work)
	wg.Wait()
	if finishing != nil {
		close(finishing)
		finishers.Wait()
	}
	if err != nil {
		return err
	}
	if err := fail.err(); err != nil {
		return fmt.Errorf("%w: recording an outcome: %w", ErrQueue, err)
	}
	return ctx.Err()
}

// failure keeps the first error of a Run's Queue.Finish other than a
// lost lease.
type failure struct{ first atomic.Pointer[error] }

// set keeps err if it is the first.
func (f *failure) set(err error) { f.first.CompareAndSwap(nil, &err) }

// err returns the first error set, nil if none.
func (f *failure) err() error {
	if p := f.first.Load(); p != nil {
		return *p
	}
	return nil
}

// dispatch leases the due items and hands each to a free worker (n at
// first; freed tells of one more) until the crawl is over, ctx ends or the
// Queue fails (to lease: its error is returned; to finish: fail is set).
// With no site due it waits for the next ready time, a worker to finish, a
// finisher's Finish to return (finished), or Recheck.
func (c *Crawler) dispatch(ctx context.Context, q Queue, fail *failure, n int, work chan<- Item, freed, finished <-chan struct{}) error {
	idle := n
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if idle == 0 {
			select {
			case <-freed:
				idle++
			case <-ctx.Done():
				return nil
			}
			continue
		}
		if fail.err() != nil {
			// The Finish that failed freed a worker or told finished, so
			// the dispatcher comes back here before it leases again.
			return nil
		}
		now := time.Now()
		it, next, ok, err := q.Lease(ctx, now, c.LeaseTTL)
		if ctx.Err() != nil {
			if ok { // leased as ctx ended: give it back untouched
				c.finish(ctx, q, fail, it, Step{}, time.Time{})
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrQueue, err)
		}
		if ok {
			idle--
			work <- it
			continue
		}
		if next.IsZero() {
			return nil // nothing queued or leased: the crawl is over
		}
		wait := next.Sub(now)
		if c.Recheck > 0 {
			wait = min(wait, c.Recheck)
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-freed:
			idle++
		case <-finished:
		case <-timer.C:
		case <-ctx.Done():
			return nil
		}
		timer.Stop()
	}
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

// run fetches one leased item and records its outcome, with the links it
// queued, in one Finish: the site is then due at its next turn. The Finish
// goes to finishing when it is not nil and has room.
func (c *Crawler) run(ctx context.Context, q Queue, fail *failure, it Item, finishing chan<- finishJob) {
	ready, wait, refused := c.turn(ctx, it)
	if wait {
		c.finish(ctx, q, fail, it, Step{}, ready) // not its turn yet: back to the schedule
		return
	}
	p := c.Get(ctx, it)
	if ctx.Err() != nil {
		// Interrupted: the outcome is not recorded, the item goes back
		// to the head of its site's queue (and stays in the journal).
		c.finish(ctx, q, fail, it, Step{}, time.Time{})
		return
	}
	c.done.Add(1)
	if c.OnPage != nil {
		c.OnPage(it, p)
	}
	step := Step{MaxPerSite: c.Frontier.MaxPerSite, DropSite: p.StopSite}
	if again, ok := retried(it); ok && p.Retry {
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
		c.Log.Warn("giving up on site", "site", it.Site, "reason", p.Reason)
	} else if c.FollowLinks && len(p.Body) > 0 && (c.MaxDepth == 0 || it.Depth < c.MaxDepth) {
		base := p.FinalURL
		if base == nil {
			base = it.URL
		}
		only := it.Site
		if c.CrossSite {
			only = ""
		}
		step.Queued = append(step.Queued, c.Frontier.links(base, p.Body, it.Depth+1, only)...)
	}
	if !refused {
		ready = c.nextTurn(it)
	} else {
		ready = time.Time{} // no request: the site's next item may be refused too
	}
	// The worker is free for the next request while the outcome becomes
	// durable: a finisher makes the Finish, unless Parallel of them wait for
	// one already (or the Queue's Finish does not wait: no finishers).
	select {
	case finishing <- finishJob{it, step, ready}:
	default:
		c.finish(ctx, q, fail, it, step, ready)
	}
}

// finishJob is a Finish handed to a finisher.
type finishJob struct {
	it    Item
	step  Step
	ready time.Time
}

// finishWaits reports whether q's Finish may wait for something (a
// journal's sync, a shared queue's round trip), so that a worker had better
// not: the in-memory queue without a journal never waits.
func finishWaits(q Queue) bool {
	m, ok := q.(*memQueue)
	return !ok || m.journal != nil
}

// finish ends the lease of it with step (even when ctx has ended: the step
// describes a fetch that happened) and logs a failure; a failure other
// than a lost lease (the item is another taker's now) stops the Run.
func (c *Crawler) finish(ctx context.Context, q Queue, fail *failure, it Item, step Step, ready time.Time) {
	if err := q.Finish(context.WithoutCancel(ctx), it, step, ready); err != nil {
		c.Log.Error("recording a page's outcome in the crawl queue", "url", it.URL.Redacted(), "err", err)
		if !errors.Is(err, ErrLeaseLost) {
			fail.set(err)
		}
	}
}

// turn reports whether the site of it must wait for its turn, and until when.
// With a Fetcher, the site's robots.txt is read first if the Fetcher has
// no copy (through the same paced chain, so the site's first gap, with its
// Crawl-delay, is known before its first page): a site new to the crawl
// then waits for its turn in the schedule, not in a worker. An item leased
// before its turn that the Fetcher refuses without a request (robots.txt
// disallows it) does not wait (refused): its outcome is recorded at once,
// and its site's next item is leased at once too.
func (c *Crawler) turn(ctx context.Context, it Item) (ready time.Time, wait, refused bool) {
	if c.Fetcher == nil {
		return time.Time{}, false, false
	}
	if r := c.Fetcher.Robots(); r != nil {
		if _, ok := r.Cached(it.URL); !ok {
			_, _ = r.Get(ctx, it.URL) // a failure is Get's to report, from the cache
		}
	}
	ready = c.nextTurn(it)
	if !ready.After(time.Now()) {
		return ready, false, false
	}
	refused = c.Fetcher.Refuses(it.URL.String())
	return ready, !refused, refused
}

// nextTurn is when the site of it may be served again: the Fetcher's next turn
// for the site, or at once without a Fetcher.
func (c *Crawler) nextTurn(it Item) time.Time {
	if c.Fetcher == nil {
		return time.Time{}
	}
	return c.Fetcher.NextTurn(it.URL.String())
}
