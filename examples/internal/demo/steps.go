package demo

import (
	"crypto/ed25519"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/bothy"
	"github.com/goodbot-go/goodbot/examples/internal/demoweb"
	"github.com/goodbot-go/goodbot/examples/internal/directories"
	"github.com/goodbot-go/goodbot/examples/internal/hooty"
	"github.com/goodbot-go/goodbot/examples/internal/profiles"
	"github.com/goodbot-go/goodbot/examples/internal/readiness"
	"github.com/goodbot-go/goodbot/examples/internal/sofya"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/signing"
)

// checked turns fetchtest checks into a claim check: kept when no check
// finds a violation; the evidence is evidence(r) or the first violation.
func checked(evidence func(r *record) string, checks ...fetchtest.Check) func(r *record) (bool, string) {
	return func(r *record) (bool, string) {
		if v := fetchtest.Violations(r.reqs, checks...); len(v) > 0 {
			return false, fmt.Sprintf("%s (and %d more)", v[0], len(v)-1)
		}
		return true, evidence(r)
	}
}

func text(s string) func(*record) string { return func(*record) string { return s } }

func minGap(r *record, host string) time.Duration {
	reqs := r.to(host)
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].Start.Before(reqs[j].Start) })
	gap := time.Duration(-1)
	for i := 1; i < len(reqs); i++ {
		if g := reqs[i].Start.Sub(reqs[i-1].End); gap < 0 || g < gap {
			gap = g
		}
	}
	return gap
}

func verifier(pub ed25519.PublicKey) func(*http.Request) error {
	ks, _ := signing.NewKeySet(pub)
	v := &signing.Verifier{Keys: ks}
	return func(r *http.Request) error {
		_, err := v.Verify(r)
		return err
	}
}

func paths(reqs []fetchtest.Request) string {
	var p []string
	for _, q := range reqs {
		p = append(p, q.Path)
	}
	return strings.Join(p, " ")
}

