package fetch_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
)

// NextTurn is when the politeness layer lets the site's next request
// start: the delay, or the Crawl-delay when larger, after the last answer
// (from the first page on, robots.txt read just before), or the end of a
// pause; zero for a site never asked and for what is not a URL.
func TestFetcher_NextTurn(t *testing.T) {
	for _, tt := range []struct {
		name, robots, path string
		want               time.Duration // after the last answer
	}{
		{"delay", "", "/", time.Second},
		{"crawl-delay", "User-agent: *\nCrawl-delay: 5\n", "/", 5 * time.Second},
		{"crawl-delay below the delay", "User-agent: *\nCrawl-delay: 0.5\n", "/", time.Second},
		{"retry-after", "", "/limited", 60 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := fetchtest.New()
				defer w.Close()
				site(w, "a.test", tt.robots).Handle("/limited", fetchtest.RetryAfter(429, "60"))
				bot := memBot(w)
				bot.Politeness.MinDelay = time.Second
				f := mustFetcher(t, bot)
				if got := f.NextTurn("http://a.test/"); !got.IsZero() {
					t.Fatalf("NextTurn of a site never asked = %v; want zero", got)
				}
				_, _ = f.Get(context.Background(), "http://a.test"+tt.path)
				if n := w.Count("a.test", tt.path); n != 1 {
					t.Fatalf("%d requests for %s; want 1", n, tt.path)
				}
				if got, want := f.NextTurn("http://A.test:80/other"), time.Now().Add(tt.want); !got.Equal(want) {
					t.Errorf("NextTurn = now%+v; want now+%v", time.Until(got), tt.want)
				}
			})
		})
	}
	f := mustFetcher(t, fetch.Bot{UserAgent: testUA})
	for _, raw := range []string{"", "::", "/relative"} {
		if got := f.NextTurn(raw); !got.IsZero() {
			t.Errorf("NextTurn(%q) = %v; want zero", raw, got)
		}
	}
	if got := (&fetch.Fetcher{}).NextTurn("http://a.test/"); !got.IsZero() {
		t.Errorf("NextTurn of a zero Fetcher = %v", got)
	}
}

// NextTurn tells a crawler when a site's next request may start, so that
// it can serve other sites meanwhile instead of waiting inside Get.
func ExampleFetcher_NextTurn() {
	w := fetchtest.New()
	defer w.Close()
	w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nCrawl-delay: 5\n"))
	f, err := fetch.NewFetcher(fetch.Bot{UserAgent: "ExampleBot/1.0 (+https://example.org/bot)",
		Transport: w.RoundTripper()})
	if err != nil {
		panic(err)
	}
	fmt.Println("before:", f.NextTurn("http://a.test/next").IsZero())
	// Reading robots.txt is the site's first request: its Crawl-delay
	// spaces the next one.
	home, _ := url.Parse("http://a.test/")
	if _, err := f.Robots().Get(context.Background(), home); err != nil {
		panic(err)
	}
	wait := time.Until(f.NextTurn("http://a.test/next"))
	fmt.Println("after: about", wait.Round(time.Second)) // the Crawl-delay
	// Output:
	// before: true
	// after: about 5s
}
