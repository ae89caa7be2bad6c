// Package bothy is BothyBot's crawler (seed 000), run by examples/bothybot
// and by the demo: it crawls one site for its owner (robots.txt with the
// former names CleatBot and UnvarnishedCrawler, the sitemap and same-site
// public links, a page cap, signed requests, conditional refetches), and in
// -fresh mode does the between-crawl freshness check (B9) from the state it
// kept on disk.
package bothy

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/profiles"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/sitemap"
)

const usage = "bothybot [flags] URL...\n\n" +
	"Crawls each site (its sitemap and same-site public links) as BothyBot, or with -fresh\n" +
	"refetches only the pages whose sitemap <lastmod> moved since the last run."

// Run is bothybot's main: it parses args and crawls. It returns the exit
// status.
func Run(ctx context.Context, args []string, env botkit.Env) int {
	f := botkit.Flags{Name: "bothybot", Signs: true, Identity: profiles.BothyKit}
	fs := f.FlagSet(env, 300)
	fresh := fs.Bool("fresh", false, "freshness check: read the sitemap, refetch only pages whose <lastmod> moved (B9)")
	out := fs.String("out", "", "write each page's text and report.md into `dir`")
	if code, ok := f.ParseSites(fs, args, usage); !ok {
		return code
	}
	s, fetcher, code, done := botkit.Begin(ctx, &f, env, profiles.KeyDirectory(profiles.BothyAgent),
		func(k ed25519.PrivateKey) fetch.Bot { return profiles.Bothy(k, env.Scale) })
	if done {
		return code
	}
	defer s.Close()
	b := &bothy{s: s, f: fetcher, maxPages: f.MaxPages, out: *out, pages: &botkit.PageStore{Dir: *out}}

	sites, code := f.Sites(fs, env)
	for _, site := range sites {
		var ok bool
		if *fresh {
			ok = b.freshness(ctx, site)
		} else {
			ok = b.crawl(ctx, site)
		}
		if !ok {
			code = botkit.ExitPartial
		}
		if ctx.Err() != nil {
			break
		}
	}
	if err := b.writeReport(); err != nil {
		botkit.Fail(env.Stderr, f.Name, "report: %v", err)
		code = botkit.ExitPartial
	}
	return s.Exit(ctx, code)
}

type bothy struct {
	s        *botkit.Session
	f        *fetch.Fetcher
	maxPages int
	out      string
	pages    *botkit.PageStore

	mu      sync.Mutex // guards results
	results []botkit.Result
}

func origin(u *url.URL) string { return crawl.Site(u) }

// walker reads site's sitemaps for a crawl of at most maxPages pages: it
// takes only the site's own pages (the only ones BothyBot crawls) and no
// more than the page cap, so what it keeps in memory and in the state
// file is bounded by what will be crawled, whatever the sitemaps list
// (an index of 20 files of 50,000 URLs is legal).
func (b *bothy) walker(site *url.URL) *sitemap.Walker {
	own := origin(site)
	return &sitemap.Walker{Client: b.f.Client(), Store: b.s.SitemapStore(), Logger: b.s.Log, MaxURLs: b.maxPages,
		Keep: func(e sitemap.Entry) bool {
			u, err := url.Parse(e.Loc)
			return err == nil && origin(u) == own
		}}
}

// rules returns the site's robots.txt from the fetcher's cache: the copy in
// memory, else the one kept in the state file while it is fresh (no
// request), else a fetch, which the sitemap request would need anyway. ok
// is false, and the log says why, when robots.txt is unreachable: then
// nothing is fetched.
func (b *bothy) rules(ctx context.Context, site *url.URL, log *slog.Logger) (r *robots.Robots, ok bool) {
	r, err := b.s.Robots.Get(ctx, site)
	if err != nil {
		return nil, true // ctx ended or not an http(s) site: no rules to read
	}
	if r.Unreachable() {
		log.Warn("robots.txt unreachable: nothing fetched (no permission assumed)")
		return r, false
	}
	return r, true
}

