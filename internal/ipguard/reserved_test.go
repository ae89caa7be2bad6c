package ipguard

import (
	"net/netip"
	"testing"
)

// TestKind_Reserved: every range of IANA's IPv4 and IPv6 Special-Purpose
// Address Registries marked not globally reachable that has no kind of its
// own is "reserved", at its first and last address, with the public
// address just outside it (RFC 6890, RFC 5737, RFC 2544, RFC 1112, RFC
// 8215, RFC 6666, RFC 2928, RFC 5180, RFC 3849, RFC 9637, RFC 9602, RFC
// 3879); the limited broadcast address inside 240.0.0.0/4 stays
// "broadcast"; the blocks of IETF protocol assignments are reserved whole,
// the few anycast and identifier ranges in them that the registries mark
// globally reachable too (no web server is there).
func TestKind_Reserved(t *testing.T) {
	for _, tc := range []struct{ addr, kind string }{
		{"191.255.255.255", ""}, {"192.0.0.0", "reserved"}, {"192.0.0.255", "reserved"}, {"192.0.1.0", ""},
		{"192.0.1.255", ""}, {"192.0.2.0", "reserved"}, {"192.0.2.255", "reserved"}, {"192.0.3.0", ""},
		{"198.17.255.255", ""}, {"198.18.0.0", "reserved"}, {"198.19.255.255", "reserved"}, {"198.20.0.0", ""},
		{"198.51.99.255", ""}, {"198.51.100.0", "reserved"}, {"198.51.100.255", "reserved"}, {"198.51.101.0", ""},
		{"203.0.112.255", ""}, {"203.0.113.0", "reserved"}, {"203.0.113.255", "reserved"}, {"203.0.114.0", ""},
		{"239.255.255.255", "multicast"}, {"240.0.0.0", "reserved"}, {"255.255.255.254", "reserved"}, {"255.255.255.255", "broadcast"},
		{"64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", ""}, {"64:ff9b:1::", "reserved"}, {"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "reserved"}, {"64:ff9b:2::", ""},
		{"ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ""}, {"100::", "reserved"}, {"100::ffff:ffff:ffff:ffff", "reserved"},
		{"100:0:0:1::", "reserved"}, {"100:0:0:1:ffff:ffff:ffff:ffff", "reserved"}, {"100:0:0:2::", ""}, // discard-only, then the dummy prefix
		{"2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ""}, {"2001:1::", "reserved"}, {"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved"}, {"2001:200::", ""}, // 2001::/23 (2001::/32 is Teredo, below)
		{"2001:2::", "reserved"}, {"2001:2:0:ffff:ffff:ffff:ffff:ffff", "reserved"}, {"2001:2:1::", "reserved"}, {"2001:10::", "reserved"}, // benchmarking, deprecated ORCHID
		// Marked globally reachable inside 192.0.0.0/24 and 2001::/23 (PCP,
		// TURN and DNS-SD anycast, AMT, AS112-v6, ORCHIDv2, drone IDs).
		{"192.0.0.9", "reserved"}, {"192.0.0.10", "reserved"}, {"2001:1::1", "reserved"}, {"2001:1::2", "reserved"}, {"2001:1::3", "reserved"},
		{"2001:3::1", "reserved"}, {"2001:4:112::1", "reserved"}, {"2001:20::1", "reserved"}, {"2001:30::1", "reserved"},
		{"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", ""}, {"2001:db8::", "reserved"}, {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "reserved"}, {"2001:db9::", ""},
		{"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ""}, {"3fff::", "reserved"}, {"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved"}, {"3fff:1000::", ""},
		{"5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ""}, {"5f00::", "reserved"}, {"5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved"}, {"5f01::", ""},
		{"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local"}, {"fec0::", "reserved"}, {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved"}, {"ff00::", "multicast"},
		// Reached through the IPv6 forms that embed an IPv4 address.
		{"::ffff:192.0.2.1", "reserved"}, {"64:ff9b::198.18.0.1", "reserved"}, {"::240.0.0.1", "reserved"},
	} {
		if got := Kind(netip.MustParseAddr(tc.addr)); got != tc.kind {
			t.Errorf("Kind(%s) = %q, want %q", tc.addr, got, tc.kind)
		}
	}
}

// TestReached_SixToFourAndTeredo: a 6to4 address (2002::/16, RFC 3056)
// reaches the IPv4 address in its bits 16 to 47, a Teredo address
// (2001::/32, RFC 4380) the client's IPv4 address, its bits 96 to 127
// inverted; so an internal address in either is refused as that IPv4
// address, and a public one is allowed. Just outside the prefixes nothing
// is embedded.
func TestReached_SixToFourAndTeredo(t *testing.T) {
	for _, tc := range []struct{ addr, reached, kind string }{
		{"2002:7f00:1::", "127.0.0.1", "loopback"},
		{"2002:a9fe:a9fe:1:2:3:4:5", "169.254.169.254", "link-local"},
		{"2002:a00:1::1", "10.0.0.1", "private"},
		{"2002:808:808::1", "8.8.8.8", ""},
		{"2002::", "0.0.0.0", "unspecified"},
		{"2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "255.255.255.255", "broadcast"},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1", "loopback"},         // server 65.54.227.120, client 127.0.0.1
		{"2001:0:4136:e378:8000:63bf:5601:5601", "169.254.169.254", "link-local"}, // the metadata address
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", "8.8.8.8", ""},
		{"2001:0:ffff:ffff:ffff:ffff:ffff:ffff", "0.0.0.0", "unspecified"},
		{"2003::7f00:1", "2003::7f00:1", ""},                                   // past 2002::/16
		{"2001:1::7f00:1", "2001:1::7f00:1", "reserved"},                       // past 2001::/32: in 2001::/23, but nothing embedded
		{"2001:0:4136:e378:8000:63bf:80ff:fffe%eth0", "127.0.0.1", "loopback"}, // a zone changes nothing
	} {
		a := netip.MustParseAddr(tc.addr)
		if got := Reached(a); got.String() != tc.reached {
			t.Errorf("Reached(%s) = %s, want %s", tc.addr, got, tc.reached)
		}
		if got := Kind(a); got != tc.kind {
			t.Errorf("Kind(%s) = %q, want %q", tc.addr, got, tc.kind)
		}
	}
	// An allowed IPv4 range opens its 6to4 and Teredo forms too.
	al := NewAllow([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")})
	for _, s := range []string{"2002:7f00:1::", "2001:0:4136:e378:8000:63bf:80ff:fffe"} {
		if reached, kind := al.Check(netip.MustParseAddr(s)); kind != "" || reached != netip.MustParseAddr("127.0.0.1") {
			t.Errorf("Check(%s) with 127.0.0.0/8 allowed = %s, %q", s, reached, kind)
		}
	}
}
