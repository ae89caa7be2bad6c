package politeness_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

func ExampleTransport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "page %s", r.URL.Path)
	}))
	defer srv.Close()

	client := &http.Client{Transport: &politeness.Transport{
		Base:   &http.Transport{},
		Policy: politeness.Policy{MinDelay: 10 * time.Millisecond, MaxRetryAfter: time.Hour},
		CrawlDelay: func(u *url.URL) (time.Duration, bool) {
			return 0, false // e.g. from a robots.txt cache; never blocks on I/O
		},
	}}
	defer client.CloseIdleConnections()

	start := time.Now()
	for _, path := range []string{"/a", "/b", "/c"} {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body) // reading to EOF (or closing) ends the host's turn
		resp.Body.Close()
		fmt.Println(resp.Status, string(body))
	}
	fmt.Println("paced:", time.Since(start) >= 20*time.Millisecond)
	// Output:
	// 200 OK page /a
	// 200 OK page /b
	// 200 OK page /c
	// paced: true
}

// A give-up policy: when a host asks for a longer pause than the bot
// accepts, give up on it rather than come back early.
func ExampleTransport_giveUp() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "86400") // come back tomorrow
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()

	client := &http.Client{Transport: &politeness.Transport{
		Base: &http.Transport{},
		Policy: politeness.Policy{
			MinDelay:       500 * time.Millisecond,
			RetryAfterMode: politeness.GiveUp,
			MaxRetryAfter:  time.Hour,
		},
		Observe: func(e politeness.Event) {
			if e.Kind == politeness.EventGiveUp {
				fmt.Println("event:", e.Kind, e.Reason, e.Duration, e.Status)
			}
		},
	}}
	defer client.CloseIdleConnections()

	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println("first answer returned unchanged:", resp.StatusCode)

	_, err = client.Get(srv.URL + "/other")
	var he *politeness.HostError
	fmt.Println("gave up:", errors.Is(err, politeness.ErrGaveUp), errors.As(err, &he) && he.Until.After(time.Now().Add(23*time.Hour)))
	// Output:
	// event: give_up retry-after 24h0m0s 429
	// first answer returned unchanged: 429
	// gave up: true true
}

func ExampleHostKey() {
	for _, s := range []string{"https://Example.com/a", "http://example.com:8080/b", "http://[::1]/",
		"http://EXAMPLE.com.:080/", "http://ｅｘａｍｐｌｅ。com/", "https://bücher.example/", "https://xn--bcher-kva.example/"} {
		u, _ := url.Parse(s)
		fmt.Println(politeness.HostKey(u))
	}
	// Output:
	// https://example.com:443
	// http://example.com:8080
	// http://[::1]:80
	// http://example.com:80
	// http://example.com:80
	// https://xn--bcher-kva.example:443
	// https://xn--bcher-kva.example:443
}

func ExampleRetryAfter() {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	fmt.Println(politeness.RetryAfter("120", "", now))
	fmt.Println(politeness.RetryAfter("Mon, 30 Nov 2026 10:05:00 GMT", "Mon, 30 Nov 2026 10:01:00 GMT", now))
	fmt.Println(politeness.RetryAfter("soon", "", now))
	// Output:
	// 2m0s true
	// 4m0s true
	// 0s false
}

// Two Transports (say, two crawlers in one program) sharing one gate never
// put two requests at once on a host; a Redis gate does the same across
// processes.
func ExampleMemoryGate() {
	var inFlight, most atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		if n > most.Load() {
			most.Store(n)
		}
		time.Sleep(time.Millisecond)
		inFlight.Add(-1)
	}))
	defer srv.Close()

	gate := politeness.NewMemoryGate()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	var wg sync.WaitGroup
	for range 2 {
		client := &http.Client{Transport: &politeness.Transport{
			Base: base, Gate: gate, Policy: politeness.Policy{MinDelay: time.Millisecond},
		}}
		for range 3 {
			wg.Go(func() {
				if resp, err := client.Get(srv.URL); err == nil {
					resp.Body.Close()
				}
			})
		}
	}
	wg.Wait()
	fmt.Println("most requests in flight on the host:", most.Load())
	// Output: most requests in flight on the host: 1
}
