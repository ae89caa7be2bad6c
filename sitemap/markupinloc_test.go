package sitemap

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestReader_MarkupInsideLoc: inside a <loc>, a comment or processing
// instruction is not part of the URL and CDATA is literal text (so an
// "&amp;" in CDATA stays an unexpanded reference and the URL is skipped as
// double-escaped), however the reads of the source cut the markup (whole, or n bytes
// per read).
func TestReader_MarkupInsideLoc(t *testing.T) {
	for _, tc := range []struct {
		name, loc string
		want      string
		invalid   int
	}{
		{"comment", "https://a.test/1<!-- a long comment, longer than a read -->", "[https://a.test/1]", 0},
		{"processing instruction", "https://a.test/1<?pi a long instruction, longer than a read ?>", "[https://a.test/1]", 0},
		{"declaration", "https://a.test/1<!DOCTYPE x>", "[https://a.test/1]", 0},
		{"CDATA", "https://a.test/<![CDATA[x?a=1&b=2]]>", "[https://a.test/x?a=1&b=2]", 0},
		{"CDATA holding a reference", "<![CDATA[https://a.test/x?a=1&amp;b=2]]>", "[]", 1},
	} {
		for _, chunk := range []int{0, 1, 3, 7, 13} {
			t.Run(fmt.Sprintf("%s/chunk=%d", tc.name, chunk), func(t *testing.T) {
				var src io.Reader = strings.NewReader("<urlset><url><loc>" + tc.loc + "</loc></url></urlset>")
				if chunk > 0 {
					src = chunkReader{src, chunk}
				}
				r := NewReader(src, nil)
				got := []string{}
				for r.Next() {
					got = append(got, r.Entry().Loc)
				}
				if fmt.Sprint(got) != tc.want || r.Invalid() != tc.invalid || r.Err() != nil {
					t.Errorf("got %q, Invalid %d, Err %v; want %s, %d", got, r.Invalid(), r.Err(), tc.want, tc.invalid)
				}
			})
		}
	}
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }
