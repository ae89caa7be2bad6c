// Package basetransport gives the library's own HTTP transports their
// starting point: net/http's default transport settings, whatever a
// program has put in http.DefaultTransport.
//
// Programs often replace http.DefaultTransport with a wrapper (tracing,
// metrics); a transport of the library's own, which needs an
// *http.Transport to bound and guard, then starts from net/http's
// defaults instead of asserting the wrapper's type.
package basetransport

import (
	"net"
	"net/http"
	"time"
)

// New returns a clone of http.DefaultTransport when it is an
// *http.Transport, else a new *http.Transport with net/http's default
// settings (proxy from the environment, 30 s dial timeout and keep-alive,
// HTTP/2 attempted, at most 100 idle connections kept 90 s, 10 s TLS
// handshake, 1 s wait for 100-continue).
func New() *http.Transport {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		return t.Clone()
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}
