// Command colly is a colly v2 collector that sends every request through
// goodbot: robots.txt read once with the bot's own User-Agent and obeyed,
// one request at a time per host with the bot's pacing, requests signed,
// no cookies, and the bot's redirect and time limits.
//
//	go run ./examples/colly -ua "ExampleBot/1.0 (+https://example.org/bot)" https://example.org/
//
// The collector is colly's as usual (callbacks, AllowedDomains, MaxDepth);
// [newCollector] is the part to copy. It hands goodbot's transport to colly
// with WithTransport rather than SetClient: colly keeps its own client, and
// with it its redirect filters (AllowedDomains, revisits), while the
// transport keeps the bot's redirect limit, https-to-http refusal and total
// time limit by itself. colly's robots.txt handling is off (goodbot reads
// robots.txt itself, with the bot's User-Agent, and refuses disallowed URLs
// before they are sent), and no colly LimitRule is set: pacing is goodbot's.
// The README's integration section lists what each hook drops.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/politeness"
)

// newCollector returns a colly collector whose requests all go through bot.
//
//   - WithTransport(fetch.NewTransport(bot)): goodbot's layers below colly's
//     client, colly's CheckRedirect filters kept above them.
//   - IgnoreRobotsTxt: colly would fetch robots.txt a second time, under its
//     own User-Agent, and read it with another parser; goodbot already
//     refuses what robots.txt disallows.
//   - DisableCookies: the bot sends no cookies (goodbot removes the Cookie
//     header anyway unless bot.Jar is set; this keeps colly from storing
//     them).
//   - SetRequestTimeout(0): colly's client timeout (10 s by default) would
//     also count the wait for the host's turn, failing requests that are
//     only queued behind a Crawl-delay; the bot's Limits.Timeout, counted
//     from the first request sent, bounds each fetch instead.
//   - colly's "Accept: */*" is removed, so the bot's Accept applies.
//   - No c.Limit rules: their delays would stack on goodbot's pacing, and
//     their parallelism is moot (goodbot sends one request at a time per
//     host).
func newCollector(bot fetch.Bot, opts ...colly.CollectorOption) (*colly.Collector, error) {
	rt, err := fetch.NewTransport(bot)
	if err != nil {
		return nil, err
	}
	c := colly.NewCollector(opts...)
	c.IgnoreRobotsTxt = true
	c.DisableCookies()
	c.WithTransport(rt)
	c.SetRequestTimeout(0)
	c.OnRequest(func(r *colly.Request) { r.Headers.Del("Accept") })
	return c, nil
}

// crawl visits seeds and follows links within their hosts down to depth,
// reporting each page and each error on log.
func crawl(c *colly.Collector, log *slog.Logger, seeds ...string) {
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		_ = e.Request.Visit(e.Attr("href")) // refusals come back through OnError
	})
	c.OnResponse(func(r *colly.Response) {
		log.Info("page", "url", r.Request.URL.Redacted(), "status", r.StatusCode, "bytes", len(r.Body))
	})
	c.OnError(func(r *colly.Response, err error) {
		log.Info("not fetched", "url", r.Request.URL.Redacted(), "status", r.StatusCode, "err", err)
	})
	for _, s := range seeds {
		if err := c.Visit(s); err != nil {
			log.Info("seed not visited", "url", fetch.Redact(s), "err", err)
		}
	}
	c.Wait()
}

func main() {
	ua := flag.String("ua", "", "the bot's User-Agent, e.g. \"ExampleBot/1.0 (+https://example.org/bot)\" (required)")
	delay := flag.Duration("delay", time.Second, "least gap between requests to one host")
	redirects := flag.Int("max-redirects", 5, "most redirects followed per fetch")
	depth := flag.Int("depth", 2, "link depth followed from the seeds")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *ua == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: colly -ua USER-AGENT URL...")
		os.Exit(2)
	}
	var hosts []string
	for _, s := range flag.Args() {
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" {
			fmt.Fprintf(os.Stderr, "colly: bad seed %q\n", fetch.Redact(s))
			os.Exit(2)
		}
		hosts = append(hosts, u.Hostname())
	}
	bot := fetch.Bot{
		UserAgent:  *ua,
		Politeness: politeness.Policy{MinDelay: *delay},
		Limits:     fetch.Limits{MaxRedirects: *redirects},
		Logger:     log,
	}
	c, err := newCollector(bot, colly.AllowedDomains(hosts...), colly.MaxDepth(*depth))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	crawl(c, log, flag.Args()...)
}
