package links

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// TestExtractLinkFields covers Link.Href ("the attribute as written") and
// Link.Text ("anchor text, whitespace collapsed, at most 200 bytes"): text
// of an <a> left open at EOF or closed by the next <a>, no text for a void
// <area>, valid UTF-8 never split mid-rune.
func TestExtractLinkFields(t *testing.T) {
	type lt struct{ href, text string }
	long := strings.Repeat("x", 201)
	tests := []struct {
		name string
		html string
		want []lt
	}{
		{"href as written", `<a href="  /sp#f ">s</a>`, []lt{{"  /sp#f ", "s"}}},
		{"open at EOF", `<a href="/x">tail  text`, []lt{{"/x", "tail text"}}},
		{"closed by next a", `<a href="/1">one<a href="/2">two</a>`, []lt{{"/1", "one"}, {"/2", "two"}}},
		{"area has no text", `<map><area href="/m"></map>after`, []lt{{"/m", ""}}},
		{"clipped to 200 bytes", `<a href="/l">` + long + `</a>`, []lt{{"/l", long[:200]}}},
		{"rune not split", `<a href="/r">` + strings.Repeat("x", 199) + "é</a>", []lt{{"/r", strings.Repeat("x", 199)}}},
		{"invalid UTF-8 dropped", "<a href=\"/u\">ok\xffyes</a>", []lt{{"/u", "okyes"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Extract(mustURL(t, "http://a.test/"), strings.NewReader(tt.html))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d links %+v, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				if got[i].Href != w.href || got[i].Text != w.text {
					t.Errorf("link %d: href %q text %q, want href %q text %q", i, got[i].Href, got[i].Text, w.href, w.text)
				}
				if !utf8.ValidString(got[i].Text) || len(got[i].Text) > 200 {
					t.Errorf("link %d: text %q not valid UTF-8 of at most 200 bytes", i, got[i].Text)
				}
				if got[i].URL.Fragment != "" || strings.Contains(got[i].URL.String(), "#") {
					t.Errorf("link %d: URL %s keeps its fragment", i, got[i].URL)
				}
			}
		})
	}
}

// TestExtractAll_LinkElementLimits: <link> elements are http(s) with a host
// only, and at most MaxLinks of them (package documentation).
func TestExtractAll_LinkElementLimits(t *testing.T) {
	base := mustURL(t, "http://a.test/")
	_, ls, err := ExtractAll(base, strings.NewReader(`<link rel="canonical" href="http:/nohost"><link rel="next" href="/2">`))
	if err != nil || len(ls) != 1 || ls[0].URL.String() != "http://a.test/2" {
		t.Errorf("link elements = %v, %v; want only http://a.test/2", ls, err)
	}
	_, ls, _ = ExtractAll(base, strings.NewReader(strings.Repeat(`<link rel="alternate" href="/f">`, MaxLinks+10)))
	if len(ls) != MaxLinks {
		t.Errorf("got %d link elements, want at most MaxLinks (%d)", len(ls), MaxLinks)
	}
}

// TestNormalizeStringEdges: surrounding spaces are stripped before parsing
// (as the WHATWG URL parser does), a string that does not parse comes back
// unchanged, and a nil URL has the empty spelling.
func TestNormalizeStringEdges(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"  HTTP://A.test:80/x  ", "http://a.test/x"},
		{"\thttps://a.test\n", "https://a.test/"},
		{"http://[::1", "http://[::1"},
		{"%zz", "%zz"},
	} {
		if got := NormalizeString(tt.in); got != tt.want {
			t.Errorf("NormalizeString(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := Normalize(nil); got != "" {
		t.Errorf("Normalize(nil) = %q, want empty", got)
	}
}

// TestTextBlocksAndHidden covers Text's documentation: the text outside
// <script>, <style>, <noscript>, <template> and <head> (title apart), one
// block element a line, whitespace collapsed.
func TestTextBlocksAndHidden(t *testing.T) {
	for _, tt := range []struct{ name, html, title, text string }{
		{"no block element", `just  text`, "", "just text\n"},
		{"text after last block", `<p>one</p>two`, "", "one\ntwo\n"},
		{"div", `<div>a</div><div>b</div>`, "", "a\nb\n"},
		{"br", `a<br>b`, "", "a\nb\n"},
		{"table rows and cells", `<table><tr><td>Mon</td><td>9am</td></tr><tr><td>Tue</td><td>10am</td></tr></table>`, "", "Mon 9am\nTue 10am\n"},
		{"head text hidden", `<head><title>T</title><meta name="x">junk</head><body>B</body>`, "T", "B\n"},
		{"noscript", `<p>a</p><noscript>Enable JavaScript</noscript><p>b</p>`, "", "a\nb\n"},
		{"template", `<p>a</p><template><p>tpl</p></template><p>b</p>`, "", "a\nb\n"},
		{"stray end tag", `</style></script><p>visible</p>`, "", "visible\n"},
		{"self-closing inside hidden", `<head><template/>junk</head><body>B</body>`, "", "B\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			title, text, err := Text(strings.NewReader(tt.html))
			if err != nil || title != tt.title || text != tt.text {
				t.Errorf("got title %q text %q err %v; want %q %q", title, text, err, tt.title, tt.text)
			}
		})
	}
}

type failAfter struct {
	r   io.Reader
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		err = f.err
	}
	return n, err
}

