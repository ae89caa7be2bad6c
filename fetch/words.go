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

// urlWords returns the words of u's path and query (unescaped).
func urlWords(u *url.URL) []string {
	q, err := url.QueryUnescape(u.RawQuery)
	if err != nil {
		q = u.RawQuery
	}
	return splitWords(u.Path + " " + q)
}

// matchWords returns the first pattern whose words occur in a row in words,
// as written, or "".
func matchWords(words []string, patterns [][]string) string {
	for _, p := range patterns {
		for i := 0; i+len(p) <= len(words); i++ {
			ok := true
			for j, w := range p {
				if words[i+j] != w {
					ok = false
					break
				}
			}
			if ok {
				return strings.Join(p, "-")
			}
		}
	}
	return ""
}
