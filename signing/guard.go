package signing

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/goodbot-go/goodbot/internal/ipguard"
)

// The verifier fetches URLs named by unauthenticated requests, so its own
// connections are guarded: the address actually dialled (after name
// resolution, so a name that resolves to 127.0.0.1 is caught too) must not
// be internal unless the owner allows it.

// dialGuard refuses connections to internal addresses its Allow does not
// open (see package ipguard: the fetcher judges addresses the same way).
type dialGuard struct{ allow ipguard.Allow }

// newDialGuard returns the guard opening the internal ranges in allow.
func newDialGuard(allow []netip.Prefix) dialGuard { return dialGuard{allow: ipguard.NewAllow(allow)} }

// control is a net.Dialer Control function: it sees the address about to be
// dialled.
func (g dialGuard) control(_, address string, _ syscall.RawConn) error {
	return g.check(address)
}

// check refuses address (host:port, an IP) when it is internal and not
// allowed.
func (g dialGuard) check(address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s is not an IP address", ErrAddressRefused, address)
	}
	if reached, kind := g.allow.Check(ap.Addr()); kind != "" {
		return fmt.Errorf("%w: %s is %s", ErrAddressRefused, reached, kind)
	}
	return nil
}

type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// checked wraps a transport's own dial function: an IP address is checked
// before dialling, and the address the connection reached (the name
// resolved by the dial function) before a byte is sent on it.
func (g dialGuard) checked(dial dialFunc) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, port, err := net.SplitHostPort(addr); err == nil {
			if _, err := netip.ParseAddr(host); err == nil {
				if err := g.check(net.JoinHostPort(host, port)); err != nil {
					return nil, err
				}
			}
		}
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if err := g.check(c.RemoteAddr().String()); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
}

// guardTransport makes t dial through the guard, directly (a proxy would be
// dialled instead of the directory's host, and the guard would judge the
// proxy). Without a dial function of its own, t dials with a net.Dialer whose
// Control refuses internal addresses before connecting; a dial function of
// its own (a test network, say) is wrapped so the address it reached is
// checked before anything is sent.
func (g dialGuard) guardTransport(t *http.Transport) *http.Transport {
	t.Proxy = nil
	if t.DialContext != nil {
		t.DialContext = g.checked(t.DialContext)
	} else {
		d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: g.control}
		t.DialContext = d.DialContext
	}
	if t.DialTLSContext != nil {
		t.DialTLSContext = g.checked(t.DialTLSContext)
	}
	return t
}
