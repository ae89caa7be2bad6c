package sitemap

import (
	"fmt"
	"testing"
)

// TestReader_JunkLocs: a loc that still holds an entity reference, or
// whose character references decode to white space or a control
// character, is not a URL: skipped and counted as invalid, never an entry.
func TestReader_JunkLocs(t *testing.T) {
	tests := []struct {
		name, loc string
	}{
		{"undeclared entity", "https://a.test/a&nbsp;b"},
		{"double escaped", "https://a.test/?a=1&amp;amp;b=2"},
		{"numeric after double escape", "https://a.test/&amp;#47;x"},
		{"entity in CDATA", "<![CDATA[https://a.test/?a=1&amp;b=2]]>"},
		{"entity with dots", "https://a.test/&x.y-z;"},
		// XML 1.0 section 2.3: a Name starts with a letter of either case.
		{"double escaped upper-case entity", "https://a.test/K&amp;Auml;se"},
		{"upper-case entity, last letter", "https://a.test/&amp;Zeta;"},
		{"entity starting with '_'", "https://a.test/&amp;_x;"},
		{"double escaped reference with leading zero", "https://a.test/&amp;#0047;x"},
		{"double escaped reference to 9", "https://a.test/&amp;#9;x"},
		// XML 1.0 section 4.1: a character reference must name a Char
		// (section 2.2), which no surrogate and nothing past U+10FFFF is.
		{"surrogate reference", "https://a.test/a&#xD800;b"},
		{"reference past U+10FFFF", "https://a.test/a&#x110000;b"},
		{"space reference inside", "https://a.test/a&#32;b"},
		{"trailing space reference", "https://a.test/a&#x20;"},
		{"leading space reference", "&#32;https://a.test/a"},
		{"tab reference", "https://a.test/a&#9;b"},
		{"newline reference", "https://a.test/a&#10;b"},
		{"NUL-ish control", "https://a.test/a&#x7f;b"},
		{"C1 control", "https://a.test/a&#x85;b"},
		{"no-break space reference", "https://a.test/a&#160;b"},
		{"line separator", "https://a.test/a&#x2028;b"},
		{"ideographic space", "https://a.test/a&#x3000;"},
	}
	for _, tc := range tests {
		for _, wrap := range []string{
			`<urlset><url><loc>%s</loc></url><url><loc>https://a.test/ok</loc></url></urlset>`,
			`<sitemapindex><sitemap><loc>%s</loc></sitemap><sitemap><loc>https://a.test/ok</loc></sitemap></sitemapindex>`,
			`<rss><channel><item><link>%s</link></item><item><link>https://a.test/ok</link></item></channel></rss>`,
			`<feed><entry><link href="%s"/></entry><entry><link href="https://a.test/ok"/></entry></feed>`,
		} {
			if tc.name == "entity in CDATA" && wrap[1] == 'f' {
				continue // no CDATA in an attribute
			}
			got, r := collect(t, fmt.Appendf(nil, wrap, tc.loc), nil)
			if len(got) != 1 || got[0].Loc != "https://a.test/ok" || r.Invalid() != 1 {
				t.Errorf("%s in %.12s: got %q, invalid %d; want only the ok entry, 1 invalid", tc.name, wrap, locs(got), r.Invalid())
			}
		}
	}
	// What stays a URL: decoded predefined entities, a lone '&', a raw
	// '&' followed by a non-name, raw white space around the loc.
	for _, loc := range []string{"https://a.test/?a=1&amp;b=2", "https://a.test/?a&b=c;d", "https://a.test/&#x41;", "\n  https://a.test/x \u00a0", "https://a.test/a&#;b"} {
		got, _ := collect(t, []byte(`<urlset><url><loc>`+loc+`</loc></url></urlset>`), nil)
		if len(got) != 1 {
			t.Errorf("%q: got %q, want one entry", loc, locs(got))
		}
	}
}

// TestReader_SitemapInsideURLSet: a <sitemap> element inside a <urlset>
// names a child sitemap, not a page.
func TestReader_SitemapInsideURLSet(t *testing.T) {
	in := `<urlset><url><loc>https://a.test/page</loc></url><sitemap><loc>https://a.test/child.xml</loc><lastmod>2024-01-02</lastmod></sitemap>` +
		`<url><loc>https://a.test/page2</loc></url><sitemap>https://a.test/bare.xml</sitemap></urlset>`
	got, r := collect(t, []byte(in), nil)
	want := []struct {
		loc     string
		sitemap bool
	}{{"https://a.test/page", false}, {"https://a.test/child.xml", true}, {"https://a.test/page2", false}, {"https://a.test/bare.xml", true}}
	if len(got) != len(want) || r.Err() != nil {
		t.Fatalf("got %q, %v", locs(got), r.Err())
	}
	for i, w := range want {
		if got[i].Loc != w.loc || got[i].IsSitemap != w.sitemap {
			t.Errorf("entry %d = %q IsSitemap %v; want %q %v", i, got[i].Loc, got[i].IsSitemap, w.loc, w.sitemap)
		}
	}
	if r.Format() != FormatURLSet {
		t.Errorf("format %v", r.Format())
	}
}
