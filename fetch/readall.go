package fetch

import (
	"io"
	"net/http"
)

// maxSizeHint is the largest Content-Length readBody trusts to size its
// buffer up front: a larger claim grows the buffer as the bytes arrive.
const maxSizeHint = 256 << 10

// readBody reads resp's body whole. A page is read into one allocation of
// its size, not into a buffer that grows from 512 bytes by copying: the
// buffer the challenge sniff read the start of the body into, when it is
// the page's own (sniff, prefixBody.take), or else one sized by the body's
// Content-Length, plus one byte for the read that meets the end. A size
// that is wrong only costs a regrowth or a slack.
func readBody(resp *http.Response) ([]byte, error) {
	r := resp.Body
	b := sniffed(r)
	switch size := resp.ContentLength; {
	case b != nil:
	case size < 0 || size > maxSizeHint:
		return io.ReadAll(r)
	default:
		b = make([]byte, 0, size+1)
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // the body is longer than it said
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
	}
}

// sniffed returns the start of body that the challenge sniff read into the
// page's own buffer, taking it over (nil if there is none): body is the
// sniff's prefixBody, or a cancelBody around it.
func sniffed(body io.Reader) []byte {
	if cb, ok := body.(*cancelBody); ok {
		body = cb.ReadCloser
	}
	if pb, ok := body.(*prefixBody); ok {
		return pb.take()
	}
	return nil
}
