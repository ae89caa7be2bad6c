package sitemap

import (
	"bytes"
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
		// Options.MaxBytes is "the most bytes read": a document of exactly
		// MaxBytes is whole, and negative means no limit.
		{"exactly MaxBytes", "https://a.test/1\nhttps://a.test/2\n", &Options{MaxBytes: 34}, "[https://a.test/1 https://a.test/2]", 0, nil},
		{"exactly MaxBytes, no final newline", "https://a.test/1\nhttps://a.test/2", &Options{MaxBytes: 33}, "[https://a.test/1 https://a.test/2]", 0, nil},
		{"MaxBytes negative", lines(40), &Options{MaxBytes: -1}, locList(40), 0, nil},
		// Every line that ends within the first MaxBytes bytes is yielded,
		// however the reads fall (the first read is shorter than the limit).
		{"limit after 30 of 40 lines", lines(40), &Options{MaxBytes: 30 * 18}, locList(30), 0, ErrTooLarge},
		{"limit inside line 31 of 40", lines(40), &Options{MaxBytes: 30*18 + 9}, locList(30), 0, ErrTooLarge},
		// MaxLocBytes may exceed the reader's usual 64 KiB buffer: a line
		// of that length is still one URL.
		{"MaxLocBytes line over 64 KiB", "https://a.test/" + strings.Repeat("a", 100_000-15) + "\nhttps://a.test/1\n", &Options{MaxLocBytes: 100_000},
			"[https://a.test/" + strings.Repeat("a", 100_000-15) + " https://a.test/1]", 0, nil},
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

// lines is a text sitemap of n lines of 18 bytes each.
func lines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "https://a.test/%02d\n", i)
	}
	return b.String()
}

// locList is the fmt.Sprint of the first n URLs of lines.
func locList(n int) string {
	l := make([]string, n)
	for i := range l {
		l[i] = fmt.Sprintf("https://a.test/%02d", i)
	}
	return fmt.Sprint(l)
}

// TestReader_Offset: Offset is the number of uncompressed bytes consumed
// so far: after each line of a text sitemap, the end of that line; at the
// end, the whole document, gzipped or not.
func TestReader_Offset(t *testing.T) {
	doc := lines(5)
	for _, zip := range []bool{false, true} {
		in := []byte(doc)
		if zip {
			in = gzBytes(in)
		}
		r := NewReader(bytes.NewReader(in), nil)
		var got []int64
		for r.Next() {
			got = append(got, r.Offset())
		}
		got = append(got, r.Offset())
		if want := "[18 36 54 72 90 90]"; fmt.Sprint(got) != want || r.Err() != nil {
			t.Errorf("gzip=%v: offsets %v, %v; want %s", zip, got, r.Err(), want)
		}
	}
	// A truncated XML document reports where it stopped.
	in := `<urlset><url><loc>https://a.test/1</loc></url><url>`
	_, r := collect(t, []byte(in), nil)
	var se *SyntaxError
	if !errors.As(r.Err(), &se) || se.Offset != int64(len(in)) || r.Offset() != int64(len(in)) {
		t.Errorf("truncated: %v, Offset %d; want a *SyntaxError at %d", r.Err(), r.Offset(), len(in))
	}
}
