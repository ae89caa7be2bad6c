package botkit

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// The bounds of the files a bot reads (its network inputs are bounded by
// its fetch.Bot limits: pages, robots.txt, sitemaps).
const (
	MaxKeyBytes       = 64 << 10 // -key: an Ed25519 PKCS#8 PEM key is about 120 bytes
	MaxListingsBytes  = 64 << 20 // -listings: about 500,000 rows
	MaxBlockListBytes = 16 << 20 // -blocklist: about a million domains
)

// ErrInputTooLarge is the error of reading past the bound of an input file
// opened with [OpenBounded].
var ErrInputTooLarge = errors.New("input file too large")

// OpenBounded opens the file at path for reading at most max bytes: a read
// past max fails with an error that matches ErrInputTooLarge and gives the
// bound (so -listings /dev/zero stops there, with a clear message, instead
// of reading forever). The caller names the file in its message.
func OpenBounded(path string, max int64) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &boundedFile{f: f, left: max, max: max}, nil
}

type boundedFile struct {
	f    *os.File
	left int64
	max  int64
}

func (b *boundedFile) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// At the bound: one more byte means the file is over it.
		var one [1]byte
		if n, err := b.f.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, fmt.Errorf("%w (over %d bytes)", ErrInputTooLarge, b.max)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.f.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedFile) Close() error { return b.f.Close() }
