package sitemap

import (
	"net/url"
	"strings"

	"github.com/goodbot-go/goodbot/internal/sitekey"
)

// scope is the part of the URL space a sitemap may describe under the
// sitemaps.org location rule: same site (scheme, host and port, in any
// spelling of the host: see sitekey.Append), same directory or below.
type scope struct {
	key string // the sitemap's site key
	dir string // resolved path up to and including the last '/'
}

func newScope(loc string) (scope, bool) {
	u, err := url.Parse(strings.TrimSpace(loc))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return scope{}, false
	}
	s := scope{key: string(sitekey.Append(nil, u))}
	p := resolvePath(u.EscapedPath())
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		s.dir = p[:i+1]
	} else {
		s.dir = "/"
	}
	return s, true
}

// contains reports whether loc, an absolute URL, is inside the scope. The
// path is compared after [resolvePath], so no spelling of ".." climbs out
// of the directory. It does not allocate in the common case.
func (s scope) contains(loc string) bool {
	i := strings.Index(loc, "://")
	if i < 0 {
		return false
	}
	rest := loc[i+3:]
	auth, path := rest, "/"
	if j := strings.IndexAny(rest, "/\\?#"); j >= 0 {
		auth = rest[:j]
		if rest[j] == '/' || rest[j] == '\\' {
			path = rest[j:]
			if k := strings.IndexAny(path, "?#"); k >= 0 {
				path = path[:k]
			}
		}
	}
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		auth = auth[at+1:]
	}
	if !strings.HasPrefix(resolvePath(path), s.dir) {
		return false
	}
	var buf [128]byte
	var key []byte
	if strings.IndexByte(auth, '%') < 0 {
		key = sitekey.Append(buf[:0], &url.URL{Scheme: loc[:i], Host: auth})
	} else if u, err := url.Parse(loc); err == nil { // percent-encoded host
		key = sitekey.Append(buf[:0], u)
	}
	return string(key) == s.key
}

// InScope reports whether pageURL may be listed by a sitemap at
// sitemapURL under the sitemaps.org location rule: same scheme, host and
// port, and a path in the sitemap's directory or below.
//
// Security property: both paths are compared after their dot segments are
// resolved as a server would resolve them (RFC 3986 §5.2.4), with "." and
// ".." recognised raw and percent-encoded in any case and mix ("%2e%2E",
// ".%2e"), "%2F", "%5C" and "\" read as "/", and empty segments merged.
// So "https://example.com/blog/../admin", "/blog/%2e%2e/admin" and
// "/blog/..%2Fadmin" are all outside "/blog/". The reading is strictly
// more restrictive than any one server's: it can drop a URL a server would
// have kept inside the directory, never keep one it would have put outside.
func InScope(sitemapURL, pageURL string) bool {
	s, ok := newScope(sitemapURL)
	return ok && s.contains(pageURL)
}

// resolvePath returns the escaped path p (starting with '/', without query
// or fragment) with its dot segments removed, reading "%2e" (any case) as
// '.', "%2f", "%5c" and '\' as '/', and merging empty segments. A path with
// nothing to resolve is returned as is, without allocating.
func resolvePath(p string) string {
	if !needsResolve(p) {
		return p
	}
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '%' && i+2 < len(p) {
			switch strings.ToLower(p[i+1 : i+3]) {
			case "2e":
				c, i = '.', i+2
			case "2f", "5c":
				c, i = '/', i+2
			}
		}
		if c == '\\' {
			c = '/'
		}
		b.WriteByte(c)
	}
	segs := strings.Split(b.String(), "/")
	out := make([]string, 0, len(segs))
	for i, seg := range segs {
		last := i == len(segs)-1
		switch seg {
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		case ".":
			if last {
				out = append(out, "")
			}
		case "":
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	return "/" + strings.Join(out, "/")
}

// needsResolve reports whether p may hold a dot segment, an encoded or
// backslash separator, or an empty segment.
func needsResolve(p string) bool {
	if strings.ContainsAny(p, "%\\") || strings.Contains(p, "//") {
		return true
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '.' || (i > 0 && p[i-1] != '/') {
			continue
		}
		j := i + 1
		if j < len(p) && p[j] == '.' {
			j++
		}
		if j == len(p) || p[j] == '/' {
			return true
		}
	}
	return false
}
