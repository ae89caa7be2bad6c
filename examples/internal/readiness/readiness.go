// Package readiness is BothyBot's readiness check (B10), run by
// examples/readiness and by the demo: the home page, /robots.txt, the files
// AI assistants look for (/llms.txt, /llms-full.txt), the sitemap and a few
// pages (with -full, a crawl capped at a few hundred pages), under BothyBot's
// name, signature and pacing. It writes a readable report, Markdown and one
// self-contained HTML page, saying what was found, what is blocked (robots,
// challenge, errors) and why.
package readiness

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/profiles"
	"github.com/goodbot-go/goodbot/examples/internal/report"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/internal/quote"
	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/sitemap"
)

// AIFiles are the paths AI assistants look for.
var AIFiles = []string{"/llms.txt", "/llms-full.txt"}

// FullCap is the page cap of a full readiness crawl ("a few hundred").
const FullCap = 300

const usage = "readiness [flags] URL...\n\n" +
	"Checks each site as BothyBot would see it: home page, robots.txt, AI files, sitemap and\n" +
	"a few pages (-full: a crawl of up to 300 pages), and writes a readiness report."

// Run is readiness's main. It returns the exit status.
func Run(ctx context.Context, args []string, env botkit.Env) int {
	f := botkit.Flags{Name: "readiness", Signs: true, Identity: profiles.BothyKit}
	fs := f.FlagSet(env, 5)
	full := fs.Bool("full", false, fmt.Sprintf("full readiness crawl: follow links, up to -max-pages (capped at %d)", FullCap))
	prefix := fs.String("report", "", "write the report to `prefix`.md and prefix.html (default: Markdown on stdout unless -json)")
	if code, ok := f.ParseSites(fs, args, usage); !ok {
		return code
	}
	if *full && f.MaxPages == 5 {
		f.MaxPages = FullCap
	}
	f.MaxPages = min(f.MaxPages, FullCap) // B10: capped at a few hundred pages
	var bot fetch.Bot
	s, fetcher, code, done := botkit.Begin(ctx, &f, env, profiles.KeyDirectory(profiles.BothyAgent),
		func(k ed25519.PrivateKey) fetch.Bot {
			bot = profiles.Bothy(k, env.Scale)
			bot.UsageMode = fetch.UsageRecord // a report on what the site says, not input for the assistant
			return bot
		})
	if done {
		return code
	}
	defer s.Close()
	c := &checker{s: s, f: fetcher, maxPages: f.MaxPages, full: *full, signer: bot.Signer,
		agent: robots.Agent{Token: bot.Token, Former: bot.FormerTokens}, purposes: bot.Purposes,
		walker: &sitemap.Walker{Client: fetcher.Client(), Store: s.SitemapStore(), Logger: s.Log}}

	var reports []*report.Report
	sites, code := f.Sites(fs, env)
	for _, site := range sites {
		rep := c.check(ctx, site)
		reports = append(reports, rep)
		if rep.Summary().Found == 0 {
			code = botkit.ExitPartial
		}
	}
	if err := write(reports, *prefix, f.JSON, env); err != nil {
		botkit.Fail(env.Stderr, f.Name, "report: %v", err)
		code = botkit.ExitPartial
	}
	return s.Exit(ctx, code)
}

type checker struct {
	s        *botkit.Session
	f        *fetch.Fetcher
	walker   *sitemap.Walker
	maxPages int
	full     bool
	agent    robots.Agent
	purposes []robots.Purpose // what BothyBot uses pages for
	signer   *signing.Signer  // BothyBot's Web Bot Auth signer
}

