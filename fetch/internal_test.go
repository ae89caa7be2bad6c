package fetch_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/fetchtest"
	"github.com/goodbot-go/goodbot/politeness"
)

func prefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

// Every internal range is refused unless Bot.AllowInternal lists it, and
// only the listed ranges are opened. The hosts are literal addresses, so the
// URL check refuses them before anything is sent, whatever the transport
// (here the in-memory web, which would serve them all).
func TestInternal_LiteralAddresses(t *testing.T) {
	for _, tt := range []struct {
		host  string
		allow []netip.Prefix
		want  fetch.Outcome
	}{
		{"127.0.0.1", nil, fetch.InternalAddress},
		{"127.0.0.1", loopbackOnly, fetch.OK},
		{"127.8.9.10", loopbackOnly, fetch.OK},
		{"::1", loopbackOnly, fetch.InternalAddress}, // 127/8 opens IPv4 loopback only
		{"::1", prefixes("::1/128"), fetch.OK},
		{"localhost", nil, fetch.InternalAddress},
		{"app.localhost", nil, fetch.InternalAddress},
		{"10.1.2.3", nil, fetch.InternalAddress},
		{"10.1.2.3", prefixes("10.0.0.0/8"), fetch.OK},
		{"172.16.5.5", nil, fetch.InternalAddress},
		{"172.31.255.255", prefixes("10.0.0.0/8"), fetch.InternalAddress},
		{"192.168.1.1", nil, fetch.InternalAddress},
		{"fc00::1", nil, fetch.InternalAddress},
		{"fd00:ec2::254", nil, fetch.InternalAddress}, // the IPv6 metadata address of one cloud
		{"169.254.169.254", nil, fetch.InternalAddress},
		{"169.254.169.254", prefixes("10.0.0.0/8"), fetch.InternalAddress}, // an intranet bot
		{"169.254.169.254", prefixes("169.254.169.254/32"), fetch.OK},
		{"fe80::1", nil, fetch.InternalAddress},
		{"0.0.0.0", nil, fetch.InternalAddress},
		{"0.1.2.3", nil, fetch.InternalAddress},
		{"::", nil, fetch.InternalAddress},
		{"224.0.0.1", nil, fetch.InternalAddress},
		{"239.255.255.250", nil, fetch.InternalAddress},
		{"ff02::1", nil, fetch.InternalAddress},
		{"255.255.255.255", nil, fetch.InternalAddress},
		{"100.64.0.1", nil, fetch.InternalAddress},
		{"::ffff:127.0.0.1", nil, fetch.InternalAddress},
		{"::ffff:169.254.169.254", loopbackOnly, fetch.InternalAddress},
		{"::ffff:10.0.0.1", prefixes("::ffff:10.0.0.0/104"), fetch.OK}, // a mapped prefix opens the IPv4 range
		{"::ffff:10.0.0.1", prefixes("10.0.0.0/8"), fetch.OK},
		{"64:ff9b::a9fe:a9fe", nil, fetch.InternalAddress},                   // NAT64 to 169.254.169.254
		{"64:ff9b::7f00:1", loopbackOnly, fetch.OK},                          // NAT64 to 127.0.0.1
		{"::7f00:1", nil, fetch.InternalAddress},                             // IPv4-compatible 127.0.0.1
		{"64:ff9b::808:808", nil, fetch.OK},                                  // NAT64 to 8.8.8.8
		{"2002:a9fe:a9fe::1", nil, fetch.InternalAddress},                    // 6to4 of 169.254.169.254
		{"2002:808:808::1", nil, fetch.OK},                                   // 6to4 of 8.8.8.8
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", nil, fetch.InternalAddress}, // Teredo, client 127.0.0.1
		{"192.0.2.10", nil, fetch.InternalAddress},                           // documentation (IANA: not globally reachable)
		{"198.18.0.1", nil, fetch.InternalAddress},                           // benchmarking
		{"198.18.0.1", prefixes("198.18.0.0/15"), fetch.OK},
		{"240.1.2.3", nil, fetch.InternalAddress},            // reserved
		{"2001:db8::1", nil, fetch.InternalAddress},          // documentation
		{"64:ff9b:1::a9fe:a9fe", nil, fetch.InternalAddress}, // local-use NAT64: maps where its network chooses
		// Loose IPv4 forms (WHATWG URL, inet_aton) are the addresses they spell.
		{"2130706433", nil, fetch.InternalAddress},
		{"127.1", nil, fetch.InternalAddress},
		{"0x7f.1", nil, fetch.InternalAddress},
		{"0177.0.0.1", nil, fetch.InternalAddress},
		{"0x7f000001", nil, fetch.InternalAddress},
		{"169.254.43518", prefixes("10.0.0.0/8"), fetch.InternalAddress},
		{"0xA9FEA9FE", nil, fetch.InternalAddress},
		{"10.0x10203", nil, fetch.InternalAddress},
		{"127.0.0.1.", nil, fetch.InternalAddress},
		{"2130706433", loopbackOnly, fetch.OK},
		{"134744072", nil, fetch.OK},                // 8.8.8.8
		{"10.16777215", nil, fetch.InternalAddress}, // the last part's largest value: 10.255.255.255
		{"10.0x.0.1", nil, fetch.InternalAddress},   // "0x" alone is 0
		{"10.0.0.0x", nil, fetch.InternalAddress},   // also as the last part
		{"127.0.0.0X1", nil, fetch.InternalAddress},
		// Not addresses (WHATWG: invalid), so names, checked when dialled;
		// each misread as a number would be an internal address (10.0.0.0,
		// 0.0.0.1, 0.0.0.1, 10.0.0.1, 127.0.0.8).
		{"9.16777216", nil, fetch.OK},
		{"256.0.0.1", nil, fetch.OK},
		{"1x.0.0.1", nil, fetch.OK},
		{"10..1", nil, fetch.OK},          // an empty part
		{"127.0.0.08", nil, fetch.OK},     // 08 is no octal number
		{"1.2.3.4.5", nil, fetch.OK},      // five parts: a name, resolved (and checked) when dialled
		{"0x7f.1.example", nil, fetch.OK}, // a name
		{"93.184.216.34", nil, fetch.OK},
		{"2606:4700::1111", nil, fetch.OK},
		{"100.128.0.1", nil, fetch.OK},
	} {
		w := fetchtest.New()
		site(w, tt.host, "")
		bot := memBot(w)
		bot.Politeness = politeness.Policy{MinDelay: -1}
		bot.AllowInternal = tt.allow
		f := mustFetcher(t, bot)
		u := (&url.URL{Scheme: "http", Host: hostPort(tt.host), Path: "/"}).String()
		p, err := f.Get(context.Background(), u)
		if p == nil || p.Outcome != tt.want {
			t.Errorf("%s allow %v: %v, want %v", u, tt.allow, err, tt.want)
			continue
		}
		n := len(w.Requests())
		if tt.want == fetch.OK {
			if n != 2 {
				t.Errorf("%s allow %v: %d requests, want 2 (robots.txt and /)", u, tt.allow, n)
			}
			continue
		}
		if n != 0 {
			t.Errorf("%s allow %v: %d requests sent, want none", u, tt.allow, n)
		}
		var ie *fetch.InternalAddressError
		if !errors.Is(err, fetch.ErrInternalAddress) || !errors.As(err, &ie) || !strings.Contains(err.Error(), "AllowInternal") {
			t.Errorf("%s: error %v does not say why", u, err)
		}
		// Through http.Client too: the sentinel matches through *url.Error.
		_, err = f.Client().Get(u)
		var ue *url.Error
		if !errors.As(err, &ue) || !errors.Is(err, fetch.ErrInternalAddress) || fetch.OutcomeOf(err) != fetch.InternalAddress {
			t.Errorf("%s via Client: %v", u, err)
		}
		if n := len(w.Requests()); n != 0 {
			t.Errorf("%s via Client: %d requests sent", u, n)
		}
	}
}

