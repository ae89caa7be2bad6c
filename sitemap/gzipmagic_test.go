package sitemap

import (
	"compress/gzip"
	"errors"
	"fmt"
	"testing"
)

// TestReader_GzipNeedsBothMagicBytes: a gzip member starts with ID1 = 0x1f
// and ID2 = 0x8b (RFC 1952, 2.3.1); a document that has only one of them
// is not gzip and is read as it is.
func TestReader_GzipNeedsBothMagicBytes(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     string
		invalid  int
	}{
		{"ID1 only", "\x1f\nhttps://a.test/1\n", "[https://a.test/1]", 1},
		{"ID2 only", "\x8b\nhttps://a.test/1\n", "[https://a.test/1]", 1},
		{"gzip", string(gzBytes([]byte("https://a.test/1\n"))), "[https://a.test/1]", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, r := collect(t, []byte(tc.in), nil)
			if r.Err() != nil || fmt.Sprint(locs(got)) != tc.want || r.Invalid() != tc.invalid {
				t.Errorf("got %q, Invalid %d, Err %v; want %s, %d, nil", locs(got), r.Invalid(), r.Err(), tc.want, tc.invalid)
			}
		})
	}
}

// TestReader_GzipBadHeaderStops: a document with the gzip magic but an
// invalid header (compression method 0, RFC 1952 allows only 8) is a gzip
// error, and nothing after the header is read as a sitemap.
func TestReader_GzipBadHeaderStops(t *testing.T) {
	in := "\x1f\x8b\x00\x00\x00\x00\x00\x00\x00\xff" + "\nhttps://a.test/1\nhttps://a.test/2\n"
	got, r := collect(t, []byte(in), nil)
	if len(got) != 0 || !errors.Is(r.Err(), gzip.ErrHeader) {
		t.Errorf("got %q, Err %v; want no entries and gzip.ErrHeader", locs(got), r.Err())
	}
	if want := "sitemap: gzipped body: gzip: invalid header"; r.Err() == nil || r.Err().Error() != want {
		t.Errorf("Err %v, want the message %q", r.Err(), want)
	}
}
