package links

import (
	"errors"
	"io"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/goodbot-go/goodbot/fetch"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// MaxLinks bounds the links Extract returns for one page, so a hostile page
// cannot make a bot hold millions of URLs.
const MaxLinks = 10000

// Link is one hyperlink found on a page.
type Link struct {
	URL  *url.URL // absolute, fragment removed
	Href string   // the attribute as written
	Rel  string   // rel attribute, lowercased ("nofollow", "sponsored", ...)
	Text string   // anchor text, whitespace collapsed, at most 200 bytes
}

// Extract returns the http and https links (<a href> and <area href>) of the
// HTML document read from r, resolved against base. A <base href> in the
// document changes the base as browsers do. Links to other schemes
// (mailto:, javascript:, data:) and unparsable hrefs are skipped, as are
// links inside <form> elements (a bot never submits forms). Extract stops at
// MaxLinks links. Its error is only a read error from r.
func Extract(base *url.URL, r io.Reader) ([]Link, error) {
	out, _, err := extract(base, r)
	return out, err
}

// ExtractAll is [Extract] that also returns the document's <link href>
// elements (rel="alternate", "canonical", "next", "stylesheet"...: see
// each Link's Rel), http and https only, resolved the same way, at most
// MaxLinks of them. A <link> has no text.
func ExtractAll(base *url.URL, r io.Reader) (anchors, linkElems []Link, err error) {
	return extract(base, r)
}

func extract(base *url.URL, r io.Reader) (out, head []Link, err error) {
	z := html.NewTokenizer(r)
	var (
		cur      = -1 // index in out of the open <a>, or -1
		inForm   int
		baseSeen bool
		text     strings.Builder
	)
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if err := z.Err(); err != nil && !errors.Is(err, io.EOF) {
				return out, head, err
			}
			if cur >= 0 {
				out[cur].Text = clip(text.String())
			}
			return out, head, nil
		case html.TextToken:
			if cur >= 0 && text.Len() < 400 {
				appendCollapsed(&text, z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			if tt == html.SelfClosingTagToken && a == atom.Form {
				// HTML ignores the slash of a non-void element: <form/>
				// opens a form (and <a href=x/> an anchor, as below).
				tt = html.StartTagToken
			}
			if tt == html.EndTagToken {
				switch a {
				case atom.Form:
					if inForm > 0 {
						inForm--
					}
				case atom.A:
					if cur >= 0 {
						out[cur].Text = clip(text.String())
						cur = -1
					}
				}
				continue
			}
			if a == atom.Form && tt == html.StartTagToken {
				inForm++
				continue
			}
			if a != atom.A && a != atom.Area && a != atom.Base && a != atom.Link {
				continue
			}
			if a == atom.A && cur >= 0 {
				// A new <a> closes the open one, whether it is a link
				// (an href of a scheme followed) or not.
				out[cur].Text = clip(text.String())
				cur = -1
			}
			var href, rel string
			var hasHref bool
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				switch string(k) {
				case "href":
					href, hasHref = string(v), true
				case "rel":
					rel = strings.ToLower(strings.Join(strings.Fields(string(v)), " "))
				}
			}
			if !hasHref {
				continue
			}
			if a == atom.Base {
				if !baseSeen {
					baseSeen = true
					if b, err := resolve(base, href); err == nil {
						base = b
					}
				}
				continue
			}
			if a == atom.Link {
				if u, err := resolve(base, href); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && len(head) < MaxLinks {
					head = append(head, Link{URL: u, Href: href, Rel: rel})
				}
				continue
			}
			if inForm > 0 || len(out) >= MaxLinks {
				continue
			}
			u, err := resolve(base, href)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				continue
			}
			out = append(out, Link{URL: u, Href: href, Rel: rel})
			if a == atom.A { // <area> is void: an <a> around it stays open
				cur = len(out) - 1
				text.Reset()
			}
		}
	}
}

func resolve(base *url.URL, href string) (*url.URL, error) {
	ref, err := url.Parse(strings.TrimSpace(href))
	if err != nil {
		return nil, err
	}
	var u *url.URL
	if base != nil {
		u = base.ResolveReference(ref)
	} else {
		u = ref
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// appendCollapsed appends p to b with each run of ASCII white space as one
// space (none at the start), so that white space does not use up the bytes
// kept for an anchor's text.
func appendCollapsed(b *strings.Builder, p []byte) {
	for _, c := range p {
		switch c {
		case ' ', '\t', '\n', '\f', '\r':
			if s := b.String(); s == "" || s[len(s)-1] == ' ' {
				continue
			}
			c = ' '
		}
		b.WriteByte(c)
	}
}

func clip(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "")), " ")
	if len(s) > 200 {
		s = s[:200]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

// Normalize returns the canonical spelling of u used to compare and
// deduplicate URLs: [fetch.Normalize] (the form under which a
// [fetch.Fetcher] keeps its fetched set), with any user information dropped. A URL
// that fetch.Normalize refuses (not http or https) is returned as written.
func Normalize(u *url.URL) string {
	if u == nil {
		return ""
	}
	v := *u
	v.User = nil
	s := v.String()
	if n, err := fetch.Normalize(s); err == nil {
		return n
	}
	return s
}

// NormalizeString parses s and normalises it; it returns s unchanged when it
// does not parse.
func NormalizeString(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return s
	}
	return Normalize(u)
}

// SameTarget reports whether two URLs name the same page for the purpose of
// a reciprocal link: equal after Normalize, except that http and https count
// as the same and a "www." prefix on the host is ignored (site owners link
// either spelling of their directory's address).
func SameTarget(a, b *url.URL) bool {
	return loose(a) == loose(b)
}

func loose(u *url.URL) string {
	s := Normalize(u)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://")
	return strings.TrimPrefix(s, "www.")
}

// Match returns the first link on the page whose target is the backlink (see
// SameTarget), and whether there was one.
func Match(page []Link, backlink *url.URL) (Link, bool) {
	for _, l := range page {
		if SameTarget(l.URL, backlink) {
			return l, true
		}
	}
	return Link{}, false
}
