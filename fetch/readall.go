package fetch

import "io"

// maxSizeHint is the largest Content-Length readAll trusts to size its
// buffer up front: a larger claim grows the buffer as the bytes arrive.
const maxSizeHint = 256 << 10

// readAll is io.ReadAll with the buffer sized up front by the body's
// Content-Length (size; negative when unknown), plus one byte for the read
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
