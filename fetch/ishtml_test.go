package fetch

import (
	"mime"
	"testing"
)

// isHTML answers as a full media-type parse does, on the spellings its
// fast path takes and on the others.
func TestIsHTML(t *testing.T) {
	tests := []struct {
		ct   string
		want bool
	}{
		{"text/html", true},
		{"TEXT/HTML", true},
		{"text/html; charset=utf-8", true},
		{"Text/Html; Charset=UTF-8", true},
		{"text/html;charset=utf-8", true},
		{"application/xhtml+xml", true},
		{"text/html; charset", false}, // a malformed parameter: not read as HTML
		{"text/htmlx", false},
		{"text/plain", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := isHTML(tc.ct); got != tc.want {
			t.Errorf("isHTML(%q) = %v, want %v", tc.ct, got, tc.want)
		}
		mt, _, err := mime.ParseMediaType(tc.ct)
		if full := err == nil && (mt == "text/html" || mt == "application/xhtml+xml"); full != tc.want {
			t.Errorf("%q: the full parse says %v", tc.ct, full)
		}
	}
}
