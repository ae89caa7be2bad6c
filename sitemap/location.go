package sitemap

import (
	"net/url"
	"strings"
)

// scope is the part of the URL space a sitemap may describe under the
// sitemaps.org location rule: same site (scheme, host and port, in any
// spelling of the host: see appendHostKey), same directory or below.
type scope struct {
	key string // the sitemap's site key
	dir string // path up to and including the last '/'
}

func newScope(loc string) (scope, bool) {
	u, err := url.Parse(strings.TrimSpace(loc))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return scope{}, false
	}
	s := scope{key: string(appendHostKey(nil, u))}
	p := u.EscapedPath()
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		s.dir = p[:i+1]
	} else {
		s.dir = "/"
	}
	return s, true
}

// contains reports whether loc, an absolute URL, is inside the scope. It
// does not allocate in the common case.
func (s scope) contains(loc string) bool {
	i := strings.Index(loc, "://")
	if i < 0 {
		return false
	}
	rest := loc[i+3:]
	auth, path := rest, "/"
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		auth = rest[:j]
		if rest[j] == '/' {
			path = rest[j:]
		}
	}
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		auth = auth[at+1:]
	}
	if !strings.HasPrefix(path, s.dir) {
		return false
	}
	var buf [128]byte
	var key []byte
	if strings.IndexByte(auth, '%') < 0 {
		key = appendHostKey(buf[:0], &url.URL{Scheme: loc[:i], Host: auth})
	} else if u, err := url.Parse(loc); err == nil { // percent-encoded host
		key = appendHostKey(buf[:0], u)
	}
	return string(key) == s.key
}

// InScope reports whether pageURL may be listed by a sitemap at
// sitemapURL under the sitemaps.org location rule.
func InScope(sitemapURL, pageURL string) bool {
	s, ok := newScope(sitemapURL)
	return ok && s.contains(pageURL)
}
