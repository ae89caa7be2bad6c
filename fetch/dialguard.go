package fetch

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"github.com/goodbot-go/goodbot/internal/ipguard"
)

// # Internal addresses
//
// A bot crawls the public web. A redirect, a link or a DNS answer that
// points it at the machine it runs on, its network or the cloud's metadata
// service (169.254.169.254) would make it read what no site owner
// published, so such addresses are refused unless Bot.AllowInternal lists
// them. The check runs twice:
//
//   - on the URL of every hop (redirects and robots.txt fetches included):
//     a host that is a literal IP address (also in the loose forms browsers
//     and inet_aton accept, such as "127.1" or "2130706433"), or a
//     "localhost" name (RFC 6761), is checked before anything is sent;
//   - on the address actually dialled, in the Control hook of the dialer of
//     the base transport fetch builds: a name is checked after DNS has
//     answered, so neither a DNS answer nor a redirect to a name can smuggle
//     an internal address in.
//
// A Bot.Transport given by the caller dials on its own: fetch cannot see
// the addresses it dials, so only the first check applies to it.

// InternalAddressError is the cause of an InternalAddress [*Error]: the
// address refused and the kind of range it lies in. errors.Is matches
// ErrInternalAddress. It is plain data.
type InternalAddressError struct {
	Addr netip.Addr // the address; for an IPv6 address that embeds an IPv4 one (IPv4-mapped, NAT64, IPv4-compatible, 6to4, Teredo), the IPv4 address it reaches
	Kind string     // "loopback", "private", "link-local", "unspecified", "multicast", "shared", "broadcast", "reserved"
}

func (e *InternalAddressError) Error() string {
	return fmt.Sprintf("fetch: %s is a %s address (not in Bot.AllowInternal)", e.Addr, e.Kind)
}

// Is reports whether target is ErrInternalAddress.
func (e *InternalAddressError) Is(target error) bool { return target == ErrInternalAddress }

// addrPolicy decides which addresses a bot may connect to. A nil
// *addrPolicy allows none of the internal ranges.
type addrPolicy struct {
	allow ipguard.Allow
}

// newAddrPolicy returns the policy allowing the internal ranges in allow.
func newAddrPolicy(allow []netip.Prefix) *addrPolicy {
	return &addrPolicy{allow: ipguard.NewAllow(allow)}
}

// check returns an *InternalAddressError if a is internal and not allowed.
func (p *addrPolicy) check(a netip.Addr) error {
	var allow ipguard.Allow
	if p != nil {
		allow = p.allow
	}
	if reached, kind := allow.Check(a); kind != "" {
		return &InternalAddressError{Addr: reached, Kind: kind}
	}
	return nil
}

// checkAddr refuses a URL whose host is a literal internal address the bot
// may not reach.
func (c *chain) checkAddr(u *url.URL) error {
	if err := c.addrs.checkURL(u); err != nil {
		return &Error{Outcome: InternalAddress, URL: u.Redacted(), Err: err}
	}
	return nil
}

// CheckHost is the check every request's URL gets against Bot.AllowInternal
// = allow: it returns an [*InternalAddressError] when u's host is a literal
// address, or a localhost name (RFC 6761, taken as 127.0.0.1), in an
// internal range that allow does not open, and nil otherwise. Names are not
// resolved: the base transport checks them when it dials. A program can use
// it to refuse such a URL before starting any work.
func CheckHost(u *url.URL, allow []netip.Prefix) error {
	return newAddrPolicy(allow).checkURL(u)
}

// checkURL checks u's host when it names an address without DNS: a literal
// IP address, or localhost (taken as 127.0.0.1).
//
// A name costs no allocation: it is not handed to netip.ParseAddr, whose
// error would allocate.
func (p *addrPolicy) checkURL(u *url.URL) error {
	host := u.Hostname()
	if strings.IndexByte(host, ':') >= 0 { // only an IPv6 literal has a colon here
		a, err := netip.ParseAddr(host)
		if err != nil {
			return nil // not an address: the dialler refuses it
		}
		return p.check(a)
	}
	if a, ok := parseLooseIPv4(host); ok { // dotted quads, and the loose forms
		return p.check(a)
	}
	host = strings.TrimSuffix(host, ".")
	if strings.EqualFold(host, "localhost") ||
		(len(host) > len(".localhost") && strings.EqualFold(host[len(host)-len(".localhost"):], ".localhost")) {
		return p.check(netip.AddrFrom4([4]byte{127, 0, 0, 1}))
	}
	return nil // a name: checked when dialled
}

// parseLooseIPv4 reads host as the WHATWG URL standard's IPv4 parser does,
// when its last label is a number: one to four parts, each decimal, octal
// (leading 0) or hexadecimal (0x), the last filling the remaining bytes
// ("127.1", "0x7f.1", "2130706433" are 127.0.0.1). Browsers and the C
// resolver (inet_aton) read such hosts as addresses, so they are checked
// as addresses, also under a transport fetch cannot see into. ok is false
// for a host that does not end in a number, or is not a valid address.
func parseLooseIPv4(host string) (addr netip.Addr, ok bool) {
	h := host
	if len(h) > 1 && h[len(h)-1] == '.' {
		h = h[:len(h)-1]
	}
	if !isNumberLabel(h[strings.LastIndexByte(h, '.')+1:]) {
		return netip.Addr{}, false // a name: the common case, without allocating
	}
	nparts := strings.Count(h, ".") + 1
	if nparts > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i := 0; i < nparts; i++ {
		s, rest, _ := strings.Cut(h, ".")
		h = rest
		n, ok := parseIPv4Number(s)
		last := i == nparts-1
		if !ok || (!last && n > 255) || (last && n >= 1<<(8*(5-nparts))) {
			return netip.Addr{}, false
		}
		if last {
			v += n
		} else {
			v += n << (8 * (3 - i))
		}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// isNumberLabel reports whether s is all decimal digits, or "0x" and hex
// digits (the WHATWG "ends in a number" test on the last label).
func isNumberLabel(s string) bool {
	if s == "" {
		return false
	}
	hex := len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
	if hex {
		s = s[2:]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || hex && ('a' <= c|0x20 && c|0x20 <= 'f')) {
			return false
		}
	}
	return true
}

// parseIPv4Number parses one part of a loose IPv4 address.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(s, base, 64)
	return n, err == nil
}

// control is the net.Dialer ControlContext of the base transport: it sees
// the address being dialled, after name resolution.
func (p *addrPolicy) control(_ context.Context, network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot check %s address %q: %v", ErrInternalAddress, network, address, err)
	}
	return p.check(ap.Addr())
}

// guardedDialer is the dialer of the base transports fetch builds: the
// source address, if valid, and the internal-address check.
func guardedDialer(local netip.Addr, p *addrPolicy) *net.Dialer {
	d := dialer(local)
	d.ControlContext = p.control
	return d
}
