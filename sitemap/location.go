package sitemap

import (
	"net/url"
	"strings"
)

// scope is the part of the URL space a sitemap may describe under the
// sitemaps.org location rule: same scheme, host and port, same directory
// or below.
type scope struct {
	scheme string
	host   string // lower case, default port removed
	dir    string // path up to and including the last '/'
}

func newScope(loc string) (scope, bool) {
	u, err := url.Parse(strings.TrimSpace(loc))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return scope{}, false
	}
	s := scope{scheme: u.Scheme, host: hostKey(u.Scheme, u.Host)}
	p := u.EscapedPath()
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		s.dir = p[:i+1]
	} else {
		s.dir = "/"
	}
	return s, true
}

func hostKey(scheme, host string) string {
	host = strings.ToLower(host)
	if scheme == "http" {
		host = strings.TrimSuffix(host, ":80")
	} else {
		host = strings.TrimSuffix(host, ":443")
	}
	return host
}

// contains reports whether loc, an absolute URL, is inside the scope. It
// does not allocate in the common case.
func (s scope) contains(loc string) bool {
	i := strings.Index(loc, "://")
	if i < 0 || !equalFoldASCII(loc[:i], s.scheme) {
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
	if s.scheme == "http" {
		auth = strings.TrimSuffix(auth, ":80")
	} else {
		auth = strings.TrimSuffix(auth, ":443")
	}
	return equalFoldASCII(auth, s.host) && strings.HasPrefix(path, s.dir)
}

// InScope reports whether pageURL may be listed by a sitemap at
// sitemapURL under the sitemaps.org location rule.
func InScope(sitemapURL, pageURL string) bool {
	s, ok := newScope(sitemapURL)
	return ok && s.contains(pageURL)
}
