// Package fetchtest is a scripted test web for bots: several virtual hosts
// served by one handler, reachable either over loopback ([httptest.Server]s
// for http and https plus a dialer that maps test host names such as
// "a.test" to them, so the client sends real requests with real Host
// headers) or in memory (an [http.RoundTripper] over the same handlers, no
// sockets, usable inside a [testing/synctest] bubble where a 60 s wait takes
// no real time).
//
// Every request is recorded (host, path, method, headers, start and end time,
// status, bytes written) and checkers fail a test on a broken promise: two
// requests overlapping on one host, a gap below the delay, a disallowed path
// fetched, a request during a Retry-After pause, a cookie sent, a method other
// than GET or HEAD, a wrong User-Agent or From, a missing or bad signature
// (checked on arrival with a signing.Verifier: [Web.VerifyWith], [Verify]).
// A checker also fails when there was nothing for it to judge (no request,
// no gap, no pause asked for), so a bot that did no work cannot pass; see
// [Check], [AtLeast] and [None].
//
// Scripts are plain [http.Handler] values; the package offers the ones bots
// meet in the wild: robots.txt variants, sitemaps, 429/503 with and without
// Retry-After, redirects and loops, challenge pages, huge, endless and
// trickling bodies, servers that hang or reset, cookies and login walls.
//
//	w := fetchtest.New()
//	w.Host("a.test").Handle("/robots.txt", fetchtest.Robots("User-agent: *\nDisallow: /private\n"))
//	w.Host("a.test").Handle("/", fetchtest.HTML("<p>hello</p>"))
//	w.Start()
//	defer w.Close()
//	client := &http.Client{Transport: w.Transport()}
//	resp, err := client.Get("http://a.test/")
package fetchtest

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/goodbot-go/goodbot/politeness"
)

// A Web is a set of virtual hosts and a log of the requests they served.
// The zero value is an empty Web, as [New] returns; it is safe for
// concurrent use.
type Web struct {
	mu      sync.Mutex // guards the fields below
	hosts   map[string]*Host
	reqs    []*Request
	srv     *httptest.Server
	tlsSrv  *httptest.Server
	cancels map[int]context.CancelFunc // in-flight in-memory requests, by Seq
	closed  bool
	verify  func(*http.Request) error
}

// VerifyWith makes the Web check every request with verify as it arrives
// (for instance a signing.Verifier's Verify, so that a signature is judged at
// the moment it reaches the server, in the bubble's fake time under
// synctest); the result is [Request.VerifyErr] and [SignedOnArrival] checks
// it. nil turns verification off.
func (w *Web) VerifyWith(verify func(*http.Request) error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.verify = verify
}

// New returns an empty Web. Hosts are added with [Web.Host]; the loopback
// server starts with [Web.Start]; the in-memory transport needs no start.
func New() *Web {
	return &Web{hosts: map[string]*Host{}, cancels: map[int]context.CancelFunc{}}
}

// A Host is one virtual host of a [Web]: a map from paths to handlers, safe
// for concurrent use. Get one from [Web.Host].
type Host struct {
	name     string
	mu       sync.Mutex // guards routes, fallback
	routes   map[string]http.Handler
	fallback http.Handler
}

// Host returns the virtual host name (a host name without port, matched
// against the request's Host as one site: every spelling of the name that
// politeness.HostKey reads as the same host reaches it), creating it when
// new.
func (w *Web) Host(name string) *Host {
	name = HostName(name)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.hosts == nil {
		w.hosts = map[string]*Host{}
	}
	h := w.hosts[name]
	if h == nil {
		h = &Host{name: name, routes: map[string]http.Handler{}}
		w.hosts[name] = h
	}
	return h
}

