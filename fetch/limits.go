package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// budget is the time limit of one fetch, redirects included. It starts when
// the first request is sent.
type budget struct {
	timeout time.Duration
	mu      sync.Mutex // guards end
	end     time.Time
}

type budgetKey struct{}

// budgetCtx is context.WithValue(ctx, budgetKey{}, b) with, in the same
// allocation, the budget itself on a fetch's first hop and the hop's body
// wrappers (the limits layer's, when the request reaches it with this very
// context, and sniff's).
type budgetCtx struct {
	context.Context
	b       *budget
	own     budget
	lim     limitedBody
	limUsed bool
	pre     prefixBody
}

func (c *budgetCtx) Value(key any) any {
	if key == (budgetKey{}) {
		return c.b
	}
	return c.Context.Value(key)
}

// start fixes the deadline on the first call and returns it.
func (b *budget) start() (time.Time, bool) {
	if b == nil || b.timeout <= 0 {
		return time.Time{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.end.IsZero() {
		b.end = time.Now().Add(b.timeout)
	}
	return b.end, true
}

// deadline returns the deadline if the budget has started.
func (b *budget) deadline() (time.Time, bool) {
	if b == nil {
		return time.Time{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.end, !b.end.IsZero()
}

// limitsTransport is the innermost layer: it starts the fetch's time budget
// when a request leaves, applies it to the request and its body, caps the
// body, and keeps net/http from resending a request on its own.
type limitsTransport struct {
	base     http.RoundTripper
	maxBody  int64
	h1       sync.Map // URL host -> struct{}: the host's last answer came over HTTP/1.x
	identity []string // {"identity"}, see sendOnce

	// watch reports a Bot.Transport's resends (resend.go); nil for the
	// chain's own base transport.
	watch *slog.Logger
}

// # No silent resends
//
// net/http's Transport resends a GET or HEAD by itself when a reused HTTP/1
// keep-alive connection fails after the request was written (the server
// reset or closed it before answering): the host then gets a second
// request at once, below the politeness gap and unseen by the pacing
// above. It does so only for a "replayable" request: one whose Body is nil
// or http.NoBody, or has a GetBody to make it again. So over HTTP/1 no
// request leaves replayable (the chain sends no other methods, see
// ErrMethod): one with a body of its own leaves with GetBody nil (its
// copy's; the caller's request is not changed), and a bodiless one leaves
// with Body set to sendOnce, an empty body without GetBody (http.NewRequest
// gives a GetBody to the empty body it makes of an empty reader). The
// failure comes back as an error instead, which politeness counts and paces
// like any other. Nothing changes on the wire: a sendOnce request also says
// TransferEncoding "identity", with which net/http writes an unknown-length
// body as it comes, without Content-Length or chunking (Request.Write
// documents it; transfer.go), and the body is empty. Without "identity",
// net/http would probe the body with a Read in a goroutine of its own on
// every request (probeRequestBody), to the same effect at more cost.
//
// HTTP/2 differs: it resends only requests the server did not process
// (REFUSED_STREAM, GOAWAY before the stream), which is no breach, but it
// would send a non-nil body as an empty DATA frame. So only a host whose
// last answer came over HTTP/1.x gets this treatment. The first request to
// a host goes out unchanged: it finds no connection of this chain to
// reuse, and net/http never resends on a fresh connection.

// sendOnce is the empty, non-rewindable request body described above.
type sendOnce struct{}

func (sendOnce) Read([]byte) (int, error) { return 0, io.EOF }
func (sendOnce) Close() error             { return nil }

// WriteTo lets net/http's io.Copy of the body skip its 32 KB buffer.
func (sendOnce) WriteTo(io.Writer) (int64, error) { return 0, nil }

// noResend reports how req leaves so that net/http cannot resend it: with a
// sendOnce body (once) or without its GetBody (unwind); and whether its
// host's last answer came over HTTP/1.x (neither is needed otherwise).
func (t *limitsTransport) noResend(req *http.Request) (once, unwind, h1 bool) {
	_, h1 = t.h1.Load(req.URL.Host)
	switch {
	case !h1:
		return false, false, false
	case req.Body != nil && req.Body != http.NoBody:
		return false, req.GetBody != nil, true
	case req.Method != http.MethodGet && req.Method != http.MethodHead && req.Method != "":
		return false, false, true // not sent by the chain (ErrMethod), nor resent by net/http
	}
	return true, false, true
}

// noteProto remembers whether req's host answers over HTTP/1.x; was is
// what noResend found.
func (t *limitsTransport) noteProto(req *http.Request, resp *http.Response, was bool) {
	switch is := resp.ProtoMajor == 1; {
	case is && !was:
		t.h1.Store(req.URL.Host, struct{}{})
	case was && !is:
		t.h1.Delete(req.URL.Host)
	}
}

func (t *limitsTransport) CloseIdleConnections() { closeIdle(t.base) }

func (t *limitsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// Straight from botTransport (the layers between kept its context),
	// the request has its budget at hand, and its limitedBody is free.
	hop, _ := req.Context().(*budgetCtx)
	var b *budget
	if hop != nil {
		b = hop.b
	} else {
		b, _ = req.Context().Value(budgetKey{}).(*budget)
	}
	ctx, cancel := req.Context(), context.CancelFunc(nop)
	deadline, timed := b.start()
	once, unwind, h1 := t.noResend(req)
	var sends *sendWatch
	if t.watch != nil {
		sends = new(sendWatch)
		ctx = sends.watch(ctx)
	}
	if timed || once || unwind || sends != nil {
		if timed {
			ctx, cancel = context.WithDeadline(ctx, deadline)
		}
		req = req.WithContext(ctx) // a shallow copy: the caller's request is not changed
		if once {
			req.Body, req.GetBody, req.TransferEncoding = sendOnce{}, nil, t.identity
		}
		if unwind {
			req.GetBody = nil
		}
	}
	resp, err := t.base.RoundTrip(req)
	if sends != nil {
		sends.report(t.watch, req)
	}
	if err != nil {
		timedOut := timed && errors.Is(ctx.Err(), context.DeadlineExceeded)
		cancel()
		switch {
		case timedOut:
			return nil, &Error{Outcome: Timeout, URL: req.URL.Redacted(), Err: err}
		case headerTooLarge(err):
			return nil, &Error{Outcome: TooLarge, URL: req.URL.Redacted(), Err: fmt.Errorf("%w: %w", ErrHeaderTooLarge, err)}
		}
		return nil, err
	}
	t.noteProto(req, resp, h1)
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	var lb *limitedBody
	if hop != nil && !hop.limUsed {
		hop.limUsed = true
		lb = &hop.lim
	} else {
		lb = new(limitedBody)
	}
	var more int64 // what a machine file may read past the limit
	if t.maxBody >= 0 && t.maxBody < MachineFileMaxBytes {
		more = MachineFileMaxBytes - t.maxBody
	}
	*lb = limitedBody{rc: resp.Body, left: t.maxBody, more: more, ctx: ctx, timed: timed, cancel: cancel, url: req.URL}
	resp.Body = lb
	if c, ok := robotsChain(req, hop); ok && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		resp.Body = &robotsTee{ReadCloser: resp.Body, c: c, key: politeness.HostKey(req.URL)}
	}
	return resp, nil
}

// headerTooLarge reports whether err is net/http's refusal of an answer
// whose header passed the transport's MaxResponseHeaderBytes: over HTTP/1
// a message (net/http exports no sentinel for it), over HTTP/2 the header
// list passing the size the transport advertised.
func headerTooLarge(err error) bool {
	s := err.Error()
	return strings.Contains(s, "server response headers exceeded") || strings.Contains(s, "response header list larger than advertised limit")
}

// robotsChain returns the chain of a robots.txt request (robotsTransport's
// context value). hop is req's context when botTransport made it, which
// no robots.txt request's is: it is not looked into then.
func robotsChain(req *http.Request, hop *budgetCtx) (*chain, bool) {
	if hop != nil {
		return nil, false
	}
	c, ok := req.Context().Value(robotsReqKey{}).(*chain)
	return c, ok
}

// limitedBody stops at the byte limit, closing the connection, and reports a
// budget that ran out while reading as Timeout.
type limitedBody struct {
	rc     io.ReadCloser
	left   int64 // -1: no limit
	more   int64 // added to left at the limit for a request under WithMachineFile, once
	ctx    context.Context
	timed  bool
	cancel context.CancelFunc
	url    *url.URL
	err    error
	once   sync.Once
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left == 0 && b.more > 0 {
		// At the bot's limit: a machine file goes on to MachineFileMaxBytes
		// (looked up only here, for the few bodies that reach the limit).
		if isMachineFile(b.ctx) {
			b.left = b.more
		}
		b.more = 0
	}
	if b.left == 0 {
		// At the limit: is there more? Closing unread drops the connection.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n == 0 && err != nil {
			return 0, b.fail(err)
		}
		b.err = &Error{Outcome: TooLarge, URL: b.url.Redacted(), Err: ErrTooLarge}
		b.Close()
		return 0, b.err
	}
	if b.left > 0 && int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	if b.left > 0 {
		b.left -= int64(n)
	}
	if err != nil {
		return n, b.fail(err)
	}
	return n, nil
}

func (b *limitedBody) fail(err error) error {
	if err == io.EOF {
		return err
	}
	if b.timed && errors.Is(b.ctx.Err(), context.DeadlineExceeded) {
		b.err = &Error{Outcome: Timeout, URL: b.url.Redacted(), Err: err}
		return b.err
	}
	return err
}

func (b *limitedBody) Close() error {
	var err error
	b.once.Do(func() {
		err = b.rc.Close()
		b.cancel()
	})
	return err
}

func nop() {}

// withDeadline is context.WithDeadline; the caller hands the cancel func to
// the response body (cancelBody) or calls it on the error paths.
func withDeadline(ctx context.Context, d time.Time) (context.Context, func()) {
	return context.WithDeadline(ctx, d)
}

// cancelBody releases a context when the body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel func()
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
