// Package demoweb is the small built-in web the demo runs the bots against:
// local sites that behave like real ones (robots.txt variants, sitemaps, a
// site that rate-limits, one behind a bot challenge, a slow one, a robots.txt
// that answers 503, directory listings with and without a backlink). It is
// built on [fetchtest], served on loopback under virtual host names ending in
// ".test", and records every request for the demo's timeline.
package demoweb

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// Host names of the demo web.
const (
	Parish    = "stmarys-parish.test" // BothyBot's customer: former-name groups, sitemap, llms.txt
	School    = "school.test"         // rate-limits once (429 + Retry-After), then recovers
	Shop      = "shop.test"           // behind a bot challenge (status 200 and 403)
	Slow      = "slow.test"           // answers slowly, one page hangs
	Down      = "robots-down.test"    // robots.txt answers 503
	Dead      = "dead.test"           // resets every connection
	Busy      = "busy.test"           // asks for a day's pause (Retry-After: 86400)
	Directory = "citydir.test"        // the directory whose listings are checked
)

// NewsHosts are the sites of SofyaBot's index crawl.
var NewsHosts = []string{"news-a.test", "news-b.test", "news-c.test", "news-d.test"}

// Listing hosts for DirectoriesBot.
const (
	Bakery  = "bakery.test"  // links back: verified
	Florist = "florist.test" // no backlink: link missing
	Plumber = "plumber.test" // robots.txt disallows DirectoriesBot: unverified
	Cafe    = "cafe.test"    // the listing page is gone: error 404
	Moved   = "moved.test"   // the listing page moved (one redirect), links back
	Spam    = "spam.test"    // on the block list: never fetched
)

// T0 is the demo web's publication clock: the lastmod dates of its pages.
var T0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// Web is the demo web.
type Web struct {
	*fetchtest.Web
}

// New builds the demo web (not yet started).
func New() *Web {
	w := &Web{fetchtest.New()}
	w.parish()
	w.school()
	w.shop()
	w.slow()
	w.down()
	w.Host(Dead).Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n"))
	w.Host(Dead).Fallback(fetchtest.Reset())
	w.Host(Busy).Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n"))
	w.Host(Busy).Fallback(fetchtest.RetryAfter(http.StatusServiceUnavailable, "86400"))
	w.news()
	w.directories()
	return w
}

func page(title string, hrefs ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html><html><head><title>%s</title></head><body><h1>%s</h1>\n", title, title)
	fmt.Fprintf(&b, "<p>This is the %s page. It says something useful.</p>\n<ul>\n", strings.ToLower(title))
	for _, h := range hrefs {
		fmt.Fprintf(&b, "<li><a href=%q>%s</a></li>\n", h, h)
	}
	b.WriteString("</ul></body></html>\n")
	return b.String()
}

// ParishPages are the public pages of the parish site, with their lastmod.
var ParishPages = []string{"/", "/mass-times", "/sacraments", "/news", "/news/advent", "/contact"}

func (w *Web) parish() {
	h := w.Host(Parish)
	h.Handle("/robots.txt", fetchtest.Robots(`# St Mary's parish
User-agent: BothyBot
Crawl-delay: 0.3

User-agent: CleatBot
Disallow: /staff/

User-agent: UnvarnishedCrawler
Disallow: /archive/

User-agent: *
Disallow: /

Sitemap: http://`+Parish+`/sitemap.xml
`))
	links := map[string][]string{
		"/":            {"/mass-times", "/sacraments", "/news", "/contact", "/staff/rota", "/archive/2019", "mailto:office@stmarys-parish.test"},
		"/news":        {"/news/advent", "/"},
		"/news/advent": {"/news"},
	}
	for i, p := range ParishPages {
		title := strings.Trim(p, "/")
		if title == "" {
			title = "Home"
		}
		h.Handle(p, fetchtest.Page{Body: page(title, links[p]...), ETag: fmt.Sprintf(`"v1-%d"`, i), LastModified: T0})
	}
	h.Handle("/staff/rota", fetchtest.HTML(page("Staff rota")))
	h.Handle("/archive/2019", fetchtest.HTML(page("Archive")))
	h.Handle("/llms.txt", fetchtest.Text("text/plain; charset=utf-8", "# St Mary's parish\n\n> Mass times, sacraments and news.\n\n- [Mass times](/mass-times)\n"))
	w.SetParishSitemap(nil)
}

// SetParishSitemap serves the parish sitemap with every page at lastmod T0,
// except the pages in moved, whose lastmod is the given time (a freshness
// check must refetch exactly those).
func (w *Web) SetParishSitemap(moved map[string]time.Time) {
	var urls []fetchtest.SitemapURL
	for _, p := range append(append([]string(nil), ParishPages...), "/staff/rota") {
		lm := T0
		if t, ok := moved[p]; ok {
			lm = t
		}
		urls = append(urls, fetchtest.SitemapURL{Loc: "http://" + Parish + p, LastMod: lm})
	}
	w.Host(Parish).Handle("/sitemap.xml", fetchtest.Sitemap(urls...))
}

// TouchParishPage republishes path with a new body and Last-Modified.
func (w *Web) TouchParishPage(path string, at time.Time) {
	w.Host(Parish).Handle(path, fetchtest.Page{Body: page("Updated " + path), ETag: `"v2"`, LastModified: at})
}