// HostName returns the name of the site a Host header or host name
// reaches: the host of its politeness.HostKey, without port or brackets
// ("A.Test.:080" and "ａ.test" are "a.test"; "[::1]:80" and "::1" are
// "::1"). Records, routing and checks use it.
func HostName(host string) string {
	if a, err := netip.ParseAddr(host); err == nil && a.Is6() {
		host = "[" + host + "]"
	}
	_, hostport, _ := strings.Cut(politeness.HostKey(&url.URL{Scheme: "http", Host: host}), "://")
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// Name returns the host's name.
func (h *Host) Name() string { return h.name }

// Handle serves path (exact match on the URL path, query ignored) with hd,
// replacing any earlier handler for path. It returns h for chaining.
func (h *Host) Handle(path string, hd http.Handler) *Host {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.routes[path] = hd
	return h
}

// Fallback serves every path that has no handler of its own (default: 404).
func (h *Host) Fallback(hd http.Handler) *Host {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fallback = hd
	return h
}

func (h *Host) handler(path string) http.Handler {
	h.mu.Lock()
	defer h.mu.Unlock()
	if hd, ok := h.routes[path]; ok {
		return hd
	}
	if h.fallback != nil {
		return h.fallback
	}
	return http.NotFoundHandler()
}

// A Request is the record of one request the Web served: a copy, plain data
// ([Web.Requests] returns fresh copies, safe to keep and read).
type Request struct {
	Seq        int         // order of arrival, from 0
	Host       string      // host name, lowercased, without port
	Method     string      //
	Path       string      // URL path
	RawQuery   string      //
	Header     http.Header // request headers as received (Host is in Host)
	RemoteAddr string      // client address ("mem" for the in-memory transport)
	Start      time.Time   // when the handler was entered
	End        time.Time   // when the handler returned (zero while running)

	Status       int         // status written (0 if none, e.g. a reset)
	RespHeader   http.Header // response headers written
	BytesWritten int64       // body bytes the client accepted
	Aborted      bool        // a body write failed: the client closed the connection early
	Reset        bool        // the handler reset the connection
	Verified     bool        // VerifyWith was set when the request arrived
	VerifyErr    error       // its verdict (nil: valid)

	req *http.Request // server-side request, for signature verification
}

// URL returns the request target as "host/path?query".
func (r *Request) URL() string {
	s := r.Host + r.Path
	if r.RawQuery != "" {
		s += "?" + r.RawQuery
	}
	return s
}

// HTTPRequest returns a copy of the server-side request (method, URL, Host,
// headers; no body), for verifiers.
func (r *Request) HTTPRequest() *http.Request {
	if r.req == nil {
		return nil
	}
	return r.req.Clone(context.Background())
}

// Requests returns copies of the records so far, in arrival order.
func (w *Web) Requests() []Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Request, len(w.reqs))
	for i, r := range w.reqs {
		out[i] = *r
	}
	return out
}

