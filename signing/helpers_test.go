package signing_test

import (
	"crypto"
	"crypto/ed25519"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// memTransport is an in-memory http.RoundTripper for synctest bubbles: it
// hands each request to the handler registered for its host.
type memTransport struct {
	mu       sync.Mutex // guards handlers
	handlers map[string]http.Handler
	hits     map[string]*atomic.Int64
}

func newMem() *memTransport {
	return &memTransport{handlers: map[string]http.Handler{}, hits: map[string]*atomic.Int64{}}
}

func (m *memTransport) handle(host string, h http.Handler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.handlers[host] = h
	if m.hits[host] == nil {
		m.hits[host] = new(atomic.Int64)
	}
}

func (m *memTransport) count(host string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hits[host].Load()
}

func (m *memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	m.mu.Lock()
	h := m.handlers[req.URL.Host]
	n := m.hits[req.URL.Host]
	m.mu.Unlock()
	if req.Body != nil {
		defer req.Body.Close()
	}
	if h == nil {
		return nil, &netError{host: req.URL.Host}
	}
	n.Add(1)
	sreq := req.Clone(req.Context())
	sreq.RequestURI = req.URL.RequestURI()
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	if req.URL.Scheme == "https" {
		sreq.TLS = fakeTLS()
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, sreq)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

type netError struct{ host string }

func (e *netError) Error() string { return "no such host " + e.host }

func signers(keys ...ed25519.PrivateKey) []crypto.Signer {
	out := make([]crypto.Signer, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

func pub(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

func fakeTLS() *tls.ConnectionState { return &tls.ConnectionState{HandshakeComplete: true} }
