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

	"github.com/goodbot-go/goodbot/internal/iox"
)

// inspect turns challenge pages and, for HTML-only bots, other content
// types into errors (an answer to HEAD is judged by its status and
// headers). It runs above politeness, so that the pacing sees the
// answer as it came. own is sniff's: the body is read whole by a Fetcher.
func (c *chain) inspect(resp *http.Response, pb *prefixBody, own bool) error {
	if resp.StatusCode == http.StatusNotModified || (resp.StatusCode >= 300 && resp.StatusCode < 400) {
		return nil
	}
	if resp.Request.Method == http.MethodHead {
		// No body to read: a challenge its status and headers show
		// (Cf-Mitigated: challenge) is still one.
		if v := c.detector.Detect(resp.StatusCode, resp.Header, nil); v.Blocked {
			return challengeError(resp.Request.URL, resp.StatusCode, v)
		}
		return nil
	}
	if v := c.sniff(resp, pb, own); v.Blocked {
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
//
// With own set (a Fetcher's Get, which reads the whole body) and a
// Content-Length of at most maxSizeHint, the buffer is not pooled but the
// page body's own, of the body's length and one byte more: Get reads the
// rest of the body after the bytes sniffed, in the same buffer
// (prefixBody.take), instead of copying them out. A body of unknown length
// is sniffed in a pooled buffer still, and copied out into one of its
// exact size when the sniff read it to its end (bodySize): an own buffer
// would have to be of a pooled size, and the bytes allocated beyond the
// page cost a crawl more (in garbage collection) than the copy.
func (c *chain) sniff(resp *http.Response, pb *prefixBody, own bool) challenge.Verdict {
	own = own && resp.ContentLength >= 0 && resp.ContentLength <= maxSizeHint
	var bp *[]byte // buf's pool entry; nil for a buffer of the page's own
	// grow returns a buffer of size bytes that starts with old[:n].
	grow := func(old []byte, n, size int) []byte {
		if own {
			next := make([]byte, size)
			copy(next, old[:n])
			return next
		}
		next := getSniffBuf(sniffClass(int64(size) - 1))
		copy(*next, old[:n])
		if bp != nil {
			putSniffBuf(bp)
		}
		bp = next
		return *next
	}
	size := sniffSizes[sniffClass(resp.ContentLength)]
	if own {
		size = int(resp.ContentLength) + 1 // the whole body and the read that meets its end
	}
	buf := grow(nil, 0, size)
	n, err := iox.ReadFull(resp.Body, buf[:min(len(buf), challenge.MaxBytes)])
	for err == nil && n < challenge.MaxBytes { // full, and the body may go on
		buf = grow(buf, n, sniffSizes[sniffClass(int64(len(buf)))])
		var m int
		m, err = iox.ReadFull(resp.Body, buf[n:min(len(buf), challenge.MaxBytes)])
		n += m
	}
	v := c.detector.Detect(resp.StatusCode, resp.Header, buf[:n])
	if (v.Blocked || n == 0) && bp != nil {
		putSniffBuf(bp)
		bp = nil
	}
	if v.Blocked {
		return v
	}
	*pb = prefixBody{buf: bp, own: own, head: buf[:n], err: err, ReadCloser: resp.Body}
	resp.Body = pb
	return v
}

// prefixBody replays head, then err (if the sniff hit one), then the rest.
// head lives in a pooled buffer (buf), given back by the Read that empties
// head; a body closed before that leaves the buffer to the garbage
// collector (Close may run alongside a Read, so it does not touch them).
// When own is set, head is the start of the page body's own buffer, for
// take.
type prefixBody struct {
	buf  *[]byte // nil once given back
	own  bool
	head []byte
	err  error
	io.ReadCloser
}

// take hands over head, with the room after it in its buffer, when the
// buffer is the page's own (nil otherwise): the body's next Read returns
// what comes after head.
func (b *prefixBody) take() []byte {
	if !b.own {
		return nil
	}
	h := b.head
	b.head = nil
	return h
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