// check runs the readiness check of one site.
func (c *checker) check(ctx context.Context, site *url.URL) *report.Report {
	rep := &report.Report{Site: crawl.Site(site), Agent: profiles.BothyUA, Started: time.Now()}
	var mu sync.Mutex
	add := func(it report.Item) {
		mu.Lock()
		rep.Items = append(rep.Items, it)
		mu.Unlock()
	}
	get := func(kind, raw string) (*fetch.Page, error) {
		p, err := c.f.Get(ctx, raw)
		r := botkit.ResultOf(raw, p, err)
		c.s.Out.Emit(r)
		if botkit.Failed(err) {
			c.s.WorkFailed("not read", "url", raw, "outcome", r.Outcome, "why", r.Reason)
		}
		it := item(kind, r)
		if kind == "ai-file" {
			aiFile(&it, p)
		}
		add(it)
		c.headerUsage(p, add)
		return p, err
	}
	home := site.ResolveReference(&url.URL{Path: "/"})
	homePage, homeErr := get("home", home.String())

	// robots.txt, as the bot's cache read it before the home page.
	robotsURL := home.ResolveReference(&url.URL{Path: "/robots.txt"}).String()
	var declared []string
	rules, cached := c.s.Robots.Cached(site)
	if e, ok := c.s.RobotsEntry(ctx, site); cached && ok {
		r := rules
		it := report.Item{Kind: "robots", URL: robotsURL, Status: e.Status, Outcome: "ok", Bytes: int64(len(e.Body))}
		switch {
		case e.Status == 0 || r.Unreachable():
			it.Outcome, it.Why = "unreachable", "robots.txt could not be read: BothyBot fetches nothing until it can"
		case e.Status >= 400:
			it.Why = "no robots.txt: no restrictions"
		default:
			declared = r.Sitemaps()
			it.Why = fmt.Sprintf("%d sitemap(s) declared", len(declared))
			if !r.Allowed(c.agent, "/") {
				it.Why += "; the home page is disallowed for BothyBot"
			}
		}
		add(it)
		for _, u := range usageItems(r, robotsURL, c.agent, c.purposes) {
			add(u)
		}
	} else {
		add(report.Item{Kind: "robots", URL: robotsURL, Outcome: "unreachable", Why: botkit.Reason(homePage, homeErr)})
	}

	add(c.identity(ctx, home))

	for _, p := range AIFiles {
		get("ai-file", home.ResolveReference(&url.URL{Path: p}).String())
	}

	// The sitemap: what it lists, and the first pages of it.
	front := &crawl.Frontier{MaxPerSite: c.maxPages, Allowed: func(s string) bool { return s == crawl.Site(site) }}
	front.MarkFetched(home)                                                            // the home page is one of the capped pages
	res, err := c.walker.Check(fetch.WithMachineFile(ctx), crawl.Site(site), declared) // the 50 MiB sitemap limit, not a page's
	smURL := sitemap.DefaultSitemapURL(crawl.Site(site))
	if len(declared) > 0 {
		smURL = strings.Join(declared, " ")
	}
	switch {
	case err != nil:
		add(report.Item{Kind: "sitemap", URL: smURL, Outcome: "error", Why: err.Error()})
	default:
		it := report.Item{Kind: "sitemap", URL: smURL, Outcome: "ok", Status: 200, Why: fmt.Sprintf("%d pages listed", res.Pages)}
		if res.Fetched+res.NotModified == 0 {
			it.Outcome, it.Status, it.Why = "missing", 404, "no readable sitemap"
			if len(res.Errors) > 0 {
				it.Why += ": " + res.Errors[0].Error()
			}
		}
		add(it)
		pages := botkit.SitemapPages(ctx, c.walker, crawl.Site(site))
		for _, p := range pages {
			u, err := url.Parse(p)
			if err != nil {
				continue
			}
			// What robots.txt keeps BothyBot from is reported without a request.
			if ok, rule := rules.Decide(c.agent, u.RequestURI()); rules != nil && !ok && crawl.Site(u) == crawl.Site(site) {
				add(report.Item{Kind: "page", URL: p, Outcome: "disallowed", Why: "robots.txt: " + rule + " (listed in the sitemap)"})
				front.MarkSeen(u)
				continue
			}
			front.Add(u, 1, "sitemap")
		}
	}
	// Pages: sitemap entries first, then links from the home page.
	if homeErr == nil && botkit.IsHTML(homePage) {
		base, _ := url.Parse(homePage.FinalURL)
		front.AddLinks(base, homePage.Body, 1, crawl.Site(site))
	}
	cr := &botkit.Crawl{Fetcher: c.f, Frontier: front, FollowLinks: c.full, OnPage: func(it crawl.Item, p *fetch.Page, r botkit.Result) {
		add(item("page", r))
		c.headerUsage(p, add)
	}}
	cr.Run(ctx, c.s)
	rep.Finished = time.Now()
	return rep
}

