package crawl

import (
	"bytes"
	"context"
	"net/url"
	"path"
	"strings"
	"sync"

	"github.com/goodbot-go/goodbot/fetch/links"
	"github.com/goodbot-go/goodbot/politeness"
)

// Frontier decides which URLs a crawl queues and holds them, one FIFO queue
// per site, in its [Queue]. It is safe for concurrent use; set its fields
// before the first call. The zero value is ready: no page cap, every site
// and URL allowed, no journal, all in memory. Add, AddAll, AddLinks, Retry
// and Drop record their change in the Journal before they return; Next
// takes an item out of memory only (its outcome is recorded later, with
// [Frontier.Record]).
type Frontier struct {
	// MaxPerSite caps the URLs admitted per site (0 = no cap).
	MaxPerSite int
	// Allowed, if set, decides which sites may be queued (for example only the
	// seeds' sites). nil allows every site.
	Allowed func(site string) bool
	// Accept, if set, decides which URLs may be queued (for example only
	// those that look like HTML pages). nil accepts every URL.
	Accept func(u *url.URL) bool

	// Queue, if set, holds the queued items, the seen set and the
	// schedule of the sites (for example a queue shared by the processes
	// of one crawl). nil: the Frontier's own, in memory, with the Journal
	// and Spill below. Next, Sites, Drop, Retry, InMemory, Resume and the
	// Journal and Spill fields concern that in-memory queue only: with a
	// Queue set, the Queue keeps its own state, and a [Crawler] drives it.
	// Set it before the first Add.
	Queue Queue

	// Journal, if set, keeps the queue across runs (see the package doc).
	// Set it before the first Add.
	Journal Journal

	// Spill, if set with MaxInMemory, holds the queued items beyond
	// MaxInMemory: an item is queued in memory while fewer than MaxInMemory
	// are, else (or when its site already has spilled items, to keep each
	// site's order) it goes to Spill, and comes back when its site's queue
	// in memory runs dry, in a batch of at least B = min(64, MaxInMemory)
	// items (more if MaxInMemory leaves room): memory then holds at most
	// MaxInMemory queued items plus up to B per site, MaxInMemory + B ×
	// (sites with items in memory) in all. A Spill that is also a
	// [SeenStore] holds the seen set too (see the package doc's Memory
	// section). Set both before the first Add.
	Spill       Spill
	MaxInMemory int

	mu  sync.Mutex // guards the fields below
	mem *memQueue  // the in-memory queue, made on first use
	err error      // first journal or Queue error of Add and the like
}

// Journal keeps a [Frontier]'s queue in durable storage. Implementations
// must be safe for concurrent use.
type Journal interface {
	// Load returns the items queued by earlier runs and not finished, in
	// queue order, and the count of URLs admitted per site in that crawl.
	Load(ctx context.Context) ([]Item, map[string]int, error)
	// Done reports whether the outcome of the URL with normalised key was
	// recorded (in this run or an earlier one).
	Done(ctx context.Context, key string) (bool, error)
	// Record applies step durably, all of it or nothing.
	Record(ctx context.Context, step Step) error
}

// Step is one change of a journaled frontier, and the change
// [Queue.Finish] applies with the end of a lease.
type Step struct {
	// Done are the normalised URLs whose outcome is now recorded (a fetched
	// item and the final URL of its redirects): they leave the queue and
	// count as fetched.
	Done []string
	// Queued are items put in the queue (new, or again for a retry).
	Queued []Item
	// Dropped are the keys of queued items given up without a fetch.
	Dropped []string

	// DropSite (for [Queue.Finish]) drops every queued item of the
	// finished item's site; the Journal sees their keys in Dropped.
	DropSite bool
	// MaxPerSite (for [Queue.Finish]) is the cap per site the new items of
	// Queued are admitted under (0: no cap).
	MaxPerSite int
}

// memq returns the in-memory queue, made on first use.
func (f *Frontier) memq() *memQueue {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mem == nil {
		f.mem = newMemQueue(f.Journal, f.Spill, f.MaxInMemory, f.newSeen())
	}
	return f.mem
}

// queue returns the Queue in use.
func (f *Frontier) queue() Queue {
	if f.Queue != nil {
		return f.Queue
	}
	return f.memq()
}

// Resume loads the queue an earlier run left in the journal and returns
// how many items it holds. Call it before adding seeds. Without a Journal
// it returns 0; with a Queue set, the number of items the Queue holds.
func (f *Frontier) Resume(ctx context.Context) (int, error) {
	if f.Queue != nil {
		return f.Queue.Len(ctx)
	}
	if f.Journal == nil {
		return 0, nil
	}
	items, counts, err := f.Journal.Load(ctx)
	if err != nil {
		return 0, err
	}
	q := f.memq()
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, it := range items {
		if q.seen.has(it.Key) {
			continue
		}
		q.seen.add(it.Key)
		q.enqueue(q.site(it.Site), it)
	}
	q.flushSpill()
	for site, n := range counts {
		s := q.site(site)
		s.count = max(s.count, n)
	}
	return len(items), nil
}

