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
	Abbey     = "abbey.test"          // BothyBot: 429 with Retry-After, then 503 without
	Directory = "citydir.test"        // the directory whose listings are checked
)

// Sites that say more than Allow/Disallow (HootyBot's signals step).
const (
	AISignal = "ai-signal.test" // robots.txt Content-Signal: ai-input=no
	NoIndex  = "noindex.test"   // the home page says X-Robots-Tag: noindex
	Paywall  = "paywall.test"   // /article answers 402 with crawler-price (pay per crawl)
	Quota    = "quota.test"     // the home page says RateLimit r=0;t=2: no quota left for 2 s
)

// SignalHosts are the sites of the signals step.
var SignalHosts = []string{AISignal, NoIndex, Paywall, Quota}

// QuotaReset is the t of quota.test's RateLimit field.
const QuotaReset = 2 * time.Second

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
	Outage  = "outage.test"  // robots.txt answers 500: the page is not fetched
	Chain   = "chain.test"   // the listing page redirects four times
	Huge    = "huge.test"    // the listing page is 6 MB
	Stall   = "stall.test"   // the listing page never answers
)

// ListingHosts are the hosts of the demo's listings, in the listings file's
// order.
var ListingHosts = []string{Bakery, Florist, Plumber, Cafe, Moved, Spam, Outage, Chain, Huge, Stall}

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
	w.abbey()
	w.news()
	w.directories()
	w.signals()
	return w
}

func (w *Web) signals() {
	open := fetchtest.Robots("User-agent: *\nAllow: /\n")
	w.Host(AISignal).
		Handle("/robots.txt", fetchtest.Robots("User-agent: *\nContent-Signal: search=yes, ai-input=no, ai-train=no\nAllow: /\n")).
		Fallback(fetchtest.HTML(page("Recipes", "/soup")))
	w.Host(NoIndex).Handle("/robots.txt", open).
		Handle("/", fetchtest.Page{Body: page("Noticeboard", "/about"), Header: http.Header{"X-Robots-Tag": {"noindex"}}}).
		Handle("/about", fetchtest.HTML(page("About the noticeboard")))
	w.Host(Paywall).Handle("/robots.txt", open).
		Handle("/", fetchtest.HTML(page("Journal", "/article"))).
		Handle("/article", fetchtest.Status(http.StatusPaymentRequired, "crawler-price: USD 0.01"))
	w.Host(Quota).Handle("/robots.txt", open).
		Handle("/", fetchtest.Page{Body: page("Catalogue", "/books"),
			Header: http.Header{"Ratelimit": {fmt.Sprintf(`"default";r=0;t=%d`, int(QuotaReset.Seconds()))}}}).
		Handle("/books", fetchtest.HTML(page("Books")))
}

func page(title string, hrefs ...string) string { return pageWith(title, "", hrefs...) }

