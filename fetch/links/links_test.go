package links

import (
	"net/url"
	"strings"
	"testing"
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestExtract(t *testing.T) {
	base := mustURL(t, "http://site.test/dir/page.html")
	tests := []struct {
		name string
		html string
		want []string
	}{
		{"relative", `<a href="a.html">A</a><a href="/b">B</a><a href="../c">C</a>`,
			[]string{"http://site.test/dir/a.html", "http://site.test/b", "http://site.test/c"}},
		{"absolute and fragment", `<a href="https://other.test/x#frag">x</a><a href="#top">top</a>`,
			[]string{"https://other.test/x", "http://site.test/dir/page.html"}},
		{"schemes skipped", `<a href="mailto:a@b">m</a><a href="javascript:void(0)">j</a><a href="data:,x">d</a><a>no href</a>`, nil},
		{"base href", `<head><base href="http://cdn.test/root/"></head><a href="p">p</a>`,
			[]string{"http://cdn.test/root/p"}},
		{"area", `<map><area href="/map"></map>`, []string{"http://site.test/map"}},
		{"form links skipped (C5)", `<form action="/login"><a href="/inside">in</a></form><a href="/out">out</a>`,
			[]string{"http://site.test/out"}},
		{"broken html", `<a href="/one"><p><a href=/two>two`, []string{"http://site.test/one", "http://site.test/two"}},
		{"spaces trimmed", `<a href="  /sp  ">s</a>`, []string{"http://site.test/sp"}},
		// Only http(s) URLs with a host (WHATWG "special" schemes need one),
		// the first <base href> only (HTML: "the first base element with an
		// href attribute"), attributes on end tags ignored (HTML tokenization
		// drops them), and a stray </form> does not cancel the next <form>.
		{"no host", `<a href="http:/nohost">n</a><a href="https:///x">x</a><a href="/ok">ok</a>`,
			[]string{"http://site.test/ok"}},
		{"other scheme with host", `<a href="ftp://files.test/x">f</a><a href="ws://w.test/">w</a>`, nil},
		{"first base wins", `<base href="http://one.test/a/"><base href="http://two.test/b/"><a href="p">p</a>`,
			[]string{"http://one.test/a/p"}},
		{"base without href ignored", `<base target="_blank"><base href="http://one.test/a/"><a href="p">p</a>`,
			[]string{"http://one.test/a/p"}},
		{"end tag attributes ignored", `<a href="/x">x</a href="/evil"></base href="http://evil.test/"><a href="y">y</a>`,
			[]string{"http://site.test/x", "http://site.test/dir/y"}},
		{"stray </form> then form", `</form><form><a href="/in">in</a></form><a href="/out">out</a>`,
			[]string{"http://site.test/out"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Extract(base, strings.NewReader(tt.html))
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, l := range got {
				s = append(s, l.URL.String())
			}
			if strings.Join(s, " ") != strings.Join(tt.want, " ") {
				t.Errorf("got %q, want %q", s, tt.want)
			}
		})
	}
}

func TestExtractTextAndRel(t *testing.T) {
	got, err := Extract(mustURL(t, "http://a.test/"), strings.NewReader(
		`<a href="/x" rel="NoFollow  Sponsored">Our   <b>partner</b></a>`))
	if err != nil || len(got) != 1 {
		t.Fatalf("got %v, %v", got, err)
	}
	if got[0].Text != "Our partner" || got[0].Rel != "nofollow sponsored" {
		t.Errorf("text %q rel %q", got[0].Text, got[0].Rel)
	}
}

func TestExtractCap(t *testing.T) {
	page := strings.Repeat(`<a href="/x">x</a>`, MaxLinks+10)
	got, _ := Extract(mustURL(t, "http://a.test/"), strings.NewReader(page))
	if len(got) != MaxLinks {
		t.Errorf("got %d links, want %d", len(got), MaxLinks)
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"HTTP://Example.COM", "http://example.com/"},
		{"http://example.com:80/a", "http://example.com/a"},
		{"https://example.com:443/a", "https://example.com/a"},
		{"https://example.com:8443/a", "https://example.com:8443/a"},
		{"http://example.com/a/./b/../c", "http://example.com/a/c"},
		{"http://example.com/a/b/..", "http://example.com/a/"},
		{"http://example.com/%7euser/%2f", "http://example.com/~user/%2F"},
		{"http://example.com/p?b=2&a=1#frag", "http://example.com/p?b=2&a=1"},
		{"http://user:pw@example.com/", "http://example.com/"},
		{"http://[::1]:8080/x", "http://[::1]:8080/x"},
		{"http://127.0.0.1:5000", "http://127.0.0.1:5000/"},
	}
	for _, tt := range tests {
		if got := NormalizeString(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// D6: the single link that matched the backlink is found after normalisation.
func TestMatch_D6(t *testing.T) {
	page, _ := Extract(mustURL(t, "http://biz.test/about"), strings.NewReader(`
		<a href="/contact">contact</a>
		<a href="HTTPS://www.Dir.test:443/listing/42#reviews">our listing</a>
		<a href="https://dir.test/listing/42">again</a>`))
	m, ok := Match(page, mustURL(t, "http://dir.test/listing/42"))
	if !ok || m.Text != "our listing" {
		t.Fatalf("match %v %v", m, ok)
	}
	if _, ok := Match(page, mustURL(t, "http://dir.test/listing/43")); ok {
		t.Error("matched the wrong listing")
	}
}

func FuzzExtract(f *testing.F) {
	f.Add(`<a href="/x">x</a><base href="http://b/">`)
	f.Add(`<form><a href="?q">`)
	f.Fuzz(func(t *testing.T, s string) {
		ls, err := Extract(&url.URL{Scheme: "http", Host: "a.test", Path: "/"}, strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			if l.URL.Scheme != "http" && l.URL.Scheme != "https" {
				t.Fatalf("scheme %q", l.URL.Scheme)
			}
			n := Normalize(l.URL)
			if NormalizeString(n) != n {
				t.Fatalf("Normalize not idempotent: %q -> %q", n, NormalizeString(n))
			}
		}
	})
}

func TestText(t *testing.T) {
	title, text, err := Text(strings.NewReader(`<html><head><title> Mass  times </title><style>p{}</style></head>
<body><h1>Mass times</h1><script>alert(1)</script><p>Sunday   <b>10am</b></p><ul><li>Saturday 6pm</li></ul></body></html>`))
	if err != nil || title != "Mass times" || text != "Mass times\nSunday 10am\nSaturday 6pm\n" {
		t.Errorf("title %q text %q err %v", title, text, err)
	}
}

func TestExtractAll_LinkElements(t *testing.T) {
	base := mustURL(t, "http://a.test/dir/page")
	page := `<html><head><base href="http://b.test/root/">
		<link rel="Canonical" href="/canon#x"><link rel="alternate" type="application/rss+xml" href="feed.xml">
		<link rel="stylesheet" href="mailto:x@y.test"><link rel="next"></head>
		<body><a href="p2">two</a></body></html>`
	as, ls, err := ExtractAll(base, strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 1 || as[0].URL.String() != "http://b.test/root/p2" {
		t.Errorf("anchors = %v; want the one <a>", as)
	}
	want := []struct{ url, rel string }{{"http://b.test/canon", "canonical"}, {"http://b.test/root/feed.xml", "alternate"}}
	if len(ls) != len(want) {
		t.Fatalf("link elements = %v; want %d", ls, len(want))
	}
	for i, w := range want {
		if ls[i].URL.String() != w.url || ls[i].Rel != w.rel {
			t.Errorf("link %d = %s rel %q; want %s rel %q", i, ls[i].URL, ls[i].Rel, w.url, w.rel)
		}
	}
	if only, _ := Extract(base, strings.NewReader(page)); len(only) != 1 {
		t.Errorf("Extract returned %d links; <link> elements are not anchors", len(only))
	}
}

func TestFromSitemap(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
		err       bool
	}{
		{"urlset", `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
			<url><loc>http://a.test/1</loc></url><url><loc> http://a.test/2 </loc></url></urlset>`, []string{"http://a.test/1", "http://a.test/2"}, false},
		{"rss", `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
			<item><link>http://a.test/post</link></item></channel></rss>`, []string{"http://a.test/post"}, false},
		{"atom", `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="http://a.test/e"/></entry></feed>`, []string{"http://a.test/e"}, false},
		// A location net/url cannot parse (a bad escape, an unclosed IPv6
		// bracket) is skipped; the list goes on.
		{"unparsable locations skipped", `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
			<url><loc>http://a.test/%zz</loc></url><url><loc>http://[::1/x</loc></url><url><loc>http://a.test/ok</loc></url></urlset>`, []string{"http://a.test/ok"}, false},
		{"not a sitemap", `<html><body>hi</body></html>`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls, err := FromSitemap(strings.NewReader(tc.doc), nil)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v; want error %v", err, tc.err)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "links: ") {
				t.Errorf("error %q is not package-prefixed", err)
			}
			var got []string
			for _, l := range ls {
				got = append(got, l.URL.String())
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("links = %v; want %v", got, tc.want)
			}
		})
	}
}

func FuzzExtractAll(f *testing.F) {
	f.Add(`<base href="http://b.test/x/"><link rel="alternate" href="f.xml"><a href="y">y</a>`)
	f.Add(`<link href="http://[::1">`)
	f.Fuzz(func(t *testing.T, page string) {
		base := &url.URL{Scheme: "http", Host: "a.test", Path: "/"}
		as, ls, err := ExtractAll(base, strings.NewReader(page))
		if err != nil {
			t.Fatalf("error from a strings.Reader: %v", err)
		}
		for _, l := range append(as, ls...) {
			if l.URL == nil || (l.URL.Scheme != "http" && l.URL.Scheme != "https") || l.URL.Host == "" || l.URL.Fragment != "" {
				t.Fatalf("bad link %+v", l)
			}
		}
	})
}
