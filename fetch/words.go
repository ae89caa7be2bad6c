package fetch

import (
	"net/url"
	"strings"
	"unicode"
)

// compileWords splits each pattern into its lower-case words.
func compileWords(patterns []string) [][]string {
	out := make([][]string, 0, len(patterns))
	for _, p := range patterns {
		if w := splitWords(p); len(w) > 0 {
			out = append(out, w)
		}
	}
	return out
}

func splitWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// isWordByte reports whether c belongs to a word: ASCII letters and digits,
// and every byte of a non-ASCII character (so "café" is one word).
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= 0x80
}

// matchURLWords returns the first pattern whose words occur in a row in u's
// path or (unescaped) query, or "". It does not allocate for URLs without
// escapes in the query.
func matchURLWords(u *url.URL, patterns [][]string) string {
	if len(patterns) == 0 {
		return ""
	}
	if p := matchWords(u.Path, patterns); p != "" {
		return p
	}
	q := u.RawQuery
	if strings.ContainsAny(q, "%+") {
		if uq, err := url.QueryUnescape(q); err == nil {
			q = uq
		}
	}
	return matchWords(q, patterns)
}

// matchWords returns the first pattern whose words occur in a row in s
// (compared case-insensitively, words separated by any non-word bytes), as
// written with "-" between words, or "".
func matchWords(s string, patterns [][]string) string {
	for i := 0; i < len(s); i++ {
		if !isWordByte(s[i]) || (i > 0 && isWordByte(s[i-1])) {
			continue // not the start of a word
		}
		for _, p := range patterns {
			if matchAt(s, i, p) {
				return strings.Join(p, "-")
			}
		}
	}
	return ""
}

// matchAt reports whether the words of p start at s[i].
func matchAt(s string, i int, p []string) bool {
	j := i
	for k, w := range p {
		if k > 0 {
			start := j
			for j < len(s) && !isWordByte(s[j]) {
				j++
			}
			if j == start {
				return false
			}
		}
		// Two ASCII first bytes that differ beyond case cannot fold
		// together: a cheap no before EqualFold.
		if len(s)-j < len(w) || (s[j]|w[0] < 0x80 && s[j]|0x20 != w[0]|0x20) ||
			!strings.EqualFold(s[j:j+len(w)], w) {
			return false
		}
		j += len(w)
		if j < len(s) && isWordByte(s[j]) {
			return false
		}
	}
	return true
}
