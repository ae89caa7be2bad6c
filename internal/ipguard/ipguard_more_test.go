package ipguard

import (
	"net/netip"
	"testing"
)

// TestKind_RangeBoundaries: each internal range the package names, at its
// first and last address and, where the neighbour is a public address, the
// address just outside (the ranges as IANA's special-purpose registries,
// RFC 6890, give them: 0.0.0.0/8 "this network", 10.0.0.0/8,
// 172.16.0.0/12 and 192.168.0.0/16 private (RFC 1918), 100.64.0.0/10
// shared (RFC 6598), 127.0.0.0/8 loopback, 169.254.0.0/16 link-local,
// 224.0.0.0/4 multicast, 255.255.255.255 limited broadcast; fc00::/7
// unique local (RFC 4193), fe80::/10 link-local, ff00::/8 multicast).
func TestKind_RangeBoundaries(t *testing.T) {
	for _, tc := range []struct{ addr, kind string }{
		{"0.0.0.0", "unspecified"}, {"0.255.255.255", "unspecified"}, {"1.0.0.0", ""},
		{"9.255.255.255", ""}, {"10.0.0.0", "private"}, {"10.255.255.255", "private"}, {"11.0.0.0", ""},
		{"100.63.255.255", ""}, {"100.64.0.0", "shared"}, {"100.127.255.255", "shared"}, {"100.128.0.0", ""},
		{"126.255.255.255", ""}, {"127.0.0.0", "loopback"}, {"127.255.255.255", "loopback"}, {"128.0.0.0", ""},
		{"169.253.255.255", ""}, {"169.254.0.0", "link-local"}, {"169.254.255.255", "link-local"}, {"169.255.0.0", ""},
		{"172.15.255.255", ""}, {"172.16.0.0", "private"}, {"172.31.255.255", "private"}, {"172.32.0.0", ""},
		{"192.167.255.255", ""}, {"192.168.0.0", "private"}, {"192.168.255.255", "private"}, {"192.169.0.0", ""},
		{"223.255.255.255", ""}, {"224.0.0.0", "multicast"}, {"224.0.1.1", "multicast"}, {"239.255.255.255", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"::", "unspecified"}, {"::1", "loopback"},
		{"fc00::", "private"}, {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "private"},
		{"fe80::", "link-local"}, {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local"},
		{"ff00::", "multicast"}, {"ff05::2", "multicast"}, {"ff0e::1", "multicast"}, {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast"},
		// The same boundaries reached through IPv4-mapped, NAT64 and
		// IPv4-compatible forms.
		{"::ffff:0.255.255.255", "unspecified"}, {"64:ff9b::100.127.255.255", "shared"}, {"::100.127.255.255", "shared"},
		{"64:ff9b::0.0.0.0", "unspecified"}, {"64:ff9b::239.255.255.255", "multicast"}, {"::ffff:1.0.0.0", ""},
		{"64:ff9b::100.128.0.0", ""}, {"::223.255.255.255", ""},
	} {
		if got := Kind(netip.MustParseAddr(tc.addr)); got != tc.kind {
			t.Errorf("Kind(%s) = %q, want %q", tc.addr, got, tc.kind)
		}
	}
}

// TestReached_OnlyTheEmbeddingPrefixes: 64:ff9b::/96 (the well-known NAT64
// prefix of RFC 6052 §2.1) and ::/96 (IPv4-compatible) embed an IPv4
// address as written in their last 32 bits (Teredo does too, inverted:
// TestReached_SixToFourAndTeredo); an address just outside either, although
// its last 32 bits spell 127.0.0.1, reaches itself.
func TestReached_OnlyTheEmbeddingPrefixes(t *testing.T) {
	for in, want := range map[string]string{
		"64:ff9b::7f00:1":                     "127.0.0.1",
		"64:ff9b::ffff:ffff":                  "255.255.255.255",
		"64:ff9b::1:7f00:1":                   "64:ff9b::1:7f00:1", // bit 95 set: outside the /96
		"64:ff9a:ffff:ffff:ffff:ffff:7f00:1":  "64:ff9a:ffff:ffff:ffff:ffff:7f00:1",
		"64:ff9b:0:0:1::7f00:1":               "64:ff9b::1:0:7f00:1",
		"::1:7f00:1":                          "::1:7f00:1", // bit 95 set: not IPv4-compatible
		"::ffff:ffff":                         "255.255.255.255",
		"::0.0.0.2":                           "0.0.0.2",
		"0:0:0:0:1::7f00:1":                   "0:0:0:0:1::7f00:1",
		"::ffff:127.0.0.1%eth0":               "127.0.0.1",
		"64:ff9b::a9fe:a9fe%eth0":             "169.254.169.254",
		"2001:db8:ffff:ffff:ffff:ffff:ffff:1": "2001:db8:ffff:ffff:ffff:ffff:ffff:1",
	} {
		if got := Reached(netip.MustParseAddr(in)); got != netip.MustParseAddr(want) {
			t.Errorf("Reached(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestAllow_MulticastAndBroadcast: an allowed prefix opens the multicast
// and broadcast addresses it contains, and those only.
func TestAllow_MulticastAndBroadcast(t *testing.T) {
	for _, tc := range []struct {
		prefix, addr, kind string
	}{
		{"239.0.0.0/8", "239.255.255.255", ""},
		{"239.0.0.0/8", "224.0.0.1", "multicast"},
		{"ff0e::/16", "ff0e::1", ""},
		{"ff0e::/16", "ff05::2", "multicast"},
		{"255.255.255.255/32", "64:ff9b::ffff:ffff", ""},
		{"100.64.0.0/10", "100.127.255.255", ""},
		{"100.64.0.0/10", "0.0.0.0", "unspecified"},
	} {
		if _, kind := NewAllow([]netip.Prefix{netip.MustParsePrefix(tc.prefix)}).Check(netip.MustParseAddr(tc.addr)); kind != tc.kind {
			t.Errorf("allow %s, %s: %q, want %q", tc.prefix, tc.addr, kind, tc.kind)
		}
	}
}