// TestFromSitemapFieldsAndErrors: Href is the listed location, URL has no
// fragment, and a read error returns the links read so far with an error
// wrapping the cause.
func TestFromSitemapFieldsAndErrors(t *testing.T) {
	doc := `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
		<url><loc>http://a.test/1#top</loc></url><url><loc>http://a.test/2</loc></url>`
	ls, err := FromSitemap(strings.NewReader(doc+`</urlset>`), nil)
	if err != nil || len(ls) != 2 {
		t.Fatalf("got %v, %v", ls, err)
	}
	if ls[0].Href != "http://a.test/1#top" || ls[0].URL.String() != "http://a.test/1" || ls[0].Rel != "" {
		t.Errorf("link 0 = href %q url %s rel %q; want the location as listed, URL without fragment", ls[0].Href, ls[0].URL, ls[0].Rel)
	}
	boom := errors.New("connection reset")
	ls, err = FromSitemap(&failAfter{strings.NewReader(doc), boom}, nil)
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "links: ") {
		t.Errorf("err = %v; want a links:-prefixed error wrapping %v", err, boom)
	}
	if len(ls) != 2 {
		t.Errorf("got %d links before the error, want the 2 read so far", len(ls))
	}
}

// Extract reads a page as an HTML parser does: the slash of a non-void
// element is ignored (<form/> opens a form, so the links after it are a
// form's; <a href=x/> opens an anchor whose text follows; an <area> inside
// an anchor leaves it open), and white space in an anchor, however long,
// does not use up the bytes kept for its text.
func TestExtract_AsHTMLParses(t *testing.T) {
	base := mustURL(t, "http://site.test/")
	type lt struct{ url, text string }
	for _, tc := range []struct {
		name, html string
		want       []lt
	}{
		{"<form/> opens a form", `<form/><a href="/in">in</a></form><a href="/out">out</a>`,
			[]lt{{"http://site.test/out", "out"}}},
		{"<a href/> opens an anchor", `<a href="/s"/>text</a><a href="/t">t</a>`,
			[]lt{{"http://site.test/s", "text"}, {"http://site.test/t", "t"}}},
		{"400 bytes of white space, then text", `<a href="/x">` + strings.Repeat(" ", 400) + strings.Repeat("\n\t", 300) + `<b></b>Partner</a>`,
			[]lt{{"http://site.test/x", "Partner"}}},
		{"white space of every kind collapsed, words kept apart and together", "<a href=\"/y\">\n\t  Part<b>ner</b>\r\n \f and  more </a>",
			[]lt{{"http://site.test/y", "Partner and more"}}},
		{"600 bytes of line ends and tabs after a word", `<a href="/z">Our` + strings.Repeat("\n\t", 300) + `<b></b>partner</a>`,
			[]lt{{"http://site.test/z", "Our partner"}}},
		// An <area> is a void element: it does not close the <a> around it,
		// whose text goes on after it.
		{"<area> inside an anchor", `<a href="/1">one <map><area href="/m"></map> more</a>`,
			[]lt{{"http://site.test/1", "one more"}, {"http://site.test/m", ""}}},
		// A new <a> closes the open one even when it is no link this
		// package returns (no href, a mailto: link, in a form).
		{"an anchor without href ends the open one", `<a href="/1">one<a name="x">two</a> three`,
			[]lt{{"http://site.test/1", "one"}}},
		{"a mailto: anchor ends the open one", `<a href="/1">one<a href="mailto:a@site.test">mail</a>`,
			[]lt{{"http://site.test/1", "one"}}},
	} {
		got, err := Extract(base, strings.NewReader(tc.html))
		if err != nil {
			t.Fatal(err)
		}
		var g []lt
		for _, l := range got {
			g = append(g, lt{l.URL.String(), l.Text})
		}
		if len(g) != len(tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, g, tc.want)
			continue
		}
		for i := range g {
			if g[i] != tc.want[i] {
				t.Errorf("%s: %q, want %q", tc.name, g, tc.want)
				break
			}
		}
	}
}

// Text reads <title/> as HTML does, as an open title: "<title/>T</title>"
// is the title T, not body text.
func TestText_SelfClosingTitle(t *testing.T) {
	for _, tc := range []struct{ html, title, text string }{
		{"<head><title/>T</title></head><body><p>body</p>", "T", "body\n"},
		{"<head><title>T</title></head><body><p>body</p>", "T", "body\n"},
		// The title is the first title element's; another one's text is
		// neither the title nor visible.
		{"<head><title>T</title><title>U</title></head><body><p>body<title>V</title></p>", "T", "body\n"},
	} {
		title, text, err := Text(strings.NewReader(tc.html))
		if err != nil || title != tc.title || text != tc.text {
			t.Errorf("Text(%q) = %q, %q, %v; want %q, %q", tc.html, title, text, err, tc.title, tc.text)
		}
	}
}

// A read error from r is Extract's and Text's error, with what was read
// before it; the end of the document is none.
func TestReadError(t *testing.T) {
	broken := errors.New("connection reset")
	page := `<title>T</title><p>one <a href="/1">first</a> two`
	for _, tc := range []struct {
		name string
		err  error // the reader's, after page
		want error
	}{
		{"read error", broken, broken},
		{"end of the document", io.EOF, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := func() io.Reader { return io.MultiReader(strings.NewReader(page), iotest.ErrReader(tc.err)) }
			got, err := Extract(mustURL(t, "http://site.test/"), r())
			if len(got) != 1 || got[0].URL.String() != "http://site.test/1" || got[0].Text != "first" {
				t.Errorf("Extract read %v; want the link read before the error", got)
			}
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("Extract error %v; want %v", err, tc.want)
			}
			title, text, err := Text(r())
			if title != "T" || text != "one first two\n" {
				t.Errorf("Text = %q, %q; want the text read before the error", title, text)
			}
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("Text error %v; want %v", err, tc.want)
			}
		})
	}
}