// RequestsTo returns the records for host (and, if paths are given, only
// those paths), in arrival order.
func (w *Web) RequestsTo(host string, paths ...string) []Request {
	host = HostName(host)
	var out []Request
	for _, r := range w.Requests() {
		if r.Host != host {
			continue
		}
		if len(paths) > 0 && !contains(paths, r.Path) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// Count returns how many requests host received for path ("" = any path).
func (w *Web) Count(host, path string) int {
	if path == "" {
		return len(w.RequestsTo(host))
	}
	return len(w.RequestsTo(host, path))
}

// Reset forgets the recorded requests (hosts and handlers stay).
func (w *Web) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reqs = nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ServeHTTP routes r to the virtual host named by its Host header and
// records it. An unknown host answers 421 Misdirected Request.
func (w *Web) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.serve(rw, r, nil)
}

// serve handles r; if started is non-nil it is called with the record's Seq
// once the request is recorded.
func (w *Web) serve(rw http.ResponseWriter, r *http.Request, started func(seq int)) {
	host := HostName(r.Host)
	rec := &Request{
		Host:       host,
		Method:     r.Method,
		Path:       r.URL.Path,
		RawQuery:   r.URL.RawQuery,
		Header:     r.Header.Clone(),
		RemoteAddr: r.RemoteAddr,
		Start:      time.Now(),
		req:        r.Clone(context.Background()),
	}
	rec.req.Body = http.NoBody
	w.mu.Lock()
	verify := w.verify
	w.mu.Unlock()
	if verify != nil {
		rec.Verified = true
		rec.VerifyErr = verify(rec.req.Clone(context.Background()))
	}
	w.mu.Lock()
	rec.Seq = len(w.reqs)
	w.reqs = append(w.reqs, rec)
	vh := w.hosts[host]
	w.mu.Unlock()
	if started != nil {
		started(rec.Seq)
	}

	sw := &recWriter{ResponseWriter: rw}
	if vh == nil {
		http.Error(sw, "fetchtest: unknown host "+host, http.StatusMisdirectedRequest)
	} else {
		vh.handler(r.URL.Path).ServeHTTP(sw, r)
	}

	w.mu.Lock()
	rec.End = time.Now()
	rec.Status = sw.status
	if sw.status == 0 && !sw.reset {
		rec.Status = http.StatusOK
	}
	rec.RespHeader = sw.Header().Clone()
	rec.BytesWritten = sw.n
	rec.Aborted = sw.err != nil
	rec.Reset = sw.reset
	w.mu.Unlock()
}

// recWriter records status, bytes and write errors, and reaches the
// underlying writer's Flush/Hijack through Unwrap (http.ResponseController).
type recWriter struct {
	http.ResponseWriter
	status int
	n      int64
	err    error
	reset  bool
}

func (w *recWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	if err != nil && w.err == nil {
		w.err = err
	}
	return n, err
}

func (w *recWriter) Flush() {
	if err := http.NewResponseController(w.ResponseWriter).Flush(); err != nil && w.err == nil {
		w.err = err
	}
}

func (w *recWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// resetConn is implemented by writers that can reset their connection.
func (w *recWriter) resetConn() {
	w.reset = true
	if r, ok := w.ResponseWriter.(interface{ resetConn() }); ok {
		r.resetConn()
		return
	}
	conn, _, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // RST instead of FIN
	}
	_ = conn.Close()
}

// Start starts the loopback servers (once) and returns the plain HTTP
// server's address ("127.0.0.1:port"). A second server speaks TLS for
// "https" URLs (port 443). Use [Web.Transport] or [Web.DialContext] to reach
// the virtual hosts through them.
func (w *Web) Start() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srv == nil {
		w.srv = httptest.NewServer(w)
		w.tlsSrv = httptest.NewTLSServer(w)
	}
	return w.srv.Listener.Addr().String()
}

// Addr returns the loopback server's address, or "" before [Web.Start].
func (w *Web) Addr() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srv == nil {
		return ""
	}
	return w.srv.Listener.Addr().String()
}

// Close stops the loopback server (closing its connections) and ends every
// in-flight in-memory request. The records stay readable.
func (w *Web) Close() {
	w.mu.Lock()
	srv, tlsSrv := w.srv, w.tlsSrv
	w.closed = true
	cancels := make([]context.CancelFunc, 0, len(w.cancels))
	for _, c := range w.cancels {
		cancels = append(cancels, c)
	}
	w.mu.Unlock()
	for _, c := range cancels {
		c()
	}
	for _, s := range []*httptest.Server{srv, tlsSrv} {
		if s != nil {
			s.CloseClientConnections()
			s.Close()
		}
	}
}

// ErrNotStarted is returned by [Web.DialContext] before [Web.Start].
var ErrNotStarted = errors.New("fetchtest: loopback server not started")

// DialContext connects to the loopback servers whatever the host asked for
// (e.g. "a.test:80"): port 443 to the TLS server, any other port to the
// plain one. A client with this dialer sends the request, with its real Host
// header, to the Web. It has the signature of [net.Dialer.DialContext] and
// [http.Transport.DialContext].
func (w *Web) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	w.mu.Lock()
	srv := w.srv
	if _, port, _ := net.SplitHostPort(addr); port == "443" {
		srv = w.tlsSrv
	}
	w.mu.Unlock()
	if srv == nil {
		return nil, ErrNotStarted
	}
	var d net.Dialer
	return d.DialContext(ctx, network, srv.Listener.Addr().String())
}

// Transport returns a new [http.Transport] that reaches the Web's virtual
// hosts through the loopback servers, "http" and "https" alike (the TLS
// server's certificate is not checked against the host name: it is a test
// web). The Web is started if it was not.
func (w *Web) Transport() *http.Transport {
	w.Start()
	return &http.Transport{
		DialContext:         w.DialContext,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback test servers only
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}
}

// Hosts returns the names of the virtual hosts, sorted.
func (w *Web) Hosts() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.hosts))
	for n := range w.hosts {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
