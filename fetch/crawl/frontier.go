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

// Frontier holds the URLs still to fetch, one FIFO queue per site. It is
// safe for concurrent use; set its fields before the first call. The zero
// value is ready: no page cap, every site and URL allowed, no journal, all
// in memory. Add, AddAll, AddLinks, Retry and Drop record their change in
// the Journal before they return; Next takes an item out of memory only
// (its outcome is recorded later, with [Frontier.Record]).
type Frontier struct {
	// MaxPerSite caps the URLs admitted per site (0 = no cap).
	MaxPerSite int
	// Allowed, if set, decides which sites may be queued (for example only the
	// seeds' sites). nil allows every site.
	Allowed func(site string) bool
	// Accept, if set, decides which URLs may be queued (for example only
	// those that look like HTML pages). nil accepts every URL.
	Accept func(u *url.URL) bool

	// Journal, if set, keeps the queue across runs (see the package doc).
	// Set it before the first Add.
	Journal Journal

	// Spill, if set with MaxInMemory, holds the queued items beyond
	// MaxInMemory: an item is queued in memory while fewer than MaxInMemory
	// are, else (or when its site already has spilled items, to keep each
	// site's order) it goes to Spill, and comes back in batches when its
	// site's queue in memory runs dry. The seen set stays in memory. Set
	// both before the first Add.
	Spill       Spill
	MaxInMemory int

	mu     sync.Mutex // guards the fields below
	seen   map[string]bool
	queues map[string][]Item
	count  map[string]int
	inMem  int            // items in queues
	spilt  map[string]int // items of each site in Spill
	queued int
	err    error // first journal error of Add and the like
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

// Step is one change of a journaled frontier.
type Step struct {
	// Done are the normalised URLs whose outcome is now recorded (a fetched
	// item and the final URL of its redirects): they leave the queue and
	// count as fetched.
	Done []string
	// Queued are items put in the queue (new, or again for a retry).
	Queued []Item
	// Dropped are the keys of queued items given up without a fetch.
	Dropped []string
}

// Resume loads the queue an earlier run left in the journal and returns
// how many items it holds. Call it before adding seeds.
func (f *Frontier) Resume(ctx context.Context) (int, error) {
	if f.Journal == nil {
		return 0, nil
	}
	items, counts, err := f.Journal.Load(ctx)
	if err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	for _, it := range items {
		if f.seen[it.Key] {
			continue
		}
		f.seen[it.Key] = true
		f.enqueue(it)
	}
	for site, n := range counts {
		f.count[site] = max(f.count[site], n)
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

func (f *Frontier) init() {
	if f.seen == nil {
		f.seen, f.queues, f.count, f.spilt = map[string]bool{}, map[string][]Item{}, map[string]int{}, map[string]int{}
	}
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

// enqueue puts it at the end of its site's queue: in memory, or in Spill
// (see Frontier.Spill). A Spill error keeps the item in memory. f.mu is held.
func (f *Frontier) enqueue(it Item) {
	f.queued++
	if f.Spill != nil && f.MaxInMemory > 0 && (f.inMem >= f.MaxInMemory || f.spilt[it.Site] > 0) {
		err := f.Spill.Push(context.Background(), it.Site, []Item{it})
		if err == nil {
			f.spilt[it.Site]++
			return
		}
		if f.err == nil {
			f.err = err
		}
	}
	f.queues[it.Site] = append(f.queues[it.Site], it)
	f.inMem++
}

// refill brings back a batch of site's spilled items into memory, at least
// one, at most what MaxInMemory leaves room for. f.mu is held.
func (f *Frontier) refill(site string) {
	n := min(f.spilt[site], max(1, f.MaxInMemory-f.inMem))
	its, err := f.Spill.Pop(context.Background(), site, n)
	if err != nil {
		if f.err == nil {
			f.err = err
		}
		return
	}
	if len(its) == 0 { // the Spill lost them: stop counting them
		f.queued -= f.spilt[site]
		delete(f.spilt, site)
		return
	}
	f.spilt[site] -= len(its)
	if f.spilt[site] <= 0 {
		delete(f.spilt, site)
	}
	f.queues[site] = append(f.queues[site], its...)
	f.inMem += len(its)
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
	it, ok := f.admit(u, depth, from)
	if ok {
		f.keep(f.Record(context.Background(), Step{Queued: []Item{it}}))
	}
	return ok
}

// AddAll is [Frontier.Add] for each of us at depth 0, with one journal
// step for all of them (one write, however many seeds). It returns how many
// were queued.
func (f *Frontier) AddAll(us []*url.URL, from string) int {
	var its []Item
	for _, u := range us {
		if it, ok := f.admit(u, 0, from); ok {
			its = append(its, it)
		}
	}
	f.keep(f.Record(context.Background(), Step{Queued: its}))
	return len(its)
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

// Err returns the first error the Journal returned to Add, AddLinks, Retry
// or Drop (the crawl goes on in memory; a restart may not resume those
// items).
func (f *Frontier) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// admit queues u in memory (see Add) and returns its item.
func (f *Frontier) admit(u *url.URL, depth int, from string) (Item, bool) {
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Item{}, false
	}
	key := links.Normalize(u)
	site := Site(u)
	if (f.Allowed != nil && !f.Allowed(site)) || (f.Accept != nil && !f.Accept(u)) {
		return Item{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	if f.seen[key] {
		return Item{}, false
	}
	if f.MaxPerSite > 0 && f.count[site] >= f.MaxPerSite {
		return Item{}, false
	}
	f.seen[key] = true
	f.count[site]++
	v := *u
	v.Fragment, v.RawFragment = "", ""
	it := Item{URL: &v, Key: key, Site: site, Depth: depth, From: from}
	f.enqueue(it)
	return it, true
}

// AddLinks queues the links of the HTML page body (found at base), except
// rel=nofollow ones and, with a Journal, those whose outcome an earlier run
// recorded; with site set, only links to that site. It returns how many
// were queued (recorded in the Journal in one step).
func (f *Frontier) AddLinks(base *url.URL, body []byte, depth int, site string) int {
	its := f.links(base, body, depth, site)
	f.keep(f.Record(context.Background(), Step{Queued: its}))
	return len(its)
}

// links is AddLinks without the journal: it returns the items queued.
func (f *Frontier) links(base *url.URL, body []byte, depth int, site string) []Item {
	ls, _ := links.Extract(base, bytes.NewReader(body))
	var out []Item
	for _, l := range ls {
		if strings.Contains(" "+l.Rel+" ", " nofollow ") || (site != "" && Site(l.URL) != site) {
			continue
		}
		if f.Journal != nil && !f.Seen(l.URL) {
			if done, err := f.Journal.Done(context.Background(), links.Normalize(l.URL)); err == nil && done {
				f.MarkSeen(l.URL)
				continue
			}
		}
		if it, ok := f.admit(l.URL, depth, "link"); ok {
			out = append(out, it)
		}
	}
	return out
}

// Retry queues it again at the end of its site's queue, for one more
// attempt after a rate-limit answer (the pause itself is the politeness
// transport's). It reports whether it was queued: an item is retried once.
func (f *Frontier) Retry(it Item) bool {
	again, ok := f.retry(it)
	if ok {
		f.keep(f.Record(context.Background(), Step{Queued: []Item{again}}))
	}
	return ok
}

// retry is Retry without the journal: it returns the item queued.
func (f *Frontier) retry(it Item) (Item, bool) {
	if it.Tries >= 1 {
		return Item{}, false
	}
	it.Tries++
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	f.enqueue(it)
	return it, true
}

// Seen reports whether u (normalised) was ever queued or marked seen.
func (f *Frontier) Seen(u *url.URL) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[links.Normalize(u)]
}

// MarkSeen records u as seen without queueing it (for example a URL
// fetched in an earlier run, or the final URL of a redirect).
func (f *Frontier) MarkSeen(u *url.URL) { f.mark(u, false) }

// MarkFetched records u as seen and counts it against its site's
// MaxPerSite, without queueing it: a page of this crawl fetched outside the
// frontier (a home page read first) is one of the capped pages.
func (f *Frontier) MarkFetched(u *url.URL) { f.mark(u, true) }

func (f *Frontier) mark(u *url.URL, counted bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	key := links.Normalize(u)
	if counted && !f.seen[key] {
		f.count[Site(u)]++
	}
	f.seen[key] = true
}

// Next pops the next item of site.
func (f *Frontier) Next(site string) (Item, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queues[site]) == 0 && f.spilt[site] > 0 {
		f.refill(site)
	}
	q := f.queues[site]
	if len(q) == 0 {
		return Item{}, false
	}
	it := q[0]
	q[0] = Item{}
	f.queues[site] = q[1:]
	if len(f.queues[site]) == 0 {
		delete(f.queues, site)
	}
	f.queued--
	f.inMem--
	return it, true
}

// Drop forgets the queued items of site (the site was given up on) and
// returns how many there were.
func (f *Frontier) Drop(site string) int {
	keys := f.drop(site)
	f.keep(f.Record(context.Background(), Step{Dropped: keys}))
	return len(keys)
}

// drop is Drop without the journal: it returns the keys dropped.
func (f *Frontier) drop(site string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.spilt[site] > 0 {
		n := f.spilt[site]
		f.refill(site)
		if f.spilt[site] == n { // the Spill failed: its items stay there
			break
		}
	}
	q := f.queues[site]
	keys := make([]string, len(q))
	for i, it := range q {
		keys[i] = it.Key
	}
	delete(f.queues, site)
	f.queued -= len(q)
	f.inMem -= len(q)
	return keys
}

// Sites returns the sites with queued items.
func (f *Frontier) Sites() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.queues)+len(f.spilt))
	for s := range f.queues {
		out = append(out, s)
	}
	for s := range f.spilt {
		if len(f.queues[s]) == 0 {
			out = append(out, s)
		}
	}
	return out
}

// InMemory returns the number of queued items held in memory (at most
// MaxInMemory with a Spill, plus a batch brought back for a site whose
// queue in memory ran dry when the bound was reached: one item).
func (f *Frontier) InMemory() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inMem
}

// Len returns the number of queued items.
func (f *Frontier) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queued
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