func (w *Web) school() {
	h := w.Host(School)
	h.Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n"))
	h.Handle("/", fetchtest.HTML(page("School", "/term-dates", "/timetable", "/uniform", "/prospectus.pdf")))
	h.Handle("/term-dates", fetchtest.HTML(page("Term dates", "/")))
	// The first request for the timetable is turned away for 1 s.
	h.Handle("/timetable", fetchtest.Sequence(fetchtest.RetryAfter(http.StatusTooManyRequests, "1"), fetchtest.HTML(page("Timetable"))))
	h.Handle("/uniform", fetchtest.HTML(page("Uniform")))
	h.Handle("/prospectus.pdf", fetchtest.Text("application/pdf", "%PDF-1.4 not really a pdf"))
}

func (w *Web) shop() {
	h := w.Host(Shop)
	h.Handle("/robots.txt", fetchtest.Robots("User-agent: *\nDisallow: /checkout\n"))
	h.Handle("/", fetchtest.Challenge(http.StatusOK)) // a challenge hiding behind 200
	h.Fallback(fetchtest.Challenge(http.StatusForbidden))
}

func (w *Web) slow() {
	h := w.Host(Slow)
	h.Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n"))
	h.Handle("/", fetchtest.Slow(300*time.Millisecond, fetchtest.HTML(page("Slow home", "/a", "/b", "/stuck"))))
	h.Handle("/a", fetchtest.Slow(300*time.Millisecond, fetchtest.HTML(page("A"))))
	h.Handle("/b", fetchtest.Slow(300*time.Millisecond, fetchtest.HTML(page("B"))))
	h.Handle("/stuck", fetchtest.Hang())
}

func (w *Web) down() {
	h := w.Host(Down)
	h.Handle("/robots.txt", fetchtest.Status(http.StatusServiceUnavailable))
	h.Fallback(fetchtest.HTML(page("Never fetched")))
}

func (w *Web) news() {
	for i, host := range NewsHosts {
		h := w.Host(host)
		robots := "User-agent: *\nDisallow: /private/\n"
		if i == 0 {
			robots = "User-agent: SofyaBot\nDisallow: /private/\nCrawl-delay: 0.4\n\nUser-agent: *\nDisallow: /\n"
		}
		h.Handle("/robots.txt", fetchtest.Robots(robots))
		var paths []string
		for j := 1; j <= 5; j++ {
			paths = append(paths, fmt.Sprintf("/story/%d", j))
		}
		h.Handle("/", fetchtest.HTML(page("News "+host, append(paths, "/private/drafts", "/", "/story/1?ref=home#top")...)))
		for j, p := range paths {
			h.Handle(p, fetchtest.HTML(page("Story "+p, "/", paths[(j+1)%len(paths)])))
		}
		if i == 1 { // one site answers 509 once
			h.Handle("/story/3", fetchtest.Sequence(fetchtest.RetryAfter(509, "1"), fetchtest.HTML(page("Story 3"))))
		}
		h.Handle("/private/drafts", fetchtest.HTML(page("Drafts")))
	}
}

// ListingURL returns the listing URL the directory's listing for host is
// checked at, and Backlink the URL it must link to.
func ListingURL(host string) string { return "http://" + host + "/partners" }

// Backlink is the directory page a listed business must link to.
func Backlink(host string) string {
	return "https://" + Directory + "/listing/" + strings.TrimSuffix(host, ".test")
}

func (w *Web) directories() {
	w.Host(Directory).Handle("/", fetchtest.HTML(page("City directory")))
	for _, host := range []string{Bakery, Florist, Plumber, Cafe, Moved, Spam} {
		w.Host(host).Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n"))
	}
	w.Host(Bakery).Handle("/partners", fetchtest.HTML(page("Our partners", "/", "https://www."+Directory+"/listing/bakery#reviews")))
	w.Host(Florist).Handle("/partners", fetchtest.HTML(page("Partners", "/", "https://elsewhere.test/")))
	w.Host(Plumber).Handle("/robots.txt", fetchtest.Robots("User-agent: DirectoriesBot\nDisallow: /partners\n\nUser-agent: *\nAllow: /\n"))
	w.Host(Plumber).Handle("/partners", fetchtest.HTML(page("Partners", Backlink(Plumber))))
	w.Host(Moved).Handle("/partners", fetchtest.Redirect("/about/partners", http.StatusMovedPermanently))
	w.Host(Moved).Handle("/about/partners", fetchtest.HTML(page("Partners", Backlink(Moved))))
	w.Host(Spam).Handle("/partners", fetchtest.HTML(page("Partners", Backlink(Spam))))
}

// ListingsCSV is the demo's listings file: one row per listing host and one
// malformed row, to show that a bad row is named and the rest still runs.
func ListingsCSV() string {
	var b strings.Builder
	b.WriteString("listing_url,backlink,directory,schedule\n")
	for _, h := range []string{Bakery, Florist, Plumber, Cafe, Moved, Spam} {
		fmt.Fprintf(&b, "%s,%s,%s,weekly\n", ListingURL(h), Backlink(h), Directory)
	}
	b.WriteString("http://broken.test/partners,https://citydir.test/listing/broken,citydir.test,fortnightly\n")
	return b.String()
}
