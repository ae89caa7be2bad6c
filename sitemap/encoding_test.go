package sitemap

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"unicode/utf16"
)

// utf16Bytes encodes s as UTF-16 with or without a byte order mark.
func utf16Bytes(s string, bigEndian, bom bool) []byte {
	var b bytes.Buffer
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xfeff}, units...)
	}
	for _, u := range units {
		if bigEndian {
			b.WriteByte(byte(u >> 8))
			b.WriteByte(byte(u))
		} else {
			b.WriteByte(byte(u))
			b.WriteByte(byte(u >> 8))
		}
	}
	return b.Bytes()
}

// TestReader_UTF16: a UTF-16 sitemap (either byte order, with or without
// a byte order mark, plain or gzipped, read whole or a byte at a time) is
// read like its UTF-8 twin, never as an empty sitemap.
func TestReader_UTF16(t *testing.T) {
	docs := map[string]string{
		"urlset": `<?xml version="1.0" encoding="UTF-16"?>` + "\n" +
			`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://a.test/caf%C3%A9</loc><lastmod>2024-05-06</lastmod></url>` +
			`<url><loc>https://a.test/é/𝄞?q=1&amp;r=2</loc></url></urlset>`,
		"index": `<?xml version="1.0" encoding="utf-16"?><sitemapindex><sitemap><loc>https://a.test/s1.xml</loc></sitemap></sitemapindex>`,
		"text":  "https://a.test/1\r\nhttps://a.test/2\r\n",
	}
	cases := 0
	for name, doc := range docs {
		want, _ := collect(t, []byte(doc), nil)
		if len(want) == 0 {
			t.Fatalf("%s: the UTF-8 twin reads nothing", name)
		}
		for _, be := range []bool{false, true} {
			for _, bom := range []bool{true, false} {
				for _, zip := range []bool{false, true} {
					in := utf16Bytes(doc, be, bom)
					if zip {
						in = gzBytes(in)
					}
					label := fmt.Sprintf("%s be=%v bom=%v gzip=%v", name, be, bom, zip)
					got, r := collect(t, in, nil)
					if fmt.Sprint(got) != fmt.Sprint(want) || r.Err() != nil {
						t.Errorf("%s: got %q, %v; want %q", label, locs(got), r.Err(), locs(want))
					}
					var all []Entry
					for e, err := range Read(oneByteReader{bytes.NewReader(in)}, nil) {
						if err != nil {
							t.Errorf("%s byte at a time: %v", label, err)
						}
						all = append(all, e)
					}
					if fmt.Sprint(all) != fmt.Sprint(want) {
						t.Errorf("%s byte at a time: got %q", label, locs(all))
					}
					cases++
				}
			}
		}
	}
	t.Logf("%d UTF-16 cases", cases)
}

// TestReader_UTF16DeclaredLatin1: a UTF-16 document (known from its byte
// order mark or zero bytes, XML 1.0 Appendix F) that declares ISO-8859-1 is
// read as the UTF-16 it is: the declaration does not re-decode its text.
func TestReader_UTF16DeclaredLatin1(t *testing.T) {
	doc := `<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>https://a.test/café</loc></url></urlset>`
	for _, be := range []bool{false, true} {
		for _, bom := range []bool{true, false} {
			got, r := collect(t, utf16Bytes(doc, be, bom), nil)
			if fmt.Sprint(locs(got)) != "[https://a.test/café]" || r.Err() != nil {
				t.Errorf("be=%v bom=%v: got %q, %v; want [https://a.test/café]", be, bom, locs(got), r.Err())
			}
		}
	}
}

// TestReader_UTF16MarkOnly: a document that is only a UTF-16 byte order
// mark is an empty UTF-16 document: no root element, a *SyntaxError, not
// an empty text sitemap.
func TestReader_UTF16MarkOnly(t *testing.T) {
	for _, in := range []string{"\xff\xfe", "\xfe\xff"} {
		got, r := collect(t, []byte(in), nil)
		if len(got) != 0 || !errors.Is(r.Err(), ErrSyntax) || r.Format() == FormatText {
			t.Errorf("%q: %q, %v, format %v; want no entry and ErrSyntax", in, locs(got), r.Err(), r.Format())
		}
	}
}

