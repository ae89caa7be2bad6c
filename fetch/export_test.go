package fetch

import (
	"context"
	"net"
	"net/http"
	"net/url"
)

// BaseTransportWithLookup returns the base transport fetch builds for bot
// (Transport nil), with lookup standing in for DNS: a dialled host found in
// lookup is replaced by its address before the transport's own dialer, and
// its address check, see it.
func BaseTransportWithLookup(bot Bot, lookup map[string]string) *http.Transport {
	t := newBaseTransport(bot.LocalAddr, newAddrPolicy(bot.AllowInternal), bot.Politeness.LongestGap(), bot.Limits.maxHeader())
	t.DialContext = lookupDial(t.DialContext, lookup)
	return t
}

// NewFetcherWithLookup is NewFetcher(bot) with bot.Transport nil (the
// chain exactly as a bot with the defaults gets it, base transport
// included), with lookup standing in for DNS in front of the base
// transport's guarded dialer; change, when not nil, alters the base
// transport before first use. It returns the base transport too.
func NewFetcherWithLookup(bot Bot, lookup map[string]string, change func(*http.Transport)) (*Fetcher, *http.Transport, error) {
	bot.Transport = nil
	f, err := NewFetcher(bot)
	if err != nil {
		return nil, nil, err
	}
	t := f.chain.base.(*http.Transport)
	t.DialContext = lookupDial(t.DialContext, lookup)
	if change != nil {
		change(t)
	}
	return f, t, nil
}

// lookupDial is dial with the hosts found in lookup replaced by their
// address.
func lookupDial(dial func(ctx context.Context, network, addr string) (net.Conn, error), lookup map[string]string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, port, err := net.SplitHostPort(addr); err == nil {
			if ip, ok := lookup[host]; ok {
				addr = net.JoinHostPort(ip, port)
			}
		}
		return dial(ctx, network, addr)
	}
}

// BaseDial dials addr through the base transport of client (made by New or
// Wrap), below every URL check: it shows whether that transport's dialer
// checks the address dialled. ok is false when the base is not an
// *http.Transport with a DialContext.
func BaseDial(ctx context.Context, client *http.Client, addr string) (conn net.Conn, err error, ok bool) {
	bt, isBot := client.Transport.(*botTransport)
	if !isBot {
		return nil, nil, false
	}
	t, isHTTP := bt.c.base.(*http.Transport)
	if !isHTTP || t.DialContext == nil {
		return nil, nil, false
	}
	conn, err = t.DialContext(ctx, "tcp", addr)
	return conn, err, true
}

// NormalizeParsed is Normalize of u without the string u was parsed from:
// the key is always built.
func NormalizeParsed(u *url.URL) (string, error) { return normalizeURL(u, "") }

// PlainHostAuthority reports whether plainHost takes u.Host as its own site
// key's spelling, and the spelling authority gives.
func PlainHostAuthority(u *url.URL) (plain bool, host string, ok bool) {
	host, ok = authority(u)
	return plainHost(u), host, ok
}

// PendingRobots is how many robots.txt copies the Fetcher's chain holds
// outside its robots cache (read, for the gap after their own fetch).
func PendingRobots(f *Fetcher) int {
	f.chain.mu.Lock()
	defer f.chain.mu.Unlock()
	return len(f.chain.pending)
}
