package fetch

import (
	"net/url"
	"strings"
)

// sendHost returns the host (and port) a request to u is sent to: the host
// of u's site key, so that every spelling of a site (upper case, a trailing
// dot, a zero-padded or default port, full-width letters, ideographic full
// stops, the Unicode form of an IDN) reaches the one host that pacing,
// robots.txt and the block list count it as. ok is false when u.Host is
// already that spelling, or when the site key has no sendable ASCII form.
func sendHost(u *url.URL) (string, bool) {
	if plainHost(u) {
		return "", false
	}
	h, ok := authority(u)
	if !ok || h == u.Host || strings.IndexByte(h, '%') >= 0 {
		return "", false
	}
	return h, true
}

// plainHost reports, without allocating, that u.Host is certainly its own
// site key's spelling: lower-case ASCII letters, digits, '-' and inner dots,
// with no port or a port that is not the scheme's default and has no
// leading zero.
func plainHost(u *url.URL) bool {
	host, port := u.Host, ""
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host, port = host[:i], host[i+1:]
		if port == "" || port[0] == '0' || (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
			return false
		}
	}
	if host == "" || host[len(host)-1] == '.' || host[0] == '.' {
		return false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
	}
	return !strings.HasPrefix(host, "xn--") && !strings.Contains(host, ".xn--")
}
