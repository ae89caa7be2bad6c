package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func collect(t testing.TB, in []byte, opt *Options) ([]Entry, *Reader) {
	t.Helper()
	r := NewReader(bytes.NewReader(in), opt)
	var out []Entry
	for r.Next() {
		out = append(out, r.Entry())
	}
	return out, r
}

func locs(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Loc
	}
	return out
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	return gzBytes(b)
}

func gzBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

const ns = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"`

func TestReader_FormatsAndDeviations(t *testing.T) {
	type want struct {
		loc     string
		lastmod string // RFC 3339, "" = none
	}
	tests := []struct {
		name   string
		in     string
		format Format
		want   []want
	}{
		{"urlset", `<?xml version="1.0"?><urlset ` + ns + `><url><loc>https://a.test/1</loc><lastmod>2024-05-01</lastmod><changefreq>daily</changefreq><priority>0.8</priority></url><url><loc>https://a.test/2</loc></url></urlset>`,
			FormatURLSet, []want{{"https://a.test/1", "2024-05-01T00:00:00Z"}, {"https://a.test/2", ""}}},
		{"index", `<sitemapindex ` + ns + `><sitemap><loc>https://a.test/s1.xml</loc><lastmod>2024-05-01T10:00:00+02:00</lastmod></sitemap></sitemapindex>`,
			FormatIndex, []want{{"https://a.test/s1.xml", "2024-05-01T08:00:00Z"}}},
		{"text", "https://a.test/1\r\n\r\n  https://a.test/2  \nnot a url\nhttps://a.test/3", FormatText,
			[]want{{"https://a.test/1", ""}, {"https://a.test/2", ""}, {"https://a.test/3", ""}}},
		{"rss2", `<rss version="2.0"><channel><link>https://a.test/</link><item><link>https://a.test/p1</link><pubDate>Sat, 19 Oct 2024 11:21:53 +0000</pubDate></item><item><guid>https://a.test/p2</guid></item></channel></rss>`,
			FormatRSS, []want{{"https://a.test/p1", "2024-10-19T11:21:53Z"}, {"https://a.test/p2", ""}}},
		{"atom", `<feed xmlns="http://www.w3.org/2005/Atom"><link rel="self" href="https://a.test/feed"/><entry><link rel="edit" href="https://a.test/e"/><link href="https://a.test/p1?a=1&amp;b=2"/><updated>2024-01-02T03:04:05Z</updated><published>2020-01-01T00:00:00Z</published></entry></feed>`,
			FormatAtom, []want{{"https://a.test/p1?a=1&b=2", "2024-01-02T03:04:05Z"}}},
		{"atom published only", `<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="https://a.test/p1"/><published>2020-01-01T00:00:00Z</published></entry></feed>`,
			FormatAtom, []want{{"https://a.test/p1", "2020-01-01T00:00:00Z"}}},
		{"atom 0.3", `<feed version="0.3" xmlns="http://purl.org/atom/ns#"><entry><link rel="alternate" type="text/html" href="https://a.test/p1"/><modified>2004-05-06T07:08:09Z</modified><issued>2004-01-01T00:00:00Z</issued></entry></feed>`,
			FormatAtom, []want{{"https://a.test/p1", "2004-05-06T07:08:09Z"}}},
		{"rss1 rdf", `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><link>https://a.test/</link></channel><item rdf:about="x"><link>https://a.test/p1</link><dc:date>2024-03-04</dc:date></item></rdf:RDF>`,
			FormatRDF, []want{{"https://a.test/p1", "2024-03-04T00:00:00Z"}}},
		{"no namespace", `<urlset><url><loc>https://a.test/1</loc></url></urlset>`, FormatURLSet, []want{{"https://a.test/1", ""}}},
		{"legacy google namespace", `<urlset xmlns="http://www.google.com/schemas/sitemap/0.84"><url><loc>https://a.test/1</loc></url></urlset>`, FormatURLSet, []want{{"https://a.test/1", ""}}},
		{"https namespace", `<urlset xmlns="https://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://a.test/1</loc></url></urlset>`, FormatURLSet, []want{{"https://a.test/1", ""}}},
		{"prefixed namespace", `<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9"><s:url><s:loc>https://a.test/1</s:loc></s:url></s:urlset>`, FormatURLSet, []want{{"https://a.test/1", ""}}},
		{"BOM and white space before declaration", "\xef\xbb\xbf \r\n\t<?xml version=\"1.0\"?><urlset><url><loc>https://a.test/1</loc></url></urlset>", FormatURLSet, []want{{"https://a.test/1", ""}}},
		{"BOM text", "\xef\xbb\xbfhttps://a.test/1\n", FormatText, []want{{"https://a.test/1", ""}}},
		{"white space and newlines in loc", "<urlset><url><loc>\n\t https://a.test/a\n/b \u00a0</loc></url></urlset>", FormatURLSet, []want{{"https://a.test/a/b", ""}}},
		{"CDATA and entities", `<urlset><url><loc>https://a.test/x?a=1&amp;b=&#50;&#x33;<![CDATA[&c=<4>]]></loc><lastmod><![CDATA[2004-12-23T18:00:15&#43;00:00]]></lastmod></url><url><loc>https://a.test/y</loc><lastmod>2004-12-23T18:00:15&#43;01:00</lastmod></url></urlset>`,
			FormatURLSet, []want{{"https://a.test/x?a=1&b=23&c=<4>", ""}, {"https://a.test/y", "2004-12-23T17:00:15Z"}}},
		{"upper case tags", `<URLSET><URL><LOC>https://a.test/1</LOC><LASTMOD>2024-05-01</LASTMOD></URL></URLSET>`, FormatURLSet, []want{{"https://a.test/1", "2024-05-01T00:00:00Z"}}},
		// Namespaces in XML: a name cannot start with ':'; "<:loc>" is not
		// the sitemap's <loc> and is skipped like an extension.
		{"empty prefix", `<urlset><url><:loc>https://evil.test/1</:loc><loc>https://a.test/1</loc></url></urlset>`, FormatURLSet, []want{{"https://a.test/1", ""}}},
		{"mixed case tags", `<URLSET><Url><LOC>https://a.test/1</LOC><LastMod>2024-05-01</LastMod></Url></URLSET>`, FormatURLSet, []want{{"https://a.test/1", "2024-05-01T00:00:00Z"}}},
		{"comments and PIs", `<?xml version="1.0"?><?xml-stylesheet href="s.xsl"?><!-- <url><loc>https://a.test/no</loc></url> --><urlset><!-- c --><url><loc>https://a.test/1</loc><!-- <loc>https://a.test/no2</loc> --></url></urlset>`,
			FormatURLSet, []want{{"https://a.test/1", ""}}},
		{"extensions ignored", `<urlset ` + ns + ` xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" xmlns:xhtml="http://www.w3.org/1999/xhtml" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"><url><loc>https://a.test/1</loc><image:image><image:loc>https://img.test/1.png</image:loc></image:image><video:video><video:content_loc>https://v.test/1.mp4</video:content_loc><video:player_loc>https://v.test/p</video:player_loc></video:video><xhtml:link rel="alternate" hreflang="de" href="https://a.test/de/1"/><news:news><news:publication_date>2024-01-01</news:publication_date></news:news><lastmod>2024-05-01</lastmod></url></urlset>`,
			FormatURLSet, []want{{"https://a.test/1", "2024-05-01T00:00:00Z"}}},
		{"extension with default namespace", `<urlset ` + ns + `><url><loc>https://a.test/1</loc><image xmlns="http://www.google.com/schemas/sitemap-image/1.1"><loc>https://img.test/1.png</loc></image></url></urlset>`,
			FormatURLSet, []want{{"https://a.test/1", ""}}},
		{"undeclared extension prefix", `<urlset><url><loc>https://a.test/1</loc><image:image><image:loc>https://img.test/1.png</image:loc></image:image></url></urlset>`, FormatURLSet, []want{{"https://a.test/1", ""}}},
		{"missing </url>: second loc starts a new entry", `<urlset><url><loc>https://a.test/1</loc><lastmod>2024-01-01</lastmod><loc>https://a.test/2</loc></url></urlset>`,
			FormatURLSet, []want{{"https://a.test/1", "2024-01-01T00:00:00Z"}, {"https://a.test/2", ""}}},
		{"bare URL in sitemap", "<sitemapindex><sitemap>\n https://a.test/s.xml?x=1&amp;y=2 \n</sitemap></sitemapindex>", FormatIndex, []want{{"https://a.test/s.xml?x=1&y=2", ""}}},
		{"url inside loc", `<urlset><url><loc><url><![CDATA[https://a.test/1]]></url></loc><lastmod>2015-04-28</lastmod></url></urlset>`, FormatURLSet, []want{{"https://a.test/1", "2015-04-28T00:00:00Z"}}},
		{"relative and non-http locs skipped", `<urlset><url><loc>/relative</loc></url><url><loc>ftp://a.test/f</loc></url><url><loc>javascript:alert(1)</loc></url><url><loc>https://a.test/ok</loc></url></urlset>`,
			FormatURLSet, []want{{"https://a.test/ok", ""}}},
		{"ISO-8859-1 declared", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset><url><loc>https://a.test/caf\xe9<![CDATA[/\xfc]]>/&#233;</loc></url></urlset>", FormatURLSet, []want{{"https://a.test/caf\u00e9/\u00fc/\u00e9", ""}}},
		{"rss item text is not a URL", `<rss><channel><item>https://a.test/x<title>t</title></item><item><link>https://a.test/p1</link></item></channel></rss>`, FormatRSS, []want{{"https://a.test/p1", ""}}},
		{"atom entry text is not a URL", `<feed xmlns="http://www.w3.org/2005/Atom"><entry>https://a.test/x</entry><entry><link href="https://a.test/p1"/></entry></feed>`, FormatAtom, []want{{"https://a.test/p1", ""}}},
		{"comment and PI inside loc", `<urlset><url><loc>https://a.test/1<!--x--></loc></url><url><loc>https://a.test/2<?pi x?></loc></url></urlset>`,
			FormatURLSet, []want{{"https://a.test/1", ""}, {"https://a.test/2", ""}}},
		// XML 1.0 2.8: the XML declaration is only at the start; a later
		// one (concatenated sitemaps) does not change the encoding.
		{"later XML declaration ignored", `<urlset><url><loc>https://a.test/1</loc></url><?xml version="1.0" encoding="Shift_JIS"?><url><loc>https://a.test/2</loc></url></urlset>`,
			FormatURLSet, []want{{"https://a.test/1", ""}, {"https://a.test/2", ""}}},
		// Quoted strings in a DTD may hold ']' and '>': the DTD ends after them.
		{"doctype with quoted markup", `<!DOCTYPE urlset [<!ENTITY x "x]><urlset><url><loc>https://evil.test/1</loc></url></urlset>"> <!ENTITY y '"]>'>]><urlset><url><loc>https://a.test/1</loc></url></urlset>`,
			FormatURLSet, []want{{"https://a.test/1", ""}}},
		{"empty tag", `<urlset><><url><loc>https://a.test/1</loc></url></urlset>`, FormatURLSet, []want{{"https://a.test/1", ""}}},
		{"empty self-closing urlset", `<urlset ` + ns + `/>`, FormatURLSet, nil},
		{"sitemap namespace repeated on url", `<urlset ` + ns + `><url ` + ns + `><loc>https://a.test/1</loc></url></urlset>`, FormatURLSet, []want{{"https://a.test/1", ""}}},
		{"namespaces declared on url", `<urlset ` + ns + `><url xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"><loc>https://a.test/1</loc><image:image><image:loc>https://img.test/1.png</image:loc></image:image></url></urlset>`,
			FormatURLSet, []want{{"https://a.test/1", ""}}},
		{"missing </loc>", `<urlset><url><loc>https://a.test/1</url><url><loc>https://a.test/2</loc></url></urlset>`, FormatURLSet, []want{{"https://a.test/1", ""}, {"https://a.test/2", ""}}},
		{"markup inside lastmod", `<urlset><url><loc>https://a.test/1</loc><lastmod>2024-05<b></b>-06</lastmod></url></urlset>`, FormatURLSet, []want{{"https://a.test/1", "2024-05-06T00:00:00Z"}}},
		{"extension element named url", `<urlset><url><loc>https://a.test/1</loc><x:url>https://x.test/</x:url><lastmod>2024-01-01</lastmod></url></urlset>`, FormatURLSet, []want{{"https://a.test/1", "2024-01-01T00:00:00Z"}}},
		{"rss empty link element", `<rss><channel><item><link/><title>T</title><guid>https://a.test/p1</guid></item></channel></rss>`, FormatRSS, []want{{"https://a.test/p1", ""}}},
		{"rss long link and guid", `<rss><channel><item><link>https://a.test/` + strings.Repeat("l", 200) + `</link></item><item><guid>https://a.test/` + strings.Repeat("g", 200) + `</guid></item></channel></rss>`,
			FormatRSS, []want{{"https://a.test/" + strings.Repeat("l", 200), ""}, {"https://a.test/" + strings.Repeat("g", 200), ""}}},
		{"atom markup inside published", `<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="https://a.test/p1"/><published>2020-01<b></b>-02T00:00:00Z</published></entry></feed>`,
			FormatAtom, []want{{"https://a.test/p1", "2020-01-02T00:00:00Z"}}},
		// A reference to white space or a control character is not a way to
		// write a URL: the raw ones are stripped as formatting, the encoded
		// ones make the URL invalid.
		{"bare URL with an encoded line break", `<sitemapindex><sitemap>https://a.test/s.xml&#10;x</sitemap><sitemap><loc>https://a.test/2.xml</loc></sitemap></sitemapindex>`,
			FormatIndex, []want{{"https://a.test/2.xml", ""}}},
		{"rss guid with an encoded line break", `<rss><channel><item><guid>https://a.test/p&#10;1</guid></item><item><guid>https://a.test/p2</guid></item></channel></rss>`,
			FormatRSS, []want{{"https://a.test/p2", ""}}},
		{"rss link preferred to guid", `<rss><channel><item><guid>https://a.test/?p=1</guid><link>https://a.test/post-1</link></item></channel></rss>`,
			FormatRSS, []want{{"https://a.test/post-1", ""}}},
		{"loc before bare text", `<sitemapindex><sitemap>https://a.test/bare.xml<loc>https://a.test/1.xml</loc></sitemap></sitemapindex>`,
			FormatIndex, []want{{"https://a.test/1.xml", ""}}},
		{"overlong lastmod", `<urlset><url><loc>https://a.test/1</loc><lastmod>2024-01-01` + strings.Repeat("9", 200) + `</lastmod></url></urlset>`,
			FormatURLSet, []want{{"https://a.test/1", ""}}},
		{"ISO-8859-1 byte 0x80", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset><url><loc>https://a.test/\x80</loc></url></urlset>", FormatURLSet, []want{{"https://a.test/\u0080", ""}}},
		{"bare URL with an invalid loc", `<sitemapindex><sitemap>https://a.test/bare.xml<loc>https://a.test/&#10;1.xml</loc></sitemap></sitemapindex>`, FormatIndex, nil},
		{"tab and carriage return inside loc", "<urlset><url><loc>https://a.test/a\tb</loc></url><url><loc>https://a.test/c\rd</loc></url></urlset>",
			FormatURLSet, []want{{"https://a.test/ab", ""}, {"https://a.test/cd", ""}}},
		{"double escaped after an ampersand", `<urlset><url><loc>https://a.test/?a=&amp;&amp;amp;b</loc></url><url><loc>https://a.test/?a=&amp;&amp;b</loc></url></urlset>`,
			FormatURLSet, []want{{"https://a.test/?a=&&b", ""}}},
		{"one-letter host in guid", `<rss><channel><item><guid>http://x</guid></item></channel></rss>`, FormatRSS, []want{{"http://x", ""}}},
		{"one-letter host as bare text", `<sitemapindex><sitemap>http://x</sitemap></sitemapindex>`, FormatIndex, []want{{"http://x", ""}}},
		// XML 1.0 4.1: a reference is '&', a Name (which starts with a
		// letter, '_' or ':'), ';'. Other ampersands are plain data.
		{"ampersands that are not references", `<urlset><url><loc>https://a.test/?a=1&amp;-b;</loc></url><url><loc>https://a.test/?a&amp;;</loc></url><url><loc>https://a.test/?a&amp;.b;</loc></url></urlset>`,
			FormatURLSet, []want{{"https://a.test/?a=1&-b;", ""}, {"https://a.test/?a&;", ""}, {"https://a.test/?a&.b;", ""}}},
		{"doctype skipped", `<!DOCTYPE urlset [<!ELEMENT urlset ANY> <!-- ] > -->]><urlset><url><loc>https://a.test/1</loc></url></urlset>`, FormatURLSet, []want{{"https://a.test/1", ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, compress := range []bool{false, true} {
				in := []byte(tc.in)
				if compress {
					in = gz(t, in)
				}
				got, r := collect(t, in, nil)
				if err := r.Err(); err != nil {
					t.Fatalf("gzip=%v: Err = %v", compress, err)
				}
				if r.Format() != tc.format {
					t.Errorf("gzip=%v: Format = %v, want %v", compress, r.Format(), tc.format)
				}
				if len(got) != len(tc.want) {
					t.Fatalf("gzip=%v: got %q, want %v", compress, locs(got), tc.want)
				}
				for i, w := range tc.want {
					if got[i].Loc != w.loc {
						t.Errorf("entry %d: Loc = %q, want %q", i, got[i].Loc, w.loc)
					}
					if w.lastmod == "" {
						if got[i].HasLastMod {
							t.Errorf("entry %d: unexpected lastmod %v", i, got[i].LastMod)
						}
					} else if !got[i].HasLastMod || !got[i].LastMod.Equal(date(w.lastmod)) {
						t.Errorf("entry %d: LastMod = %v (%v, %v), want %s", i, got[i].LastMod, got[i].HasLastMod, got[i].LastModErr, w.lastmod)
					}
					if got[i].IsSitemap != (tc.format == FormatIndex) {
						t.Errorf("entry %d: IsSitemap = %v", i, got[i].IsSitemap)
					}
				}
			}
		})
	}
}

func TestReader_ChangeFreqAndPriority(t *testing.T) {
	in := `<urlset><url><loc>https://a.test/1</loc><changefreq> Weekly </changefreq><priority>0.3</priority></url>` +
		`<url><loc>https://a.test/2</loc><changefreq>sometimes</changefreq><priority>1.5</priority></url>` +
		`<url><loc>https://a.test/3</loc><priority>0.25</priority></url><url><loc>https://a.test/4</loc><priority>1.0</priority></url>` +
		`<url><loc>https://a.test/5</loc><priority>0.<b></b>8</priority></url></urlset>` // markup inside the field is not its end
	got, _ := collect(t, []byte(in), nil)
	wantCF := []string{"weekly", "", "", "", ""}
	wantP := []float64{0.3, 0.5, 0.25, 1, 0.8}
	if len(got) != len(wantP) {
		t.Fatalf("got %q, want %d entries", locs(got), len(wantP))
	}
	for i, e := range got {
		if e.ChangeFreq != wantCF[i] || e.Priority != wantP[i] {
			t.Errorf("entry %d: changefreq %q priority %v, want %q %v", i, e.ChangeFreq, e.Priority, wantCF[i], wantP[i])
		}
	}
}

func TestReader_InvalidDateIsPerEntry(t *testing.T) {
	in := `<urlset><url><loc>https://a.test/1</loc><lastmod>2023-02-30</lastmod></url><url><loc>https://a.test/2</loc><lastmod>yesterday</lastmod></url><url><loc>https://a.test/3</loc><lastmod>2024-01-01</lastmod></url></urlset>`
	got, r := collect(t, []byte(in), nil)
	if r.Err() != nil || len(got) != 3 {
		t.Fatalf("got %d entries, err %v", len(got), r.Err())
	}
	for i, e := range got[:2] {
		var de *DateError
		if e.HasLastMod || !errors.As(e.LastModErr, &de) || !errors.Is(e.LastModErr, ErrBadDate) {
			t.Errorf("entry %d: HasLastMod %v LastModErr %v", i, e.HasLastMod, e.LastModErr)
		}
	}
	if !got[2].HasLastMod || got[2].LastModErr != nil {
		t.Errorf("entry 2: %+v", got[2])
	}
}

func TestParseLastMod(t *testing.T) {
	tests := []struct {
		in   string
		want string // RFC 3339 or "" for error
	}{
		{"2024", "2024-01-01T00:00:00Z"},
		{"2024-05", "2024-05-01T00:00:00Z"},
		{"2024-05-06", "2024-05-06T00:00:00Z"},
		{"2024-05-06T07:08Z", "2024-05-06T07:08:00Z"},
		{"2024-05-06T07:08+02:00", "2024-05-06T05:08:00Z"},
		{"2024-05-06T07:08:09Z", "2024-05-06T07:08:09Z"},
		{"2024-05-06T07:08:09.5-01:30", "2024-05-06T08:38:09.5Z"},
		{"2024-05-06T07:08:09.123456789Z", "2024-05-06T07:08:09.123456789Z"},
		{"2024-05-06 07:08:09", "2024-05-06T07:08:09Z"},        // space for T, no zone
		{"2024-05-06T07:08:09", "2024-05-06T07:08:09Z"},        // no zone: UTC
		{"2024-05-06T07:08:09+0200", "2024-05-06T05:08:09Z"},   // no colon
		{"2024-05-06T07:08:09+02", "2024-05-06T05:08:09Z"},     // hours only
		{"2024-05-06 07:08:09 +02:00", "2024-05-06T05:08:09Z"}, // space before zone
		{"  2024-05-06\n", "2024-05-06T00:00:00Z"},
		{"2024-12-31T24:00:00Z", "2025-01-01T00:00:00Z"},
		{"Sat, 19 Oct 2024 11:21:53 +0000", "2024-10-19T11:21:53Z"},
		{"Sat, 19 Oct 2024 11:21:53 GMT", "2024-10-19T11:21:53Z"},
		{"Thu, 05 Jan 17 13:34:52 +0100", "2017-01-05T12:34:52Z"},
		{"05 Jan 2017 13:34:53 +0100", "2017-01-05T12:34:53Z"},
		{"05 Jan 17 13:34:55", "2017-01-05T13:34:55Z"},
		{"Sat, 5 Oct 2024 11:21:53 +0000", "2024-10-05T11:21:53Z"},
		{"", ""},
		{"2024-13-01", ""},
		{"2023-02-29", ""},
		{"2024-02-80", ""},
		{"2024-05-06T25:00Z", ""},
		{"2024-05-06T07:08:09+25:00", ""},
		{"20240506", ""},
		{"yesterday", ""},
		{"2024-05-06T07", ""},
		{"2024-05-06t07:08:09z", "2024-05-06T07:08:09Z"}, // RFC 3339 5.6: T and Z may be lower case
		{"202a-05-06", ""},           // not a digit
		{"2024-0a-06", ""},           //
		{"2024/05/06", ""},           // W3C separators are '-'
		{"2024-05/06", ""},           //
		{"2024-05-06X07:08:09Z", ""}, // nor 'T', 't' nor a space
		{"2024-05-06T07-08:09Z", ""}, //
		{"2024-05-0x", ""},
		{"2024-12", "2024-12-01T00:00:00Z"},
		{"2024-05-06T07:0x", ""},
		{"2024-05-06T07:08:0xZ", ""},
		{"2024-05-06T07:08:09.Z", ""}, // a decimal point needs digits
		{"2024-05-06T07:08:09.5", "2024-05-06T07:08:09.5Z"},
		{"2024-05-06T07:08:09.05Z", "2024-05-06T07:08:09.05Z"},
		{"2024-13-01T00:00Z", ""}, // W3C Datetime: MM 01-12, DD 01-31, hh 00-23 (24:00 tolerated), mm and ss 00-59
		{"2024-00-01T00:00Z", ""},
		{"2024-01-00T00:00Z", ""},
		{"2024-01-32T00:00Z", ""},
		{"2024-05-06T07:60Z", ""},
		{"2024-05-06T07:08:61Z", ""},
		{"2024-05-06T23:59:60Z", "2024-05-06T23:59:59.999999999Z"}, // a leap second: the instant before
		{"2024-05-06T07:08:09UTC", "2024-05-06T07:08:09Z"},         // a zone name for UTC, as some generators write
		{"2024-05-06T07:08:09 utc", "2024-05-06T07:08:09Z"},
		{"2024-05-06T07:08:09XTC", ""},
		{"2024-05-06T07:08:09UXC", ""},
		{"2024-05-06T07:08:09UTX", ""},
		{"2024-05-06T07:08:09Zulu", ""},
		{"2024-05-06T07:08:09X", ""},
		{"2024-05-06T07:08:09*01:00", ""}, // an offset starts with + or -
	}
	for _, tc := range tests {
		got, err := ParseLastMod(tc.in)
		if tc.want == "" {
			if err == nil || !errors.Is(err, ErrBadDate) {
				t.Errorf("ParseLastMod(%q) = %v, %v; want ErrBadDate", tc.in, got, err)
			}
			continue
		}
		if err != nil || !got.Equal(date(tc.want)) || got.Location() != time.UTC {
			t.Errorf("ParseLastMod(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

// TestReader_LocationRuleOff: a Location that is not an absolute http(s)
// URL with a host turns the location rule off (Options.Location).
func TestReader_LocationRuleOff(t *testing.T) {
	in := []byte(`<urlset><url><loc>https://a.test/1</loc></url><url><loc>https://b.test/2</loc></url></urlset>`)
	for _, loc := range []string{"ftp://a.test/sitemap.xml", "/sitemap.xml", "https:///sitemap.xml", "https://a.test/%zz/sitemap.xml"} {
		got, r := collect(t, in, &Options{Location: loc})
		if len(got) != 2 || r.Dropped() != 0 {
			t.Errorf("Location %q: %q, %d dropped; want both kept", loc, locs(got), r.Dropped())
		}
	}
}

func TestReader_LocationRule(t *testing.T) {
	in := `<urlset><url><loc>http://www.example.com/catalog/a</loc></url><url><loc>HTTP://WWW.EXAMPLE.COM:80/catalog/b?x</loc></url>` +
		`<url><loc>http://www.example.com/other</loc></url><url><loc>https://www.example.com/catalog/c</loc></url>` +
		`<url><loc>http://evil.test/catalog/d</loc></url><url><loc>http://www.example.com.evil.test/catalog/e</loc></url></urlset>`
	got, r := collect(t, []byte(in), &Options{Location: "http://www.example.com/catalog/sitemap.xml"})
	if want := []string{"http://www.example.com/catalog/a", "HTTP://WWW.EXAMPLE.COM:80/catalog/b?x"}; fmt.Sprint(locs(got)) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", locs(got), want)
	}
	if r.Dropped() != 4 {
		t.Errorf("Dropped = %d, want 4", r.Dropped())
	}
	// robots.txt-declared: cross-host allowed.
	got, r = collect(t, []byte(in), &Options{Location: "http://www.example.com/catalog/sitemap.xml", CrossHost: true})
	if len(got) != 6 || r.Dropped() != 0 {
		t.Errorf("CrossHost: got %d entries, %d dropped", len(got), r.Dropped())
	}
	if !InScope("https://a.test/sitemap.xml", "https://a.test/x/y") || InScope("https://a.test/s/sitemap.xml", "https://a.test/x") {
		t.Error("InScope")
	}
}

// ---- hostile inputs ----

func urlset(n int, lastmod string) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<urlset " + ns + ">\n")
	for i := range n {
		fmt.Fprintf(&b, "<url><loc>https://www.example.com/section-%d/page-%d.html</loc><lastmod>%s</lastmod><changefreq>weekly</changefreq><priority>0.5</priority></url>\n", i%100, i, lastmod)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

func TestReader_TooManyURLs(t *testing.T) {
	in := urlset(60_000, "2024-01-01")
	for _, compress := range []bool{false, true} {
		data := in
		if compress {
			data = gz(t, in)
		}
		got, r := collect(t, data, nil)
		var le *LimitError
		if !errors.As(r.Err(), &le) || !errors.Is(r.Err(), ErrTooManyURLs) {
			t.Fatalf("Err = %v, want *LimitError ErrTooManyURLs", r.Err())
		}
		if len(got) != DefaultMaxURLs || le.URLs != DefaultMaxURLs || le.Limit != DefaultMaxURLs || le.Bytes <= 0 {
			t.Errorf("got %d entries, LimitError %+v", len(got), le)
		}
		if got[len(got)-1].Loc != "https://www.example.com/section-99/page-49999.html" {
			t.Errorf("last entry %q", got[len(got)-1].Loc)
		}
	}
	// Text sitemaps too.
	var txt bytes.Buffer
	for i := range 60_000 {
		fmt.Fprintf(&txt, "https://a.test/%d\n", i)
	}
	got, r := collect(t, txt.Bytes(), nil)
	if len(got) != DefaultMaxURLs || !errors.Is(r.Err(), ErrTooManyURLs) {
		t.Errorf("text: %d entries, %v", len(got), r.Err())
	}
	// Configurable.
	got, r = collect(t, in, &Options{MaxURLs: 10})
	if len(got) != 10 || !errors.Is(r.Err(), ErrTooManyURLs) {
		t.Errorf("MaxURLs 10: %d entries, %v", len(got), r.Err())
	}
	got, r = collect(t, in, &Options{MaxURLs: -1})
	if len(got) != 60_000 || r.Err() != nil {
		t.Errorf("MaxURLs -1: %d entries, %v", len(got), r.Err())
	}
}

// TestReader_StopsAtMaxURLs: the entry after the MaxURLs-th ends the
// reading there: nothing after it is read, and the LimitError says where.
func TestReader_StopsAtMaxURLs(t *testing.T) {
	in := urlset(10, "2024-01-01")
	third := bytes.Index(in, []byte("page-2.html")) // the third entry's URL
	got, r := collect(t, in, &Options{MaxURLs: 2})
	var le *LimitError
	if len(got) != 2 || !errors.As(r.Err(), &le) || !errors.Is(r.Err(), ErrTooManyURLs) {
		t.Fatalf("got %d entries, Err %v; want 2 and a LimitError", len(got), r.Err())
	}
	if le.URLs != 2 || le.Limit != 2 || le.Bytes != r.Offset() || r.Offset() < int64(third) || r.Offset() > int64(third+200) {
		t.Errorf("LimitError %+v, Offset %d; want the reader stopped at the third entry (byte %d)", le, r.Offset(), third)
	}
	if r.Next() || r.Offset() != le.Bytes {
		t.Errorf("Next after the limit read on: Offset %d", r.Offset())
	}
}

// zeroReader is an endless stream of one byte.
type byteReader byte

func (b byteReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestReader_GzipBomb(t *testing.T) {
	// 1 GiB of spaces inside a <loc>, as a multi-member gzip stream of
	// about 1 MiB, gzipped again (as .xml.gz served with
	// Content-Encoding: gzip) to a few kilobytes.
	var inner bytes.Buffer
	inner.Write(gz(t, []byte("<urlset><url><loc>https://a.test/ok</loc></url><url><loc>")))
	spaces := gz(t, bytes.Repeat([]byte(" "), 1<<20))
	for range 1024 {
		inner.Write(spaces)
	}
	bomb := gz(t, inner.Bytes())
	t.Logf("bomb: %d bytes compressed", len(bomb))
	got, r := collect(t, bomb, &Options{MaxBytes: 8 << 20})
	var le *LimitError
	if !errors.As(r.Err(), &le) || !errors.Is(r.Err(), ErrTooLarge) {
		t.Fatalf("Err = %v, want ErrTooLarge", r.Err())
	}
	if le.Bytes != 8<<20 || le.URLs != 1 || len(got) != 1 || got[0].Loc != "https://a.test/ok" {
		t.Errorf("LimitError %+v, entries %q", le, locs(got))
	}
}

func TestReader_DefaultByteLimit(t *testing.T) {
	r := NewReader(io.MultiReader(strings.NewReader("https://a.test/1\n"), byteReader(' ')), nil)
	n := 0
	for r.Next() {
		n++
	}
	var le *LimitError
	if n != 1 || !errors.As(r.Err(), &le) || le.Bytes != DefaultMaxBytes || le.Limit != DefaultMaxBytes {
		t.Errorf("n=%d err=%v", n, r.Err())
	}
}

func TestReader_LongSingleLine(t *testing.T) {
	// A whole 1 MB sitemap on one line reads fine.
	one := bytes.ReplaceAll(urlset(8000, "2024-01-01"), []byte("\n"), nil)
	if len(one) < 1<<20 {
		t.Fatalf("only %d bytes", len(one))
	}
	got, r := collect(t, one, nil)
	if len(got) != 8000 || r.Err() != nil {
		t.Errorf("one-line XML: %d entries, %v", len(got), r.Err())
	}
	// A 1 MB line in a text sitemap, or a 1 MB <loc>, is skipped, not buffered.
	long := strings.Repeat("x", 1<<20)
	got, r = collect(t, []byte("https://a.test/1\nhttps://a.test/"+long+"\nhttps://a.test/2\n"), nil)
	if fmt.Sprint(locs(got)) != "[https://a.test/1 https://a.test/2]" || r.Invalid() != 1 || r.Err() != nil {
		t.Errorf("text: %q invalid=%d err=%v", locs(got), r.Invalid(), r.Err())
	}
	got, r = collect(t, []byte("<urlset><url><loc>https://a.test/"+long+"</loc></url><url><loc>https://a.test/2</loc></url></urlset>"), nil)
	if fmt.Sprint(locs(got)) != "[https://a.test/2]" || r.Invalid() != 1 || r.Err() != nil {
		t.Errorf("xml: %q invalid=%d err=%v", locs(got), r.Invalid(), r.Err())
	}
	// A 1 MB tag or comment is skipped too.
	got, _ = collect(t, []byte("<urlset><url "+long+"><!--"+long+"--><loc>https://a.test/3</loc></url></urlset>"), nil)
	if fmt.Sprint(locs(got)) != "[https://a.test/3]" {
		t.Errorf("long tag: %q", locs(got))
	}
}

func TestReader_Truncated(t *testing.T) {
	full := string(urlset(3, "2024-01-01"))
	cut := strings.Index(full, "page-2.html") + 4 // inside the third <loc>
	got, r := collect(t, []byte(full[:cut]), nil)
	if len(got) != 2 || !errors.Is(r.Err(), ErrSyntax) || !errors.Is(r.Err(), io.ErrUnexpectedEOF) {
		t.Errorf("cut in loc: %d entries, %v", len(got), r.Err())
	}
	var se *SyntaxError
	if !errors.As(r.Err(), &se) || se.Offset != int64(cut) {
		t.Errorf("SyntaxError %+v, want offset %d", se, cut)
	}
	// Cut inside the </loc> tag: the URL is complete and kept.
	cut = strings.Index(full, "page-2.html</lo") + len("page-2.html</lo")
	got, r = collect(t, []byte(full[:cut]), nil)
	if len(got) != 3 || !errors.Is(r.Err(), io.ErrUnexpectedEOF) {
		t.Errorf("cut in tag: %d entries, %v", len(got), r.Err())
	}
	// Cut after the text of a field, inside markup that follows it: the
	// URL is complete and kept, then the truncation is reported.
	for _, tail := range []string{"<", "<lastm", "</lo", "<!-- x", "<?pi x", "<!DOCTYPE x", "<![CDATA[/2]]></lo"} {
		got, r = collect(t, []byte(`<urlset><url><loc>https://a.test/1`+tail), nil)
		want := "[https://a.test/1]"
		if strings.Contains(tail, "CDATA") {
			want = "[https://a.test/1/2]"
		}
		if fmt.Sprint(locs(got)) != want || !errors.Is(r.Err(), io.ErrUnexpectedEOF) {
			t.Errorf("cut in %q after the loc text: %q, %v; want %s", tail, locs(got), r.Err(), want)
		}
	}
	// Cut inside a CDATA section of a field: its text is cut, as when the
	// document stops in plain text, so no entry is made of it.
	for _, doc := range []string{
		`<urlset><url><loc><![CDATA[https://a.test/abcdef`,
		`<urlset><url><loc><![CDATA[https://a.test/abcdef]]`,
		`<urlset><url><loc>https://a.test/1<![CDATA[`,
		`<urlset><url><loc>https://a.test/1<![CDATA[/2`,
		`<urlset><url><loc>https://a.test/abcdef`,
	} {
		got, r = collect(t, []byte(doc), nil)
		if len(got) != 0 || !errors.Is(r.Err(), ErrSyntax) || !errors.Is(r.Err(), io.ErrUnexpectedEOF) {
			t.Errorf("%s: %q, %v; want no entry and a truncation", doc, locs(got), r.Err())
		}
	}
	// Truncated gzip stream.
	z := gz(t, []byte(full))
	got, r = collect(t, z[:len(z)-12], nil)
	if r.Err() == nil {
		t.Errorf("truncated gzip: no error (%d entries)", len(got))
	}
	// Empty and not-a-sitemap.
	if _, r = collect(t, nil, nil); !errors.Is(r.Err(), ErrSyntax) {
		t.Errorf("empty: %v", r.Err())
	}
	if _, r = collect(t, []byte("<!DOCTYPE html><html><body><a href='https://a.test/'>x</a></body></html>"), nil); !errors.Is(r.Err(), ErrFormat) {
		t.Errorf("html: %v", r.Err())
	}
	// A sitemap inside another document is not read: the root decides.
	if got, r = collect(t, []byte(`<html><urlset><url><loc>https://a.test/1</loc></url></urlset></html>`), nil); len(got) != 0 || !errors.Is(r.Err(), ErrFormat) {
		t.Errorf("urlset inside html: %q, %v; want nothing and ErrFormat", locs(got), r.Err())
	}
	// The error names the root element it found, up to 32 bytes of name.
	for _, root := range []string{"html", "abcdefghijklmnopqrstuvwxyz012345"} {
		_, r = collect(t, []byte("<"+root+"><url><loc>https://a.test/1</loc></url></"+root+">"), nil)
		if !errors.Is(r.Err(), ErrFormat) || !strings.Contains(r.Err().Error(), "<"+root+">") {
			t.Errorf("root %s: %v, want ErrFormat naming <%s>", root, r.Err(), root)
		}
	}
}

func TestReader_EntityExpansion(t *testing.T) {
	laughs := `<?xml version="1.0"?>
<!DOCTYPE urlset [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol9 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY xxe SYSTEM "file:///etc/passwd">
 <!ENTITY ext SYSTEM "http://127.0.0.1:1/evil.dtd">
]>
<urlset><url><loc>https://a.test/&lol9;</loc></url><url><loc>https://a.test/&xxe;&ext;</loc></url><url><loc>https://a.test/ok</loc></url></urlset>`
	got, r := collect(t, []byte(laughs), nil)
	// The references stay unexpanded, so those two locs are not URLs.
	want := "[https://a.test/ok]"
	if fmt.Sprint(locs(got)) != want || r.Err() != nil || r.Invalid() != 2 {
		t.Errorf("got %q, %v; want %s", locs(got), r.Err(), want)
	}
}

func TestReader_StopEarly(t *testing.T) {
	n := 0
	for e, err := range Read(bytes.NewReader(urlset(100, "2024-01-01")), nil) {
		if err != nil || e.Loc == "" {
			t.Fatal(err)
		}
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("n = %d", n)
	}
	var last error
	for _, err := range Read(strings.NewReader("<urlset><url><loc>https://a.test/1</loc>"), nil) {
		last = err
	}
	if !errors.Is(last, io.ErrUnexpectedEOF) {
		t.Errorf("All did not yield the final error: %v", last)
	}
}

// oneByteReader returns one byte per Read, to exercise every buffer boundary.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 1)]) }

func TestReader_ByteAtATime(t *testing.T) {
	in := `<urlset><url><loc> https://a.test/x?a=1&amp;b=2<![CDATA[&c]]></loc><lastmod>2004-12-23T18:00:15&#43;00:00</lastmod></url><!-- x --><url><loc>https://a.test/2</loc></url></urlset>`
	r := NewReader(oneByteReader{strings.NewReader(in)}, nil)
	var got []Entry
	for r.Next() {
		got = append(got, r.Entry())
	}
	if r.Err() != nil || len(got) != 2 || got[0].Loc != "https://a.test/x?a=1&b=2&c" || !got[0].LastMod.Equal(date("2004-12-23T18:00:15Z")) {
		t.Errorf("got %+v, %v", got, r.Err())
	}
}

func TestReader_LongJunkBeforeLoc(t *testing.T) {
	junk := strings.Repeat("junk ", 4000) // 20 KB of text inside <url>, before <loc>
	in := "<urlset><url>" + junk + "<lastmod>2024-01-01</lastmod><loc>https://a.test/1</loc></url></urlset>"
	got, r := collect(t, []byte(in), nil)
	if len(got) != 1 || got[0].Loc != "https://a.test/1" || !got[0].HasLastMod || r.Invalid() != 0 {
		t.Errorf("got %+v, invalid %d", got, r.Invalid())
	}
}

// A zero Reader, or one made over a nil io.Reader, reads nothing and says
// why instead of panicking.
func TestReader_ZeroValue(t *testing.T) {
	for name, r := range map[string]*Reader{"zero": new(Reader), "nil source": NewReader(nil, nil)} {
		t.Run(name, func(t *testing.T) {
			if r.Next() || r.Err() == nil || !strings.HasPrefix(r.Err().Error(), "sitemap: ") {
				t.Fatalf("Next on %s Reader: err %v", name, r.Err())
			}
			// It says that there is no source, not that a document was empty.
			if err := r.Err(); errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "NewReader") {
				t.Errorf("Err on %s Reader: %v, want the no-source error", name, err)
			}
			if r.Next() {
				t.Error("second Next returned true")
			}
			if err := r.Err(); errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "NewReader") {
				t.Errorf("Err after a second Next: %v, want the no-source error", err)
			}
			for _, err := range r.All() {
				if err == nil {
					t.Error("All yielded an entry")
				}
			}
		})
	}
}

// TestReader_MarkupEdges: element names are matched in any case (all
// upper case included); text of an ISO-8859-1 document is converted to
// UTF-8 however it is split (a CDATA section of only non-ASCII bytes);
// an extension element in a default namespace is skipped with everything
// nested in it, however deep, even a <loc> (sitemaps.org, "Extending the
// Sitemaps protocol": extensions live in their own namespace); a prefixed
// element whose local name is a field's (ext:link, ext:guid) is not that
// field; character references to white space (XML 1.0 section 4.1) are
// trimmed from field values like raw white space; markup closed inside an unclosed <loc> does not hide the </url>
// that ends the entry; and nothing in a DOCTYPE's internal subset is read
// as an entry.
func TestReader_MarkupEdges(t *testing.T) {
	d := date("2024-05-06T00:00:00Z")
	tests := []struct {
		name, in string
		want     []Entry
	}{
		{"upper case urlset", `<URLSET><URL><LOC>https://a.test/1</LOC><LASTMOD>2024-05-06</LASTMOD><CHANGEFREQ>DAILY</CHANGEFREQ><PRIORITY>0.8</PRIORITY></URL></URLSET>`,
			[]Entry{{Loc: "https://a.test/1", LastMod: d, HasLastMod: true, ChangeFreq: "daily", Priority: 0.8}}},
		{"upper case index", `<SITEMAPINDEX><SITEMAP><LOC>https://a.test/s.xml</LOC><LASTMOD>2024-05-06</LASTMOD></SITEMAP></SITEMAPINDEX>`,
			[]Entry{{Loc: "https://a.test/s.xml", LastMod: d, HasLastMod: true, Priority: 0.5, IsSitemap: true}}},
		{"latin-1 CDATA of non-ASCII only", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset><url><loc>https://a.test/x<![CDATA[\xe9\xe8]]></loc></url></urlset>",
			[]Entry{{Loc: "https://a.test/xéè", Priority: 0.5}}},
		{"loc nested in a default-namespace extension", `<urlset><url><PageMap xmlns="http://www.google.com/schemas/sitemap-pagemap/1.0"><DataObject type="x"><loc>https://evil.test/x</loc></DataObject></PageMap><loc>https://a.test/1</loc></url></urlset>`,
			[]Entry{{Loc: "https://a.test/1", Priority: 0.5}}},
		{"markup closed inside an unclosed loc", `<urlset><url><loc>https://a.test/1<b>x</b></url><url><loc>https://a.test/2</loc></url></urlset>`,
			[]Entry{{Loc: "https://a.test/1x", Priority: 0.5}, {Loc: "https://a.test/2", Priority: 0.5}}},
		{"ext:link in an RSS item", `<rss><channel><item><ext:link>https://cdn.test/x</ext:link><link>https://a.test/1</link></item></channel></rss>`,
			[]Entry{{Loc: "https://a.test/1", Priority: 0.5}}},
		{"dc:link in an RSS item (only dc:date is read)", `<rss><channel><item><dc:link>https://cdn.test/x</dc:link><link>https://a.test/1</link></item></channel></rss>`,
			[]Entry{{Loc: "https://a.test/1", Priority: 0.5}}},
		{"ext:guid in an RSS item", `<rss><channel><item><ext:guid>https://cdn.test/x</ext:guid><guid>https://a.test/1</guid></item></channel></rss>`,
			[]Entry{{Loc: "https://a.test/1", Priority: 0.5}}},
		{"white space as character references around field values", `<urlset><url><loc>https://a.test/1</loc><lastmod>2024-05-06&#9;</lastmod><changefreq>&#9;daily&#10;</changefreq></url></urlset>`,
			[]Entry{{Loc: "https://a.test/1", LastMod: d, HasLastMod: true, ChangeFreq: "daily", Priority: 0.5}}},
		{"tags in a DOCTYPE internal subset", `<!DOCTYPE urlset [ <!ENTITY a "b"> <url><loc>https://evil.test/x</loc></url> ]><urlset><url><loc>https://a.test/1</loc></url></urlset>`,
			[]Entry{{Loc: "https://a.test/1", Priority: 0.5}}},
	}
	for _, tc := range tests {
		got, r := collect(t, []byte(tc.in), nil)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || r.Err() != nil {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, r.Err(), tc.want)
		}
	}
}

// TestReader_LongTagBounded: a tag longer than the buffer is kept to at
// most MaxLocBytes ("MaxLocBytes bounds one URL, one text line and one
// tag"), so a megabyte attribute costs no megabyte of memory.
func TestReader_LongTagBounded(t *testing.T) {
	in := `<urlset><url><loc>https://a.test/1</loc></url><url data="` + strings.Repeat("a", 1<<20) + `"><loc>https://a.test/2</loc></url></urlset>`
	got, r := collect(t, []byte(in), &Options{MaxLocBytes: 1000})
	if fmt.Sprint(locs(got)) != "[https://a.test/1 https://a.test/2]" || r.Err() != nil {
		t.Errorf("got %q, %v", locs(got), r.Err())
	}
	if c := cap(r.tagBuf); c > 4*1000 {
		t.Errorf("tag storage %d bytes for MaxLocBytes 1000", c)
	}
}
