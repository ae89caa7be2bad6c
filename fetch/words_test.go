package fetch

import (
	"net/url"
	"testing"
)

// TestMatchURLWords_Boundaries: a deny word matches whole words only. Every
// ASCII letter and digit, at either end of each range, and every byte of a
// non-ASCII character (0x80 included, the second byte of "À") continue a
// word; a pattern with no word in it matches nothing. The query is
// matched once unescaped.
func TestMatchURLWords_Boundaries(t *testing.T) {
	patterns := compileWords([]string{"ban", "---", "log in"})
	if len(patterns) != 2 {
		t.Fatalf("compiled %d patterns, want 2: a pattern without words is dropped", len(patterns))
	}
	for _, tc := range []struct {
		path, query, want string
	}{
		{"/ban", "", "ban"},
		{"/x-ban-y", "", "ban"},
		{"/BAN", "", "ban"},
		{"/log_in", "", "log-in"},
		{"/login", "", ""},
		{"/log", "", ""}, // the second word would start past the end
		{"/", "", ""},
		{"/bana", "", ""}, {"/banz", "", ""}, {"/banA", "", ""}, {"/banZ", "", ""}, {"/ban0", "", ""}, {"/ban9", "", ""},
		{"/aban", "", ""}, {"/zban", "", ""}, {"/Aban", "", ""}, {"/Zban", "", ""}, {"/0ban", "", ""}, {"/9ban", "", ""},
		{"/Àban", "", ""}, {"/banÀ", "", ""}, {"/ban\x80", "", ""},
		// The query is matched unescaped ("+" a space), the path as it is.
		{"/p", "next=log%20in", "log-in"},
		{"/p", "next=log+in", "log-in"},
		{"/p", "next=log%2", ""}, // a bad escape: matched as written
		{"/p", "next=%62an", "ban"},
	} {
		u := &url.URL{Path: tc.path, RawQuery: tc.query}
		if got := matchURLWords(u, patterns); got != tc.want {
			t.Errorf("%q: matched %q, want %q", u, got, tc.want)
		}
	}
}
