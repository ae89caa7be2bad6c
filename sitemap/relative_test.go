package sitemap

import (
	"fmt"
	"testing"
)

// TestReader_RelativeFeedLinks: Atom hrefs resolve against the link's,
// the entry's and the feed's xml:base (nested, each relative to the one
// above) and the document URL; RSS links against the document URL.
func TestReader_RelativeFeedLinks(t *testing.T) {
	const doc = "https://a.test/feeds/atom.xml"
	tests := []struct {
		name, in, location, want string
	}{
		{"atom href relative to document", `<feed><entry><link href="post/1"/></entry></feed>`, doc, "https://a.test/feeds/post/1"},
		{"atom root-relative href", `<feed><entry><link href="/post/1"/></entry></feed>`, doc, "https://a.test/post/1"},
		{"atom href with dot segments", `<feed><entry><link href="../post/1"/></entry></feed>`, doc, "https://a.test/post/1"},
		{"atom feed xml:base absolute", `<feed xml:base="https://a.test/blog/"><entry><link href="p1"/></entry></feed>`, "", "https://a.test/blog/p1"},
		{"atom feed xml:base relative to document", `<feed xml:base="/blog/"><entry><link href="p1"/></entry></feed>`, doc, "https://a.test/blog/p1"},
		{"atom nested bases", `<feed xml:base="https://a.test/blog/"><entry xml:base="2024/"><link href="p1"/></entry></feed>`, doc, "https://a.test/blog/2024/p1"},
		{"atom three levels", `<feed xml:base="/blog/"><entry xml:base="2024/"><link xml:base="05/" href="p1"/></entry></feed>`, doc, "https://a.test/blog/2024/05/p1"},
		{"atom entry base overrides feed", `<feed xml:base="https://a.test/blog/"><entry xml:base="https://a.test/news/"><link href="p1"/></entry></feed>`, doc, "https://a.test/news/p1"},
		{"atom entry base is per entry", `<feed xml:base="https://a.test/blog/"><entry xml:base="x/"><link href="p0"/></entry><entry><link href="p1"/></entry></feed>`, doc, "https://a.test/blog/x/p0 https://a.test/blog/p1"},
		{"atom base with entity", `<feed xml:base="https://a.test/b&amp;c/"><entry><link href="p1"/></entry></feed>`, "", "https://a.test/b&c/p1"},
		{"atom absolute href ignores base", `<feed xml:base="https://a.test/blog/"><entry><link href="https://a.test/x"/></entry></feed>`, doc, "https://a.test/x"},
		{"atom relative, no base", `<feed><entry><link href="post/1"/></entry></feed>`, "", ""},
		{"atom javascript href", `<feed><entry><link href="javascript:alert(1)"/></entry></feed>`, doc, ""},
		{"rss link relative to document", `<rss><channel><item><link>post/1</link></item></channel></rss>`, "https://a.test/feed/rss.xml", "https://a.test/feed/post/1"},
		{"rss root-relative link", `<rss><channel><item><link>/post/1</link></item></channel></rss>`, "https://a.test/feed/rss.xml", "https://a.test/post/1"},
		{"rss channel xml:base", `<rss xml:base="https://a.test/blog/"><channel><item><link>p1</link></item></channel></rss>`, "", "https://a.test/blog/p1"},
		{"rss relative, no location", `<rss><channel><item><link>/post/1</link></item></channel></rss>`, "", ""},
		{"rss link relative to an http document", `<rss><channel><item><link>post/1</link></item></channel></rss>`, "http://a.test/feed/rss.xml", "http://a.test/feed/post/1"},
		// RFC 9110 4.2: an http(s) URI with an empty host is invalid, so
		// such a document URL is no base, not even for a network-path link.
		{"document URL without host is no base", `<rss><channel><item><link>//b.test/p1</link></item></channel></rss>`, "https:///feed/rss.xml", ""},
		{"document URL not http(s) is no base", `<rss><channel><item><link>//b.test/p1</link></item></channel></rss>`, "ftp://a.test/feed/rss.xml", ""},
		{"rdf xml:base", `<rdf:RDF xml:base="https://a.test/blog/"><item><link>p1</link></item></rdf:RDF>`, "", "https://a.test/blog/p1"},
		{"atom feed xml:base over http", `<feed xml:base="http://a.test/blog/"><entry><link href="p1"/></entry></feed>`, doc, "http://a.test/blog/p1"},
		{"atom xml:base not http(s) is ignored", `<feed xml:base="ftp://a.test/x/"><entry><link href="p1"/></entry></feed>`, doc, "https://a.test/feeds/p1"},
		{"atom xml:base without host is ignored", `<feed xml:base="https:/blog/"><entry><link href="p1"/></entry></feed>`, doc, "https://a.test/feeds/p1"},
		{"atom relative xml:base, no document URL", `<feed xml:base="/blog/"><entry><link href="p1"/></entry></feed>`, "", ""},
		{"atom unparseable href", `<feed><entry><link href="p%zz"/></entry></feed>`, doc, ""},
		{"rss link of an extension", `<rss><channel><item><foo:link>https://evil.test/x</foo:link><link>https://a.test/p1</link></item></channel></rss>`, "", "https://a.test/p1"},
		{"rdf dublin core other than dc:date skipped whole", `<rdf:RDF><item><dc:source><link>https://evil.test/x</link></dc:source><link>https://a.test/p1</link></item></rdf:RDF>`, "", "https://a.test/p1"},
		{"atom entry declaring a namespace", `<feed xmlns="http://www.w3.org/2005/Atom"><entry xmlns:media="http://search.yahoo.com/mrss/"><link href="https://a.test/p1"/></entry></feed>`, "", "https://a.test/p1"},
		{"atom xhtml content skipped", `<feed xmlns="http://www.w3.org/2005/Atom"><entry><content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><link href="https://evil.test/x"/></div></content><link href="https://a.test/p1"/></entry></feed>`, "", "https://a.test/p1"},
		{"rss xhtml body skipped", `<rss><channel><item><body xmlns="http://www.w3.org/1999/xhtml"><link>https://evil.test/x</link></body><link>https://a.test/p1</link></item></channel></rss>`, "", "https://a.test/p1"},
		{"rdf xhtml body skipped", `<rdf:RDF><item><body xmlns="http://www.w3.org/1999/xhtml"><link>https://evil.test/x</link></body><link>https://a.test/p1</link></item></rdf:RDF>`, "", "https://a.test/p1"},
		{"rdf link relative", `<rdf:RDF><item><link>p/1</link></item></rdf:RDF>`, "https://a.test/rdf.xml", "https://a.test/p/1"},
		{"sitemap loc stays absolute-only", `<urlset><url><loc>/post/1</loc></url></urlset>`, "https://a.test/sitemap.xml", ""},
	}
	for _, tc := range tests {
		got, r := collect(t, []byte(tc.in), &Options{Location: tc.location, CrossHost: true})
		if s := fmt.Sprint(locs(got)); s != "["+tc.want+"]" {
			t.Errorf("%s: got %s (invalid %d), want [%s]", tc.name, s, r.Invalid(), tc.want)
		}
	}
	// The location rule applies to what the links resolve to.
	got, r := collect(t, []byte(`<feed><entry><link href="p1"/></entry><entry><link href="../../x"/></entry></feed>`), &Options{Location: doc})
	if fmt.Sprint(locs(got)) != "[https://a.test/feeds/p1]" || r.Dropped() != 1 {
		t.Errorf("scoped: %q dropped %d", locs(got), r.Dropped())
	}
}

