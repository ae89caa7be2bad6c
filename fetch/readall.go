package fetch

import (
	"io"
	"net/http"
)

// maxSizeHint is the largest Content-Length readAll trusts to size its
// buffer up front: a larger claim grows the buffer as the bytes arrive.
const maxSizeHint = 256 << 10

// readAll is io.ReadAll with the buffer sized up front by the body's size
// (see bodySize; negative when unknown), plus one byte for the read
// that meets the end: a page is read into one allocation of its size, not
// into a buffer that grows from 512 bytes by copying. A size that is wrong
// only costs a regrowth or a slack.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size < 0 || size > maxSizeHint {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, size+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // the body is longer than it said
		}
	}
}

// bodySize is the size of resp's body when it is known before reading it:
// its Content-Length, or, for a body the challenge sniff read to its end
// (a small page sent chunked), the bytes the sniff read; -1 otherwise.
func bodySize(resp *http.Response) int64 {
	if resp.ContentLength >= 0 {
		return resp.ContentLength
	}
	if pb, ok := resp.Body.(*prefixBody); ok && pb.err == io.EOF {
		return int64(len(pb.head))
	}
	return -1
}
