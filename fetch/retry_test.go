package fetch_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
)

// wireRecord notes, server side, what framing each request arrived with.
type wireRecord struct {
	mu    sync.Mutex // guards below
	paths []string
	bad   []string // requests that came with a body, Content-Length or Transfer-Encoding
}

func (r *wireRecord) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.paths = append(r.paths, req.URL.Path)
		if req.ContentLength != 0 || len(req.TransferEncoding) > 0 ||
			req.Header.Get("Content-Length") != "" || req.Header.Get("Transfer-Encoding") != "" {
			r.bad = append(r.bad, req.Method+" "+req.URL.Path)
		}
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	})
}

// C3: net/http's Transport silently resends a GET when a reused keep-alive
// connection fails after the request was written (here: the server reads
// the request and resets). The resend would reach the host below the
// politeness gap, unseen by the pacing above it; the chain must send each
// request once, with no body or body framing on the wire.
func TestRetry_C3_NoSilentResendOnReusedConn(t *testing.T) {
	w, bot := loopback(t)
	var rec wireRecord
	site(w, "dead.test", "User-agent: *\nAllow: /\n").
		Handle("/", rec.wrap(fetchtest.HTML("<p>home</p>"))).
		Handle("/reset", rec.wrap(fetchtest.Reset()))
	f := mustFetcher(t, bot)
	ctx := context.Background()
	get(t, f, "http://dead.test/", fetch.OK) // robots.txt and / on one kept-alive connection
	if _, err := f.Get(ctx, "http://dead.test/reset"); err == nil {
		t.Fatal("Get /reset: no error")
	}
	if n := w.Count("dead.test", "/reset"); n != 1 {
		t.Errorf("/reset reached the server %d times, want 1 (a silent resend below the gap)", n)
	}
	get(t, f, "http://dead.test/", fetch.OK) // the next request still goes out, on a new connection
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.bad) > 0 {
		t.Errorf("requests with body framing on the wire: %v", rec.bad)
	}
	if len(rec.paths) != 3 {
		t.Errorf("server saw %v, want /, /reset, /", rec.paths)
	}
	w.Check(t, fetchtest.OnlyGetHead())
}

// Over HTTP/2 requests keep their plain form: no DATA frame, no
// Content-Length.
func TestRetry_C3_HTTP2Unchanged(t *testing.T) {
	var rec wireRecord
	protos := map[int]int{}
	var mu sync.Mutex
	srv := httptest.NewUnstartedServer(rec.wrap(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		protos[r.ProtoMajor]++
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			fetchtest.Robots("User-agent: *\nAllow: /\n").ServeHTTP(rw, r)
			return
		}
		fetchtest.HTML("<p>x</p>").ServeHTTP(rw, r)
	})))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	tr := srv.Client().Transport.(*http.Transport)
	defer tr.CloseIdleConnections()
	f := mustFetcher(t, fetch.Bot{UserAgent: testUA, Transport: tr, Politeness: politeness.Policy{MinDelay: -1},
		AllowInternal: loopbackOnly})
	for range 3 {
		get(t, f, srv.URL+"/p", fetch.OK)
	}
	mu.Lock()
	defer mu.Unlock()
	if protos[2] != 4 {
		t.Errorf("protocols %v, want 4 HTTP/2 requests", protos)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.bad) > 0 {
		t.Errorf("requests with body framing on the wire: %v", rec.bad)
	}
}