// pageWith is page with extra raw HTML (scripts, forms) in its body.
func pageWith(title, extra string, hrefs ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html><html><head><title>%s</title></head><body><h1>%s</h1>\n%s", title, title, extra)
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
	// "*" and "$" (H2): print views of any page, and the staff room itself
	// but not the pages under it.
	h.Handle("/robots.txt", fetchtest.Robots("User-agent: *\nDisallow: /*?print\nDisallow: /staffroom$\n"))
	h.Handle("/", fetchtest.HTML(page("School", "/term-dates", "/timetable", "/uniform", "/prospectus.pdf",
		"/term-dates?print", "/staffroom", "/staffroom/visitors")))
	h.Handle("/term-dates", fetchtest.HTML(page("Term dates", "/")))
	h.Handle("/staffroom", fetchtest.HTML(page("Staff room")))
	h.Handle("/staffroom/visitors", fetchtest.HTML(page("Visitors", "/")))
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

// abbey is BothyBot's rate-limited site (B6): /guides answers 429 with
// Retry-After: 1 once, /shop 503 without Retry-After once.
func (w *Web) abbey() {
	h := w.Host(Abbey)
	h.Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n"))
	h.Handle("/", fetchtest.HTML(page("Abbey", "/history", "/guides", "/opening", "/shop", "/gardens", "/events", "/library")))
	for _, p := range []string{"/history", "/opening", "/gardens", "/events", "/library"} {
		h.Handle(p, fetchtest.HTML(page(strings.Trim(p, "/"))))
	}
	h.Handle("/guides", fetchtest.Sequence(fetchtest.RetryAfter(http.StatusTooManyRequests, "1"), fetchtest.HTML(page("Guides"))))
	h.Handle("/shop", fetchtest.Sequence(fetchtest.Status(http.StatusServiceUnavailable), fetchtest.HTML(page("Shop"))))
}

// newsExtra is on every news page: a script and a subscription form, which a
// bot that runs no JavaScript and submits no forms never requests (S7).
const newsExtra = `<script src="/app.js"></script>
<form action="/subscribe" method="post"><input name="email"><button>Subscribe</button></form>
`

func (w *Web) news() {
	for i, host := range NewsHosts {
		h := w.Host(host)
		robots := "User-agent: *\nDisallow: /private/\n"
		switch i {
		case 0:
			robots = "User-agent: SofyaBot\nDisallow: /private/\nCrawl-delay: 0.4\n\nUser-agent: *\nDisallow: /\n"
		case 2: // no robots.txt (404): no restrictions (C2)
		case 3: // robots.txt moved: the redirect is followed (C2)
			h.Handle("/robots.txt", fetchtest.Redirect("/site/robots.txt", http.StatusMovedPermanently))
			h.Handle("/site/robots.txt", fetchtest.Robots(robots))
		}
		if i < 2 {
			h.Handle("/robots.txt", fetchtest.Robots(robots))
		}
		h.Handle("/app.js", fetchtest.Text("text/javascript", "location.href='/subscribe'"))
		h.Handle("/subscribe", fetchtest.HTML(page("Subscribed")))
		var paths []string
		for j := 1; j <= 5; j++ {
			paths = append(paths, fmt.Sprintf("/story/%d", j))
		}
		links := append(paths, "/private/drafts", "/", "/story/1?ref=home#top")
		if i == 3 { // behind a login or paywall (S9)
			links = append(links, "/members", "/premium")
			h.Handle("/members", fetchtest.LoginRequired())
			h.Handle("/premium", fetchtest.LoginRedirect("/login"))
			h.Handle("/login", fetchtest.LoginForm())
		}
		h.Handle("/", fetchtest.HTML(pageWith("News "+host, newsExtra, links...)))
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
	for _, host := range []string{Bakery, Plumber, Moved, Spam, Chain, Huge, Stall} {
		w.Host(host).Handle("/robots.txt", fetchtest.Robots("User-agent: *\nAllow: /\n"))
	}
	// Cafe has no robots.txt (404): no restrictions (D8). Florist's
	// DirectoriesBot group has an empty Disallow: everything allowed, though
	// "*" is disallowed everywhere (D7).
	w.Host(Florist).Handle("/robots.txt", fetchtest.Robots("User-agent: DirectoriesBot\nDisallow:\n\nUser-agent: *\nDisallow: /\n"))
	w.Host(Cafe).Handle("/robots.txt", fetchtest.Status(http.StatusNotFound))
	w.Host(Outage).Handle("/robots.txt", fetchtest.Status(http.StatusInternalServerError)) // D8: not fetched
	w.Host(Outage).Handle("/partners", fetchtest.HTML(page("Partners", Backlink(Outage))))
	w.Host(Chain).Handle("/partners", fetchtest.Redirect("/r1", http.StatusFound)) // D11: a fourth redirect is not followed
	for i := 1; i <= 4; i++ {
		w.Host(Chain).Handle(fmt.Sprintf("/r%d", i), fetchtest.Redirect(fmt.Sprintf("/r%d", i+1), http.StatusFound))
	}
	w.Host(Chain).Handle("/r5", fetchtest.HTML(page("Partners", Backlink(Chain))))
	w.Host(Huge).Handle("/partners", fetchtest.Huge(6<<20)) // D11: reading stops at 5 MB
	w.Host(Stall).Handle("/partners", fetchtest.Hang())     // D11: 15 s for the whole fetch
	w.Host(Bakery).Handle("/partners", fetchtest.HTML(page("Our partners", "/", "https://www."+Directory+"/listing/bakery#reviews")))
	w.Host(Florist).Handle("/partners", fetchtest.HTML(page("Partners", "/", "https://elsewhere.test/")))
	w.Host(Plumber).Handle("/robots.txt", fetchtest.Robots("User-agent: DirectoriesBot\nDisallow: /partners\n\nUser-agent: *\nAllow: /\n"))
	w.Host(Plumber).Handle("/partners", fetchtest.HTML(page("Partners", Backlink(Plumber))))
	// Its redirect sets a cookie, which the next request must not send (D5).
	w.Host(Moved).Handle("/partners", fetchtest.SetCookie("visitor", "42", fetchtest.Redirect("/about/partners", http.StatusMovedPermanently)))
	w.Host(Moved).Handle("/about/partners", fetchtest.HTML(page("Partners", Backlink(Moved))))
	w.Host(Spam).Handle("/partners", fetchtest.HTML(page("Partners", Backlink(Spam))))
}

// ListingsCSV is the demo's listings file: one row per listing host and one
// malformed row, to show that a bad row is named and the rest still runs.
func ListingsCSV() string {
	var b strings.Builder
	b.WriteString("listing_url,backlink,directory,schedule\n")
	for _, h := range ListingHosts {
		fmt.Fprintf(&b, "%s,%s,%s,weekly\n", ListingURL(h), Backlink(h), Directory)
	}
	b.WriteString("http://broken.test/partners,https://citydir.test/listing/broken,citydir.test,fortnightly\n")
	return b.String()
}

// BadRow is the line number of the malformed row in [ListingsCSV].
func BadRow() int { return len(ListingHosts) + 2 }
