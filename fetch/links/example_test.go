package links_test

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/goodbot-go/goodbot/fetch/links"
)

func ExampleExtract() {
	page, _ := url.Parse("http://bakery.test/about/partners")
	ls, _ := links.Extract(page, strings.NewReader(`<p>Listed at <a href="https://WWW.CityDir.test:443/listing/bakery#reviews">City Directory</a>
		and <a href="../contact" rel="nofollow">contact</a></p>`))
	for _, l := range ls {
		fmt.Printf("%s %q rel=%q\n", links.Normalize(l.URL), l.Text, l.Rel)
	}
	backlink, _ := url.Parse("http://citydir.test/listing/bakery")
	m, ok := links.Match(ls, backlink)
	fmt.Println(ok, m.Href)
	// Output:
	// https://www.citydir.test/listing/bakery "City Directory" rel=""
	// http://bakery.test/contact "contact" rel="nofollow"
	// true https://WWW.CityDir.test:443/listing/bakery#reviews
}

func ExampleNormalize() {
	for _, s := range []string{"HTTP://User:secret@Example.TEST:80/a/./b/../c?#frag", "https://example.test:443"} {
		u, _ := url.Parse(s)
		fmt.Println(links.Normalize(u))
	}
	// Output:
	// http://example.test/a/c
	// https://example.test/
}

func ExampleText() {
	title, text, _ := links.Text(strings.NewReader(`<html><head><title> Opening  hours </title><style>p{}</style></head>
		<body><h1>Bakery</h1><p>Open   daily<script>track()</script></p></body></html>`))
	fmt.Printf("%q\n%q\n", title, text)
	// Output:
	// "Opening hours"
	// "Bakery\nOpen daily\n"
}

func ExampleExtractAll() {
	page, _ := url.Parse("http://bakery.test/news/")
	_, elems, _ := links.ExtractAll(page, strings.NewReader(`<head>
		<link rel="canonical" href="https://bakery.test/news/">
		<link rel="alternate" type="application/rss+xml" href="feed.xml"></head>`))
	for _, l := range elems {
		fmt.Println(l.Rel, l.URL)
	}
	// Output:
	// canonical https://bakery.test/news/
	// alternate http://bakery.test/news/feed.xml
}

func ExampleFromSitemap() {
	feed := `<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>
		<item><link>http://bakery.test/news/rye</link></item>
		<item><link>http://bakery.test/news/spelt</link></item></channel></rss>`
	ls, err := links.FromSitemap(strings.NewReader(feed), nil)
	for _, l := range ls {
		fmt.Println(l.URL)
	}
	fmt.Println(err)
	// Output:
	// http://bakery.test/news/rye
	// http://bakery.test/news/spelt
	// <nil>
}