// C3 through a client made by New: a GET (nil body, http.NoBody, the
// empty body http.NewRequest makes of an empty reader, or no Method at all)
// or HEAD on a reused keep-alive connection that fails is sent once.
func TestRetry_C3_NoSilentResendOfClientRequests(t *testing.T) {
	plain := func(method string, body io.ReadCloser) func(u *url.URL) *http.Request {
		return func(u *url.URL) *http.Request {
			return &http.Request{Method: method, URL: u, Header: http.Header{}, Body: body}
		}
	}
	tests := []struct {
		name string
		req  func(u *url.URL) *http.Request
	}{
		{"GET", plain(http.MethodGet, nil)},
		{"GET with http.NoBody", plain(http.MethodGet, http.NoBody)},
		{"GET with an empty reader", func(u *url.URL) *http.Request {
			r, _ := http.NewRequest(http.MethodGet, u.String(), strings.NewReader("")) // Body NoBody, with a GetBody
			return r
		}},
		{"no Method", plain("", nil)},
		{"HEAD", plain(http.MethodHead, nil)},
		{"GET with a body and its GetBody", func(u *url.URL) *http.Request {
			r, _ := http.NewRequest(http.MethodGet, u.String(), strings.NewReader("q=1"))
			return r
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, bot := loopback(t)
			site(w, "dead.test", "User-agent: *\nAllow: /\n").Handle("/reset", fetchtest.Reset())
			c := mustClient(t, bot)
			keepAlive(t, c, "http://dead.test/")
			if resp, err := c.Do(tt.req(&url.URL{Scheme: "http", Host: "dead.test", Path: "/reset"})); err == nil {
				resp.Body.Close()
				t.Fatal("/reset: no error")
			}
			if n := w.Count("dead.test", "/reset"); n != 1 {
				t.Errorf("/reset reached the server %d times, want 1 (a silent resend below the gap)", n)
			}
		})
	}
}

// keepAlive gets u through c and reads it whole, so that the host's
// robots.txt and u leave one kept-alive connection for the next request.
func keepAlive(t *testing.T, c *http.Client, u string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// C3 keeps a caller's body: a GET with a body of its own, on a reused
// keep-alive HTTP/1 connection, reaches the server with that body (only
// bodiless requests leave with the empty sendOnce body).
func TestRetry_C3_GetKeepsItsOwnBody(t *testing.T) {
	tests := []struct {
		name string
		req  func(u string) *http.Request
	}{
		{"body with its GetBody", func(u string) *http.Request {
			r, _ := http.NewRequest(http.MethodGet, u, strings.NewReader("q=1"))
			return r
		}},
		{"body without GetBody", func(u string) *http.Request {
			r, _ := http.NewRequest(http.MethodGet, u, nil)
			r.Body = io.NopCloser(strings.NewReader("q=1"))
			return r
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, bot := loopback(t)
			var mu sync.Mutex
			var bodies []string
			site(w, "body.test", "User-agent: *\nAllow: /\n").Handle("/search", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				b, err := io.ReadAll(r.Body)
				if err != nil {
					t.Errorf("/search: reading the body: %v", err)
				}
				mu.Lock()
				bodies = append(bodies, string(b))
				mu.Unlock()
				io.WriteString(rw, "<p>results</p>")
			}))
			c := mustClient(t, bot)
			keepAlive(t, c, "http://body.test/")
			var reused []bool
			req := tt.req("http://body.test/search")
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
				GotConn: func(ci httptrace.GotConnInfo) { reused = append(reused, ci.Reused) },
			}))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			if n := w.Count("body.test", "/search"); n != 1 || len(bodies) != 1 {
				t.Fatalf("/search reached the server %d times, handled %d; want 1, 1", n, len(bodies))
			}
			if !slices.Equal(reused, []bool{true}) || resp.ProtoMajor != 1 {
				t.Fatalf("/search over HTTP/%d, connections reused %v; want HTTP/1 over [true]", resp.ProtoMajor, reused)
			}
			if bodies[0] != "q=1" {
				t.Errorf("/search body %q, want \"q=1\"", bodies[0])
			}
		})
	}
}

// C3 with the chain's own base transport and no time limit: a failed
// request on a reused keep-alive connection still reaches the host once.
func TestRetry_C3_NoSilentResendWithoutTimeLimit(t *testing.T) {
	w := fetchtest.New()
	defer w.Close()
	site(w, "dead.test", "User-agent: *\nAllow: /\n").Handle("/reset", fetchtest.Reset())
	w.Start()
	bot := fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1}, AllowInternal: loopbackOnly,
		Limits: fetch.Limits{Timeout: -1}}
	f, tr, err := fetch.NewFetcherWithLookup(bot, nil, func(t *http.Transport) { t.DialContext = w.DialContext })
	if err != nil {
		t.Fatal(err)
	}
	defer tr.CloseIdleConnections()
	get(t, f, "http://dead.test/", fetch.OK) // robots.txt and / on one kept-alive connection
	if _, err := f.Get(context.Background(), "http://dead.test/reset"); err == nil {
		t.Fatal("Get /reset: no error")
	}
	if n := w.Count("dead.test", "/reset"); n != 1 {
		t.Errorf("/reset reached the server %d times, want 1 (a silent resend below the gap)", n)
	}
}
