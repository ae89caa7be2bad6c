// Package ipguard decides which IP addresses a client of the public web
// must not connect to unless it was told it may: the loopback, private,
// link-local, unspecified ("this network"), multicast, broadcast and shared
// (carrier-grade NAT, RFC 6598) ranges, and the other ranges that IANA's
// special-purpose address registries mark as not globally reachable
// ("reserved": documentation, benchmarking, IETF protocol assignments
// (192.0.0.0/24 and 2001::/23, whole), 240.0.0.0/4, discard-only, dummy,
// local-use translation, segment routing, site-local), whatever form the address is written in: IPv4-mapped IPv6
// (::ffff:127.0.0.1), NAT64 (64:ff9b::/96, RFC 6052, which a NAT64 network
// translates to the IPv4 address it embeds), IPv4-compatible
// (::a9fe:a9fe), 6to4 (2002::/16, RFC 3056: the relay's IPv4 address) and
// Teredo (2001::/32, RFC 4380: the client's IPv4 address) addresses are
// judged as the IPv4 address they reach.
//
// The fetcher (its URL check and its dialer) and the signature verifier
// (the dialer of its key directory fetches) judge addresses here, so that
// no address is refused by one and reached by the other.
package ipguard

import "net/netip"

var (
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10") // RFC 6598, carrier-grade NAT (and some clouds' metadata)
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")     // RFC 1122 "this network"; 0.0.0.0 reaches the local host
	broadcast   = netip.AddrFrom4([4]byte{255, 255, 255, 255})
	nat64       = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052 well-known NAT64 prefix
	compatV4    = netip.MustParsePrefix("::/96")        // deprecated IPv4-compatible addresses
	sixToFour   = netip.MustParsePrefix("2002::/16")    // RFC 3056: the IPv4 address in bits 16-47
	teredo      = netip.MustParsePrefix("2001::/32")    // RFC 4380: the client's IPv4 address, inverted, in bits 96-127
)

// reserved are the ranges of IANA's IPv4 and IPv6 Special-Purpose Address
// Registries that are not globally reachable and have no kind of their own
// above (RFC 6890 and the RFCs named). The two blocks of IETF protocol
// assignments are reserved whole: the registries mark a few ranges in them
// globally reachable (anycast addresses of PCP, TURN and DNS-SD, AMT
// relays, AS112, ORCHIDv2 and drone identifiers), none of them a web
// server's, and refusing 192.0.0.9 and 192.0.0.10 is what this package
// has always done.
var reserved = [...]netip.Prefix{
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments (RFC 6890)
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation, TEST-NET-1 (RFC 5737)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking (RFC 2544)
	netip.MustParsePrefix("198.51.100.0/24"), // documentation, TEST-NET-2 (RFC 5737)
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation, TEST-NET-3 (RFC 5737)
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved (RFC 1112)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use IPv4/IPv6 translation (RFC 8215): the IPv4 address it maps to is the network's choice
	netip.MustParsePrefix("100::/64"),        // discard-only (RFC 6666)
	netip.MustParsePrefix("100:0:0:1::/64"),  // dummy IPv6 prefix
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments (RFC 2928), benchmarking 2001:2::/48 (RFC 5180) in it; its Teredo addresses are judged as IPv4 before
	netip.MustParsePrefix("2001:db8::/32"),   // documentation (RFC 3849)
	netip.MustParsePrefix("3fff::/20"),       // documentation (RFC 9637)
	netip.MustParsePrefix("5f00::/16"),       // segment routing SIDs (RFC 9602)
	netip.MustParsePrefix("fec0::/10"),       // site-local, deprecated (RFC 3879)
}

// Reached returns the address a connection to a reaches, as this package
// judges it: without zone, an IPv4-mapped, NAT64, IPv4-compatible, 6to4 or
// Teredo IPv6 address as the IPv4 address it embeds (so
// 64:ff9b::a9fe:a9fe is 169.254.169.254, 2002:7f00:1:: is 127.0.0.1, and
// 2001:0:4136:e378:8000:63bf:80ff:fffe is 127.0.0.1). :: and ::1 stay as
// they are.
func Reached(a netip.Addr) netip.Addr {
	a = a.Unmap().WithZone("")
	if !a.Is6() || a.IsUnspecified() || a.IsLoopback() {
		return a
	}
	b := a.As16()
	switch {
	case nat64.Contains(a), compatV4.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	case teredo.Contains(a):
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
	}
	return a
}

// Kind returns the internal range the address a reaches ([Reached]) lies
// in: "loopback", "unspecified", "private", "link-local", "multicast",
// "shared", "broadcast" or "reserved"; "invalid" for the zero Addr; "" for
// a public address.
func Kind(a netip.Addr) string { return kindOf(Reached(a)) }

// kindOf is Kind for an address already as reached.
func kindOf(a netip.Addr) string {
	switch {
	case !a.IsValid():
		return "invalid"
	case a.IsLoopback():
		return "loopback"
	case a.IsUnspecified(), thisNetwork.Contains(a):
		return "unspecified"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case sharedSpace.Contains(a):
		return "shared"
	case a == broadcast:
		return "broadcast"
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return "reserved"
		}
	}
	return ""
}

// Allow is a list of prefixes whose internal addresses may be connected
// to. The zero value allows none. Make one with [NewAllow].
type Allow struct {
	prefixes []netip.Prefix // masked; IPv4-mapped ones as IPv4
}

// NewAllow returns the Allow of prefixes. A prefix in the IPv4-mapped form
// of 96 bits or more (::ffff:10.0.0.0/104) allows the IPv4 addresses it
// maps (10.0.0.0/8); any other prefix is taken as written. Invalid
// prefixes are ignored.
func NewAllow(prefixes []netip.Prefix) Allow {
	var al Allow
	for _, p := range prefixes {
		if !p.IsValid() {
			continue
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		al.prefixes = append(al.prefixes, p.Masked())
	}
	return al
}

// Check judges a connection to a: it returns the address reached and, when
// that address is internal and no prefix of al contains it, its [Kind];
// kind is "" when the connection may be made.
func (al Allow) Check(a netip.Addr) (reached netip.Addr, kind string) {
	reached = Reached(a)
	if kind = kindOf(reached); kind == "" {
		return reached, ""
	}
	for _, p := range al.prefixes {
		if p.Contains(reached) {
			return reached, ""
		}
	}
	return reached, kind
}
