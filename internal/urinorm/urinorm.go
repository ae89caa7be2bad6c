// Package urinorm holds the syntax-based normalisation of RFC 3986 section
// 6.2.2 that fetch (its URL keys), robots (its rules and targets) and
// signing (its key set identifiers) share: percent-encodings, and dot
// segments.
package urinorm

import (
	"strings"
)

// IsHex reports whether c is a hexadecimal digit.
func IsHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// Unhex is the value of the hexadecimal digit c.
func Unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// UpperHex is the hexadecimal digit c in upper case.
func UpperHex(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

// IsUnreserved reports whether c is an RFC 3986 unreserved character.
func IsUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// Escapes decodes the percent-encodings of unreserved characters in s,
// upper-cases the hexadecimal digits of the others and percent-encodes
// spaces, control and non-ASCII bytes; a "%" not followed by two
// hexadecimal digits stays as it is. s is returned as it is when there is
// nothing to do.
func Escapes(s string) string {
	if !needsEscapeWork(s) {
		return s
	}
	const hexDigits = "0123456789ABCDEF"
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && IsHex(s[i+1]) && IsHex(s[i+2]):
			if d := Unhex(s[i+1])<<4 | Unhex(s[i+2]); IsUnreserved(d) {
				b = append(b, d)
			} else {
				b = append(b, '%', UpperHex(s[i+1]), UpperHex(s[i+2]))
			}
			i += 2
		case c <= ' ' || c >= 0x7f:
			b = append(b, '%', hexDigits[c>>4], hexDigits[c&15])
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// needsEscapeWork reports whether Escapes would change s.
func needsEscapeWork(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '%' || c <= ' ' || c >= 0x7f {
			return true
		}
	}
	return false
}

// DotSegments removes the "." and ".." segments of the absolute path p as
// RFC 3986 section 5.2.4 does ("/a/./b/../c" is "/a/c"; ".." above the root
// stays at the root; empty segments are segments).
func DotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if !strings.HasPrefix(r, "/") {
		r = "/" + r
	}
	return r
}
