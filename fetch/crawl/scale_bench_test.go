package crawl_test

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/internal/manyhosts"
	"github.com/goodbot-go/goodbot/politeness"
)

// BenchmarkCrawlManyHosts crawls a loopback web of many hosts (served by
// a child process: internal/manyhosts) with a crawl.Crawler and a
// fetch.Fetcher with their defaults (Parallel, the politeness Policy but
// its MinDelay, the default's shape of base transport: one connection per
// host, no global idle cap), following each page's links (two pages and a
// disallowed one), and reports the pages per second of a measured window
// against the politeness ceiling Σ 1/(max(delay, Crawl-delay) + latency),
// with the web's count of violations (it fails on any).
//
// 2,000 hosts with 1 s gaps (sofyabot's), Crawl-delay: 2 on every tenth,
// 10 ms latency: a ceiling of about 1,880 pages a second, within what two
// shared cores serve with the web's process beside the crawler. 500 hosts
// with 100 ms gaps (Crawl-delay: 1 on every tenth): the library's figure
// for sofyabot's benchmark (examples/sofyabot), about 3,600 a second.
func BenchmarkCrawlManyHosts(b *testing.B) {
	for _, bc := range []struct {
		name         string
		hosts        int
		delay, crawl time.Duration
	}{
		{"2000hosts-1s", 2000, time.Second, 2 * time.Second},
		{"500hosts-100ms", 500, 100 * time.Millisecond, time.Second},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const warm, window = 3 * time.Second, 6 * time.Second
			web := manyhosts.Start(b, manyhosts.Config{Delay: bc.delay, Latency: 10 * time.Millisecond,
				CrawlDelay: bc.crawl, Links: 2})
			ceiling := web.Ceiling(bc.hosts)
			for b.Loop() {
				tr := http.DefaultTransport.(*http.Transport).Clone()
				tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost, tr.MaxIdleConns = 1, 1, 0
				tr.IdleConnTimeout = 2 * time.Minute
				tr.DialContext = web.DialContext
				f, err := fetch.NewFetcher(fetch.Bot{UserAgent: "ScaleBot/1.0 (+https://example.org/bot)", Transport: tr,
					Politeness:    politeness.Policy{MinDelay: bc.delay},
					AllowInternal: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
				if err != nil {
					b.Fatal(err)
				}
				front := &crawl.Frontier{}
				for h := range bc.hosts {
					front.Add(mustURL(web.Root("a", h)), 0, "seed")
				}
				var failed atomic.Int64
				c := &crawl.Crawler{Frontier: front, Fetcher: f, FollowLinks: true,
					OnPage: func(_ crawl.Item, p crawl.Page) {
						if p.Outcome != "ok" && p.Outcome != "disallowed" {
							failed.Add(1)
						}
					}}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- c.Run(ctx) }()
				time.Sleep(warm)
				before, start := web.Stats(b, "a"), time.Now()
				time.Sleep(window)
				after, end := web.Stats(b, "a"), time.Now()
				cancel()
				<-done
				tr.CloseIdleConnections()
				got := after.Sub(before)
				rate := float64(got.Pages) / end.Sub(start).Seconds()
				b.ReportMetric(rate, "pages/s")
				b.ReportMetric(100*rate/ceiling, "%ceiling")
				b.ReportMetric(float64(after.Violations()), "violations")
				b.ReportMetric(float64(failed.Load()), "failed")
				if v := after.Violations(); v != 0 {
					b.Errorf("%d politeness violations: %+v", v, after)
				}
			}
			b.ReportMetric(ceiling, "ceiling-pages/s")
		})
	}
}

func mustURL(raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	return u
}
