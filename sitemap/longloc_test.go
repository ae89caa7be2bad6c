package sitemap

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestReader_LeadingWhiteSpaceInChunks: white space before the document
// is skipped however the reads cut it.
func TestReader_LeadingWhiteSpaceInChunks(t *testing.T) {
	in := strings.Repeat(" \r\n\t", 40) + "<urlset><url><loc>https://a.test/1</loc></url></urlset>"
	for _, chunk := range []int{1, 2, 3, 5} {
		r := NewReader(chunkReader{strings.NewReader(in), chunk}, nil)
		var got []string
		for r.Next() {
			got = append(got, r.Entry().Loc)
		}
		if fmt.Sprint(got) != "[https://a.test/1]" || r.Err() != nil || r.Format() != FormatURLSet {
			t.Errorf("chunk %d: got %q, %v, %v", chunk, got, r.Err(), r.Format())
		}
	}
}

// TestReader_LongLocSkippedWhole: a <loc> longer than MaxLocBytes is
// skipped whole and counted invalid, however the reads cut it: none of
// its bytes, not even a URL-looking tail, becomes the entry's URL.
func TestReader_LongLocSkippedWhole(t *testing.T) {
	in := "<urlset><url><loc>" + strings.Repeat("a", 31) + "https://a.test/x</loc></url><url><loc>https://a.test/1</loc></url></urlset>"
	for _, chunk := range []int{0, 1, 7} {
		t.Run(fmt.Sprintf("chunk=%d", chunk), func(t *testing.T) {
			var src io.Reader = strings.NewReader(in)
			if chunk > 0 {
				src = chunkReader{src, chunk}
			}
			r := NewReader(src, &Options{MaxLocBytes: 30})
			var got []string
			for r.Next() {
				got = append(got, r.Entry().Loc)
			}
			if fmt.Sprint(got) != "[https://a.test/1]" || r.Invalid() != 1 || r.Err() != nil {
				t.Errorf("got %q, Invalid %d, Err %v; want [https://a.test/1], 1", got, r.Invalid(), r.Err())
			}
		})
	}
}
