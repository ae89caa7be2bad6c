package quote

import (
	"strconv"
	"strings"
	"testing"
)

func TestShort(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"InvalidCrawlerMaxPrice", 64, `"InvalidCrawlerMaxPrice"`},
		{"", 64, `""`},
		{strings.Repeat("a", 62), 64, `"` + strings.Repeat("a", 62) + `"`},
		{strings.Repeat("a", 63), 64, `"` + strings.Repeat("a", 59) + `"...`},
		{strings.Repeat("\x9c", 40), 20, `"\x9c\x9c\x9c"...`}, // 4 bytes an escape
		{"héllo wörld", 12, `"héllo "...`},
		{"héllo wörld", 10, `"héll"...`}, // never half of "é"
		{"a\nb", 64, `"a\nb"`},
		{"a\x00", 6, `"a"...`}, // 2 bytes, but 7 quoted
		{"abc", 1, `""...`},
		{"abéz", 6, `"a"...`}, // the first cut, at 3 bytes, falls inside "é"
		{"aé", 5, `"aé"`},
	} {
		got := Short(tc.in, tc.max)
		if got != tc.want {
			t.Errorf("Short(%q, %d) = %s, want %s", tc.in, tc.max, got, tc.want)
		}
	}
}

// FuzzShort: the result is at most max bytes (or the bare quotes and
// ellipsis), and is the quote of a start of s.
func FuzzShort(f *testing.F) {
	f.Add("InvalidCrawlerMaxPrice", 64)
	f.Add(strings.Repeat("\x9c", 100), 30)
	f.Add("\U0010ffff\u2028ü", 8)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 200
		got := Short(s, n)
		if len(got) > max(n, len(`""...`)) {
			t.Fatalf("Short(%q, %d) = %s, %d bytes", s, n, got, len(got))
		}
		q, cut := strings.CutSuffix(got, "...")
		start, err := strconv.Unquote(q)
		if err != nil || !strings.HasPrefix(s, start) || (!cut && start != s) {
			t.Fatalf("Short(%q, %d) = %s: not the quote of a start of it", s, n, got)
		}
	})
}
