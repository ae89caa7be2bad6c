package challenge

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// TestSniff_ContentLengthNeverWidensTheRead: Content-Length only sizes
// Sniff's buffer. Whatever it says (unknown, too small, exactly MaxBytes or
// more), Sniff reads the first min(len(body), MaxBytes) bytes, never more,
// and the caller still reads the whole body.
func TestSniff_ContentLengthNeverWidensTheRead(t *testing.T) {
	for _, tt := range []struct {
		name          string
		contentLength int64
		size          int
	}{
		{"unknown", -1, 3 * MaxBytes},
		{"zero, body longer", 0, 100},
		{"small and true", 100, 100},
		{"MaxBytes-1, body longer", MaxBytes - 1, 3 * MaxBytes},
		{"MaxBytes and true", MaxBytes, MaxBytes},
		{"MaxBytes, body longer", MaxBytes, 3 * MaxBytes},
		{"MaxBytes+1, body longer", MaxBytes + 1, 3 * MaxBytes},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := bytes.Repeat([]byte("abcdefghij"), tt.size/10+1)[:tt.size]
			src := &countingReader{r: bytes.NewReader(body)}
			resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(src), ContentLength: tt.contentLength}
			if _, err := Sniff(resp); err != nil {
				t.Fatalf("Sniff: %v", err)
			}
			if want := min(tt.size, MaxBytes); src.n != want {
				t.Errorf("Sniff read %d bytes, want %d (at most MaxBytes = %d)", src.n, want, MaxBytes)
			}
			got, err := io.ReadAll(resp.Body)
			if err != nil || !bytes.Equal(got, body) {
				t.Errorf("restored body has %d bytes (err %v), want %d", len(got), err, tt.size)
			}
		})
	}
}