// Record applies step to the journal (nothing without one).
func (f *Frontier) Record(ctx context.Context, step Step) error {
	if f.Journal == nil || (len(step.Done) == 0 && len(step.Queued) == 0 && len(step.Dropped) == 0) {
		return nil
	}
	return f.Journal.Record(ctx, step)
}

// Spill holds a [Frontier]'s queued items beyond its MaxInMemory, one FIFO
// queue per site. Implementations must be safe for concurrent use; the
// Frontier calls them with its lock held, one call at a time.
type Spill interface {
	// Push appends items (all of one site) to that site's queue.
	Push(ctx context.Context, site string, items []Item) error
	// Pop removes and returns up to n items from the head of site's queue.
	Pop(ctx context.Context, site string, n int) ([]Item, error)
}

// Item is one URL to fetch.
type Item struct {
	URL   *url.URL
	Key   string // normalised URL
	Site  string // scheme://host[:port], lowercased
	Depth int    // links from the seed
	From  string // "seed", "sitemap", "link"
	Tries int    // earlier attempts (see Retry)
}

// Site returns the site of u, the unit robots.txt and pacing apply to:
// politeness.HostKey (every spelling of one host is one site) written as an
// origin, scheme://host[:port] with the default port dropped.
func Site(u *url.URL) string { return politeness.SiteOrigin(u) }

// Add queues u unless it was seen before, its site is not allowed, or the
// site's cap is reached. It reports whether u was queued. A URL fetched in an
// earlier run is queued again (the fetcher then reports it a duplicate);
// with a Journal the item is recorded before Add returns.
// A journal error is kept for [Frontier.Err]; the item stays queued in
// memory.
func (f *Frontier) Add(u *url.URL, depth int, from string) bool {
	it, ok := f.item(u, depth, from)
	return ok && f.add([]Item{it}) == 1
}

// AddAll is [Frontier.Add] for each of us at depth 0, with one journal
// step for all of them (one write, however many seeds). It returns how many
// were queued.
func (f *Frontier) AddAll(us []*url.URL, from string) int {
	var its []Item
	for _, u := range us {
		if it, ok := f.item(u, 0, from); ok {
			its = append(its, it)
		}
	}
	return f.add(its)
}

// add queues the admitted items its and returns how many the Queue took.
func (f *Frontier) add(its []Item) int {
	if len(its) == 0 {
		return 0
	}
	out, err := f.queue().Add(context.Background(), its, f.MaxPerSite)
	f.keep(err)
	return len(out)
}

// keep remembers the first journal error of Add, AddLinks, Retry or Drop.
func (f *Frontier) keep(err error) {
	if err == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

// Err returns the first error the Journal (or the Queue, the Spill, or the
// SeenStore)
// returned to Add, AddLinks, Retry or Drop (the crawl goes on in memory;
// a restart may not resume those items).
func (f *Frontier) Err() error {
	f.mu.Lock()
	err, q := f.err, f.mem
	f.mu.Unlock()
	if err == nil && q != nil {
		q.mu.Lock()
		err = q.err
		if st, ok := q.seen.(*storeSeen); ok && err == nil {
			err = st.err
		}
		q.mu.Unlock()
	}
	return err
}

// item returns u's item if u may be queued at all: an http or https URL
// whose site is Allowed and which Accept takes (whether it was seen or
// its site is full is the Queue's to say).
func (f *Frontier) item(u *url.URL, depth int, from string) (Item, bool) {
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Item{}, false
	}
	site := Site(u)
	if (f.Allowed != nil && !f.Allowed(site)) || (f.Accept != nil && !f.Accept(u)) {
		return Item{}, false
	}
	v := *u
	v.Fragment, v.RawFragment = "", ""
	return Item{URL: &v, Key: links.Normalize(u), Site: site, Depth: depth, From: from}, true
}

// AddLinks queues the links of the HTML page body (found at base), except
// rel=nofollow ones and, with a Journal, those whose outcome an earlier run
// recorded; with site set, only links to that site. It returns how many
// were queued (recorded in the Journal in one step).
func (f *Frontier) AddLinks(base *url.URL, body []byte, depth int, site string) int {
	return f.add(f.links(base, body, depth, site))
}

// links returns the items AddLinks would offer the Queue: the links that
// may be queued, seen or not.
func (f *Frontier) links(base *url.URL, body []byte, depth int, site string) []Item {
	ls, _ := links.Extract(base, bytes.NewReader(body))
	var out []Item
	for _, l := range ls {
		if strings.Contains(" "+l.Rel+" ", " nofollow ") || (site != "" && Site(l.URL) != site) {
			continue
		}
		it, ok := f.item(l.URL, depth, "link")
		if !ok {
			continue
		}
		if f.Journal != nil && !f.seenKey(it.Key) {
			if done, err := f.Journal.Done(context.Background(), it.Key); err == nil && done {
				f.keep(f.queue().Mark(context.Background(), false, it))
				continue
			}
		}
		out = append(out, it)
	}
	return out
}

