package iox

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadFull(t *testing.T) {
	broke := errors.New("connection reset")
	for _, tc := range []struct {
		name string
		r    io.Reader
		size int
		n    int
		err  error
	}{
		{"fills", iotest.OneByteReader(strings.NewReader("hello world")), 5, 5, nil},
		{"ends", strings.NewReader("hi"), 5, 2, io.EOF},
		{"breaks off", io.MultiReader(strings.NewReader("hi"), iotest.ErrReader(broke)), 5, 2, broke},
		{"empty buffer", iotest.ErrReader(broke), 0, 0, nil},
	} {
		buf := make([]byte, tc.size)
		n, err := ReadFull(tc.r, buf)
		if n != tc.n || err != tc.err {
			t.Errorf("%s: %d, %v; want %d, %v", tc.name, n, err, tc.n, tc.err)
		}
	}
}
