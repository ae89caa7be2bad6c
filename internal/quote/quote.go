// Package quote quotes text from the outside (header values, file
// contents) for errors and logs, bounded in bytes: fmt's %.Nq bounds the
// runes it keeps, not the bytes it writes, and a rune that must be escaped
// is written as up to ten bytes.
package quote

import (
	"strconv"
	"unicode/utf8"
)

// Short returns s quoted as strconv.Quote does (as %q does), holding at
// most n bytes: when s does not fit, the longest start of it that does,
// cut between runes, followed by "..." (so at least `""...`).
func Short(s string, n int) string {
	if len(s) <= n-2 {
		if q := strconv.Quote(s); len(q) <= n {
			return q
		}
	}
	const ellipsis = "..."
	room := n - len(ellipsis)
	if len(s) > room {
		// Every byte quotes to one byte at least, and a rune cut in two
		// to four or more: the loop below drops it.
		s = s[:max(room, 0)]
	}
	for {
		q := strconv.Quote(s)
		if len(q) <= room || s == "" {
			return q + ellipsis
		}
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
}
