package sitekey

import (
	"net/url"
	"testing"
)

// The scheme is lowercased whatever its letters, the first and last of
// the alphabet included; a scheme without a default port gets none.
func TestAppend_SchemeLettersAZ(t *testing.T) {
	for u, want := range map[*url.URL]string{
		{Scheme: "AZ", Host: "example.com"}:       "az://example.com",
		{Scheme: "ZA+A", Host: "example.com:7"}:   "za+a://example.com:7",
		{Scheme: "Az-Z.1", Host: "Example.COM"}:   "az-z.1://example.com",
		{Scheme: "HTTPZ", Host: "example.com:08"}: "httpz://example.com:8",
	} {
		if got := string(Append(nil, u)); got != want {
			t.Errorf("Append(%s) = %s, want %s", u, got, want)
		}
	}
}

// Every host already canonical (lowercase letters a to z, digits 0 to 9,
// '-', '_' and '.') costs nothing beyond the key's bytes.
func TestAppend_CanonicalHostsDoNotAllocate(t *testing.T) {
	for _, host := range []string{"a.example", "z.example", "0.example", "9.example", "a-b.example", "a_b.example", "zz9-0_a.example"} {
		u := &url.URL{Scheme: "https", Host: host}
		buf := make([]byte, 0, 64)
		if n := testing.AllocsPerRun(100, func() { buf = Append(buf[:0], u) }); n != 0 {
			t.Errorf("Append allocates %v times for the canonical host %s, want 0", n, host)
		}
		if got, want := string(Append(nil, u)), "https://"+host+":443"; got != want {
			t.Errorf("Append(%s) = %s, want %s", u, got, want)
		}
	}
}

// A host with a colon that is no IP address is still one site whatever its
// case: lowercased, as a name is.
func TestHost_UnparsableColonHostLowercased(t *testing.T) {
	for in, want := range map[string]string{
		"FE80::G":      "fe80::g",
		"Not:An:Addr":  "not:an:addr",
		"::FFFF:1.2.3": "::ffff:1.2.3",
	} {
		if got := Host(in); got != want {
			t.Errorf("Host(%q) = %q, want %q", in, got, want)
		}
	}
}