func hostPort(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// A redirect (or a robots.txt redirect) to an internal address is refused on
// the hop, and the internal host never sees a request.
func TestInternal_RedirectHops(t *testing.T) {
	for _, tt := range []struct {
		name, to, toHost string
		allow            []netip.Prefix
		robots           bool // the robots.txt redirects, not the page
		want             fetch.Outcome
	}{
		{"to 127.0.0.1 by default", "http://127.0.0.1/secret", "127.0.0.1", nil, false, fetch.InternalAddress},
		{"to [::1] with 127/8 allowed", "http://[::1]/secret", "::1", loopbackOnly, false, fetch.InternalAddress},
		{"to metadata for a 10/8 bot", "http://169.254.169.254/secret", "169.254.169.254", prefixes("10.0.0.0/8"), false, fetch.InternalAddress},
		{"to 10.0.0.5 for a 10/8 bot", "http://10.0.0.5/secret", "10.0.0.5", prefixes("10.0.0.0/8"), false, fetch.OK},
		{"robots.txt to metadata", "http://169.254.169.254/robots.txt", "169.254.169.254", nil, true, fetch.InternalAddress},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := fetchtest.New()
			pub := site(w, "pub.test", "")
			if tt.robots {
				pub.Handle("/robots.txt", fetchtest.Redirect(tt.to, http.StatusMovedPermanently))
				pub.Handle("/page", fetchtest.HTML("page"))
			} else {
				pub.Handle("/page", fetchtest.Redirect(tt.to, http.StatusFound))
			}
			site(w, tt.toHost, "").Handle("/secret", fetchtest.HTML("secret"))
			bot := memBot(w)
			bot.Politeness = politeness.Policy{MinDelay: -1}
			bot.AllowInternal = tt.allow
			f := mustFetcher(t, bot)
			get(t, f, "http://pub.test/page", tt.want)
			if n := w.Count("pub.test", "/robots.txt"); n != 1 {
				t.Fatalf("pub.test robots.txt asked %d times: the test did not run", n)
			}
			n := len(w.RequestsTo(tt.toHost))
			if tt.want == fetch.OK && n == 0 {
				t.Errorf("allowed hop: %s never reached", tt.toHost)
			}
			if tt.want != fetch.OK && n != 0 {
				t.Errorf("refused hop: %s got %d requests", tt.toHost, n)
			}
			if tt.robots && w.Count("pub.test", "/page") != 0 {
				t.Error("page fetched although its robots.txt was refused")
			}
		})
	}
}

