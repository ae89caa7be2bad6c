// Package iox holds reading helpers the standard library lacks.
package iox

import "io"

// ReadFull reads into buf until it is full or r fails, and returns r's
// error as r gave it: unlike io.ReadFull, a body that ended (io.EOF) stays
// distinct from one that broke off (io.ErrUnexpectedEOF from net/http).
func ReadFull(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
