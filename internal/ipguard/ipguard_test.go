package ipguard

import (
	"net/netip"
	"testing"
)

// TestKind: every internal range, in each form an address can be written
// in (IPv4, IPv4-mapped, NAT64, IPv4-compatible, with a zone), and public
// addresses in the same forms.
func TestKind(t *testing.T) {
	for _, tc := range []struct{ addr, kind string }{
		{"127.0.0.1", "loopback"}, {"127.255.0.9", "loopback"}, {"::1", "loopback"}, {"::ffff:127.0.0.1", "loopback"},
		{"64:ff9b::7f00:1", "loopback"}, {"::127.0.0.1", "loopback"},
		{"0.0.0.0", "unspecified"}, {"0.1.2.3", "unspecified"}, {"::", "unspecified"}, {"::ffff:0.0.0.0", "unspecified"},
		{"10.0.0.1", "private"}, {"172.16.5.4", "private"}, {"192.168.1.1", "private"}, {"fc00::1", "private"},
		{"::ffff:10.1.2.3", "private"}, {"64:ff9b::10.1.2.3", "private"}, {"::10.1.2.3", "private"},
		{"169.254.169.254", "link-local"}, {"fe80::1", "link-local"}, {"fe80::1%eth0", "link-local"},
		{"64:ff9b::a9fe:a9fe", "link-local"}, {"::a9fe:a9fe", "link-local"}, {"::ffff:169.254.169.254", "link-local"},
		{"224.0.0.1", "multicast"}, {"ff02::1", "multicast"}, {"ff01::1", "multicast"}, {"64:ff9b::e000:1", "multicast"},
		{"100.64.0.1", "shared"}, {"64:ff9b::100.64.0.1", "shared"},
		{"255.255.255.255", "broadcast"}, {"64:ff9b::ffff:ffff", "broadcast"},
		{"8.8.8.8", ""}, {"172.32.0.1", ""}, {"2001:4860:4860::8888", ""}, {"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""}, {"::808:808", ""}, {"64:ff9b:1::a9fe:a9fe", "reserved"}, // the local-use NAT64 prefix maps where its network chooses
	} {
		if got := Kind(netip.MustParseAddr(tc.addr)); got != tc.kind {
			t.Errorf("Kind(%s) = %q, want %q", tc.addr, got, tc.kind)
		}
	}
	if got := Kind(netip.Addr{}); got != "invalid" {
		t.Errorf("Kind of the zero Addr = %q, want invalid", got)
	}
}

// TestReached: the address judged, for each form.
func TestReached(t *testing.T) {
	for in, want := range map[string]string{
		"::ffff:10.0.0.1": "10.0.0.1", "64:ff9b::a9fe:a9fe": "169.254.169.254", "::a9fe:a9fe": "169.254.169.254",
		"fe80::1%eth0": "fe80::1", "::": "::", "::1": "::1", "2001:db8::1": "2001:db8::1", "8.8.8.8": "8.8.8.8",
	} {
		if got := Reached(netip.MustParseAddr(in)); got != netip.MustParseAddr(want) {
			t.Errorf("Reached(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestAllow: a prefix opens the internal addresses it contains, judged as
// reached; one in the IPv4-mapped form opens the IPv4 addresses it maps,
// any other as written (never widened); public addresses need none.
func TestAllow(t *testing.T) {
	for _, tc := range []struct {
		prefixes []string
		addr     string
		kind     string // "" allowed
	}{
		{nil, "8.8.8.8", ""},
		{nil, "127.0.0.1", "loopback"},
		{nil, "64:ff9b::a9fe:a9fe", "link-local"},
		{[]string{"10.0.0.0/8"}, "10.9.9.9", ""},
		{[]string{"10.0.0.0/8"}, "::ffff:10.0.0.1", ""},
		{[]string{"10.0.0.0/8"}, "64:ff9b::10.0.0.1", ""},
		{[]string{"10.0.0.0/8"}, "192.168.0.1", "private"},
		{[]string{"::ffff:127.0.0.1/128"}, "127.0.0.1", ""},
		{[]string{"::ffff:127.0.0.1/128"}, "127.0.0.2", "loopback"},
		{[]string{"::ffff:0.0.0.0/96"}, "127.0.0.1", ""},
		{[]string{"::ffff:0.0.0.0/96"}, "10.1.2.3", ""},
		{[]string{"::ffff:127.0.0.0/104"}, "10.1.2.3", "private"},
		{[]string{"127.0.0.0/8"}, "::ffff:127.0.0.1", ""},
		{[]string{"::1/128"}, "127.0.0.1", "loopback"},
		{[]string{"fd00::/112"}, "fd00::1", ""},
		{[]string{"fd00::/112"}, "fd00::1:0:1", "private"},
		{[]string{"fd00::/96"}, "fd00:0:0:1::1", "private"},
		{[]string{"64:ff9b::/96"}, "64:ff9b::a9fe:a9fe", "link-local"}, // judged as reached: 169.254.169.254
		{[]string{"10.1.2.3/8"}, "10.200.0.1", ""},                     // masked
	} {
		ps := []netip.Prefix{{}} // invalid: ignored, the others still read
		for _, p := range tc.prefixes {
			ps = append(ps, netip.MustParsePrefix(p))
		}
		if _, kind := NewAllow(ps).Check(netip.MustParseAddr(tc.addr)); kind != tc.kind {
			t.Errorf("allow %v, %s: %q, want %q", tc.prefixes, tc.addr, kind, tc.kind)
		}
	}
}

// FuzzCheck: any 16 bytes as an address: Reached is stable, Check agrees
// with Kind, and the address's own single-address prefix opens it.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"::1", "::ffff:127.0.0.1", "64:ff9b::a9fe:a9fe", "::a9fe:a9fe", "2001:db8::1", "fe80::1"} {
		b := netip.MustParseAddr(s).As16()
		f.Add(b[:])
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) != 16 {
			return
		}
		a := netip.AddrFrom16([16]byte(raw))
		r := Reached(a)
		if Reached(r) != r || Kind(r) != Kind(a) {
			t.Fatalf("Reached(%s) = %s, which reaches %s (kind %q against %q)", a, r, Reached(r), Kind(r), Kind(a))
		}
		if reached, kind := (Allow{}).Check(a); reached != r || kind != Kind(a) {
			t.Fatalf("Check(%s) = %s %q, want %s %q", a, reached, kind, r, Kind(a))
		}
		if _, kind := NewAllow([]netip.Prefix{netip.PrefixFrom(r, r.BitLen())}).Check(a); kind != "" {
			t.Fatalf("%s refused (%s) with its own address allowed", a, kind)
		}
	})
}