// TestReader_EncodingErrors: an encoding the reader cannot decode is a
// typed error before any entry, never an empty sitemap.
func TestReader_EncodingErrors(t *testing.T) {
	body := `<urlset><url><loc>https://a.test/1</loc></url></urlset>`
	tests := map[string][]byte{
		"shift_jis":  []byte(`<?xml version="1.0" encoding="Shift_JIS"?>` + body),
		"koi8-r":     []byte(`<?xml version='1.0' encoding='KOI8-R'?>` + body),
		"utf-32 LE":  append([]byte("\xff\xfe\x00\x00"), []byte("<\x00\x00\x00")...),
		"utf-32 BE":  append([]byte("\x00\x00\xfe\xff"), []byte("\x00\x00\x00<")...),
		"ebcdic":     []byte(`<?xml version="1.0" encoding="EBCDIC-US"?>` + body),
		"gzip+sjis":  gzBytes([]byte(`<?xml version="1.0" encoding="shift_jis"?>` + body)),
		"gzip+utf32": gzBytes([]byte("\x00\x00\xfe\xff\x00\x00\x00<")),
		// A UTF-32 mark, then ASCII: the document is refused whole,
		// nothing after the mark is read.
		"utf-32 LE mark then ASCII": []byte("\xff\xfe\x00\x00\nhttps://a.test/1\n"),
	}
	for name, in := range tests {
		got, r := collect(t, in, nil)
		var ee *EncodingError
		if len(got) != 0 || !errors.Is(r.Err(), ErrEncoding) || !errors.As(r.Err(), &ee) || ee.Encoding == "" {
			t.Errorf("%s: got %q, err %v; want no entry and an *EncodingError", name, locs(got), r.Err())
		}
	}
	// The encodings it does read.
	for _, enc := range []string{"UTF-8", "us-ascii", "ISO-8859-1", "windows-1252"} {
		got, r := collect(t, []byte(`<?xml version="1.0" encoding="`+enc+`"?>`+body), nil)
		if len(got) != 1 || r.Err() != nil {
			t.Errorf("%s: got %q, %v", enc, locs(got), r.Err())
		}
	}
}

// repeatUTF16 is an endless source of one UTF-16 code unit, little-endian.
type repeatUTF16 struct {
	unit uint16
	odd  bool // the next byte is the unit's high byte
}

func (s *repeatUTF16) Read(p []byte) (int, error) {
	for i := range p {
		if s.odd {
			p[i] = byte(s.unit >> 8)
		} else {
			p[i] = byte(s.unit)
		}
		s.odd = !s.odd
	}
	return len(p), nil
}

// TestUTF16Reader_FixedMemory: the UTF-16 decoder works "in fixed memory"
// (its doc): once built, reads allocate nothing, even when every code unit
// becomes three bytes of UTF-8, the most a unit of the Basic Multilingual
// Plane takes (RFC 3629 section 3: U+0800 to U+FFFF are three bytes).
func TestUTF16Reader_FixedMemory(t *testing.T) {
	d := newUTF16Reader(&repeatUTF16{unit: 0x4e2d}, false) // U+4E2D, "中"
	p := make([]byte, 64<<10)
	want := bytes.Repeat([]byte("中"), 1<<10)
	read := func() {
		n, err := d.Read(p)
		if err != nil || n%3 != 0 || n < len(want) || !bytes.Equal(p[:len(want)], want) {
			t.Fatalf("Read = %d, %v; want UTF-8 of U+4E2D, %d bytes or more", n, err, len(want))
		}
	}
	read()
	if n := testing.AllocsPerRun(20, read); n != 0 {
		t.Errorf("allocations per Read = %v, want 0", n)
	}
}