// usageItems says, per token the file names (the bot's own, with its former
// names, first; then every other named group and "*"), what robots.txt
// states about the use of the site's pages (Content-Usage, Content-Signal, at
// "/"), and flags a file that grants a use of pages it does not let that
// token fetch (Disallow: / with search=yes). Tokens that state nothing are
// left out, except the bot's own.
func usageItems(r *robots.Robots, robotsURL string, agent robots.Agent, purposes []robots.Purpose) []report.Item {
	type token struct {
		label string
		a     robots.Agent
	}
	own := map[string]bool{strings.ToLower(agent.Token): true}
	for _, f := range agent.Former {
		own[strings.ToLower(f)] = true
	}
	tokens := []token{{agent.Token, agent}}
	for _, n := range r.Names() {
		if !own[n] {
			tokens = append(tokens, token{n, robots.Agent{Token: n}})
		}
	}
	tokens = append(tokens, token{"*", robots.Agent{}})
	var items []report.Item
	for i, t := range tokens {
		st := r.Statement(t.a, "/")
		it := report.Item{Kind: "usage", URL: robotsURL, Outcome: "stated", Why: t.label + ": " + st.String()}
		switch {
		case st.IsZero() && i > 0:
			continue
		case st.IsZero():
			it.Outcome, it.Why = "none", t.label+": no usage preference stated"
		case !r.Allowed(t.a, "/") && grants(st):
			it.Outcome = "contradiction"
			it.Why += ", but robots.txt does not let it fetch /"
		}
		if p, ok := st.Disallows(purposes); ok && i == 0 {
			it.Why += fmt.Sprintf("; refuses %s: BothyBot's crawl will not use these pages", p)
		}
		items = append(items, it)
	}
	return items
}

// headerUsage adds a usage item for a page whose response header states a
// preference (Content-Usage, tdm-reservation).
func (c *checker) headerUsage(p *fetch.Page, add func(report.Item)) {
	if p == nil {
		return
	}
	if !p.Rules.IsZero() {
		add(report.Item{Kind: "usage", URL: p.FinalURL, Status: p.Status, Outcome: "stated",
			Why: "page directives for BothyBot (X-Robots-Tag, Robots-Tag, robots meta): " + p.Rules.String() + "; " + directiveEffect(p.Rules)})
	}
	u := robots.UsageFromHeader(p.Header)
	if u.IsZero() {
		return
	}
	it := report.Item{Kind: "usage", URL: p.FinalURL, Status: p.Status, Outcome: "stated", Why: "response header: " + u.String()}
	if v := p.Header.Get("Tdm-Reservation"); v != "" {
		it.Why += "; TDMRep: tdm-reservation " + quote.Short(v, 16)
		if pol := p.Header.Get("Tdm-Policy"); pol != "" {
			it.Why += ", tdm-policy " + quote.Short(pol, 208)
		}
	}
	if pu, ok := u.Disallows(c.purposes); ok {
		it.Why += fmt.Sprintf("; refuses %s: BothyBot's crawl will not use this page", pu)
	}
	add(it)
}