// crawl is a full crawl: home page (robots.txt first, by the fetcher), the
// sitemap (read with the state kept for -fresh), then sitemap pages and
// same-site links up to the page cap. Refetches are conditional (B8).
func (b *bothy) crawl(ctx context.Context, site *url.URL) bool {
	log := b.s.Log.With("site", origin(site))
	front := &crawl.Frontier{MaxPerSite: b.maxPages, Allowed: func(s string) bool { return s == origin(site) }}
	home := &url.URL{Scheme: site.Scheme, Host: site.Host, Path: "/"}
	front.MarkFetched(site) // fetched first, below: one of the capped pages
	front.Add(home, 0, "seed")

	// The home page first: it brings robots.txt (and its Sitemap lines).
	first := &botkit.Crawl{Fetcher: b.f, Frontier: &crawl.Frontier{}, Pages: b.pages, Use: botkit.UseAssistant, OnPage: func(it crawl.Item, p *fetch.Page, r botkit.Result) {
		b.keep(it, p, r)
		if base, err := url.Parse(p.FinalURL); err == nil && botkit.FollowsLinks(p, r) {
			front.AddLinks(base, p.Body, 1, origin(site)) // its links join the sitemap's pages
		}
	}}
	first.Frontier.Add(site, 0, "seed")
	counts := first.Run(ctx, b.s)
	rules, ok := b.rules(ctx, site, log)
	if !ok {
		return false
	}
	w := b.walker(site)
	res, err := w.Check(fetch.WithMachineFile(ctx), origin(site), rules.Sitemaps()) // the 50 MiB sitemap limit, not a page's
	if err != nil {
		log.Warn("sitemap check failed", "err", err)
	} else {
		pages := botkit.SitemapPages(ctx, w, origin(site))
		for _, p := range pages {
			if u, err := url.Parse(p); err == nil {
				front.Add(u, 1, "sitemap")
			}
		}
		log.Info("sitemap read", "pages", len(pages), "requests", res.Requests, "failed", res.Failed(), "skipped", res.SkippedCount)
	}
	c := &botkit.Crawl{Fetcher: b.f, Frontier: front, FollowLinks: true, Pages: b.pages, Use: botkit.UseAssistant, OnPage: b.keep}
	for k, v := range c.Run(ctx, b.s) {
		counts[k] += v
	}
	log.Info("crawl done", "outcomes", botkit.Summary(counts))
	return counts["ok"]+counts["not_modified"] > 0
}

// freshness is the B9 check: the sitemap is read (conditionally), compared
// with the last read kept in the state file, and only pages whose lastmod
// moved (or that are new) are refetched, with Cache-Control: no-cache. On a
// site that published nothing this is one request in all.
func (b *bothy) freshness(ctx context.Context, site *url.URL) bool {
	log := b.s.Log.With("site", origin(site))
	rules, ok := b.rules(ctx, site, log)
	if !ok {
		return false
	}
	res, err := b.walker(site).Check(fetch.WithMachineFile(ctx), origin(site), rules.Sitemaps()) // the 50 MiB sitemap limit, not a page's
	if err != nil {
		log.Warn("freshness check failed", "err", err)
		return false
	}
	refetch := append(append([]string(nil), res.New...), res.Moved...)
	conditional := res.Unknown
	if res.Untrusted {
		log.Info("sitemap lastmods look generated; using conditional requests instead", "reason", res.Reason)
		refetch, conditional = res.New, append(append([]string(nil), res.Moved...), res.Unknown...)
	}
	log.Info("freshness", "first_read", res.First, "new", len(res.New), "moved", len(res.Moved),
		"unknown", len(res.Unknown), "gone", len(res.Gone), "unchanged", res.Unchanged, "sitemap_requests", res.Requests)
	for _, g := range res.Gone {
		b.s.Out.Emit(botkit.Result{URL: g, Outcome: "gone", Reason: "no longer in the sitemap"})
	}
	ok = res.Failed() == 0
	for _, batch := range []struct {
		urls  []string
		fresh bool
	}{{refetch, true}, {conditional, false}} {
		front := &crawl.Frontier{MaxPerSite: b.maxPages}
		for _, p := range batch.urls {
			if u, err := url.Parse(p); err == nil {
				front.Add(u, 0, "sitemap")
			}
		}
		if front.Len() == 0 {
			continue
		}
		c := &botkit.Crawl{Fetcher: b.f, Frontier: front, Fresh: batch.fresh, Pages: b.pages, Use: botkit.UseAssistant, OnPage: b.keep}
		c.Run(ctx, b.s)
	}
	return ok
}

// keep records a result for the report.
func (b *bothy) keep(_ crawl.Item, _ *fetch.Page, r botkit.Result) {
	b.mu.Lock()
	b.results = append(b.results, r)
	b.mu.Unlock()
}

// writeReport writes report.md into the output directory.
func (b *bothy) writeReport() error {
	if b.out == "" {
		return nil
	}
	var sb strings.Builder
	sb.WriteString("# BothyBot crawl report\n\n| URL | status | outcome | bytes | why |\n|---|---|---|---|---|\n")
	for _, r := range b.results {
		fmt.Fprintf(&sb, "| %s | %d | %s | %d | %s |\n", r.URL, r.Status, r.Outcome, r.Bytes, strings.ReplaceAll(r.Reason, "|", `\|`))
	}
	if err := os.MkdirAll(b.out, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(b.out, "report.md"), []byte(sb.String()), 0o644)
}
