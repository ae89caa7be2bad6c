package sitemap

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestReader_CharRefAcrossReads: a character reference is decoded wherever
// the reads of the source cut the text: in a <loc> read a byte at a time
// with more than a reference's length of text after it, and in bare text
// cut at the end of a truncated document (the entry read so far is
// complete, then the truncation is reported).
func TestReader_CharRefAcrossReads(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		oneByte  bool
		want     string
		err      error
	}{
		{"loc, a byte at a time", `<urlset><url><loc>https://a.test/x?a=1&amp;b=22222222222222222222</loc></url></urlset>`, true,
			"[https://a.test/x?a=1&b=22222222222222222222]", nil},
		{"numeric, a byte at a time", `<urlset><url><loc>https://a.test/x?a=1&#38;b=22222222222222222222</loc></url></urlset>`, true,
			"[https://a.test/x?a=1&b=22222222222222222222]", nil},
		{"bare URL cut after a reference", `<sitemapindex><sitemap>https://a.test/s.xml?a=1&amp;b=2`, false,
			"[https://a.test/s.xml?a=1&b=2]", io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var src io.Reader = strings.NewReader(tc.in)
			if tc.oneByte {
				src = oneByteReader{src}
			}
			r := NewReader(src, nil)
			var got []string
			for r.Next() {
				got = append(got, r.Entry().Loc)
			}
			if fmt.Sprint(got) != tc.want || !errors.Is(r.Err(), tc.err) || (tc.err == nil) != (r.Err() == nil) {
				t.Errorf("got %q, Err %v; want %s, %v", got, r.Err(), tc.want, tc.err)
			}
		})
	}
}

// TestReader_CharRefCutByAnyRead: a character reference is decoded
// wherever a read ends, including inside the reference with text before
// it in the same read (XML 1.0 section 4.1: a reference is one token,
// however the bytes arrive).
func TestReader_CharRefCutByAnyRead(t *testing.T) {
	const want = "https://a.test/some/long/path?a=1&b=2&c=3"
	in := `<urlset><url><loc>https://a.test/some/long/path?a=1&amp;b=2&#38;c=3</loc></url></urlset>`
	for n := 1; n <= len(in); n++ {
		r := NewReader(chunkReader{strings.NewReader(in), n}, nil)
		var got []string
		for r.Next() {
			got = append(got, r.Entry().Loc)
		}
		if len(got) != 1 || got[0] != want || r.Err() != nil {
			t.Errorf("reads of %d bytes: got %q, %v; want [%s]", n, got, r.Err(), want)
		}
	}
}
