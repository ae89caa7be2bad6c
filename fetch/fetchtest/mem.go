package fetchtest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// ErrConnReset is the error the in-memory transport returns for a handler
// that resets the connection (see [Reset]).
var ErrConnReset = errors.New("fetchtest: connection reset by peer")

// RoundTripper returns an in-memory [http.RoundTripper] over the Web's
// handlers: no sockets, so it works inside a [testing/synctest] bubble (the
// handlers' sleeps and the client's waits then run in fake time). Each
// request runs its handler in a goroutine; the response is returned once the
// handler writes its header (or returns), and its body streams from the
// handler. Closing the body, or the end of the request's context, or
// [Web.Close], cancels the handler's request context and fails its writes,
// like a closed connection.
func (w *Web) RoundTripper() http.RoundTripper { return memTransport{w: w} }

type memTransport struct{ w *Web }

func (t memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody {
		defer req.Body.Close()
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(req.Context())
	sreq := req.Clone(ctx)
	sreq.RequestURI = req.URL.RequestURI()
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	sreq.RemoteAddr = "mem"
	sreq.Body = http.NoBody
	sreq.Proto, sreq.ProtoMajor, sreq.ProtoMinor = "HTTP/1.1", 1, 1
	sreq.Header = req.Header.Clone()
	if sreq.Header == nil {
		sreq.Header = http.Header{}
	}

	pr, pw := io.Pipe()
	mw := &memWriter{header: http.Header{}, pw: pw, ready: make(chan struct{}), head: req.Method == http.MethodHead}
	w := t.w
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		cancel()
		return nil, errors.New("fetchtest: web closed")
	}
	w.mu.Unlock()

	// The client giving up (deadline, cancel, body closed) breaks the body
	// off with its context's error, as a real connection would; a body the
	// handler already finished keeps its clean end.
	context.AfterFunc(ctx, func() { _ = pw.CloseWithError(ctx.Err()) })

	done := make(chan struct{})
	go func() {
		defer close(done)
		w.serve(mw, sreq, func(seq int) {
			w.mu.Lock()
			if w.cancels == nil {
				w.cancels = map[int]context.CancelFunc{}
			}
			w.cancels[seq] = cancel
			w.mu.Unlock()
			mw.seq = seq
		})
		w.mu.Lock()
		delete(w.cancels, mw.seq)
		w.mu.Unlock()
		if err := ctx.Err(); err != nil {
			_ = pw.CloseWithError(err)
		}
		mw.finish()
	}()

	select {
	case <-mw.ready:
	case <-req.Context().Done():
		cancel()
		_ = pr.CloseWithError(req.Context().Err())
		<-done
		return nil, req.Context().Err()
	}
	if mw.isReset() {
		cancel()
		_ = pr.Close()
		<-done
		return nil, ErrConnReset
	}
	resp := &http.Response{
		Status:        strconv.Itoa(mw.status) + " " + http.StatusText(mw.status),
		StatusCode:    mw.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        mw.sent,
		ContentLength: -1,
		Request:       req,
		Body:          &memBody{pr: pr, cancel: cancel, done: done},
	}
	if cl, err := strconv.ParseInt(mw.sent.Get("Content-Length"), 10, 64); err == nil {
		resp.ContentLength = cl
	}
	return resp, nil
}

// memBody is the client side of the pipe; Close cancels the handler.
type memBody struct {
	pr     *io.PipeReader
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

func (b *memBody) Read(p []byte) (int, error) {
	n, err := b.pr.Read(p)
	if errors.Is(err, ErrConnReset) {
		err = ErrConnReset
	}
	return n, err
}

func (b *memBody) Close() error {
	b.once.Do(func() {
		_ = b.pr.Close()
		b.cancel()
	})
	return nil
}

// memWriter is the handler side: headers are sent on the first
// WriteHeader/Write (or at the end), the body goes through the pipe.
type memWriter struct {
	header http.Header
	sent   http.Header
	pw     *io.PipeWriter
	ready  chan struct{}
	head   bool
	seq    int

	mu     sync.Mutex // guards status, reset, closed
	status int
	reset  bool
}

func (m *memWriter) Header() http.Header { return m.header }

func (m *memWriter) WriteHeader(code int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.status != 0 || m.reset {
		return
	}
	if code >= 100 && code < 200 {
		return
	}
	m.status = code
	m.sent = m.header.Clone()
	close(m.ready)
}

func (m *memWriter) Write(p []byte) (int, error) {
	m.WriteHeader(http.StatusOK)
	if m.head {
		return len(p), nil
	}
	return m.pw.Write(p)
}

// Flush is a no-op: every Write reaches the reader at once.
func (m *memWriter) Flush() {}

func (m *memWriter) resetConn() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.status != 0 {
		// Headers already sent: the body breaks off.
		_ = m.pw.CloseWithError(ErrConnReset)
		m.reset = true
		return
	}
	m.reset = true
	close(m.ready)
}

func (m *memWriter) isReset() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reset && m.status == 0
}

func (m *memWriter) finish() {
	m.WriteHeader(http.StatusOK)
	_ = m.pw.Close()
}
