package sitemap

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

// scriptedReader returns its parts one Read at a time, each with its error.
type scriptedReader struct {
	parts []string
	errs  []error
	calls int
}

func (s *scriptedReader) Read(p []byte) (int, error) {
	s.calls++
	if len(s.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.parts[0])
	s.parts[0] = s.parts[0][n:]
	err := s.errs[0]
	if s.parts[0] == "" {
		s.parts, s.errs = s.parts[1:], s.errs[1:]
	} else {
		err = nil
	}
	return n, err
}

// TestReader_SourceErrorStops: the first error of the underlying reader
// ends the document: the entries before it are yielded, Err wraps it, and
// nothing the source would give after it is read.
func TestReader_SourceErrorStops(t *testing.T) {
	errReset := errors.New("connection reset")
	for _, text := range []bool{false, true} {
		t.Run(fmt.Sprintf("text=%v", text), func(t *testing.T) {
			parts := []string{"<urlset><url><loc>https://a.test/1</loc></url>", "<url><loc>https://a.test/2</loc></url></urlset>"}
			if text {
				parts = []string{"https://a.test/1\n", "https://a.test/2\n"}
			}
			src := &scriptedReader{parts: parts, errs: []error{errReset, nil}}
			r := NewReader(src, nil)
			var got []string
			for r.Next() {
				got = append(got, r.Entry().Loc)
			}
			if fmt.Sprint(got) != "[https://a.test/1]" || !errors.Is(r.Err(), errReset) {
				t.Errorf("got %q, Err %v; want [https://a.test/1] and the source's error", got, r.Err())
			}
		})
	}
}

// TestReader_NoProgress: a source that keeps returning 0 bytes and no
// error ends the reading with io.ErrNoProgress (as bufio.Reader does), not
// a busy loop.
func TestReader_NoProgress(t *testing.T) {
	for _, prefix := range []string{"", "<urlset><url><loc>https://a.test/1", "https://a.test/1"} {
		t.Run(prefix, func(t *testing.T) {
			src := &stallingReader{rest: prefix}
			r := NewReader(src, nil)
			for r.Next() {
			}
			if !errors.Is(r.Err(), io.ErrNoProgress) {
				t.Errorf("Err %v after %d reads, want io.ErrNoProgress", r.Err(), src.calls)
			}
		})
	}
}

// stallingReader returns rest, then 0, nil forever (or an error after
// 100,000 calls, so that a reader that never gives up fails the test
// instead of hanging it).
type stallingReader struct {
	rest  string
	calls int
}

func (s *stallingReader) Read(p []byte) (int, error) {
	s.calls++
	if s.calls > 100_000 {
		return 0, errors.New("stallingReader: called 100,000 times")
	}
	n := copy(p, s.rest)
	s.rest = s.rest[n:]
	return n, nil
}
