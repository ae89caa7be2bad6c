package fetch

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/goodbot-go/goodbot/politeness"
)

// checkURL applies the URL rules: absolute http(s) without credentials, not
// on the block list, not a literal internal address, no login or deny words.
func (c *chain) checkURL(u *url.URL) error {
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return fmt.Errorf("%w: %s", ErrBadURL, redacted(u))
	}
	if err := c.checkBlocked(u); err != nil {
		return err
	}
	if err := c.checkAddr(u); err != nil {
		return err
	}
	if p := matchURLWords(u, c.login); p != "" {
		return &Error{Outcome: AuthRequired, URL: u.Redacted(), Err: fmt.Errorf("fetch: login page (%q)", p)}
	}
	if p := matchURLWords(u, c.deny); p != "" {
		return &Error{Outcome: Disallowed, URL: u.Redacted(), Err: fmt.Errorf("%w: %q", ErrDenied, p)}
	}
	return nil
}

// checkBlocked refuses URLs on the domain block list, in any spelling
// of the host.
func (c *chain) checkBlocked(u *url.URL) error {
	if len(c.blocked) == 0 {
		return nil
	}
	host := siteHostname(u)
	for _, d := range c.blocked {
		if host == d || strings.HasSuffix(host, "."+d) {
			return &Error{Outcome: BlockedDomain, URL: u.Redacted(), Err: fmt.Errorf("fetch: %s is on the block list", d)}
		}
	}
	return nil
}

// siteHostname returns the host of u's site key ([politeness.HostKey]),
// without port or brackets: one spelling for every spelling of the host.
func siteHostname(u *url.URL) string {
	_, hostport, _ := strings.Cut(politeness.HostKey(u), "://")
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// blockedHost returns the canonical host of a block list entry ("" for an
// empty one): a domain spelled as a site key spells it, or an IP address.
func blockedHost(d string) string {
	d = strings.TrimSpace(d)
	if a, err := netip.ParseAddr(d); err == nil && a.Is6() {
		d = "[" + d + "]"
	}
	h := siteHostname(&url.URL{Scheme: "http", Host: d})
	return strings.TrimLeft(h, ".")
}
