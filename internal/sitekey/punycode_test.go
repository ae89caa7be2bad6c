package sitekey

import (
	"net/url"
	"strings"
	"testing"
)

// A label "xn--" followed by ASCII and a final '-' is punycode with no
// non-basic code points: RFC 3492 §6.2 decodes it to the code points
// before the last delimiter, so "xn--a-" is "a" and each "xn--...-" layer
// wrapped around a label takes IDNA one more pass to read. Host applies
// IDNA until the name is stable, so every depth a DNS label can hold (12
// in 61 bytes; 63 is the limit) ends at the innermost name, which is its
// own key; with a trailing dot and in upper case too.
func TestHost_NestedPunycodeLayersReachTheStableName(t *testing.T) {
	for depth := 1; depth <= 12; depth++ {
		for _, in := range []string{
			strings.Repeat("xn--", depth) + "a" + strings.Repeat("-", depth),
			strings.ToUpper(strings.Repeat("xn--", depth)+"b"+strings.Repeat("-", depth)) + ".example.",
		} {
			want := "a"
			if strings.HasSuffix(in, ".") {
				want = "b.example"
			}
			if label, _, _ := strings.Cut(in, "."); len(label) > 63 {
				t.Fatalf("%q: a label of %d bytes, more than DNS allows", label, len(label))
			}
			got := Host(in)
			if got != want {
				t.Errorf("Host(%q) = %q, want %q", in, got, want)
			}
			if again := Host(got); again != got {
				t.Errorf("Host(%q) = %q, whose Host is %q: not its own key", in, got, again)
			}
			u := &url.URL{Scheme: "http", Host: in}
			if key, want := string(Append(nil, u)), "http://"+want+":80"; key != want {
				t.Errorf("Append(%s) = %s, want %s", u, key, want)
			}
		}
	}
}

// A canonical host that spells "xn-" without being a punycode label
// ("xn--") is canonical whatever else it holds, '_' (which IDNA rejects)
// included: it costs nothing beyond the key's bytes.
func TestAppend_CanonicalHostsNearPunycodeDoNotAllocate(t *testing.T) {
	for _, host := range []string{"xn-a_b.example", "a_xn-.example", "my_host.xn-z.example"} {
		u := &url.URL{Scheme: "http", Host: host}
		buf := make([]byte, 0, 64)
		if n := testing.AllocsPerRun(100, func() { buf = Append(buf[:0], u) }); n != 0 {
			t.Errorf("Append allocates %v times for the canonical host %s, want 0", n, host)
		}
		if got, want := string(Append(nil, u)), "http://"+host+":80"; got != want {
			t.Errorf("Append(%s) = %s, want %s", u, got, want)
		}
	}
}
