// Package sitekey is the module's one definition of "the same site": the
// key "scheme://host:port" that the politeness gate, the robots.txt cache
// and the sitemap walker keep their per-site state under, so that every
// spelling of a site (case, IDNA and full-width forms, trailing dots,
// default and zero-padded ports, IPv4-mapped addresses) shares one gap,
// one robots.txt and one sitemap scope. The decision table every user of
// it is tested against is politeness/testdata/sitekeys.txt.
package sitekey

import (
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// Append appends the site key of u to dst: "scheme://host:port", with
// the scheme lowercased, the host canonical (see [Host]), IPv6 literals in
// brackets, and the port read as a number ("080" is 80), made explicit for
// http (80) and https (443). For other schemes without a port the key has no
// port. A host already canonical costs no allocation beyond dst.
func Append(dst []byte, u *url.URL) []byte {
	for i := 0; i < len(u.Scheme); i++ {
		c := u.Scheme[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	dst = append(dst, "://"...)
	host := Host(u.Hostname())
	if strings.IndexByte(host, ':') >= 0 {
		dst = append(append(append(dst, '['), host...), ']')
	} else {
		dst = append(dst, host...)
	}
	port := strings.TrimLeft(u.Port(), "0")
	switch {
	case port == "" && u.Port() != "":
		port = "0"
	case port == "" && strings.EqualFold(u.Scheme, "http"):
		port = "80"
	case port == "" && strings.EqualFold(u.Scheme, "https"):
		port = "443"
	case port == "":
		return dst
	}
	return append(append(dst, ':'), port...)
}

// Host returns the canonical spelling of a host name as url.URL.Hostname
// gives it (IPv6 literals without brackets). An IP address is written as
// net/netip writes it (an IPv4-mapped IPv6 address as the IPv4 address). A
// name is mapped to its ASCII form by IDNA (UTS #46 lookup processing:
// case folded, full-width forms and the ideographic full stops read as
// their ASCII counterparts, Unicode labels in punycode), then trailing dots
// are dropped. A name IDNA rejects keeps the result of IDNA's processing
// (which maps what it can, applied until stable), lowercased:
// deterministic, never an error.
func Host(h string) string {
	if strings.IndexByte(h, ':') >= 0 {
		if a, err := netip.ParseAddr(h); err == nil {
			return a.Unmap().String()
		}
		return strings.ToLower(h)
	}
	if !plain(h) {
		// On a name it rejects, IDNA returns the partly processed name,
		// which it may read differently the next time (a bad punycode label
		// decodes to another label): apply it until the name is stable, so
		// that a key is its own key.
		for range maxIDNAPasses {
			next, _ := idna.Lookup.ToASCII(h)
			if next = strings.ToLower(strings.TrimRight(next, ".")); next == h {
				break
			}
			h = next
		}
	}
	return h
}

// maxIDNAPasses bounds the passes of IDNA over a name it rejects. A pass
// unwraps one layer of punycode in each label ("xn--xn--a--" is read as
// "xn--a-", then "a"), and a label DNS accepts (63 bytes at most) holds at
// most 12 layers, so every name that can be resolved reaches its stable
// spelling; a longer name costs at most this many passes.
const maxIDNAPasses = 16

// plain reports whether h is already canonical: lowercase ASCII
// letters, digits, '-', '_' and '.', no trailing dot and no punycode label
// (whose validity IDNA decides).
func plain(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return !strings.HasSuffix(h, ".") && !strings.Contains(h, "xn--")
}
