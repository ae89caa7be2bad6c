package fetch

import (
	"context"
	"net"
	"net/http"
)

// BaseTransportWithLookup returns the base transport fetch builds for bot
// (Transport nil), with lookup standing in for DNS: a dialled host found in
// lookup is replaced by its address before the transport's own dialer, and
// its address check, see it.
func BaseTransportWithLookup(bot Bot, lookup map[string]string) *http.Transport {
	t := newBaseTransport(bot.LocalAddr, newAddrPolicy(bot.AllowInternal))
	dial := t.DialContext
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, port, err := net.SplitHostPort(addr); err == nil {
			if ip, ok := lookup[host]; ok {
				addr = net.JoinHostPort(ip, port)
			}
		}
		return dial(ctx, network, addr)
	}
	return t
}