// identity says whether a site that checks Web Bot Auth would verify
// BothyBot: a request to the site's home page, signed as BothyBot signs, is
// checked by signing.Verifier the way a site checks it, fetching BothyBot's
// own key directory (with the bot's own client). Nothing is sent to the
// site. A directory that cannot be read is said so, not counted as a
// failure of the site.
func (c *checker) identity(ctx context.Context, home *url.URL) report.Item {
	dir := profiles.KeyDirectory(profiles.BothyAgent)
	it := report.Item{Kind: "identity", URL: dir}
	if c.signer == nil {
		it.Outcome, it.Why = "unknown", "BothyBot signs nothing here: no key"
		return it
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, home.String(), nil)
	if err == nil {
		err = c.signer.Sign(req)
	}
	if err != nil {
		it.Outcome, it.Why = "unknown", "could not sign a request as BothyBot: "+err.Error()
		return it
	}
	v := &signing.Verifier{Client: c.f.Client()} // the directory is fetched as BothyBot: identified, paced, robots.txt first
	res, err := v.Verify(req)
	var se *signing.VerifyError
	switch {
	case err == nil:
		it.Outcome, it.Why = "verified", "a site checking Web Bot Auth would verify BothyBot: key "+res.KeyID+" found in "+res.Directory
	case errors.As(err, &se) && se.Reason == signing.ReasonDirectory:
		it.Outcome, it.Why = "unknown", "BothyBot's key directory could not be read, so whether a site would verify it cannot be said: "+err.Error()
	default:
		it.Outcome, it.Why = "unverified", "a site checking Web Bot Auth would NOT verify BothyBot: "+err.Error()
	}
	return it
}

// aiFile counts an llms.txt or llms-full.txt as found only when a 2xx
// answer carries text (text/plain or text/markdown): many sites answer a
// missing file with an HTML page and a 200 (a soft 404).
func aiFile(it *report.Item, p *fetch.Page) {
	if !it.Found() || p == nil || p.Header == nil {
		return
	}
	ct := p.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "text/plain" || mt == "text/markdown" || mt == "text/x-markdown") {
		return
	}
	it.Outcome = "soft_404"
	it.Why = fmt.Sprintf("answered %d with Content-Type %q, not text: a page standing in for a missing file (soft 404)", p.Status, ct)
}

// directiveEffect says what page rules r mean for BothyBot's crawl, which
// keeps pages for an assistant.
func directiveEffect(r robots.PageRules) string {
	var e []string
	if r.NoIndex || r.NoAI {
		e = append(e, "BothyBot's crawl will not keep this page")
	}
	if r.NoFollow {
		e = append(e, "its links are not followed")
	}
	if len(e) == 0 {
		return "BothyBot keeps the page"
	}
	return strings.Join(e, ", ")
}

// grants reports whether u allows any purpose.
func grants(u robots.Usage) bool {
	for _, p := range robots.Purposes() {
		if u.Get(p) == robots.Allowed {
			return true
		}
	}
	return false
}

func item(kind string, r botkit.Result) report.Item {
	return report.Item{Kind: kind, URL: r.URL, Status: r.Status, Outcome: r.Outcome, Bytes: r.Bytes, Why: r.Reason}
}

func write(reps []*report.Report, prefix string, jsonOut bool, env botkit.Env) error {
	if prefix == "" {
		if jsonOut {
			return nil
		}
		for _, r := range reps {
			if err := r.WriteMarkdown(env.Stdout); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range reps {
		name := prefix
		if len(reps) > 1 {
			name += "-" + strings.NewReplacer("://", "-", ":", "-", "/", "-").Replace(r.Site)
		}
		for _, w := range []struct {
			ext   string
			write func(io.Writer) error
		}{{".md", r.WriteMarkdown}, {".html", r.WriteHTML}} {
			if err := writeFile(name+w.ext, w.write); err != nil {
				return err
			}
		}
		fmt.Fprintf(env.Stderr, "readiness: wrote %s.md and %s.html\n", name, name)
	}
	return nil
}

func writeFile(name string, write func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
