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

// Refuses answers from what the Fetcher holds, without a request: the URL
// rules, and a fresh robots.txt copy in memory for the Fetcher's agent.
// Each refused URL is then refused by Get without a request.
func TestFetcher_Refuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := fetchtest.New()
		defer w.Close()
		site(w, "a.test", "User-agent: *\nDisallow: /private/\n\nUser-agent: OtherBot\nDisallow: /\n")
		bot := memBot(w)
		bot.BlockedDomains = []string{"blocked.test"}
		bot.RobotsTTL = time.Hour
		f := mustFetcher(t, bot)
		if f.Refuses("http://a.test/private/x") {
			t.Fatal("refused before robots.txt was read (nothing in memory to refuse it by)")
		}
		if _, err := f.Get(context.Background(), "http://a.test/"); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			url  string
			want bool
		}{
			{"http://a.test/private/x", true},
			{"http://A.test:80/private/y?q=1", true},
			{"http://a.test/public", false},
			{"http://a.test/privatex", false},
			{"http://b.test/private/x", false}, // no copy for b.test
			{"ftp://a.test/x", true},
			{"http://user:pw@a.test/x", true},
			{"http://blocked.test/x", true},
			{"http://www.blocked.test/x", true},
			{"::", false},
		} {
			if got := f.Refuses(tt.url); got != tt.want {
				t.Errorf("Refuses(%q) = %v; want %v", tt.url, got, tt.want)
			}
		}
		before := len(w.Requests())
		if _, err := f.Get(context.Background(), "http://a.test/private/x"); err == nil {
			t.Error("Get of a refused URL succeeded")
		}
		if n := len(w.Requests()); n != before {
			t.Errorf("Get of a refused URL made %d requests", n-before)
		}
		time.Sleep(2 * time.Hour) // the copy is stale: Get would read robots.txt again
		if f.Refuses("http://a.test/private/x") {
			t.Error("refused by a stale copy")
		}
	})
	if (&fetch.Fetcher{}).Refuses("http://a.test/") {
		t.Error("a zero Fetcher refuses")
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
