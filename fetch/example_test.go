package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
)

// exampleWeb is a small test web: a.test with a robots.txt, a page, a
// disallowed path and a challenge page.
func exampleWeb() *fetchtest.Web {
	w := fetchtest.New()
	w.Host("a.test").
		Handle("/robots.txt", fetchtest.Robots("User-agent: *\nDisallow: /private\n")).
		Handle("/", fetchtest.HTML("<h1>Welcome</h1>")).
		Handle("/private", fetchtest.HTML("secret")).
		Handle("/shielded", fetchtest.Challenge(http.StatusForbidden))
	return w
}

func ExampleNewFetcher() {
	w := exampleWeb()
	defer w.Close()
	tr := w.Transport() // reaches a.test on loopback
	defer tr.CloseIdleConnections()

	f, err := fetch.NewFetcher(fetch.Bot{
		UserAgent:  "ExampleBot/1.0 (+https://example.org/bot)",
		Transport:  tr,
		Politeness: politeness.Policy{MinDelay: -1}, // no delay in an example; keep the default in a bot
	})
	if err != nil {
		panic(err)
	}
	for _, u := range []string{"http://a.test/", "http://a.test/private", "http://a.test/shielded", "http://a.test/cart"} {
		p, err := f.Get(context.Background(), u)
		fmt.Printf("%-24s %-10s %d %q\n", u, p.Outcome, p.Status, p.Body)
		if p.Outcome == fetch.Blocked {
			fmt.Println("  vendor:", p.Verdict.Vendor, "| errors.Is(err, fetch.ErrBlocked):", errors.Is(err, fetch.ErrBlocked))
		}
	}
	for _, r := range w.Requests() {
		fmt.Println("server saw", r.Method, r.Path)
	}
	// Output:
	// http://a.test/           ok         200 "<h1>Welcome</h1>"
	// http://a.test/private    disallowed 0 ""
	// http://a.test/shielded   blocked    403 ""
	//   vendor: cloudflare | errors.Is(err, fetch.ErrBlocked): true
	// http://a.test/cart       disallowed 0 ""
	// server saw GET /robots.txt
	// server saw GET /
	// server saw GET /shielded
}

func ExampleNew() {
	w := exampleWeb()
	defer w.Close()
	tr := w.Transport()
	defer tr.CloseIdleConnections()

	client, err := fetch.New(fetch.Bot{
		UserAgent:  "Mozilla/5.0 (compatible; NewsBot/1.0; +https://news.example.com/bot)",
		Token:      "NewsBot",
		From:       "bot@news.example.com",
		HTMLOnly:   true,
		Transport:  tr,
		Politeness: politeness.Policy{MinDelay: -1},
	})
	if err != nil {
		panic(err)
	}
	resp, err := client.Get("http://a.test/")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))

	_, err = client.Get("http://a.test/private")
	var de *robots.DisallowedError
	fmt.Println(errors.Is(err, fetch.ErrDisallowed), errors.As(err, &de), de.Rule)

	r := w.Requests()[1]
	fmt.Println(r.Header.Get("User-Agent"))
	fmt.Println(r.Header.Get("From"), r.Header.Get("Accept"))
	// Output:
	// 200 <h1>Welcome</h1>
	// true true Disallow: /private
	// Mozilla/5.0 (compatible; NewsBot/1.0; +https://news.example.com/bot)
	// bot@news.example.com text/html,application/xhtml+xml;q=0.9
}

func ExampleWrap() {
	w := exampleWeb()
	defer w.Close()
	tr := w.Transport()
	defer tr.CloseIdleConnections()
	existing := &http.Client{Transport: tr} // say, a client with a proxy or tracing set up

	client, err := fetch.Wrap(fetch.Bot{UserAgent: "ExampleBot/1.0", Politeness: politeness.Policy{MinDelay: -1}}, existing)
	if err != nil {
		panic(err)
	}
	_, err = client.Get("http://a.test/private")
	fmt.Println(fetch.OutcomeOf(err), existing.Transport == tr)
	// Output:
	// disallowed true
}