// The address dialled is checked after name resolution, so a name that
// resolves to an internal address is refused whether it is asked for
// directly or reached by a redirect; robots.txt included. Two loopback
// servers: ok.test (127.0.0.1, allowed) and evil.test (127.0.0.2, not).
func TestInternal_DNSNameToInternal(t *testing.T) {
	var okHits, evilHits atomic.Int32
	evil := newServerOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		evilHits.Add(1)
		_, _ = w.Write([]byte("secret"))
	}))
	_, evilPort, _ := net.SplitHostPort(evil.Listener.Addr().String())
	evilURL := "http://evil.test:" + evilPort + "/"
	ok := newServerOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		okHits.Add(1)
		if r.URL.Path == "/go" {
			http.Redirect(w, r, evilURL, http.StatusFound)
			return
		}
		http.NotFound(w, r)
	}))
	_, okPort, _ := net.SplitHostPort(ok.Listener.Addr().String())
	lookup := map[string]string{"ok.test": "127.0.0.1", "evil.test": "127.0.0.2"}

	for _, tt := range []struct {
		name  string
		url   string
		allow []netip.Prefix
		want  fetch.Outcome
		evil  int32
	}{
		{"direct, nothing allowed", evilURL, nil, fetch.InternalAddress, 0},
		{"direct, 127.0.0.1/32 allowed", evilURL, prefixes("127.0.0.1/32"), fetch.InternalAddress, 0},
		{"redirect hop", "http://ok.test:" + okPort + "/go", prefixes("127.0.0.1/32"), fetch.InternalAddress, 0},
		{"direct, 127/8 allowed", evilURL, loopbackOnly, fetch.OK, 2}, // robots.txt and /
	} {
		t.Run(tt.name, func(t *testing.T) {
			evilHits.Store(0)
			okHits.Store(0)
			bot := fetch.Bot{UserAgent: testUA, Politeness: politeness.Policy{MinDelay: -1}, AllowInternal: tt.allow}
			tr := fetch.BaseTransportWithLookup(bot, lookup)
			defer tr.CloseIdleConnections()
			bot.Transport = tr
			f := mustFetcher(t, bot)
			p, err := f.Get(context.Background(), tt.url)
			if p == nil || p.Outcome != tt.want {
				t.Fatalf("Get(%s): %v, want %v", tt.url, err, tt.want)
			}
			if strings.Contains(tt.url, "ok.test") && okHits.Load() == 0 {
				t.Fatal("ok.test never reached: the test did not run")
			}
			if got := evilHits.Load(); got != tt.evil {
				t.Errorf("evil.test got %d requests, want %d", got, tt.evil)
			}
			if tt.want == fetch.InternalAddress && !errors.Is(err, fetch.ErrInternalAddress) {
				t.Errorf("error %v does not match ErrInternalAddress", err)
			}
		})
	}
}

