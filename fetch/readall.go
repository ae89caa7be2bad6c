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
// the page's own (sniff, prefixBody.take), or else one sized by bodySize,
// plus one byte for the read that meets the end. A size that is wrong only
// costs a regrowth or a slack.
func readBody(resp *http.Response) ([]byte, error) {
	r := resp.Body
	var b []byte
	if pb := prefixOf(r); pb != nil {
		b = pb.take()
	}
	switch size := bodySize(resp); {
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

// prefixOf returns the challenge sniff's prefixBody that body is, or that
// a cancelBody wraps; nil if there is none.
func prefixOf(body io.Reader) *prefixBody {
	if cb, ok := body.(*cancelBody); ok {
		body = cb.ReadCloser
	}
	pb, _ := body.(*prefixBody)
	return pb
}

// bodySize is the size of resp's body when it is known before reading it:
// its Content-Length, or, for a body the challenge sniff read to its end
// (a small page sent chunked), the bytes the sniff read; -1 otherwise.
func bodySize(resp *http.Response) int64 {
	if resp.ContentLength >= 0 {
		return resp.ContentLength
	}
	if pb := prefixOf(resp.Body); pb != nil && pb.err == io.EOF {
		return int64(len(pb.head))
	}
	return -1
}
