package crawl_test

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
)

func ExampleCrawler() {
	w := fetchtest.New()
	defer w.Close()
	w.Host("a.test").
		Handle("/robots.txt", fetchtest.Robots("User-agent: *\nDisallow: /private\n")).
		Handle("/", fetchtest.HTML(`<a href="/about">About</a> <a href="/private">Private</a>
			<a href="/ads" rel="nofollow">Ads</a> <a href="http://b.test/">Elsewhere</a>`)).
		Handle("/about", fetchtest.HTML(`<a href="/">Home</a> <a href="/about#team">Team</a>`))
	tr := w.Transport()
	defer tr.CloseIdleConnections()
	f, err := fetch.NewFetcher(fetch.Bot{
		UserAgent:  "ExampleBot/1.0 (+https://example.org/bot)",
		Transport:  tr,
		Politeness: politeness.Policy{MinDelay: -1}, // no delay in an example; keep the default in a bot
	})
	if err != nil {
		panic(err)
	}

	front := &crawl.Frontier{MaxPerSite: 10}
	home, _ := url.Parse("http://a.test/")
	front.Add(home, 0, "seed")
	c := &crawl.Crawler{
		Frontier:    front,
		Fetcher:     f,
		FollowLinks: true, // same-site links, not rel=nofollow ones
		Handle: func(_ context.Context, it crawl.Item, p *fetch.Page) error {
			fmt.Println("handled", it.URL, "depth", it.Depth, p.Status)
			return nil
		},
		OnPage: func(it crawl.Item, p crawl.Page) {
			if p.Outcome != "ok" {
				fmt.Println("not fetched", it.URL, p.Outcome)
			}
		},
	}
	err = c.Run(context.Background())
	fmt.Println("pages", c.Done(), "err", err)
	// Output:
	// handled http://a.test/ depth 0 200
	// handled http://a.test/about depth 1 200
	// not fetched http://a.test/private disallowed
	// pages 3 err <nil>
}

func ExampleFrontier() {
	f := &crawl.Frontier{MaxPerSite: 2}
	for _, s := range []string{"http://a.test/x", "HTTP://A.TEST:80/x#top", "http://a.test/y", "http://a.test/z", "http://b.test/"} {
		u, _ := url.Parse(s)
		fmt.Println(s, f.Add(u, 0, "seed"))
	}
	fmt.Println("queued", f.Len())
	for _, site := range []string{"http://a.test", "http://b.test"} {
		for it, ok := f.Next(site); ok; it, ok = f.Next(site) {
			fmt.Println("next", it.Site, it.Key)
		}
	}
	// Output:
	// http://a.test/x true
	// HTTP://A.TEST:80/x#top false
	// http://a.test/y true
	// http://a.test/z false
	// http://b.test/ true
	// queued 3
	// next http://a.test http://a.test/x
	// next http://a.test http://a.test/y
	// next http://b.test http://b.test/
}

func ExampleFrontier_Resume() {
	j := &crawl.MemoryJournal{} // boltjournal keeps it across processes
	first := &crawl.Frontier{Journal: j}
	for _, s := range []string{"http://a.test/1", "http://a.test/2"} {
		u, _ := url.Parse(s)
		first.Add(u, 0, "seed")
	}
	it, _ := first.Next("http://a.test")
	// The outcome of /1 is recorded: it leaves the journal.
	_ = first.Record(context.Background(), crawl.Step{Done: []string{it.Key}})

	// The crawl stops; a new frontier resumes what is left.
	next := &crawl.Frontier{Journal: j}
	n, err := next.Resume(context.Background())
	fmt.Println("resumed", n, err)
	it, _ = next.Next("http://a.test")
	fmt.Println("next", it.URL)
	// Output:
	// resumed 1 <nil>
	// next http://a.test/2
}

func ExampleSite() {
	for _, s := range []string{"http://Example.TEST:80/a", "https://example.test:443/", "https://example.test:8443/"} {
		u, _ := url.Parse(s)
		fmt.Println(crawl.Site(u))
	}
	// Output:
	// http://example.test
	// https://example.test
	// https://example.test:8443
}

// A Queue serves each site's items in order, one at a time, each site when
// its turn comes: here a.test's second page is due one second after its
// first, and b.test is served meanwhile.
func ExampleNewMemoryQueue() {
	ctx := context.Background()
	q := crawl.NewMemoryQueue()
	var its []crawl.Item
	for _, raw := range []string{"http://a.test/1", "http://a.test/2", "http://b.test/1"} {
		u, _ := url.Parse(raw)
		its = append(its, crawl.Item{URL: u, Key: raw, Site: crawl.Site(u)})
	}
	added, _ := q.Add(ctx, its, 0)
	fmt.Println("queued", len(added))

	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for {
		it, next, ok, err := q.Lease(ctx, now, time.Minute)
		if err != nil {
			panic(err)
		}
		if !ok {
			if next.IsZero() {
				break // nothing queued or leased: the crawl is over
			}
			now = next // a real crawler waits until then
			continue
		}
		fmt.Println(now.Format("15:04:05"), it.Key)
		// The page is fetched; the site may be asked again in a second.
		if err := q.Finish(ctx, it, crawl.Step{Done: []string{it.Key}}, now.Add(time.Second)); err != nil {
			panic(err)
		}
	}
	// Output:
	// queued 3
	// 00:00:00 http://a.test/1
	// 00:00:00 http://b.test/1
	// 00:00:01 http://a.test/2
}
