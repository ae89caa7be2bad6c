package urinorm

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestEscapes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/plain/path", "/plain/path"},
		{"/%7e%7E", "/~~"},                 // unreserved: decoded, either case
		{"/%41%5a%30%2D%2e%5F", "/AZ0-._"}, // letters, digits and the four marks
		{"/%2f%c3%a9", "/%2F%C3%A9"},       // reserved and non-ASCII: kept, hex upper-cased
		{"/a b\x7f\xc3\xa9", "/a%20b%7F%C3%A9"},
		{"/%", "/%"}, {"/%4", "/%4"}, {"/%zz", "/%zz"}, // not an escape
		{"/x%7", "/x%7"}, {"/x%7e", "/x~"}, // at the end
		{"", ""},
	} {
		if got := Escapes(tc.in); got != tc.want {
			t.Errorf("Escapes(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestEscapes_EveryByte checks Escapes against the rules as RFC 3986 words
// them, written out here from its character sets: every one-byte string,
// and every "%" followed by any two bytes (an escape when both are hex
// digits, decoded when it names an unreserved character).
func TestEscapes_EveryByte(t *testing.T) {
	const (
		hexDigits  = "0123456789abcdefABCDEF"
		unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
	)
	one := func(c byte) string { // a byte outside an escape
		if c <= 0x20 || c >= 0x7f {
			return fmt.Sprintf("%%%02X", c)
		}
		return string(c)
	}
	checked := 0
	for a := range 256 {
		if got, want := Escapes(string([]byte{byte(a)})), one(byte(a)); got != want {
			t.Errorf("Escapes(%q) = %q, want %q", []byte{byte(a)}, got, want)
		}
		checked++
		for b := range 256 {
			in := string([]byte{'%', byte(a), byte(b)})
			want := "%" + one(byte(a)) + one(byte(b))
			if strings.IndexByte(hexDigits, byte(a)) >= 0 && strings.IndexByte(hexDigits, byte(b)) >= 0 {
				v, _ := strconv.ParseUint(in[1:], 16, 8)
				if strings.IndexByte(unreserved, byte(v)) >= 0 {
					want = string(byte(v))
				} else {
					want = strings.ToUpper(in)
				}
			}
			if got := Escapes(in); got != want {
				t.Errorf("Escapes(%q) = %q, want %q", in, got, want)
			}
			checked++
		}
	}
	if checked != 256+256*256 {
		t.Fatalf("checked %d strings, want %d", checked, 256+256*256)
	}
}

// Escapes returns a string with nothing to change as it is, without
// copying it.
func TestEscapes_NothingToDoAllocatesNothing(t *testing.T) {
	clean := "/a-b_c.d~e/" + strings.Repeat("x", 64) + "?q=1&r=(2)!*'"
	if got := Escapes(clean); got != clean {
		t.Fatalf("Escapes(%q) = %q, want it unchanged", clean, got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = Escapes(clean) }); n != 0 {
		t.Errorf("Escapes of a path with nothing to change allocates %v times, want 0", n)
	}
}

func TestDotSegments(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/a/b/c", "/a/b/c"},
		{"/a/./b/../c", "/a/c"},
		{"/a/b/..", "/a/"},
		{"/a/b/.", "/a/b/"},
		{"/..", "/"}, {"/../../x", "/x"}, // never above the root
		{"/a//b/../c", "/a//c"},                // an empty segment is a segment
		{"/a/.../b/..x/.y", "/a/.../b/..x/.y"}, // not dot segments
		{"/", "/"},
		{".", "/"}, {"./a", "/a"}, // a path without its first "/" gets it back
	} {
		if got := DotSegments(tc.in); got != tc.want {
			t.Errorf("DotSegments(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestDotSegments_AsTheRFC compares DotSegments with the algorithm of RFC
// 3986 section 5.2.4 as written (its input and output buffers), on every
// path of up to five segments drawn from dot segments, empty ones and names
// with dots. (net/url's reference resolution is no oracle here: it drops
// the empty segment that "/a/..//b" leaves.)
func TestDotSegments_AsTheRFC(t *testing.T) {
	segs := []string{"a", ".", "..", "", "b.", ".c", "%2E"}
	n := 0
	var walk func(p string, depth int)
	walk = func(p string, depth int) {
		if p != "" {
			n++
			if got, want := DotSegments(p), rfcRemoveDotSegments(p); got != want {
				t.Errorf("DotSegments(%q) = %q, RFC 3986 5.2.4 %q", p, got, want)
			}
		}
		if depth == 0 {
			return
		}
		for _, s := range segs {
			walk(p+"/"+s, depth-1)
		}
	}
	walk("", 5)
	if n < 19000 {
		t.Fatalf("%d paths compared", n)
	}
}

// rfcRemoveDotSegments is RFC 3986 section 5.2.4's loop, step by step, for
// a rooted path.
func rfcRemoveDotSegments(in string) string {
	out := ""
	for in != "" {
		switch {
		case strings.HasPrefix(in, "/./"):
			in = in[2:]
		case in == "/.":
			in = "/"
		case strings.HasPrefix(in, "/../"):
			in = in[3:]
			out = out[:max(strings.LastIndexByte(out, '/'), 0)]
		case in == "/..":
			in = "/"
			out = out[:max(strings.LastIndexByte(out, '/'), 0)]
		default:
			n := strings.IndexByte(in[1:], '/') + 1
			if n == 0 {
				n = len(in)
			}
			out, in = out+in[:n], in[n:]
		}
	}
	return out
}

// FuzzEscapes: on a path as url.Parse escapes it, Escapes is a fixed
// point (a normalised path normalises to itself) and keeps the path's
// meaning (it unescapes to the same bytes).
func FuzzEscapes(f *testing.F) {
	for _, s := range []string{"/%7e", "/%2f", "/a b", "/%c3%a9", "/%41%2e%2E"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := url.Parse("http://h/" + s)
		if err != nil {
			return
		}
		p := u.EscapedPath()
		n := Escapes(p)
		if again := Escapes(n); again != n {
			t.Fatalf("Escapes(%q) = %q, and again %q", p, n, again)
		}
		want, _ := url.PathUnescape(p)
		if got, err := url.PathUnescape(n); err != nil || got != want {
			t.Fatalf("Escapes(%q) = %q: unescapes to %q (%v), want %q", p, n, got, err, want)
		}
	})
}
