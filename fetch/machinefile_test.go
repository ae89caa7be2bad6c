package fetch_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/sitemap"
)

// bigSitemap returns a urlset of n entries of about 270 bytes each.
func bigSitemap(n int) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	pad := strings.Repeat("abcdefghij", 15)
	for i := range n {
		fmt.Fprintf(&b, "<url><loc>https://big.test/archive/section-%03d/%s/page-%06d.html</loc><lastmod>2024-05-01T10:00:00+00:00</lastmod><changefreq>weekly</changefreq></url>\n", i%500, pad, i)
	}
	b.WriteString("</urlset>\n")
	return b.String()
}

// A legal sitemap of 45,000 URLs and about 12 MB, read through the bot's
// client under WithMachineFile, yields all 45,000 entries: the fetch body
// limit (10 MiB by default) does not cut a file the sitemap protocol
// allows. Pages keep the bot's limit, and machine files still have one
// (50 MiB, the protocol's).
func TestMachineFile_SitemapWithinProtocolLimitsReadWhole(t *testing.T) {
	doc := bigSitemap(45_000)
	if len(doc) < 12_000_000 || len(doc) > 50<<20 {
		t.Fatalf("generated sitemap is %d bytes, want 12 MB to 50 MiB", len(doc))
	}
	w := fetchtest.New()
	site(w, "big.test", "").Handle("/sitemap.xml", fetchtest.Text("application/xml", doc)).
		Handle("/huge.xml", fetchtest.Huge(60<<20))
	bot := memBot(w)
	bot.Politeness = politeness.Policy{MinDelay: -1}
	f := mustFetcher(t, bot)
	machine := fetch.WithMachineFile(context.Background())

	resp, err := f.Client().Get("http://big.test/sitemap.xml") // a page: the bot's 10 MiB limit
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if fetch.OutcomeOf(err) != fetch.TooLarge || n != 10<<20 {
		t.Errorf("as a page: %d bytes, %v; want too_large at 10 MiB", n, err)
	}

	req, _ := http.NewRequestWithContext(machine, http.MethodGet, "http://big.test/sitemap.xml", nil)
	resp, err = f.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r := sitemap.NewReader(resp.Body, nil)
	count := 0
	for r.Next() {
		count++
	}
	resp.Body.Close()
	if err := r.Err(); err != nil || count != 45_000 {
		t.Errorf("sitemap: %d entries, err %v; want 45000", count, err)
	}

	p := getCtx(t, machine, f, "http://big.test/huge.xml", fetch.TooLarge)
	if len(p.Body) != 50<<20 {
		t.Errorf("machine file over 50 MiB: cut at %d bytes, want %d", len(p.Body), 50<<20)
	}
}
