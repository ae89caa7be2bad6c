// Package crawl is the crawling loop the example crawlers share: a frontier
// of per-host queues with a seen set of normalised URLs (S8: each URL once),
// a page cap per site (H7, B10), and one worker per host so that many hosts
// are crawled side by side (S11) while each host sees one request at a time
// (the politeness transport enforces the per-host pacing underneath).
package crawl

import (
	"bytes"
	"net/url"
	"path"
	"strings"
	"sync"

	"github.com/goodbot-go/goodbot/examples/internal/links"
)

// Frontier holds the URLs still to fetch, one FIFO queue per site. It is
// safe for concurrent use. The zero value is ready, with no page cap.
type Frontier struct {
	// MaxPerSite caps the URLs admitted per site (0 = no cap).
	MaxPerSite int
	// Allowed, if set, decides which sites may be queued (for example only the
	// seeds' sites). nil allows every site.
	Allowed func(site string) bool
	// Accept, if set, decides which URLs may be queued (for example only
	// those that look like HTML pages). nil accepts every URL.
	Accept func(u *url.URL) bool

	mu     sync.Mutex // guards the fields below
	seen   map[string]bool
	queues map[string][]Item
	count  map[string]int
	queued int
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

// Site returns the site key of u: scheme://host[:port] with the default port
// dropped, lowercased (the unit robots.txt and pacing apply to).
func Site(u *url.URL) string {
	n := links.Normalize(&url.URL{Scheme: u.Scheme, Host: u.Host})
	return n[:len(n)-1] // drop the "/" Normalize adds
}

// Add queues u unless it was seen before, its site is not allowed, or the
// site's cap is reached. It reports whether u was queued.
func (f *Frontier) Add(u *url.URL, depth int, from string) bool {
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	key := links.Normalize(u)
	site := Site(u)
	if (f.Allowed != nil && !f.Allowed(site)) || (f.Accept != nil && !f.Accept(u)) {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		f.seen, f.queues, f.count = map[string]bool{}, map[string][]Item{}, map[string]int{}
	}
	if f.seen[key] {
		return false
	}
	if f.MaxPerSite > 0 && f.count[site] >= f.MaxPerSite {
		return false
	}
	f.seen[key] = true
	f.count[site]++
	f.queued++
	v := *u
	v.Fragment, v.RawFragment = "", ""
	f.queues[site] = append(f.queues[site], Item{URL: &v, Key: key, Site: site, Depth: depth, From: from})
	return true
}

// AddLinks queues the links of the HTML page body (found at base), except
// rel=nofollow ones; with site set, only links to that site. It returns how
// many were queued.
func (f *Frontier) AddLinks(base *url.URL, body []byte, depth int, site string) int {
	ls, _ := links.Extract(base, bytes.NewReader(body))
	n := 0
	for _, l := range ls {
		if strings.Contains(" "+l.Rel+" ", " nofollow ") || (site != "" && Site(l.URL) != site) {
			continue
		}
		if f.Add(l.URL, depth, "link") {
			n++
		}
	}
	return n
}

// Retry queues it again at the end of its site's queue, for one more
// attempt after a rate-limit answer (the pause itself is the politeness
// transport's). It reports whether it was queued: an item is retried once.
func (f *Frontier) Retry(it Item) bool {
	if it.Tries >= 1 {
		return false
	}
	it.Tries++
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.queues == nil {
		f.queues = map[string][]Item{}
	}
	f.queues[it.Site] = append(f.queues[it.Site], it)
	f.queued++
	return true
}

// Seen reports whether u was ever queued (S8).
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
	if f.seen == nil {
		f.seen, f.queues, f.count = map[string]bool{}, map[string][]Item{}, map[string]int{}
	}
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
	return it, true
}

// Drop forgets the queued items of site (the site was given up on) and
// returns how many there were.
func (f *Frontier) Drop(site string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.queues[site])
	delete(f.queues, site)
	f.queued -= n
	return n
}

// Sites returns the sites with queued items.
func (f *Frontier) Sites() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.queues))
	for s := range f.queues {
		out = append(out, s)
	}
	return out
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
// HTML-only bot (H7) does not even ask for the others.
func LooksHTML(u *url.URL) bool {
	return !nonHTML[strings.ToLower(path.Ext(u.Path))]
}