// Retry queues it again at the end of its site's queue, for one more
// attempt after a rate-limit answer (the pause itself is the politeness
// transport's). It reports whether it was queued: an item is retried once.
// (A [Crawler] retries through its Queue's Finish.)
func (f *Frontier) Retry(it Item) bool {
	again, ok := retried(it)
	if !ok {
		return false
	}
	q := f.memq()
	q.mu.Lock()
	q.enqueue(q.site(again.Site), again)
	q.flushSpill()
	q.mu.Unlock()
	f.keep(f.Record(context.Background(), Step{Queued: []Item{again}}))
	return true
}

// retried returns it for one more attempt, unless it was retried already.
func retried(it Item) (Item, bool) {
	if it.Tries >= 1 {
		return Item{}, false
	}
	it.Tries++
	return it, true
}

// Seen reports whether u (normalised) was ever queued or marked seen.
func (f *Frontier) Seen(u *url.URL) bool { return f.seenKey(links.Normalize(u)) }

// seenKey is Seen of a normalised key.
func (f *Frontier) seenKey(key string) bool {
	seen, err := f.queue().Seen(context.Background(), key)
	f.keep(err)
	return seen
}

// MarkSeen records u as seen without queueing it (for example a URL
// fetched in an earlier run, or the final URL of a redirect).
func (f *Frontier) MarkSeen(u *url.URL) { f.mark(u, false) }

// MarkFetched records u as seen and counts it against its site's
// MaxPerSite, without queueing it: a page of this crawl fetched outside the
// frontier (a home page read first) is one of the capped pages.
func (f *Frontier) MarkFetched(u *url.URL) { f.mark(u, true) }

func (f *Frontier) mark(u *url.URL, counted bool) {
	f.keep(f.queue().Mark(context.Background(), counted, Item{Key: links.Normalize(u), Site: Site(u)}))
}

// Next pops the next item of site from the in-memory queue (see
// [Frontier.Queue]), leased or not.
func (f *Frontier) Next(site string) (Item, bool) {
	q := f.memq()
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.sites[site]
	if s == nil {
		return Item{}, false
	}
	it, ok := q.pop(s)
	if !s.waiting() {
		q.unschedule(s)
	}
	return it, ok
}

// Drop forgets the queued items of site (the site was given up on) in the
// in-memory queue and returns how many there were.
func (f *Frontier) Drop(site string) int {
	q := f.memq()
	q.mu.Lock()
	var keys []string
	if s := q.sites[site]; s != nil {
		keys = q.drop(s)
	}
	q.mu.Unlock()
	f.keep(f.Record(context.Background(), Step{Dropped: keys}))
	return len(keys)
}

// Sites returns the sites with queued items in the in-memory queue.
func (f *Frontier) Sites() []string {
	q := f.memq()
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []string
	for name, s := range q.sites {
		if s.waiting() {
			out = append(out, name)
		}
	}
	return out
}

// InMemory returns the number of queued items the in-memory queue holds
// in memory, leased ones included (with a Spill: at most MaxInMemory plus
// up to min(64, MaxInMemory) per site, see [Frontier.Spill]).
func (f *Frontier) InMemory() int {
	q := f.memq()
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.inMem
}

// Len returns the number of items queued or leased.
func (f *Frontier) Len() int {
	n, err := f.queue().Len(context.Background())
	f.keep(err)
	return n
}

// nonHTML are file extensions that name documents other than HTML pages.
var nonHTML = map[string]bool{
	".pdf": true, ".doc": true, ".docx": true, ".xls": true, ".xlsx": true, ".ppt": true, ".pptx": true,
	".zip": true, ".gz": true, ".tgz": true, ".rar": true, ".7z": true, ".exe": true, ".dmg": true, ".iso": true,
	".jpg": true, ".jpeg": true, ".png": true, ".gif": true, ".webp": true, ".svg": true, ".ico": true, ".bmp": true,
	".mp3": true, ".mp4": true, ".m4a": true, ".wav": true, ".avi": true, ".mov": true, ".webm": true,
	".css": true, ".js": true, ".json": true, ".xml": true, ".rss": true, ".txt": true, ".csv": true, ".woff": true, ".woff2": true,
}

// LooksHTML reports whether u may name an HTML page: its path does not end
// in the extension of another kind of file (.pdf, .jpg, .zip...). An
// HTML-only crawler need not even ask for the others.
func LooksHTML(u *url.URL) bool {
	return !nonHTML[strings.ToLower(path.Ext(u.Path))]
}
