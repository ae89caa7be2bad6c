package links

import (
	"errors"
	"io"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Text returns the title and the visible text of an HTML document: the
// title is the first <title> element's text (as a browser's document.title;
// the text of any title element is not visible), the text is the text
// outside <script>, <style>, <noscript>, <template> and <head>, one block
// element a line, whitespace collapsed. Its error is only a
// read error from r.
func Text(r io.Reader) (title, text string, err error) {
	z := html.NewTokenizer(r)
	var (
		b       strings.Builder
		line    strings.Builder
		hidden  int
		inTitle bool
		titles  int // title elements opened
	)
	flush := func() {
		if s := strings.Join(strings.Fields(line.String()), " "); s != "" {
			b.WriteString(s)
			b.WriteByte('\n')
		}
		line.Reset()
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			flush()
			if e := z.Err(); e != nil && !errors.Is(e, io.EOF) {
				err = e
			}
			return strings.Join(strings.Fields(title), " "), b.String(), err
		case html.TextToken:
			switch {
			case inTitle:
				if titles == 1 { // the document's title is its first title element's
					title += string(z.Text())
				}
			case hidden == 0:
				line.Write(z.Text())
				line.WriteByte(' ')
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch a {
			case atom.Title:
				inTitle = tt != html.EndTagToken // <title/> opens a title too: HTML ignores the slash of a non-void element
				if inTitle {
					titles++
				}
			case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Head:
				if tt == html.StartTagToken {
					hidden++
				} else if tt == html.EndTagToken && hidden > 0 {
					hidden--
				}
			case atom.P, atom.Div, atom.Br, atom.Li, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
				atom.Tr, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Blockquote, atom.Pre, atom.Ul, atom.Ol, atom.Table:
				flush()
			}
		}
	}
}
