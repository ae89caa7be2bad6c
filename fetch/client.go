package fetch

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goodbot-go/goodbot/challenge"
	"github.com/goodbot-go/goodbot/internal/basetransport"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/signing"
)

// New returns an *http.Client that sends requests as bot: each request, and
// each redirect hop, passes the URL checks (method, block list, deny and
// login patterns), the robots.txt gate, politeness, signing and the limits,
// in that order (see the package documentation). The client has no cookie
// jar unless bot.Jar is set.
//
// Each call builds its own robots cache and (unless bot.Gate is set) its own
// pacing state: make one client per bot and share it.
func New(bot Bot) (*http.Client, error) {
	c, err := newChain(bot)
	if err != nil {
		return nil, err
	}
	return c.client(nil), nil
}

// Wrap is [New] over an existing client: the new client sends through
// existing's Transport unless bot.Transport is set, calls existing's
// CheckRedirect after its own hop limit, and takes existing's Timeout when
// bot.Limits.Timeout is zero. existing is not modified. Its Jar is not
// carried over: cookies come only from bot.Jar. As with [New], the
// Authorization and Proxy-Authorization headers of a request are removed,
// whether or not bot.Jar is set: the bot sends no credentials.
//
// A nil existing.Transport means the base transport New builds, whose
// dialer checks the addresses dialled (Bot.AllowInternal); so does an
// *http.Transport when bot.LocalAddr is valid (it is cloned to set the
// source address). Any other transport dials on its own, and only hosts
// that are literal addresses are checked.
//
// The client (like New's and [NewTransport]) returns an error, not the
// response, for a challenge page and, for an HTML-only bot, another content
// type, although the server answered: see "Answers that come back as
// errors" in the package documentation.
func Wrap(bot Bot, existing *http.Client) (*http.Client, error) {
	if existing == nil {
		existing = &http.Client{}
	}
	if bot.Transport == nil && existing.Transport != nil {
		bot.Transport = existing.Transport
		if t, ok := bot.Transport.(*http.Transport); ok && bot.LocalAddr.IsValid() {
			t = t.Clone()
			t.DialContext = guardedDialer(bot.LocalAddr, newAddrPolicy(bot.AllowInternal)).DialContext
			bot.Transport = t
		}
	}
	if bot.Limits.Timeout == 0 && existing.Timeout > 0 {
		bot.Limits.Timeout = existing.Timeout
	}
	c, err := newChain(bot)
	if err != nil {
		return nil, err
	}
	return c.client(existing.CheckRedirect), nil
}

// chain is the composed client state of one bot.
type chain struct {
	ua       uaTemplate
	agent    robots.Agent
	from     string
	accept   string
	htmlOnly bool
	jar      http.CookieJar // nil: no cookies sent or stored

	uaVals, fromVals, acceptVals []string // the fixed header values, len == cap
	machineAcceptVals            []string // Accept of an HTML-only bot's WithMachineFile requests
	deny                         [][]string
	login                        [][]string
	blocked                      []string
	addrs                        *addrPolicy
	noDowngrade                  bool
	limits                       Limits
	detector                     *challenge.Detector
	robots                       *robots.Cache
	usage                        usagePolicy
	pay                          *payer // nil: the bot does not pay
	log                          *slog.Logger
	signer                       *signing.Signer // answers Accept-Signature challenges (acceptsig.go)

	// plainHeader is the header of a Fetcher Get's first request when it
	// needs nothing but the bot's fixed fields (plainFirstHop), shared by
	// all such requests: nil unless every layer below botTransport leaves
	// a request's header as it is (the chain's own base transport, which
	// net/http does not write to, and no payer, which adds its field). It
	// is never written, and no such request leaves the Fetcher (a Page has
	// its answer's header, not its request's).
	plainHeader http.Header

	base  http.RoundTripper     // the bot's base transport
	pol   *politeness.Transport // the top of inner
	inner http.RoundTripper     // politeness -> signing -> limits -> base
	outer http.RoundTripper     // checks -> robots -> headers -> inner

	mu       sync.Mutex                // guards pending
	pending  map[string]*robots.Robots // robots.txt just read, by host key, for the gap after its own fetch
	npending atomic.Int32              // len(pending), stored under mu: read without it, no lock while none waits
}

