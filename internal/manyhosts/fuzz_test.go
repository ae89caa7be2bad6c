package manyhosts

import "testing"

func TestParseHost(t *testing.T) {
	tests := []struct {
		in     string
		prefix string
		n      int
		ok     bool
	}{
		{"l17.test", "l", 17, true},
		{"l17.test:8080", "l", 17, true},
		{"good0.test", "good", 0, true},
		{"ab12c3.test", "ab12c", 3, true},
		{"17.test", "", 0, false},
		{"l.test", "", 0, false},
		{"l17.example", "", 0, false},
		{"ctl.manyhosts", "", 0, false},
		{"", "", 0, false},
	}
	for _, tc := range tests {
		prefix, n, ok := parseHost(tc.in)
		if prefix != tc.prefix || n != tc.n || ok != tc.ok {
			t.Errorf("parseHost(%q) = %q, %d, %v; want %q, %d, %v", tc.in, prefix, n, ok, tc.prefix, tc.n, tc.ok)
		}
	}
}

// FuzzParseHost: no panic, and what parses is a prefix and a number that
// Host spells back into a name giving them again.
func FuzzParseHost(f *testing.F) {
	for _, s := range []string{"l17.test", "x0.test:1", "17.test", "a99999999999999999999.test", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		prefix, n, ok := parseHost(s)
		if !ok {
			return
		}
		if prefix == "" || n < 0 {
			t.Fatalf("parseHost(%q) = %q, %d", s, prefix, n)
		}
		h := Host(prefix, n)
		if p2, n2, ok2 := parseHost(h); p2 != prefix || n2 != n || !ok2 {
			t.Fatalf("parseHost(%q) = %q, %d; parseHost(Host) = %q, %d, %v", s, prefix, n, p2, n2, ok2)
		}
	})
}