// FuzzCheckHost: any host either passes or is refused with the address it
// spells, and that address, written plainly, is refused too.
func FuzzCheckHost(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "2130706433", "0x7f.1", "0177.0.0.1", "a.test", "[::1]", "[::ffff:127.0.0.1]", "1.2.3.4.", "0x", "08.1", "localhost", "1e2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		err := fetch.CheckHost(&url.URL{Scheme: "http", Host: host, Path: "/"}, nil)
		if err == nil {
			return
		}
		var ie *fetch.InternalAddressError
		if !errors.As(err, &ie) || !ie.Addr.IsValid() || ie.Kind == "" {
			t.Fatalf("CheckHost(%q) = %v", host, err)
		}
		plain := &url.URL{Scheme: "http", Host: hostPort(ie.Addr.String()), Path: "/"}
		if fetch.CheckHost(plain, nil) == nil {
			t.Fatalf("CheckHost(%q) refused %s, but not %s", host, ie.Addr, plain)
		}
		if fetch.CheckHost(&url.URL{Scheme: "http", Host: host, Path: "/"}, []netip.Prefix{netip.PrefixFrom(ie.Addr, ie.Addr.BitLen())}) != nil {
			t.Fatalf("CheckHost(%q) still refused with %s allowed", host, ie.Addr)
		}
	})
}

// newServerOn starts an httptest server listening on ip.
func newServerOn(t *testing.T, ip string, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		if ci() {
			t.Fatalf("listen on %s: %v", ip, err)
		}
		t.Skipf("cannot listen on %s here: %v", ip, err)
	}
	s := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// With RefuseDowngrade, a redirect from https to http is refused; without
// it, followed.
func TestInternal_RefuseDowngrade(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		w := fetchtest.New()
		site(w, "a.test", "").Handle("/p", fetchtest.Redirect("http://a.test/plain", 0)).
			Handle("/plain", fetchtest.HTML("plain"))
		bot := memBot(w)
		bot.Politeness = politeness.Policy{MinDelay: -1}
		bot.RefuseDowngrade = refuse
		f := mustFetcher(t, bot)
		want := fetch.OK
		if refuse {
			want = fetch.InsecureRedirect
		}
		get(t, f, "https://a.test/p", want)
		if n := w.Count("a.test", "/p"); n != 1 {
			t.Fatalf("refuse=%v: /p asked %d times", refuse, n)
		}
		if n := w.Count("a.test", "/plain"); (n == 0) != refuse {
			t.Errorf("refuse=%v: /plain asked %d times", refuse, n)
		}
	}
}

