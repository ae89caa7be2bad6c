package sitemap_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/goodbot-go/goodbot/sitemap"
)

func ExampleReader() {
	const doc = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc>https://example.com/</loc>
    <lastmod>2024-06-01</lastmod>
    <image:image><image:loc>https://example.com/logo.png</image:loc></image:image>
  </url>
  <url><loc> https://example.com/about?lang=en&amp;v=2 </loc><lastmod>2024-05-01T10:00:00+02:00</lastmod></url>
  <url><loc>https://example.com/news</loc><lastmod>last tuesday</lastmod></url>
</urlset>`
	r := sitemap.NewReader(strings.NewReader(doc), nil)
	for r.Next() {
		e := r.Entry()
		switch {
		case e.HasLastMod:
			fmt.Println(e.Loc, e.LastMod.Format(time.RFC3339))
		case e.LastModErr != nil:
			fmt.Println(e.Loc, "error:", e.LastModErr)
		}
	}
	if err := r.Err(); err != nil {
		fmt.Println(err)
	}
	fmt.Println(r.Format(), r.Count())
	// Output:
	// https://example.com/ 2024-06-01T00:00:00Z
	// https://example.com/about?lang=en&v=2 2024-05-01T08:00:00Z
	// https://example.com/news error: sitemap: bad date "last tuesday"
	// urlset 3
}

func ExampleRead() {
	feed := `<rss version="2.0"><channel><link>https://example.com/</link>
<item><link>https://example.com/post/1</link><pubDate>Sat, 19 Oct 2024 11:21:53 +0000</pubDate></item>
</channel></rss>`
	for e, err := range sitemap.Read(strings.NewReader(feed), nil) {
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println(e.Loc, e.LastMod)
	}
	// Output:
	// https://example.com/post/1 2024-10-19 11:21:53 +0000 UTC
}

func ExampleParseLastMod() {
	for _, s := range []string{"2024", "2024-05-06T07:08+02:00", "2024-05-06 07:08:09", "Sat, 19 Oct 2024 11:21:53 GMT"} {
		t, err := sitemap.ParseLastMod(s)
		fmt.Println(t.Format(time.RFC3339), err)
	}
	// Output:
	// 2024-01-01T00:00:00Z <nil>
	// 2024-05-06T05:08:00Z <nil>
	// 2024-05-06T07:08:09Z <nil>
	// 2024-10-19T11:21:53Z <nil>
}

func ExampleDiff() {
	day := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	prev := sitemap.Snapshot{Pages: map[string]time.Time{
		"https://example.com/a": day("2024-01-01"),
		"https://example.com/b": day("2024-01-01"),
		"https://example.com/c": {},
	}}
	cur := sitemap.Snapshot{Read: day("2024-06-01"), Complete: true, Pages: map[string]time.Time{
		"https://example.com/a": day("2024-01-01"),
		"https://example.com/b": day("2024-05-31"),
		"https://example.com/c": {},
		"https://example.com/d": day("2024-05-30"),
	}}
	d := sitemap.Diff(prev, cur)
	fmt.Println("new:", d.New)
	fmt.Println("moved:", d.Moved)
	fmt.Println("unknown (ask with If-Modified-Since):", d.Unknown)
	fmt.Println("unchanged:", d.Unchanged, "untrusted:", d.Untrusted)
	// Output:
	// new: [https://example.com/d]
	// moved: [https://example.com/b]
	// unknown (ask with If-Modified-Since): [https://example.com/c]
	// unchanged: 1 untrusted: false
}

// A freshness check: the second Check finds the sitemap unchanged
// with one conditional request, and there is nothing to refetch.
func ExampleWalker_Check() {
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprintf(w, `<urlset><url><loc>%[1]s/</loc><lastmod>2024-06-01</lastmod></url><url><loc>%[1]s/about</loc><lastmod>2024-05-01</lastmod></url></urlset>`, srv.URL)
	})
	srv = httptest.NewServer(mux)
	defer srv.Close()

	w := &sitemap.Walker{Client: srv.Client()}     // in a bot: its polite, signed client and a boltstore.Store
	declared := []string{srv.URL + "/sitemap.xml"} // from robots.txt
	for range 2 {
		res, err := w.Check(context.Background(), srv.URL, declared)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("requests=%d not-modified=%d new=%d moved=%d gone=%d\n",
			res.Requests, res.NotModified, len(res.New), len(res.Moved), len(res.Gone))
	}
	// Output:
	// requests=1 not-modified=0 new=2 moved=0 gone=0
	// requests=1 not-modified=1 new=0 moved=0 gone=0
}

func ExampleWalker_Walk() {
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("/sitemap_index.xml", func(w http.ResponseWriter, r *http.Request) {
		// The index lists itself: it is read once.
		fmt.Fprintf(w, `<sitemapindex><sitemap><loc>%[1]s/sitemap_index.xml</loc></sitemap><sitemap><loc>%[1]s/pages.txt</loc></sitemap></sitemapindex>`, srv.URL)
	})
	mux.HandleFunc("/pages.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%[1]s/\n%[1]s/contact\nhttps://elsewhere.example/not-ours\n", srv.URL)
	})
	srv = httptest.NewServer(mux)
	defer srv.Close()

	w := &sitemap.Walker{Client: srv.Client()}
	err := w.Walk(context.Background(), []string{srv.URL + "/sitemap_index.xml"}, func(e sitemap.Entry) error {
		fmt.Println(strings.TrimPrefix(e.Loc, srv.URL))
		return nil
	})
	fmt.Println(err)
	// Output:
	// /
	// /contact
	// <nil>
}

// WalkReport says what happened to each file; MaxURLs and Keep bound what
// the walk takes to what the caller will crawl.
func ExampleWalker_WalkReport() {
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("/sitemap_index.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<sitemapindex><sitemap><loc>%[1]s/a.xml</loc></sitemap><sitemap><loc>%[1]s/gone.xml</loc></sitemap><sitemap><loc>%[1]s/b.xml</loc></sitemap></sitemapindex>`, srv.URL)
	})
	mux.HandleFunc("/a.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<urlset><url><loc>%[1]s/1</loc></url><url><loc>https://cdn.example/x.png</loc></url><url><loc>%[1]s/2</loc></url><url><loc>%[1]s/3</loc></url></urlset>`, srv.URL)
	})
	srv = httptest.NewServer(mux)
	defer srv.Close()

	w := &sitemap.Walker{Client: srv.Client(), CrossHost: true, MaxURLs: 2,
		Keep: func(e sitemap.Entry) bool { return strings.HasPrefix(e.Loc, srv.URL+"/") }}
	rep, err := w.WalkReport(context.Background(), []string{srv.URL + "/sitemap_index.xml"}, func(e sitemap.Entry) error {
		fmt.Println("page", strings.TrimPrefix(e.Loc, srv.URL))
		return nil
	})
	for _, f := range rep.Files {
		fmt.Println(strings.TrimPrefix(f.URL, srv.URL), f.Outcome, f.Status, f.Pages)
	}
	fmt.Println("filtered:", rep.Filtered, "failed:", rep.Failed(), "err:", err)
	// Output:
	// page /1
	// page /2
	// /sitemap_index.xml fetched 200 0
	// /a.xml cut-max-urls 200 2
	// /gone.xml skipped-max-urls 0 0
	// /b.xml skipped-max-urls 0 0
	// filtered: 1 failed: 0 err: <nil>
}
