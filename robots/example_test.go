package robots_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"time"

	"github.com/goodbot-go/goodbot/robots"
)

func Example() {
	r := robots.Parse([]byte(`
User-agent: *
Disallow: /

User-agent: ExampleBot
Disallow: /private/
Allow: /private/press-kit$
Crawl-delay: 2.5

User-agent: OldExampleBot
Disallow: /archive/

Sitemap: https://example.com/sitemap.xml
`))
	bot := robots.Agent{Token: "ExampleBot", Former: []string{"OldExampleBot", "OlderExampleCrawler"}}
	for _, target := range []string{
		"/",
		"/private/notes",
		"/private/press-kit",
		"https://example.com/archive/2019?page=2",
		"/robots.txt",
	} {
		fmt.Println(target, r.Allowed(bot, target))
	}
	d, _ := r.CrawlDelay(bot)
	fmt.Println("crawl-delay:", d)
	fmt.Println("sitemaps:", r.Sitemaps())
	fmt.Println("someone else, /:", r.Allowed(robots.Agent{Token: "OtherBot"}, "/"))
	// Output:
	// / true
	// /private/notes false
	// /private/press-kit true
	// https://example.com/archive/2019?page=2 false
	// /robots.txt true
	// crawl-delay: 2.5s
	// sitemaps: [https://example.com/sitemap.xml]
	// someone else, /: false
}

func ExampleParse() {
	r := robots.Parse([]byte("User-agent: *\nDisallow: /*.pdf$\nDisallow: /search\nAllow: /search/about\n"))
	a := robots.Agent{Token: "NewsBot"}
	fmt.Println(r.Allowed(a, "/report.pdf"))
	fmt.Println(r.Allowed(a, "/report.pdf?download=1"))
	fmt.Println(r.Allowed(a, "/search?q=owls"))
	fmt.Println(r.Allowed(a, "/search/about"))
	fmt.Println(r.Allowed(a, "/%7Euser/")) // "%7E" is "~"
	// Output:
	// false
	// true
	// false
	// true
	// true
}

func ExampleFromResponse() {
	a := robots.Agent{Token: "LinkCheckBot"}
	notFound := robots.FromResponse(http.StatusNotFound, nil, nil)
	serverError := robots.FromResponse(http.StatusServiceUnavailable, nil, nil)
	fmt.Println("404:", notFound.Allowed(a, "/listing"))
	fmt.Println("503:", serverError.Allowed(a, "/listing"), serverError.Unreachable())
	// Output:
	// 404: true
	// 503: false true
}

func ExampleCache() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: IndexBot\nDisallow: /drafts/\nCrawl-delay: 1\n")
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()

	c := &robots.Cache{
		Transport: srv.Client().Transport, // the bot's own transport: UA, signature, pacing
		TTL:       24 * time.Hour,
	}
	bot := robots.Agent{Token: "IndexBot"}
	ctx := context.Background()
	for _, p := range []string{"/", "/drafts/new-post"} {
		u, _ := url.Parse(srv.URL + p)
		err := c.Check(ctx, bot, u)
		var de *robots.DisallowedError
		switch {
		case err == nil:
			fmt.Println(p, "allowed")
		case errors.As(err, &de):
			fmt.Println(p, "disallowed by", de.Rule)
		default:
			fmt.Println(p, "error:", err)
		}
	}
	u, _ := url.Parse(srv.URL + "/")
	if r, ok := c.Cached(u); ok {
		d, _ := r.CrawlDelay(bot)
		fmt.Println("crawl-delay:", d)
	}
	// Output:
	// / allowed
	// /drafts/new-post disallowed by Disallow: /drafts/
	// crawl-delay: 1s
}

// FetchedAt tells how old the copy a Cache uses is, e.g. for a status page.
func ExampleCache_FetchedAt() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
	}))
	defer srv.Close()

	c := &robots.Cache{Transport: srv.Client().Transport}
	u, _ := url.Parse(srv.URL + "/page")
	_, ok := c.FetchedAt(u)
	fmt.Println("copy before a check:", ok)
	_ = c.Check(context.Background(), robots.Agent{Token: "ExampleBot"}, u)
	fetched, ok := c.FetchedAt(u)
	fmt.Println("copy after a check:", ok, "fetched within a minute:", time.Since(fetched) < time.Minute)
	// Output:
	// copy before a check: false
	// copy after a check: true fetched within a minute: true
}
