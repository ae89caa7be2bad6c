// Package robotstest serves robots.txt files for tests, on loopback
// ([NewServer]) or in memory ([Transport], usable inside testing/synctest
// bubbles, which cannot use real sockets).
package robotstest

import (
	"net/http"
	"net/http/httptest"
)

// Handler serves body as /robots.txt (text/plain; charset=utf-8) with status
// 200, and 404 for every other path.
func Handler(body string) http.Handler {
	return StatusHandler(http.StatusOK, body)
}

// StatusHandler serves /robots.txt with the given status and body, and 404
// for every other path.
func StatusHandler(status int, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			_, _ = w.Write([]byte(body))
		}
	})
}

// NewServer starts an httptest.Server on loopback serving body as
// /robots.txt. The caller closes it.
func NewServer(body string) *httptest.Server {
	return httptest.NewServer(Handler(body))
}

// Transport returns an http.RoundTripper that answers every request, for any
// host, by calling h in memory. It never touches the network.
func Transport(h http.Handler) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if err := req.Context().Err(); err != nil {
			return nil, err
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		resp := rec.Result()
		resp.Request = req
		return resp, nil
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