func (d *demo) steps() []step {
	parish := "http://" + demoweb.Parish + "/"
	bothyArgs := []string{"-json", "-key", d.bothyKey, "-state", filepath.Join(d.dir, "bothy.db"), "-out", filepath.Join(d.dir, "bothy-pages")}
	hootyPages := filepath.Join(d.dir, "hooty-pages")
	signalPages := filepath.Join(d.dir, "signals-pages")
	listingsFile := filepath.Join(d.dir, "listings.csv")
	blockFile := filepath.Join(d.dir, "blocked.txt")
	dirArgs := []string{"-json", "-key", d.dirKey, "-state", filepath.Join(d.dir, "directories.db"), "-listings", listingsFile, "-blocklist", blockFile}
	var news []string
	for _, h := range demoweb.NewsHosts {
		news = append(news, "http://"+h+"/")
	}
	scaled := func(dur time.Duration) time.Duration { return profiles.Scale(dur, d.scale) }

	return []step{
		{chain: chainParish, bot: "BothyBot", title: "full crawl of a parish site for its owner", run: bothy.Run, args: append(bothyArgs, parish),
			claims: []claim{
				{"C1", func(r *record) (bool, string) {
					ok := len(r.reqs) > 0 && r.reqs[0].Path == "/robots.txt"
					return ok, "robots.txt was the first request to the host"
				}},
				{"B1", checked(text(`every request said User-Agent: `+profiles.BothyUA), fetchtest.UserAgent(profiles.BothyUA))},
				{"B2", checked(text("every request, robots.txt included, carried a valid Ed25519 signature; Signature-Agent: https://bothy.tools"),
					fetchtest.Signed(verifier(d.bothyPub)), fetchtest.HeaderIs("Signature-Agent", profiles.BothyAgent))},
				{"B3", checked(func(r *record) string {
					return fmt.Sprintf("/staff/rota (CleatBot: Disallow /staff/) and /archive/2019 (UnvarnishedCrawler: Disallow /archive/) were never requested [%s]; "+
						"the `*` group's Disallow: / did not apply, BothyBot has groups of its own", r.result("http://"+demoweb.Parish+"/staff/rota").Reason)
				}, fetchtest.NotFetched(demoweb.Parish, "/staff/rota", "/archive/2019"))},
				{"B4", checked(func(r *record) string {
					return fmt.Sprintf("Crawl-delay: 0.3 honoured: smallest gap between requests %s", minGap(r, demoweb.Parish).Round(time.Millisecond))
				}, fetchtest.MinGap(300*time.Millisecond))},
				{"B5", checked(text("one request at a time: no two requests to the host overlapped (see the timeline)"), fetchtest.NoOverlap())},
				{"B7", func(r *record) (bool, string) {
					return true, "followed the sitemap and same-site links only: " + paths(r.reqs)
				}},
				{"C5", checked(text("GET and HEAD only; no cookie, no credentials, no form ever submitted"),
					fetchtest.OnlyGetHead(), fetchtest.NoCookies(), fetchtest.NoCredentials())},
				{"B12", func(r *record) (bool, string) {
					for _, q := range r.reqs {
						if !strings.Contains(q.Header.Get("User-Agent"), "BothyBot") || !strings.Contains(q.Header.Get("Signature-Agent"), "bothy.tools") {
							return false, q.URL() + " would slip past the owner's WAF rule"
						}
					}
					return true, `the WAF rule (user agent contains "BothyBot" and signature-agent contains "bothy.tools") matches all requests`
				}},
			}},
		{chain: chainParish, bot: "BothyBot", title: "the same crawl again: conditional refetches", run: bothy.Run, args: append(bothyArgs, parish),
			claims: []claim{
				{"B8", func(r *record) (bool, string) {
					n304, cond := 0, 0
					for _, q := range r.to(demoweb.Parish) {
						if q.Status == http.StatusNotModified {
							n304++
						}
						if q.Header.Get("If-Modified-Since") != "" || q.Header.Get("If-None-Match") != "" {
							cond++
						}
					}
					return n304 > 0, fmt.Sprintf("%d refetches sent If-Modified-Since/If-None-Match; %d cost a 304 instead of the page", cond, n304)
				}},
				{"B11", func(r *record) (bool, string) {
					n := len(r.to(demoweb.Parish, "/robots.txt"))
					return n == 0, fmt.Sprintf("robots.txt came from the state file (%d requests for it); it is re-read once a day", n)
				}},
			}},
		{chain: chainParish, bot: "BothyBot", title: "-fresh on a site that published nothing", run: bothy.Run, args: append(append([]string(nil), bothyArgs...), "-fresh", parish),
			claims: []claim{
				{"B9", func(r *record) (bool, string) {
					return len(r.reqs) == 1, fmt.Sprintf("%d request in all (%s): the sitemap's <lastmod> values had not moved", len(r.reqs), paths(r.reqs))
				}},
			}},
		{chain: chainParish, bot: "BothyBot", title: "-fresh after the parish updated /news", run: bothy.Run, args: append(append([]string(nil), bothyArgs...), "-fresh", parish),
			before: func() {
				now := time.Now().UTC().Truncate(time.Second)
				d.web.SetParishSitemap(map[string]time.Time{"/news": now})
				d.web.TouchParishPage("/news", now)
			},
			claims: []claim{
				{"B9", func(r *record) (bool, string) {
					news := r.to(demoweb.Parish, "/news")
					ok := len(r.reqs) == 2 && len(news) == 1 && news[0].Header.Get("Cache-Control") == "no-cache"
					return ok, fmt.Sprintf("%d requests (%s): only the page whose <lastmod> moved, with Cache-Control: no-cache", len(r.reqs), paths(r.reqs))
				}},
			}},
		{chain: chainAbbey, bot: "BothyBot", title: "crawl of an abbey site that rate-limits", run: bothy.Run,
			// Its own state file and pages: it runs alongside the parish's steps.
			args: []string{"-json", "-key", d.bothyKey, "-state", filepath.Join(d.dir, "abbey.db"), "-out", filepath.Join(d.dir, "abbey-pages"), "http://" + demoweb.Abbey + "/"},
			claims: []claim{
				{"B6", func(r *record) (bool, string) { return rateLimited(r, scaled(2*time.Second), scaled(time.Minute)) }},
				{"C4", checked(func(r *record) string {
					return fmt.Sprintf("the 429 on /guides paused the whole host: the next request, for %s, waited for it", nextAfter(r.to(demoweb.Abbey), http.StatusTooManyRequests))
				}, fetchtest.HonoursRetryAfter())},
			}},
		{chain: chainParish, bot: "Readiness", title: "BothyBot's readiness check of the parish site", run: readiness.Run,
			args: []string{"-json", "-key", d.bothyKey, "-state", filepath.Join(d.dir, "readiness.db"), "-report", filepath.Join(d.dir, "readiness"), parish},
			claims: []claim{
				{"B10", func(r *record) (bool, string) {
					got := map[string]string{}
					for _, x := range r.results {
						got[strings.TrimPrefix(x.URL, "http://"+demoweb.Parish)] = fmt.Sprintf("%d", x.Status)
					}
					_, err := os.Stat(filepath.Join(d.dir, "readiness.html"))
					ok := err == nil && got["/"] == "200" && got["/llms.txt"] == "200" && got["/llms-full.txt"] == "404"
					return ok, fmt.Sprintf("home %s, llms.txt %s, llms-full.txt %s, sitemap and %d pages checked; report in readiness.md / readiness.html",
						got["/"], got["/llms.txt"], got["/llms-full.txt"], len(r.results)-3)
				}},
			}},
		{chain: chainHooty, bot: "HootyBot", title: "knowledge-source crawl of six sites, each in trouble its own way", run: hooty.Run,
			args: []string{"-json", "-state", filepath.Join(d.dir, "hooty.db"), "-max-pages", "20", "-max-wait", "10m", "-out", hootyPages,
				"http://" + demoweb.School + "/", "http://" + demoweb.Shop + "/", "http://" + demoweb.Down + "/",
				"http://" + demoweb.Dead + "/", "http://" + demoweb.Busy + "/", "http://" + demoweb.Slow + "/"},
			claims: []claim{
				{"H1", checked(text("User-Agent: "+profiles.HootyUA+" and From: "+profiles.HootyFrom+" on every request"),
					fetchtest.UserAgent(profiles.HootyUA), fetchtest.From(profiles.HootyFrom))},
				{"H2", checked(func(r *record) string {
					return "robots.txt first on every site; school.test's `Disallow: /*?print` kept out /term-dates?print and `Disallow: /staffroom$` kept out /staffroom but not /staffroom/visitors"
				}, fetchtest.RobotsFirst(), fetchtest.NotFetched(demoweb.School, "/staffroom"), noQuery(demoweb.School, "print"),
					fetched(demoweb.School, "/staffroom/visitors"))},
				{"H3", checked(func(r *record) string {
					return fmt.Sprintf("one page at a time per site; smallest gap on %s %s (0.5 s scaled by %g)", demoweb.School, minGap(r, demoweb.School).Round(time.Millisecond), d.scale)
				}, fetchtest.NoOverlap(), fetchtest.MinGapOn(demoweb.School, scaled(500*time.Millisecond)))},
				{"H4", checked(func(r *record) string {
					return fmt.Sprintf("%s said 429 Retry-After: 1 and was left alone exactly that long; %s asked for a day and was given up after %d request(s)",
						demoweb.School, demoweb.Busy, len(r.to(demoweb.Busy))-1)
				}, fetchtest.HonoursRetryAfter())},
				{"H5", func(r *record) (bool, string) {
					n := len(r.to(demoweb.Down))
					return n == 1, fmt.Sprintf("%s: robots.txt answered 503, so nothing else was requested (%d request)", demoweb.Down, n)
				}},
				{"H6", func(r *record) (bool, string) {
					n := len(r.to(demoweb.Dead)) - len(r.to(demoweb.Dead, "/robots.txt"))
					stuck := r.result("http://" + demoweb.Slow + "/stuck")
					return n <= 3, fmt.Sprintf("%s reset every connection: %d attempt(s), then the site was given up; %s/stuck never answered: %s",
						demoweb.Dead, n, demoweb.Slow, stuck.Outcome)
				}},
				{"C6", func(r *record) (bool, string) {
					shop, down := r.result("http://"+demoweb.Shop+"/"), r.result("http://"+demoweb.Down+"/")
					return shop.Outcome == "blocked" && down.Outcome == "unreachable",
						fmt.Sprintf("the challenge on %s is %q, told apart from %s's robots.txt error, %q", demoweb.Shop, shop.Outcome, demoweb.Down, down.Outcome)
				}},
				{"H9", configured(func() (bool, string) {
					ttl := profiles.Hooty(time.Hour, 20, d.scale).RobotsTTL
					return ttl > 0 && ttl <= scaled(time.Hour), fmt.Sprintf("robots.txt copies are kept %s (one hour scaled) before a re-read: fetch.Bot.RobotsTTL; TestHooty_H5_RobotsServerError_H9_WithinAnHour shows it in fake time", ttl)
				})},
				{"H7", checked(text("/prospectus.pdf was never requested (HTML only), at most 20 pages per site"),
					fetchtest.NotFetched(demoweb.School, "/prospectus.pdf"))},
				{"H8", func(r *record) (bool, string) {
					res := r.result("http://" + demoweb.Shop + "/")
					_, err := os.Stat(filepath.Join(hootyPages, demoweb.Shop))
					return res.Outcome == "blocked" && os.IsNotExist(err), fmt.Sprintf("%s served a challenge with status %d: reported as %q (%s), not stored", demoweb.Shop, res.Status, res.Outcome, res.Reason)
				}},
			}},
		{chain: chainSignals, bot: "HootyBot", title: "sites that say more than Allow/Disallow: usage, page directives, a price, a quota", run: hooty.Run,
			args: []string{"-json", "-state", filepath.Join(d.dir, "signals.db"), "-max-pages", "20", "-max-wait", "10m", "-out", signalPages,
				"http://" + demoweb.AISignal + "/", "http://" + demoweb.NoIndex + "/", "http://" + demoweb.Paywall + "/", "http://" + demoweb.Quota + "/"},
			claims: []claim{
				{extra, func(r *record) (bool, string) {
					n, home := len(r.to(demoweb.AISignal)), r.result("http://"+demoweb.AISignal+"/")
					return n == 1 && home.Outcome == "usage_refused", fmt.Sprintf("%s's robots.txt says Content-Signal: ai-input=no: only robots.txt was requested (%d request); its home page is %q (%s)",
						demoweb.AISignal, n, home.Outcome, home.Reason)
				}},
				{extra, func(r *record) (bool, string) {
					home, about := r.result("http://"+demoweb.NoIndex+"/"), r.result("http://"+demoweb.NoIndex+"/about")
					_, errHome := os.Stat(filepath.Join(signalPages, demoweb.NoIndex, "index_.txt"))
					_, errAbout := os.Stat(filepath.Join(signalPages, demoweb.NoIndex, "about.txt"))
					ok := len(r.to(demoweb.NoIndex, "/")) == 1 && home.NotKept && os.IsNotExist(errHome) && errAbout == nil
					return ok, fmt.Sprintf("%s's home page said X-Robots-Tag: %s: fetched, not kept (%s); /about, which says nothing, kept (%s)",
						demoweb.NoIndex, home.Rules, home.Reason, about.Outcome)
				}},
				{extra, func(r *record) (bool, string) {
					a := r.result("http://" + demoweb.Paywall + "/article")
					_, err := os.Stat(filepath.Join(signalPages, demoweb.Paywall, "article.txt"))
					n := len(r.to(demoweb.Paywall, "/article"))
					return n == 1 && a.Outcome == "payment_required" && a.Status == http.StatusPaymentRequired && os.IsNotExist(err),
						fmt.Sprintf("%s/article answered 402 with crawler-price: %q (%s), requested %d time, nothing stored; HootyBot pays nothing", demoweb.Paywall, a.Outcome, a.Reason, n)
				}},
				{extra, func(r *record) (bool, string) {
					reqs := r.to(demoweb.Quota)
					sort.Slice(reqs, func(i, j int) bool { return reqs[i].Start.Before(reqs[j].Start) })
					for i, q := range reqs {
						if q.Status == http.StatusTooManyRequests {
							return false, q.URL() + " answered 429"
						}
						if q.Path == "/" && i+1 < len(reqs) {
							gap := reqs[i+1].Start.Sub(q.End)
							return gap >= demoweb.QuotaReset, fmt.Sprintf("%s's home page said RateLimit: r=0;t=%d: the host was paused before any 429; the next request, for %s, came %s later",
								demoweb.Quota, int(demoweb.QuotaReset.Seconds()), reqs[i+1].Path, gap.Round(time.Millisecond))
						}
					}
					return false, fmt.Sprintf("no request after %s's home page: %s", demoweb.Quota, paths(reqs))
				}},
			}},
		{chain: chainNews, bot: "SofyaBot", title: "index crawl across four news sites", run: sofya.Run,
			args: append([]string{"-json", "-state", filepath.Join(d.dir, "sofya.db")}, news...),
			claims: []claim{
				{"S1", checked(text("User-Agent: "+profiles.SofyaUA+" on every request"), fetchtest.UserAgent(profiles.SofyaUA))},
				{"S3", checked(text("/private/drafts was never requested (SofyaBot's group on news-a, `*` elsewhere)"),
					fetchtest.NotFetched(demoweb.NewsHosts[0], "/private/drafts"), fetchtest.NotFetched(demoweb.NewsHosts[1], "/private/drafts"))},
				{"C2", checked(func(r *record) string {
					return fmt.Sprintf("news-c has no robots.txt (404): everything allowed, /private/drafts included; news-d's robots.txt moved (301): followed (%s), and its rules kept /private/drafts out", paths(r.to(demoweb.NewsHosts[3], "/robots.txt", "/site/robots.txt")))
				}, fetched(demoweb.NewsHosts[2], "/private/drafts"), fetched(demoweb.NewsHosts[3], "/site/robots.txt"), fetchtest.NotFetched(demoweb.NewsHosts[3], "/private/drafts"))},
				{"S7", checked(text("every page has a <script> and a subscription <form>: neither /app.js nor /subscribe was ever requested, GET/HEAD only"),
					fetchtest.OnlyGetHead(), notFetchedAnywhere("/app.js", "/subscribe"))},
				{"S9", func(r *record) (bool, string) {
					m, p := r.result("http://"+demoweb.NewsHosts[3]+"/members"), r.result("http://"+demoweb.NewsHosts[3]+"/premium")
					login := len(r.to(demoweb.NewsHosts[3], "/login"))
					return m.Outcome == "auth_required" && p.Outcome == "auth_required" && login == 0,
						fmt.Sprintf("news-d /members (401) and /premium (redirect to /login) skipped as %q and %q; the login page was requested %d times", m.Outcome, p.Outcome, login)
				}},
				{"S2", configured(func() (bool, string) {
					a := netip.MustParseAddr("192.0.2.7")
					return profiles.Sofya(a, 1).LocalAddr == a, "-source ADDR binds every outgoing connection to that address (fetch.Bot.LocalAddr); the demo reaches its sites through its own dialer, so TestSofya_S2_SourceAddress shows it"
				})},
				{"S10", configured(func() (bool, string) {
					ttl := profiles.Sofya(netip.Addr{}, d.scale).RobotsTTL
					return ttl > 0 && ttl <= scaled(24*time.Hour), fmt.Sprintf("robots.txt copies are kept %s (24 h scaled), then read again: fetch.Bot.RobotsTTL; TestSofya_S8_OnceAcrossRuns_S10", ttl)
				})},
				{"S4", checked(func(r *record) string {
					return fmt.Sprintf("news-a's Crawl-delay: 0.4 honoured: smallest gap %s", minGap(r, demoweb.NewsHosts[0]).Round(time.Millisecond))
				}, fetchtest.MinGapOn(demoweb.NewsHosts[0], 400*time.Millisecond))},
				{"S5", checked(func(r *record) string {
					return fmt.Sprintf("elsewhere at most one request per %s (1 s scaled) per site, with jitter; smallest gap on news-c %s",
						scaled(time.Second), minGap(r, demoweb.NewsHosts[2]).Round(time.Millisecond))
				}, fetchtest.MinGap(scaled(time.Second)))},
				{"S6", checked(text("news-b answered 509 with Retry-After: 1: the whole site waited, then was crawled more slowly"), fetchtest.HonoursRetryAfter())},
				{"S8", func(r *record) (bool, string) {
					seen := map[string]int{}
					for _, q := range r.reqs {
						seen[q.URL()]++
					}
					for u, n := range seen {
						if n > 1 && !strings.HasSuffix(u, "/story/3") { // the 509 retry
							return false, fmt.Sprintf("%s requested %d times", u, n)
						}
					}
					return true, "each URL fetched once, though every story links back to its home page"
				}},
				{"S11", func(r *record) (bool, string) {
					if len(r.reqs) == 0 {
						return false, "no requests"
					}
					first, last := r.reqs[0].Start, r.reqs[0].End
					for _, q := range r.reqs {
						first = minTime(first, q.Start)
						last = maxTime(last, q.End)
					}
					secs := last.Sub(first).Seconds()
					return true, fmt.Sprintf("%d requests over %d sites in %.1f s: %.1f/s in all, while no site saw more than one at a time",
						len(r.reqs), len(demoweb.NewsHosts), secs, float64(len(r.reqs))/secs)
				}},
			}},
		d.fleetStep(news),
		{chain: chainDirectories, bot: "DirectoriesBot", title: "reciprocal-link check of the directory's listings", run: directories.Run, args: dirArgs,
			before: func() {
				_ = os.WriteFile(listingsFile, []byte(demoweb.ListingsCSV()), 0o644)
				_ = os.WriteFile(blockFile, []byte("# owner asked not to be fetched\n"+demoweb.Spam+"\n"), 0o644)
			},
			claims: []claim{
				{"D1", func(r *record) (bool, string) {
					want := strings.Replace(profiles.DirectoriesUA, "{directory}", demoweb.Directory, 1)
					for _, q := range r.reqs {
						if q.Header.Get("User-Agent") != want {
							return false, q.URL() + " sent " + q.Header.Get("User-Agent")
						}
					}
					return true, "User-Agent: " + want
				}},
				{"D2", checked(text(`signed; Signature-Agent: "https://directories.prosvita.io" (quoted), keyid = the key's JWK thumbprint`),
					fetchtest.Signed(verifier(d.dirPub)), fetchtest.HeaderIs("Signature-Agent", `"`+profiles.DirectoriesAgent+`"`))},
				{"D3", func(r *record) (bool, string) { return exactURLs(r) }},
				{"D5", checked(func(r *record) string {
					return fmt.Sprintf("%s set a cookie on its redirect (%s); no request ever sent one", demoweb.Moved, firstHeader(r.to(demoweb.Moved, "/partners"), "Set-Cookie"))
				}, fetchtest.NoCookies())},
				{"D7", checked(func(r *record) string {
					return fmt.Sprintf("robots.txt before each host's page; plumber's DirectoriesBot group beat `*`; florist's empty `Disallow:` allowed its page although `*` is disallowed: %s",
						r.result(demoweb.ListingURL(demoweb.Florist)).Outcome)
				}, fetchtest.RobotsFirst(), fetched(demoweb.Florist, "/partners"), fetchtest.NotFetched(demoweb.Plumber, "/partners"))},
				{"D8", func(r *record) (bool, string) {
					cafe, outage := len(r.to(demoweb.Cafe, "/partners")), len(r.to(demoweb.Outage, "/partners"))
					return cafe == 1 && outage == 0, fmt.Sprintf("cafe.test has no robots.txt (404): its page was fetched; outage.test's robots.txt answered 500: its page was not (%d requests), reported %q",
						outage, r.result(demoweb.ListingURL(demoweb.Outage)).Outcome)
				}},
				{"D11", func(r *record) (bool, string) { return bounds(r, d.scale) }},
				{"D4", func(r *record) (bool, string) {
					res := r.result(demoweb.ListingURL(demoweb.Moved))
					return res.Outcome == "verified", fmt.Sprintf("%s moved: followed to %s, %s", demoweb.Moved, res.FinalURL, res.Outcome)
				}},
				{"D6", func(r *record) (bool, string) {
					b := r.result(demoweb.ListingURL(demoweb.Bakery))
					f := r.result(demoweb.ListingURL(demoweb.Florist))
					c := r.result(demoweb.ListingURL(demoweb.Cafe))
					ok := b.Outcome == "verified" && f.Outcome == "link_missing" && c.Outcome == "error" && c.Status == 404
					return ok, fmt.Sprintf("bakery verified (link %s); florist link_missing; cafe error %d; all kept in the state file", b.Matched, c.Status)
				}},
				{"D10", checked(text("one request at a time per host, whatever the number of listings"), fetchtest.NoOverlap())},
				{"D13", func(r *record) (bool, string) {
					p := r.result(demoweb.ListingURL(demoweb.Plumber))
					return p.Outcome == "unverified" && len(r.to(demoweb.Plumber, "/partners")) == 0,
						fmt.Sprintf("plumber's robots.txt disallows DirectoriesBot: listing %s, page not fetched", p.Outcome)
				}},
				{"D14", func(r *record) (bool, string) {
					n := len(r.to(demoweb.Spam))
					return n == 0, fmt.Sprintf("%s is on the block list: %d requests, outcome %s", demoweb.Spam, n, r.result(demoweb.ListingURL(demoweb.Spam)).Outcome)
				}},
				{"bad", func(r *record) (bool, string) {
					want := fmt.Sprintf("line %d: schedule \"fortnightly\"", demoweb.BadRow())
					return strings.Contains(r.stderr, want), "the malformed row was named by its line (" + want + "...) and the other rows still ran"
				}},
			}},
		{chain: chainDirectories, bot: "DirectoriesBot", title: "run again: nothing is due yet", run: directories.Run, args: dirArgs,
			claims: []claim{
				{"D12", func(r *record) (bool, string) {
					return len(r.reqs) == 0, fmt.Sprintf("weekly listings checked minutes ago are not due: %d requests", len(r.reqs))
				}},
			}},
		{chain: chainDirectories, bot: "DirectoriesBot", title: "the operator asks for one re-check by hand", run: directories.Run,
			args: append(append([]string(nil), dirArgs...), "-recheck", demoweb.ListingURL(demoweb.Bakery)),
			claims: []claim{
				{"D12", func(r *record) (bool, string) {
					return len(r.results) == 1 && len(r.to(demoweb.Bakery)) == 1,
						fmt.Sprintf("only %s was checked (%d request)", demoweb.Bakery, len(r.to(demoweb.Bakery)))
				}},
				{"D9", func(r *record) (bool, string) {
					n := len(r.to(demoweb.Bakery, "/robots.txt"))
					ttl := profiles.Directories(nil, nil, d.scale).RobotsTTL
					return n == 0 && ttl <= scaled(24*time.Hour), fmt.Sprintf("robots.txt not requested again (%d): the copy in the state file is kept %s (24 h scaled)", n, ttl)
				}},
			}},
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
