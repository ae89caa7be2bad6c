package sitemap

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestReader_TextLines: a text sitemap is one URL per line (sitemaps.org,
// "Text file"); blank lines are skipped; a line of exactly MaxLocBytes is
// kept and a longer one is skipped whole (none of its bytes are read as
// another line), wherever the buffer boundaries fall; a line cut by the
// byte limit is not yielded (it would be a truncated URL).
func TestReader_TextLines(t *testing.T) {
	loc30 := "https://e.test/" + strings.Repeat("a", 15) // 30 bytes
	tests := []struct {
		name    string
		in      string
		opt     *Options
		want    string
		invalid int
		err     error
	}{
		{"blank lines", "https://a.test/1\n\nhttps://a.test/2\n\n\nhttps://a.test/3\n", nil,
			"[https://a.test/1 https://a.test/2 https://a.test/3]", 0, nil},
		{"MaxLocBytes line, last, no newline", "https://a.test/1\n" + loc30, &Options{MaxLocBytes: 30}, "[https://a.test/1 " + loc30 + "]", 0, nil},
		{"MaxLocBytes line with newline", loc30 + "\nhttps://a.test/1\n", &Options{MaxLocBytes: 30}, "[" + loc30 + " https://a.test/1]", 0, nil},
		{"long line, last, no newline", "https://a.test/1\n" + loc30 + "b", &Options{MaxLocBytes: 30}, "[https://a.test/1]", 1, nil},
		{"long line's tail is not a line", strings.Repeat("a", 31) + "https://a.test/x\nhttps://a.test/1\n", &Options{MaxLocBytes: 30}, "[https://a.test/1]", 1, nil},
		{"line cut by the byte limit", "https://a.test/1\nhttps://a.test/2/long\n", &Options{MaxBytes: 17 + 16}, "[https://a.test/1]", 0, ErrTooLarge},
	}
	for _, tc := range tests {
		for _, oneByte := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/oneByte=%v", tc.name, oneByte), func(t *testing.T) {
				var src io.Reader = strings.NewReader(tc.in)
				if oneByte {
					src = oneByteReader{src}
				}
				r := NewReader(src, tc.opt)
				var got []string
				for r.Next() {
					got = append(got, r.Entry().Loc)
				}
				if r.Format() != FormatText || fmt.Sprint(got) != tc.want || r.Invalid() != tc.invalid || !errors.Is(r.Err(), tc.err) || (tc.err == nil) != (r.Err() == nil) {
					t.Errorf("got %q, Invalid %d, Err %v, format %v; want %s, %d, %v", got, r.Invalid(), r.Err(), r.Format(), tc.want, tc.invalid, tc.err)
				}
			})
		}
	}
}
