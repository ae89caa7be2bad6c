package fetch_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
)

// Hosts answers "which sites are paused, why, and until when?", for a status
// page or a log line.
func ExampleFetcher_Hosts() {
	w := fetchtest.New()
	defer w.Close()
	w.Host("busy.test").Handle("/", fetchtest.RetryAfter(http.StatusTooManyRequests, "300"))
	tr := w.Transport()
	defer tr.CloseIdleConnections()

	f, err := fetch.NewFetcher(fetch.Bot{
		UserAgent:  "ExampleBot/1.0 (+https://example.org/bot)",
		Transport:  tr,
		Politeness: politeness.Policy{MinDelay: -1, MaxRetryAfter: time.Hour},
	})
	if err != nil {
		panic(err)
	}
	page, _ := f.Get(context.Background(), "http://busy.test/")
	fmt.Println("outcome:", page.Outcome)

	now := time.Now()
	for _, h := range f.Hosts() {
		reason, until, paused := h.Paused(now)
		_, hasRobots := h.RobotsAge(now)
		fmt.Println(h.Host, "last status", h.LastStatus, "robots.txt copy:", hasRobots)
		fmt.Println("paused:", paused, reason, "for", until.Sub(now).Round(time.Minute))
	}
	// Output:
	// outcome: rate_limited
	// http://busy.test:80 last status 429 robots.txt copy: true
	// paused: true retry-after for 5m0s
}

// Bot.Events sees every request leave and end (robots.txt included) and
// every Get's outcome: the hook for metrics (see fetch/otelmetrics).
func ExampleBot_events() {
	w := exampleWeb()
	defer w.Close()
	tr := w.Transport()
	defer tr.CloseIdleConnections()

	f, err := fetch.NewFetcher(fetch.Bot{
		UserAgent:  "ExampleBot/1.0 (+https://example.org/bot)",
		Transport:  tr,
		Politeness: politeness.Policy{MinDelay: -1},
		Events: func(ev fetch.Event) { // called from the fetching goroutine
			switch ev.Kind {
			case fetch.EventSend:
				fmt.Println("send", ev.URL, "robots:", ev.Robots)
			case fetch.EventDone:
				fmt.Println("done", ev.Status, ev.Bytes, "bytes")
			case fetch.EventGet:
				fmt.Println("get", ev.URL, ev.Outcome)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	_, _ = f.Get(context.Background(), "http://a.test/")
	_, _ = f.Get(context.Background(), "http://a.test/private")
	// Output:
	// send http://a.test/robots.txt robots: true
	// done 200 33 bytes
	// send http://a.test/ robots: false
	// done 200 16 bytes
	// get http://a.test/ ok
	// get http://a.test/private disallowed
}