func TestDeclaredSitemaps(t *testing.T) {
	got := DeclaredSitemaps("https://a.test/robots.txt", []string{
		"/sitemap.xml", "sitemap.xml", "https://A.TEST:443/sitemap.xml#x", " /news.xml ", "https://cdn.test/s.xml",
		"ftp://a.test/s.xml", "//other.test/s.xml", "http://a.test/sitemap.xml", "%zz", "", "//h::", "https://a.test/last.xml",
	})
	want := "[https://a.test/sitemap.xml https://a.test/news.xml https://cdn.test/s.xml https://other.test/s.xml http://a.test/sitemap.xml https://a.test/last.xml]"
	if fmt.Sprint(got) != want {
		t.Errorf("got %q\nwant %s", got, want)
	}
	if got := DeclaredSitemaps("", []string{"/s.xml", "https://a.test/s.xml"}); fmt.Sprint(got) != "[https://a.test/s.xml]" {
		t.Errorf("no base: %q", got)
	}
	// A robots.txt URL that does not parse is no base either.
	if got := DeclaredSitemaps("https://[a.test/robots.txt", []string{"/s.xml", "https://a.test/s.xml"}); fmt.Sprint(got) != "[https://a.test/s.xml]" {
		t.Errorf("unparseable base: %q", got)
	}
}

// TestReader_AtomLinkAttributes: an Atom <link>'s attributes are read in
// every spelling XML 1.0 allows (section 3.1: white space around '=',
// single or double quotes, an empty value, line breaks between
// attributes) and the unquoted one HTML allows; a tag that ends after
// "href=" is no link and stops nothing.
func TestReader_AtomLinkAttributes(t *testing.T) {
	for _, tc := range []struct{ link, want string }{
		{`<link href = "https://a.test/1"/>`, "https://a.test/1"},
		{`<link href='https://a.test/2'/>`, "https://a.test/2"},
		{`<link rel = 'alternate' href = 'https://a.test/3' />`, "https://a.test/3"},
		{`<link title="" href="https://a.test/4"/>`, "https://a.test/4"},
		{"<link\n\thref=\"https://a.test/5\"\n/>", "https://a.test/5"},
		{`<link href=https://a.test/6></link>`, "https://a.test/6"},
		{`<link href=>`, ""},
		{`<link href= >`, ""},
	} {
		in := `<feed><entry>` + tc.link + `</entry><entry><link href="https://a.test/ok"/></entry></feed>`
		got, r := collect(t, []byte(in), nil)
		want := []string{"https://a.test/ok"}
		if tc.want != "" {
			want = append([]string{tc.want}, want...)
		}
		if fmt.Sprint(locs(got)) != fmt.Sprint(want) || r.Err() != nil {
			t.Errorf("%s: got %q, %v; want %q", tc.link, locs(got), r.Err(), want)
		}
	}
}