// closingListener is the address of a loopback listener that closes every
// connection it accepts, until the test ends.
func closingListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// The transports fetch builds or clones (New without Transport, Wrap of a
// client without one, Wrap with LocalAddr) check the address they dial,
// below the URL checks; a caller's own transport is left alone.
func TestInternal_DialerOfBuiltTransports(t *testing.T) {
	addr := closingListener(t)
	mk := func(allow []netip.Prefix, wrap *http.Client, local netip.Addr) *http.Client {
		bot := fetch.Bot{UserAgent: testUA, AllowInternal: allow, LocalAddr: local}
		if wrap == nil {
			return mustClient(t, bot)
		}
		c, err := fetch.Wrap(bot, wrap)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	lo := netip.MustParseAddr("127.0.0.1")
	for _, tt := range []struct {
		name    string
		client  *http.Client
		refused bool
	}{
		{"New", mk(nil, nil, netip.Addr{}), true},
		{"New, 127/8 allowed", mk(loopbackOnly, nil, netip.Addr{}), false},
		{"Wrap, no transport", mk(nil, &http.Client{}, netip.Addr{}), true},
		{"Wrap, no transport, 127/8 allowed", mk(loopbackOnly, &http.Client{}, netip.Addr{}), false},
		{"Wrap, LocalAddr", mk(nil, &http.Client{Transport: &http.Transport{}}, lo), true},
	} {
		conn, err, ok := fetch.BaseDial(context.Background(), tt.client, addr)
		if !ok {
			t.Fatalf("%s: base transport not reachable", tt.name)
		}
		if conn != nil {
			conn.Close()
		}
		if refused := errors.Is(err, fetch.ErrInternalAddress); refused != tt.refused || (!tt.refused && err != nil) {
			t.Errorf("%s: dial %s: %v, want refused %v", tt.name, addr, err, tt.refused)
		}
	}
	// A caller's transport dials on its own: fetch does not reach into it.
	own := mk(nil, &http.Client{Transport: rtFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("x") })}, netip.Addr{})
	if _, _, ok := fetch.BaseDial(context.Background(), own, addr); ok {
		t.Error("a caller's RoundTripper was replaced")
	}
}

// CheckHost reads the host as the URL check does: a literal address in any
// spelling, with or without the trailing dot of a fully qualified name
// (RFC 1034 §3.1), is the address it spells (127.0.0.0/8 is loopback,
// RFC 6890); a localhost name is loopback (RFC 6761 §6.3); other names are
// left to the dialler. A name costs no allocation (checkURL's contract).
func TestCheckHost_Spellings(t *testing.T) {
	for _, tt := range []struct {
		host     string
		internal bool
	}{
		{"127.0.0.1", true},
		{"127.0.0.1.", true},
		{"127.1.", true},
		{"2130706433.", true},
		{"0x7f.1.", true},
		{"169.254.169.254.", true},
		{"localhost.", true},
		{"LocalHost", true},
		{"a.localhost.", true},
		{"93.184.216.34.", false},
		{"example.com", false},
		{"example.com.", false},
		{"localhost.example", false},
		{"notlocalhost", false},
	} {
		u := &url.URL{Scheme: "http", Host: tt.host, Path: "/"}
		err := fetch.CheckHost(u, nil)
		if got := errors.Is(err, fetch.ErrInternalAddress); got != tt.internal {
			t.Errorf("CheckHost(%q) = %v; want internal %v", tt.host, err, tt.internal)
		}
	}
	for _, host := range []string{"example.com", "www.example.cafe", "a.0xzz", "a.b.c.d.e"} {
		u := &url.URL{Scheme: "http", Host: host, Path: "/"}
		if n := testing.AllocsPerRun(20, func() { _ = fetch.CheckHost(u, nil) }); n != 0 {
			t.Errorf("CheckHost(%q): %v allocations; want 0 for a name", host, n)
		}
	}
}