func ExampleWithUserAgentVar() {
	w := exampleWeb()
	defer w.Close()
	tr := w.Transport()
	defer tr.CloseIdleConnections()
	f, err := fetch.NewFetcher(fetch.Bot{
		UserAgent:  "DirectoriesBot/1.0 (+https://directories.prosvita.io/bot; verification for {directory})",
		Transport:  tr,
		Politeness: politeness.Policy{MinDelay: -1},
	})
	if err != nil {
		panic(err)
	}
	ctx, err := fetch.WithUserAgentVar(context.Background(), "directory", "your-directory.example")
	if err != nil {
		panic(err)
	}
	p, _ := f.Get(ctx, "http://a.test/")
	fmt.Println(p.Outcome, w.Requests()[1].Header.Get("User-Agent"))

	_, err = fetch.WithUserAgentVar(context.Background(), "directory", "evil.example\r\nX-Injected: 1")
	fmt.Println(errors.Is(err, fetch.ErrUserAgent))
	// Output:
	// ok DirectoriesBot/1.0 (+https://directories.prosvita.io/bot; verification for your-directory.example)
	// true
}

func ExampleNormalize() {
	u, _ := fetch.Normalize("HTTP://Example.COM:80/a/./b/../%7Euser?q=1#top")
	fmt.Println(u)
	// Output:
	// http://example.com/a/~user?q=1
}

// A client built by another library around the bot's transport, with no
// CheckRedirect of its own, still stops at the bot's redirect limit.
func ExampleNewTransport() {
	w := fetchtest.New()
	defer w.Close()
	w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("")).HandleChain("/r", 3, fetchtest.HTML("end"))
	tr := w.Transport()
	defer tr.CloseIdleConnections()

	rt, err := fetch.NewTransport(fetch.Bot{
		UserAgent:  "ExampleBot/1.0 (+https://example.org/bot)",
		Transport:  tr,
		Politeness: politeness.Policy{MinDelay: -1},
		Limits:     fetch.Limits{MaxRedirects: 2},
	})
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: rt} // as a library would build it
	_, err = client.Get("http://a.test/r/0")
	fmt.Println(errors.Is(err, fetch.ErrTooManyRedirects))
	for _, r := range w.Requests() {
		fmt.Println("server saw", r.Path)
	}
	// Output:
	// true
	// server saw /robots.txt
	// server saw /r/0
	// server saw /r/1
	// server saw /r/2
}

// Per-request options go to Get as its last argument.
func ExampleGetOptions() {
	w := fetchtest.New()
	defer w.Close()
	w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("")).
		Handle("/news", fetchtest.Page{Body: "<p>news</p>", ETag: `"v2"`})
	tr := w.Transport()
	defer tr.CloseIdleConnections()
	f, err := fetch.NewFetcher(fetch.Bot{
		UserAgent:  "ExampleBot/1.0 (+https://example.org/bot)",
		Transport:  tr,
		Politeness: politeness.Policy{MinDelay: -1},
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	p, _ := f.Get(ctx, "http://a.test/news", fetch.GetOptions{Validator: fetch.Validator{ETag: `"v2"`}})
	fmt.Println(p.Outcome)
	p, _ = f.Get(ctx, "http://a.test/news", fetch.GetOptions{Fresh: true, Validator: fetch.Validator{ETag: `"v1"`}})
	fmt.Println(p.Outcome, string(p.Body))
	for _, r := range w.RequestsTo("a.test", "/news") {
		fmt.Printf("If-None-Match %s, Cache-Control %q\n", r.Header.Get("If-None-Match"), r.Header.Get("Cache-Control"))
	}
	// Output:
	// not_modified
	// ok <p>news</p>
	// If-None-Match "v2", Cache-Control ""
	// If-None-Match "v1", Cache-Control "no-cache"
}
