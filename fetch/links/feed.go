package links

import (
	"fmt"
	"io"
	"net/url"

	"github.com/goodbot-go/goodbot/sitemap"
)

// FromSitemap returns the URLs listed by the sitemap, sitemap index, RSS or
// Atom feed read from r, as links (Href is the listed location, Rel is
// empty), with the [sitemap] reader and its options and limits (nil: the
// defaults). For an index the links are the child sitemaps. A document that
// is not one of those, or a read error, ends the list: the links read so
// far are returned with the error (package-prefixed, wrapping the sitemap
// package's). A listed location that net/url cannot parse is skipped.
func FromSitemap(r io.Reader, opt *sitemap.Options) ([]Link, error) {
	var out []Link
	for e, err := range sitemap.Read(r, opt) {
		if err != nil {
			return out, fmt.Errorf("links: sitemap: %w", err)
		}
		u, err := url.Parse(e.Loc)
		if err != nil {
			continue
		}
		u.Fragment, u.RawFragment = "", ""
		out = append(out, Link{URL: u, Href: e.Loc})
	}
	return out, nil
}
