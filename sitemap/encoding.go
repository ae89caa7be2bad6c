package sitemap

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// EncodingError reports a document in a character encoding the reader
// cannot decode: UTF-32, or an XML declaration naming an encoding other
// than UTF-8, US-ASCII, ISO-8859-1 / windows-1252 or UTF-16. Nothing is
// read from such a document (an empty read would look like an empty
// sitemap). It matches ErrEncoding.
//
// It is plain data; a zero EncodingError is never returned.
type EncodingError struct {
	Encoding string // as declared or detected, at most 64 bytes kept
}

func (e *EncodingError) Error() string {
	return "sitemap: unsupported character encoding " + strconv.Quote(e.Encoding)
}

func (e *EncodingError) Unwrap() error { return ErrEncoding }

func newEncodingError(name string) *EncodingError {
	if len(name) > 64 {
		name = name[:64]
	}
	return &EncodingError{Encoding: name}
}

// detectUTF16 looks at the first bytes of br for a UTF-16 or UTF-32 byte
// order mark, or for the zero bytes that UTF-16 without a mark puts
// between ASCII characters (XML 1.0 Appendix F). It consumes a mark it
// finds and returns a reader of UTF-8, or an *EncodingError for UTF-32.
// Anything else is returned unchanged.
func detectUTF16(br *bufio.Reader) (io.Reader, error) {
	b, _ := br.Peek(4)
	switch {
	case len(b) == 4 && (string(b) == "\x00\x00\xfe\xff" || string(b) == "\xff\xfe\x00\x00"):
		return nil, newEncodingError("UTF-32")
	case len(b) >= 2 && b[0] == 0xff && b[1] == 0xfe:
		_, _ = br.Discard(2)
		return newUTF16Reader(br, false), nil
	case len(b) >= 2 && b[0] == 0xfe && b[1] == 0xff:
		_, _ = br.Discard(2)
		return newUTF16Reader(br, true), nil
	case len(b) == 4 && b[0] != 0 && b[1] == 0 && b[2] != 0 && b[3] == 0:
		return newUTF16Reader(br, false), nil
	case len(b) == 4 && b[0] == 0 && b[1] != 0 && b[2] == 0 && b[3] != 0:
		return newUTF16Reader(br, true), nil
	}
	return br, nil
}

// utf16Reader converts a UTF-16 stream to UTF-8 as it is read, in fixed
// memory: an unpaired surrogate or a final odd byte becomes U+FFFD. Every
// two bytes in give at least one byte out, so a bound on the UTF-8 read
// bounds the UTF-16 read to twice as much.
type utf16Reader struct {
	src  io.Reader
	be   bool
	in   [4 << 10]byte
	n    int    // undecoded bytes at the start of in
	buf  []byte // storage of out
	out  []byte // decoded bytes not yet returned
	err  error  // the source's error, returned once out is drained
	done bool   // the source ended: a cut sequence is final
}

func newUTF16Reader(src io.Reader, bigEndian bool) *utf16Reader {
	d := &utf16Reader{src: src, be: bigEndian}
	d.buf = make([]byte, 0, 3*len(d.in)/2+utf8.UTFMax)
	return d
}

// Read implements io.Reader. It may return 0, nil when the source did.
func (d *utf16Reader) Read(p []byte) (int, error) {
	if len(d.out) == 0 {
		if d.err != nil {
			return 0, d.err
		}
		n, err := d.src.Read(d.in[d.n:])
		d.n += n
		if err != nil {
			d.err, d.done = err, true
		}
		d.decode()
		if len(d.out) == 0 {
			return 0, d.err
		}
	}
	n := copy(p, d.out)
	d.out = d.out[n:]
	return n, nil
}

func (d *utf16Reader) unit(b []byte) uint16 {
	if d.be {
		return uint16(b[0])<<8 | uint16(b[1])
	}
	return uint16(b[1])<<8 | uint16(b[0])
}

// decode converts the complete code units of d.in[:d.n] into d.out and
// keeps a cut surrogate pair or odd byte for the next read.
func (d *utf16Reader) decode() {
	b := d.in[:d.n]
	out := d.buf[:0]
	i := 0
	for i+1 < len(b) {
		r := rune(d.unit(b[i:]))
		if utf16.IsSurrogate(r) {
			if r >= 0xdc00 { // a low surrogate alone
				r = utf8.RuneError
			} else if i+3 < len(b) {
				if pair := utf16.DecodeRune(r, rune(d.unit(b[i+2:]))); pair != utf8.RuneError {
					r = pair
					i += 2
				} else {
					r = utf8.RuneError
				}
			} else if !d.done {
				break // the pair's second half has not arrived yet
			} else {
				r = utf8.RuneError
			}
		}
		out = utf8.AppendRune(out, r)
		i += 2
	}
	d.n = copy(d.in[:], b[i:])
	if d.done && d.n > 0 {
		out = utf8.AppendRune(out, utf8.RuneError)
		d.n = 0
	}
	d.out = out
}

// encodingKind sorts an XML declaration's encoding name: latin1 for the
// ISO-8859-1 family (windows-1252 is read as ISO-8859-1), utf16 for
// UTF-16 (decoded when a mark or zero bytes showed it), ok for UTF-8 and
// US-ASCII, bad for anything else.
func encodingKind(name string) string {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "utf-8", "utf8", "us-ascii", "ascii", "iso-646-us", "":
		return "ok"
	case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "windows-1252", "cp1252":
		return "latin1"
	case "utf-16", "utf16", "utf-16le", "utf-16be", "ucs-2":
		return "utf16"
	}
	return "bad"
}
