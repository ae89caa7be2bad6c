package fetch

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/goodbot-go/goodbot/challenge"
)

// inspect turns challenge pages and, for HTML-only bots, other content
// types into errors. It runs above politeness, so that the pacing sees the
// answer as it came.
func (c *chain) inspect(resp *http.Response, pb *prefixBody) error {
	if resp.Request.Method == http.MethodHead || resp.StatusCode == http.StatusNotModified ||
		(resp.StatusCode >= 300 && resp.StatusCode < 400) {
		return nil
	}
	if v := c.sniff(resp, pb); v.Blocked {
		return challengeError(resp.Request.URL, resp.StatusCode, v)
	}
	if c.htmlOnly && resp.StatusCode >= 200 && resp.StatusCode < 300 && !isMachineFile(resp.Request.Context()) {
		if ct := resp.Header.Get("Content-Type"); ct != "" && !isHTML(ct) {
			return &Error{Outcome: NotHTML, URL: resp.Request.URL.Redacted(), Status: resp.StatusCode,
				Err: fmt.Errorf("fetch: content type %q", ct)}
		}
	}
	if err := checkPayment(resp); err != nil {
		return err
	}
	return c.checkHeaderUsage(resp)
}

// challengeError is the error for a challenge page at u, answered with
// status, whose verdict is v.
func challengeError(u *url.URL, status int, v challenge.Verdict) *Error {
	s := u.Redacted()
	return &Error{Outcome: challengeOutcome(v), URL: s, Status: status,
		Err: &challenge.ChallengeError{URL: s, Verdict: v}}
}

// challengeOutcome is the outcome of a challenge page: RateLimited for a
// vendor's rate-limit page (Cloudflare 1015, Wordfence's limit: the site
// says "later", so the page is worth fetching again and Bot.Once gives its
// mark back), Blocked for every other kind (a JS challenge, a CAPTCHA, a
// block: the bot is refused, waiting does not help). Both carry the
// *challenge.ChallengeError, and neither returns the page's body.
func challengeOutcome(v challenge.Verdict) Outcome {
	if v.Kind == challenge.RateLimit {
		return RateLimited
	}
	return Blocked
}

// sniffSizes are the sizes of sniff's pooled buffers, smallest first, the
// last challenge.MaxBytes: a body is read into the smallest that holds it,
// so a 3 KB page holds a 4 KiB buffer while it is read, not a 64 KiB one.
var sniffSizes = [...]int{4 << 10, 16 << 10, challenge.MaxBytes}

// sniffBufs holds sniff's buffers, one pool per size of sniffSizes.
var sniffBufs [len(sniffSizes)]sync.Pool

// getSniffBuf returns a buffer of sniffSizes[class] bytes.
func getSniffBuf(class int) *[]byte {
	if bp, ok := sniffBufs[class].Get().(*[]byte); ok {
		return bp
	}
	b := make([]byte, sniffSizes[class])
	return &b
}

// putSniffBuf gives a buffer of getSniffBuf back to its pool.
func putSniffBuf(bp *[]byte) {
	for i, size := range sniffSizes {
		if cap(*bp) == size {
			sniffBufs[i].Put(bp)
			return
		}
	}
}

// sniffClass is the class of the smallest buffer holding a body of
// contentLength bytes and the EOF after it; the smallest for an unknown
// length (-1).
func sniffClass(contentLength int64) int {
	for i, size := range sniffSizes {
		if contentLength < int64(size) {
			return i
		}
	}
	return len(sniffSizes) - 1
}

// sniff is challenge.Sniff with a pooled buffer: it reads at most
// challenge.MaxBytes of the body, runs the detector, and puts the bytes read
// back in front of the rest of the body (copying only what was read), in
// pb. The buffer starts at the size the Content-Length asks for (the
// smallest when unknown) and moves to the next size only when the body
// fills it. The read's error comes back after those bytes as it was: io.EOF
// for a body that ended, anything else (io.ErrUnexpectedEOF for a body cut
// short of its Content-Length or its last chunk) for one that did not.
func (c *chain) sniff(resp *http.Response, pb *prefixBody) challenge.Verdict {
	class := sniffClass(resp.ContentLength)
	bp := getSniffBuf(class)
	n, err := readFull(resp.Body, *bp)
	for err == nil && class < len(sniffSizes)-1 { // full, and the body may go on
		class++
		next := getSniffBuf(class)
		copy(*next, (*bp)[:n])
		putSniffBuf(bp)
		bp = next
		var m int
		m, err = readFull(resp.Body, (*bp)[n:])
		n += m
	}
	buf := *bp
	v := c.detector.Detect(resp.StatusCode, resp.Header, buf[:n])
	if v.Blocked {
		putSniffBuf(bp)
		return v
	}
	if n == 0 {
		putSniffBuf(bp)
		bp = nil
	}
	*pb = prefixBody{buf: bp, head: buf[:n], err: err, ReadCloser: resp.Body}
	resp.Body = pb
	return v
}

// readFull is io.ReadFull without its translation of errors: it reads into
// buf until buf is full or r fails, and returns r's error as r gave it.
// (io.ReadFull reports a body that ended early and one that broke off
// alike, as io.ErrUnexpectedEOF.)
func readFull(r io.Reader, buf []byte) (int, error) {
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

// prefixBody replays head, then err (if the sniff hit one), then the rest.
// head lives in a pooled buffer (buf), given back by the Read that empties
// head; a body closed before that leaves the buffer to the garbage
// collector (Close may run alongside a Read, so it does not touch them).
type prefixBody struct {
	buf  *[]byte // nil once given back
	head []byte
	err  error
	io.ReadCloser
}

func (b *prefixBody) Read(p []byte) (int, error) {
	if len(b.head) > 0 {
		n := copy(p, b.head)
		b.head = b.head[n:]
		if len(b.head) == 0 {
			b.free()
		}
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.ReadCloser.Read(p)
}

func (b *prefixBody) free() {
	if b.buf != nil {
		putSniffBuf(b.buf)
		b.buf = nil
	}
}

func isHTML(ct string) bool {
	// The common spellings, without the allocations of a full parse.
	if strings.EqualFold(ct, "text/html") || strings.EqualFold(ct, "text/html; charset=utf-8") {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}