// crawlDelay is the Crawl-delay for the gap after a request to u: that of
// the robots.txt copy just read, when the request fetched it (the gap
// after the robots.txt fetch itself is computed before the cache stores
// it, and a copy fetched again may say another Crawl-delay than the one
// cached), else that of the cached copy. A copy just read serves that one
// gap and is let go: a site whose pages are never fetched (robots.txt
// disallows them all) leaves nothing behind.
func (c *chain) crawlDelay(u *url.URL) (time.Duration, bool) {
	if c.npending.Load() > 0 {
		key := politeness.HostKey(u)
		c.mu.Lock()
		r, ok := c.pending[key]
		if ok {
			delete(c.pending, key)
			c.npending.Store(int32(len(c.pending)))
		}
		c.mu.Unlock()
		if ok {
			return r.CrawlDelay(c.agent)
		}
	}
	r, ok := c.robots.Cached(u)
	if !ok {
		return 0, false
	}
	return r.CrawlDelay(c.agent)
}

// crawlDelayFor is the politeness Transport's CrawlDelayFor: for the first
// request of a Fetcher's Get, the Crawl-delay of the robots.txt copy that
// admitted it, taken then, when that copy is still the cache's and no copy
// just read waits; crawlDelay otherwise. The answer is crawlDelay's either
// way, without looking the copy up again when the turn ends.
func (c *chain) crawlDelayFor(req *http.Request) (time.Duration, bool) {
	if g := fetcherGet(req.Context()); g != nil && req.URL == g.admitted &&
		c.npending.Load() == 0 && g.gap.held.Current() {
		return g.gap.delay, g.gap.ok
	}
	return c.crawlDelay(req.URL)
}

