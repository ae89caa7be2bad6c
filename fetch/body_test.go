package fetch_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
)

// closeCounter counts Close calls (oauth2's readCloseCounter).
type closeCounter struct {
	io.Reader
	closed atomic.Int32
}

func (c *closeCounter) Close() error { c.closed.Add(1); return nil }

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The request body is closed once on every early return of the chain, and a
// refused response's body is closed once (STYLE 4).
func TestBodies_ClosedOnceOnEveryRefusal(t *testing.T) {
	w := fetchtest.New()
	defer w.Close()
	site(w, "a.test", "User-agent: *\nDisallow: /no\n").Handle("/c", fetchtest.Challenge(200)).
		Handle("/pdf", fetchtest.Text("application/pdf", "%PDF"))
	var respBodies []*closeCounter
	mem := w.RoundTripper()
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := mem.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cc := &closeCounter{Reader: strings.NewReader(string(b))}
		respBodies = append(respBodies, cc)
		resp.Body = cc
		return resp, nil
	})
	c := mustClient(t, fetch.Bot{UserAgent: testUA, Transport: base, HTMLOnly: true,
		BlockedDomains: []string{"blocked.test"}, Politeness: politeness.Policy{MinDelay: -1}})
	for _, tt := range []struct{ method, url string }{
		{http.MethodPost, "http://a.test/"},
		{http.MethodGet, "http://a.test/no"},
		{http.MethodGet, "http://blocked.test/"},
		{http.MethodGet, "http://a.test/checkout"},
		{http.MethodGet, "ftp://a.test/"},
	} {
		body := &closeCounter{Reader: strings.NewReader("x")}
		req, _ := http.NewRequest(tt.method, tt.url, body)
		if _, err := c.Transport.RoundTrip(req); err == nil {
			t.Errorf("%s %s: no error", tt.method, tt.url)
		}
		if n := body.closed.Load(); n != 1 {
			t.Errorf("%s %s: request body closed %d times", tt.method, tt.url, n)
		}
	}
	for _, u := range []string{"http://a.test/c", "http://a.test/pdf"} {
		n := len(respBodies)
		if _, err := c.Get(u); err == nil {
			t.Errorf("%s: no error", u)
		}
		for _, b := range respBodies[n:] {
			if got := b.closed.Load(); got != 1 {
				t.Errorf("%s: response body closed %d times", u, got)
			}
		}
	}
}

// A body of unknown length (no Content-Length: chunked, or ended by the
// close, RFC 9112 §6.3) is read whole whatever the status, also when no
// challenge sniff went before (a 3xx answer that is not followed, or a 304).
func TestBodies_UnknownLengthReadWhole(t *testing.T) {
	for _, tt := range []struct {
		status int
		header http.Header
		body   string
	}{
		{http.StatusOK, nil, "<p>chunked page</p>"},
		{http.StatusMultipleChoices, nil, "choose one"},
		{http.StatusMovedPermanently, nil, "moved, no Location"},
		{http.StatusNotFound, nil, "not here"},
	} {
		tr := rtFunc(func(r *http.Request) (*http.Response, error) {
			resp := &http.Response{StatusCode: http.StatusNotFound, Header: http.Header{}, ContentLength: -1,
				Body: io.NopCloser(strings.NewReader("")), Request: r, ProtoMajor: 1, ProtoMinor: 1}
			if r.URL.Path == "/page" {
				resp.StatusCode = tt.status
				resp.Header.Set("Content-Type", "text/html")
				resp.Body = io.NopCloser(strings.NewReader(tt.body))
			}
			return resp, nil
		})
		f := mustFetcher(t, fetch.Bot{UserAgent: testUA, Transport: tr, Politeness: politeness.Policy{MinDelay: -1}})
		p, err := f.Get(t.Context(), "http://a.test/page")
		if p == nil {
			t.Fatalf("%d: no page: %v", tt.status, err)
		}
		if p.Status != tt.status || string(p.Body) != tt.body {
			t.Errorf("%d: page %d %q (%v); want %d %q", tt.status, p.Status, p.Body, err, tt.status, tt.body)
		}
	}
}
