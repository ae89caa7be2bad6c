package links

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func benchPage() []byte {
	var b strings.Builder
	b.WriteString("<html><head><title>t</title><style>p{}</style></head><body>")
	for i := range 500 {
		fmt.Fprintf(&b, `<p>Paragraph %d with <a href="/page/%d?x=%d#f" rel="nofollow">a link</a> and text.</p>`, i, i, i)
	}
	b.WriteString("</body></html>")
	return []byte(b.String())
}

// BenchmarkExtract is the tokenizer-based extraction the bots use.
func BenchmarkExtract(b *testing.B) {
	page, base := benchPage(), &url.URL{Scheme: "http", Host: "a.test", Path: "/"}
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		if ls, _ := Extract(base, bytes.NewReader(page)); len(ls) != 500 {
			b.Fatal(len(ls))
		}
	}
}

// BenchmarkExtractBaselineParseTree is the baseline: build the DOM with
// html.Parse, walk it for <a href>, resolve each.
func BenchmarkExtractBaselineParseTree(b *testing.B) {
	page, base := benchPage(), &url.URL{Scheme: "http", Host: "a.test", Path: "/"}
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		doc, err := html.Parse(bytes.NewReader(page))
		if err != nil {
			b.Fatal(err)
		}
		var out []*url.URL
		var walk func(n *html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.ElementNode && n.Data == "a" {
				for _, a := range n.Attr {
					if a.Key == "href" {
						if u, err := base.Parse(a.Val); err == nil {
							out = append(out, u)
						}
					}
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
		if len(out) != 500 {
			b.Fatal(len(out))
		}
	}
}