func newChain(bot Bot) (*chain, error) {
	ua, err := parseUA(bot.UserAgent)
	if err != nil {
		return nil, err
	}
	agent, err := bot.agent()
	if err != nil {
		return nil, err
	}
	usage, err := newUsagePolicy(&bot)
	if err != nil {
		return nil, err
	}
	if err := checkHeaderText(bot.From); err != nil {
		return nil, fmt.Errorf("fetch: invalid From: %v", err)
	}
	pay, signer, err := newPayer(&bot)
	if err != nil {
		return nil, err
	}
	bot.Signer = signer
	if bot.Signer != nil {
		// A signer that cannot sign would fail every request: say so now.
		if _, err := bot.Signer.KeyID(); err != nil {
			return nil, fmt.Errorf("fetch: unusable Signer: %w", err)
		}
	}
	c := &chain{
		ua:       ua,
		agent:    agent,
		from:     bot.From,
		accept:   bot.Accept,
		htmlOnly: bot.HTMLOnly,
		jar:      bot.Jar,
		limits:   bot.Limits,
		addrs:    newAddrPolicy(bot.AllowInternal),
		detector: bot.Challenge,
		usage:    usage,
		pay:      pay,
		log:      bot.Logger,
	}
	if c.accept == "" {
		if bot.HTMLOnly {
			c.accept = "text/html,application/xhtml+xml;q=0.9"
		} else {
			c.accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
		}
	}
	if err := checkHeaderText(c.accept); err != nil {
		return nil, fmt.Errorf("fetch: invalid Accept: %v", err)
	}
	c.uaVals = []string{ua.fixed}[:1:1]
	c.fromVals = []string{c.from}[:1:1]
	c.acceptVals = []string{c.accept}[:1:1]
	c.machineAcceptVals = []string{"application/xml,text/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5"}[:1:1]
	deny := bot.Deny
	if deny == nil {
		deny = DefaultDeny()
	}
	login := bot.Login
	if login == nil {
		login = DefaultLogin()
	}
	c.deny = compileWords(deny)
	c.login = compileWords(login)
	for _, d := range bot.BlockedDomains {
		if d = blockedHost(d); d != "" {
			c.blocked = append(c.blocked, d)
		}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.detector == nil {
		c.detector = &challenge.Detector{}
	}

	c.noDowngrade = bot.RefuseDowngrade
	c.base = bot.Transport
	if c.base == nil {
		c.base = newBaseTransport(bot.LocalAddr, c.addrs, bot.Politeness.LongestGap(), c.limits.maxHeader())
		if c.pay == nil {
			c.plainHeader = c.newPlainHeader()
		}
	}
	lt := &limitsTransport{base: c.base, maxBody: c.limits.maxBody(), identity: []string{"identity"}}
	if bot.Transport != nil {
		lt.watch = c.log // see resend.go
	}
	var rt http.RoundTripper = lt
	if bot.Events != nil {
		rt = &eventTransport{base: rt, emit: bot.Events}
	}
	if bot.Signer != nil {
		rt = &signing.Transport{Base: rt, Signer: bot.Signer}
		c.signer = bot.Signer
	}
	c.robots = &robots.Cache{TTL: bot.RobotsTTL, Timeout: bot.robotsTimeout(), RetryInterval: bot.RobotsRetry,
		Store: bot.RobotsStore, Logger: bot.Logger}
	pol := &politeness.Transport{
		Base:          rt,
		Policy:        bot.Politeness,
		Gate:          bot.Gate,
		Logger:        bot.Logger,
		CrawlDelayFor: c.crawlDelayFor,
		Observe:       bot.Observe,
	}
	c.pol, c.inner = pol, pol
	c.robots.Transport = &robotsTransport{c: c}
	c.outer = &botTransport{c: c}
	return c, nil
}

// client returns an *http.Client over the chain.
func (c *chain) client(next func(*http.Request, []*http.Request) error) *http.Client {
	max := c.limits.maxRedirects()
	return &http.Client{
		Transport: c.outer,
		Jar:       c.jar,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > max {
				return tooManyRedirects(req.URL, max)
			}
			if c.noDowngrade && req.URL.Scheme == "http" && via[len(via)-1].URL.Scheme == "https" {
				return insecureRedirect(req.URL, via[len(via)-1].URL)
			}
			if next != nil {
				return next(req, via)
			}
			return nil
		},
	}
}

func dialer(local netip.Addr) *net.Dialer {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if local.IsValid() {
		d.LocalAddr = &net.TCPAddr{IP: local.AsSlice(), Zone: local.Zone()}
	}
	return d
}

// newBaseTransport is the default base: net/http with one connection per
// host, an optional source address, and the dialled-address check
// of p. The one connection of a host stays idle for gap (the longest gap
// pacing can put between two requests to it) plus a margin, and no global
// idle cap evicts it, so every paced request to a host reuses its
// connection as long as the site keeps it open: a crawl of thousands of
// hosts opens one connection per host, not one per request (and on HTTPS
// one TLS handshake per host). HTTP/2 is used where the site offers it;
// pacing still sends one request at a time per host. An answer's header
// is read up to maxHeader bytes (Limits.MaxHeaderBytes).
func newBaseTransport(local netip.Addr, p *addrPolicy, gap time.Duration, maxHeader int64) *http.Transport {
	t := basetransport.New()
	t.MaxResponseHeaderBytes = maxHeader
	t.MaxConnsPerHost = 1
	t.MaxIdleConnsPerHost = 1
	t.MaxIdleConns = 0 // no global cap: a host's idle connection waits for its next turn
	if idle := gap + idleMargin; idle > t.IdleConnTimeout {
		t.IdleConnTimeout = idle
	} else if idle < 0 { // gap saturated
		t.IdleConnTimeout = gap
	}
	t.ForceAttemptHTTP2 = true
	t.DialContext = guardedDialer(local, p).DialContext
	return t
}

// idleMargin is how much longer than the longest paced gap a host's idle
// connection is kept: the time a turn can start late under load.
const idleMargin = 30 * time.Second
