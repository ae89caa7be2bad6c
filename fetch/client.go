package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/goodbot-go/goodbot/challenge"
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

	base  http.RoundTripper // the bot's base transport
	inner http.RoundTripper // politeness -> signing -> limits -> base
	outer http.RoundTripper // checks -> robots -> headers -> inner

	mu      sync.Mutex                // guards pending
	pending map[string]*robots.Robots // robots.txt just read, by host key, until the cache has it
}

// crawlDelay is the politeness Transport's CrawlDelay: the cached robots.txt
// copy, or the one just read (the gap after the robots.txt fetch itself is
// computed before the cache stores it).
func (c *chain) crawlDelay(u *url.URL) (time.Duration, bool) {
	r, ok := c.robots.Cached(u)
	c.mu.Lock()
	if len(c.pending) > 0 {
		key := politeness.HostKey(u)
		if ok {
			delete(c.pending, key)
		} else {
			r, ok = c.pending[key]
		}
	}
	c.mu.Unlock()
	if !ok {
		return 0, false
	}
	return r.CrawlDelay(c.agent)
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
		c.base = newBaseTransport(bot.LocalAddr, c.addrs, bot.Politeness.LongestGap())
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
		Base:       rt,
		Policy:     bot.Politeness,
		Gate:       bot.Gate,
		Logger:     bot.Logger,
		CrawlDelay: c.crawlDelay,
		Observe:    bot.Observe,
	}
	c.inner = pol
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
// pacing still sends one request at a time per host.
func newBaseTransport(local netip.Addr, p *addrPolicy, gap time.Duration) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
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

// botTransport is the outermost layer, run once per hop.
type botTransport struct{ c *chain }

func (t *botTransport) CloseIdleConnections() { closeIdle(t.c.base) }

func closeIdle(rt http.RoundTripper) {
	if ci, ok := rt.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

func (t *botTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := t.c
	if req.Method != http.MethodGet && req.Method != http.MethodHead && req.Method != "" {
		closeBody(req)
		return nil, fmt.Errorf("%w (got %s)", ErrMethod, req.Method)
	}
	if err := c.checkURL(req.URL); err != nil {
		closeBody(req)
		c.log.Debug("fetch: refused", "url", req.URL.Redacted(), "err", err)
		return nil, err
	}
	if err := c.checkHop(req); err != nil { // the limits of a client without CheckRedirect
		closeBody(req)
		return nil, err
	}

	// The fetch's time budget: made on the first hop, found again on later
	// hops through the previous hop's response.
	ctx := req.Context()
	var b *budget
	if req.Response != nil && req.Response.Request != nil {
		b, _ = req.Response.Request.Context().Value(budgetKey{}).(*budget)
	}
	bctx := &budgetCtx{b: b} // carries b down the chain
	if b == nil {
		bctx.own.timeout = c.limits.timeout()
		bctx.b = &bctx.own
		b = bctx.b
	}
	cancel, timed := nop, false
	if d, ok := b.deadline(); ok {
		timed = true
		if !time.Now().Before(d) {
			closeBody(req)
			return nil, &Error{Outcome: Timeout, URL: req.URL.Redacted(), Err: context.DeadlineExceeded}
		}
		ctx, cancel = withDeadline(ctx, d)
	}

	if c.pay != nil {
		if err := c.pay.check(req.URL); err != nil {
			cancel()
			closeBody(req)
			return nil, err
		}
	}
	if err := c.robots.Check(ctx, c.agent, req.URL); err != nil {
		cancel()
		closeBody(req)
		c.log.Debug("fetch: robots.txt refused", "url", req.URL.Redacted(), "err", err)
		// Classified as a robots outcome even when the robots.txt fetch
		// failed on one of this chain's own errors.
		return nil, &Error{Outcome: classify(err), URL: req.URL.Redacted(), Err: err}
	}
	if err := c.checkRobotsUsage(req.URL); err != nil {
		cancel()
		closeBody(req)
		c.log.Debug("fetch: usage refused", "url", req.URL.String(), "err", err)
		return nil, err
	}

	// A shallow copy with its own header: the layers below clone again
	// before changing anything else.
	bctx.Context = ctx
	out := req.WithContext(bctx)
	out.Header = cloneHeader(req.Header)
	if h, ok := sendHost(req.URL); ok {
		// Sent to the site key's spelling of the host: net/http would dial
		// a full-width or ideographic spelling as another name.
		u := *req.URL
		u.Host = h
		out.URL = &u
		if out.Host == req.URL.Host {
			out.Host = ""
		}
	}
	if err := c.setHeaders(out, req.Response != nil); err != nil {
		cancel()
		closeBody(req)
		return nil, err
	}
	resp, err := c.send(out)
	if err == nil {
		resp, err = c.answerChallenge(out, resp) // Accept-Signature
	}
	if err != nil {
		cancel()
		return nil, wrap(err, req.URL.Redacted())
	}
	if timed {
		resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	}
	resp.Request = out
	if err := c.inspect(resp, &bctx.pre); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// cloneHeader is Header.Clone with room for the headers setHeaders adds.
func cloneHeader(h http.Header) http.Header {
	n := 0
	for _, vv := range h {
		n += len(vv)
	}
	out := make(http.Header, len(h)+4)
	all := make([]string, n)
	for k, vv := range h {
		if vv == nil {
			out[k] = nil
			continue
		}
		m := copy(all, vv)
		out[k] = all[:m:m]
		all = all[m:]
	}
	return out
}

func closeBody(req *http.Request) {
	if req.Body != nil && req.Body != http.NoBody {
		req.Body.Close()
	}
}

// checkURL applies the URL rules: absolute http(s) without credentials, not
// on the block list, not a literal internal address, no login or deny words.
func (c *chain) checkURL(u *url.URL) error {
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return fmt.Errorf("%w: %s", ErrBadURL, redacted(u))
	}
	if err := c.checkBlocked(u); err != nil {
		return err
	}
	if err := c.checkAddr(u); err != nil {
		return err
	}
	if p := matchURLWords(u, c.login); p != "" {
		return &Error{Outcome: AuthRequired, URL: u.Redacted(), Err: fmt.Errorf("fetch: login page (%q)", p)}
	}
	if p := matchURLWords(u, c.deny); p != "" {
		return &Error{Outcome: Disallowed, URL: u.Redacted(), Err: fmt.Errorf("%w: %q", ErrDenied, p)}
	}
	return nil
}

// checkBlocked refuses URLs on the domain block list, in any spelling
// of the host.
func (c *chain) checkBlocked(u *url.URL) error {
	if len(c.blocked) == 0 {
		return nil
	}
	host := siteHostname(u)
	for _, d := range c.blocked {
		if host == d || strings.HasSuffix(host, "."+d) {
			return &Error{Outcome: BlockedDomain, URL: u.Redacted(), Err: fmt.Errorf("fetch: %s is on the block list", d)}
		}
	}
	return nil
}

// siteHostname returns the host of u's site key ([politeness.HostKey]),
// without port or brackets: one spelling for every spelling of the host.
func siteHostname(u *url.URL) string {
	_, hostport, _ := strings.Cut(politeness.HostKey(u), "://")
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// blockedHost returns the canonical host of a block list entry ("" for an
// empty one): a domain spelled as a site key spells it, or an IP address.
func blockedHost(d string) string {
	d = strings.TrimSpace(d)
	if a, err := netip.ParseAddr(d); err == nil && a.Is6() {
		d = "[" + d + "]"
	}
	h := siteHostname(&url.URL{Scheme: "http", Host: d})
	return strings.TrimLeft(h, ".")
}

// setHeaders sets the bot's headers on out (a clone).
func (c *chain) setHeaders(out *http.Request, redirected bool) error {
	ua, err := c.ua.expand(out.Context())
	if err != nil {
		return err
	}
	h := out.Header
	// Fixed values share one slice per chain (len == cap, so an Add below
	// copies rather than writes into it).
	if c.ua.parts == nil {
		h["User-Agent"] = c.uaVals
	} else {
		h["User-Agent"] = []string{ua}
	}
	if c.from != "" {
		h["From"] = c.fromVals
	} else {
		delete(h, "From")
	}
	if len(h["Accept"]) == 0 {
		if c.htmlOnly && isMachineFile(out.Context()) {
			h["Accept"] = c.machineAcceptVals
		} else {
			h["Accept"] = c.acceptVals
		}
	}
	// The keys are canonical already: delete, not Del.
	if c.jar == nil {
		delete(h, "Cookie")
	}
	delete(h, "Authorization")
	delete(h, "Proxy-Authorization")
	if redirected {
		// Validators belong to the URL first asked for, not to this one.
		delete(h, "If-None-Match")
		delete(h, "If-Modified-Since")
	}
	if v, ok := out.Context().Value(validatorsKey{}).(*conditional); ok {
		v.apply(out)
	}
	if isFresh(out.Context()) {
		h.Set("Cache-Control", "no-cache")
	}
	return nil
}

// inspect turns challenge pages and, for HTML-only bots, other content
// types into errors. It runs above politeness, so that the pacing sees the
// answer as it came.
func (c *chain) inspect(resp *http.Response, pb *prefixBody) error {
	if resp.Request.Method == http.MethodHead || resp.StatusCode == http.StatusNotModified ||
		(resp.StatusCode >= 300 && resp.StatusCode < 400) {
		return nil
	}
	if v := c.sniff(resp, pb); v.Blocked {
		return challengeError(resp.Request.URL, resp.StatusCode, v)
	}
	if c.htmlOnly && resp.StatusCode >= 200 && resp.StatusCode < 300 && !isMachineFile(resp.Request.Context()) {
		if ct := resp.Header.Get("Content-Type"); ct != "" && !isHTML(ct) {
			return &Error{Outcome: NotHTML, URL: resp.Request.URL.Redacted(), Status: resp.StatusCode,
				Err: fmt.Errorf("fetch: content type %q", ct)}
		}
	}
	if err := checkPayment(resp); err != nil {
		return err
	}
	return c.checkHeaderUsage(resp)
}

// challengeError is the error for a challenge page at u, answered with
// status, whose verdict is v.
func challengeError(u *url.URL, status int, v challenge.Verdict) *Error {
	s := u.Redacted()
	return &Error{Outcome: challengeOutcome(v), URL: s, Status: status,
		Err: &challenge.ChallengeError{URL: s, Verdict: v}}
}

// challengeOutcome is the outcome of a challenge page: RateLimited for a
// vendor's rate-limit page (Cloudflare 1015, Wordfence's limit: the site
// says "later", so the page is worth fetching again and Bot.Once gives its
// mark back), Blocked for every other kind (a JS challenge, a CAPTCHA, a
// block: the bot is refused, waiting does not help). Both carry the
// *challenge.ChallengeError, and neither returns the page's body.
func challengeOutcome(v challenge.Verdict) Outcome {
	if v.Kind == challenge.RateLimit {
		return RateLimited
	}
	return Blocked
}

// sniffSizes are the sizes of sniff's pooled buffers, smallest first, the
// last challenge.MaxBytes: a body is read into the smallest that holds it,
// so a 3 KB page holds a 4 KiB buffer while it is read, not a 64 KiB one.
var sniffSizes = [...]int{4 << 10, 16 << 10, challenge.MaxBytes}

// sniffBufs holds sniff's buffers, one pool per size of sniffSizes.
var sniffBufs [len(sniffSizes)]sync.Pool

// getSniffBuf returns a buffer of sniffSizes[class] bytes.
func getSniffBuf(class int) *[]byte {
	if bp, ok := sniffBufs[class].Get().(*[]byte); ok {
		return bp
	}
	b := make([]byte, sniffSizes[class])
	return &b
}

// putSniffBuf gives a buffer of getSniffBuf back to its pool.
func putSniffBuf(bp *[]byte) {
	for i, size := range sniffSizes {
		if cap(*bp) == size {
			sniffBufs[i].Put(bp)
			return
		}
	}
}

// sniffClass is the class of the smallest buffer holding a body of
// contentLength bytes and the EOF after it; the smallest for an unknown
// length (-1).
func sniffClass(contentLength int64) int {
	for i, size := range sniffSizes {
		if contentLength < int64(size) {
			return i
		}
	}
	return len(sniffSizes) - 1
}

// sniff is challenge.Sniff with a pooled buffer: it reads at most
// challenge.MaxBytes of the body, runs the detector, and puts the bytes read
// back in front of the rest of the body (copying only what was read), in
// pb. The buffer starts at the size the Content-Length asks for (the
// smallest when unknown) and moves to the next size only when the body
// fills it. The read's error comes back after those bytes as it was: io.EOF
// for a body that ended, anything else (io.ErrUnexpectedEOF for a body cut
// short of its Content-Length or its last chunk) for one that did not.
func (c *chain) sniff(resp *http.Response, pb *prefixBody) challenge.Verdict {
	class := sniffClass(resp.ContentLength)
	bp := getSniffBuf(class)
	n, err := readFull(resp.Body, *bp)
	for err == nil && class < len(sniffSizes)-1 { // full, and the body may go on
		class++
		next := getSniffBuf(class)
		copy(*next, (*bp)[:n])
		putSniffBuf(bp)
		bp = next
		var m int
		m, err = readFull(resp.Body, (*bp)[n:])
		n += m
	}
	buf := *bp
	v := c.detector.Detect(resp.StatusCode, resp.Header, buf[:n])
	if v.Blocked {
		putSniffBuf(bp)
		return v
	}
	if n == 0 {
		putSniffBuf(bp)
		bp = nil
	}
	*pb = prefixBody{buf: bp, head: buf[:n], err: err, ReadCloser: resp.Body}
	resp.Body = pb
	return v
}

// readFull is io.ReadFull without its translation of errors: it reads into
// buf until buf is full or r fails, and returns r's error as r gave it.
// (io.ReadFull reports a body that ended early and one that broke off
// alike, as io.ErrUnexpectedEOF.)
func readFull(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// prefixBody replays head, then err (if the sniff hit one), then the rest.
// head lives in a pooled buffer (buf), given back by the Read that empties
// head; a body closed before that leaves the buffer to the garbage
// collector (Close may run alongside a Read, so it does not touch them).
type prefixBody struct {
	buf  *[]byte // nil once given back
	head []byte
	err  error
	io.ReadCloser
}

func (b *prefixBody) Read(p []byte) (int, error) {
	if len(b.head) > 0 {
		n := copy(p, b.head)
		b.head = b.head[n:]
		if len(b.head) == 0 {
			b.free()
		}
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.ReadCloser.Read(p)
}

func (b *prefixBody) free() {
	if b.buf != nil {
		putSniffBuf(b.buf)
		b.buf = nil
	}
}

func isHTML(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// robotsTransport carries the robots cache's requests: the bot's headers,
// then the inner chain (politeness, signing, limits), so robots.txt fetches
// are paced and signed like any other, but not under a page's budget.
type robotsTransport struct{ c *chain }

func (t *robotsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.c.checkBlocked(req.URL); err != nil {
		closeBody(req)
		return nil, err // a robots.txt redirect into a blocked domain: unreachable
	}
	if err := t.c.checkAddr(req.URL); err != nil {
		closeBody(req)
		return nil, err
	}
	ctx := context.WithValue(req.Context(), budgetKey{}, (*budget)(nil))
	out := req.WithContext(context.WithValue(ctx, robotsReqKey{}, t.c))
	out.Header = cloneHeader(req.Header)
	if err := t.c.setHeaders(out, false); err != nil {
		return nil, err
	}
	out.Header.Set("Accept", "text/plain,*/*;q=0.5")
	resp, err := t.c.send(out)
	if err != nil || (resp.StatusCode >= 300 && resp.StatusCode < 400) {
		return resp, err // redirects are the cache's to follow
	}
	// A challenge or block page, whatever its status, holds no rules: it
	// is an error, so the cache takes robots.txt as unreachable (the whole
	// site closed, asked again after Bot.RobotsRetry), never as a file
	// without rules (everything allowed) or a 4xx (the same).
	pb := new(prefixBody)
	if v := t.c.sniff(resp, pb); v.Blocked {
		resp.Body.Close()
		return nil, challengeError(req.URL, resp.StatusCode, v)
	}
	return resp, nil
}

type robotsReqKey struct{}

// robotsTee, under the politeness layer, keeps what is read of a robots.txt
// body and parses it at EOF or Close, before politeness computes the host's
// next gap, so that the first gap already honours Crawl-delay.
type robotsTee struct {
	io.ReadCloser
	c    *chain
	key  string
	buf  []byte
	done bool
}

func (b *robotsTee) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if len(b.buf) < robots.MaxParseBytes {
		b.buf = append(b.buf, p[:min(n, robots.MaxParseBytes-len(b.buf))]...)
	}
	if err == io.EOF {
		b.stash()
	}
	return n, err
}

func (b *robotsTee) Close() error {
	b.stash()
	return b.ReadCloser.Close()
}

func (b *robotsTee) stash() {
	if !b.done {
		b.done = true
		r := robots.Parse(b.buf)
		b.c.mu.Lock()
		if b.c.pending == nil {
			b.c.pending = map[string]*robots.Robots{}
		}
		b.c.pending[b.key] = r
		b.c.mu.Unlock()
	}
}

// budget is the time limit of one fetch, redirects included. It starts when
// the first request is sent.
type budget struct {
	timeout time.Duration
	mu      sync.Mutex // guards end
	end     time.Time
}

type budgetKey struct{}

// budgetCtx is context.WithValue(ctx, budgetKey{}, b) with, in the same
// allocation, the budget itself on a fetch's first hop and the hop's body
// wrappers (the limits layer's, when the request reaches it with this very
// context, and sniff's).
type budgetCtx struct {
	context.Context
	b       *budget
	own     budget
	lim     limitedBody
	limUsed bool
	pre     prefixBody
}

func (c *budgetCtx) Value(key any) any {
	if key == (budgetKey{}) {
		return c.b
	}
	return c.Context.Value(key)
}

// start fixes the deadline on the first call and returns it.
func (b *budget) start() (time.Time, bool) {
	if b == nil || b.timeout <= 0 {
		return time.Time{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.end.IsZero() {
		b.end = time.Now().Add(b.timeout)
	}
	return b.end, true
}

// deadline returns the deadline if the budget has started.
func (b *budget) deadline() (time.Time, bool) {
	if b == nil {
		return time.Time{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.end, !b.end.IsZero()
}

// limitsTransport is the innermost layer: it starts the fetch's time budget
// when a request leaves, applies it to the request and its body, caps the
// body, and keeps net/http from resending a request on its own.
type limitsTransport struct {
	base     http.RoundTripper
	maxBody  int64
	h1       sync.Map // URL host -> struct{}: the host's last answer came over HTTP/1.x
	identity []string // {"identity"}, see sendOnce

	// watch reports a Bot.Transport's resends (resend.go); nil for the
	// chain's own base transport.
	watch *slog.Logger
}

// # No silent resends
//
// net/http's Transport resends a bodiless GET or HEAD by itself when a
// reused HTTP/1 keep-alive connection fails after the request was written
// (the server reset or closed it before answering): the host then gets a
// second request at once, below the politeness gap and unseen by the pacing
// above. It does so only for a "replayable" request: one whose Body is nil
// or http.NoBody (or has a GetBody). So the request leaves with Body set to
// sendOnce, an empty body without GetBody: the Transport then never
// resends it. The failure comes back as an error instead, which politeness
// counts and paces like any other. Nothing changes on the wire: the request
// also says TransferEncoding "identity", with which net/http writes an
// unknown-length body as it comes, without Content-Length or chunking
// (Request.Write documents it; transfer.go), and the body is empty. Without
// "identity", net/http would probe the body with a Read in a goroutine of
// its own on every request (probeRequestBody), to the same effect at more
// cost.
//
// HTTP/2 differs: it resends only requests the server did not process
// (REFUSED_STREAM, GOAWAY before the stream), which is no breach, but it
// would send a non-nil body as an empty DATA frame. So only a host whose
// last answer came over HTTP/1.x gets sendOnce. The first request to a host
// goes out unchanged: it finds no connection of this chain to reuse, and
// net/http never resends on a fresh connection.

// sendOnce is the empty, non-rewindable request body described above.
type sendOnce struct{}

func (sendOnce) Read([]byte) (int, error) { return 0, io.EOF }
func (sendOnce) Close() error             { return nil }

// WriteTo lets net/http's io.Copy of the body skip its 32 KB buffer.
func (sendOnce) WriteTo(io.Writer) (int64, error) { return 0, nil }

// noResend reports whether req should leave with a sendOnce body, and
// whether its host's last answer came over HTTP/1.x.
func (t *limitsTransport) noResend(req *http.Request) (once, h1 bool) {
	_, h1 = t.h1.Load(req.URL.Host)
	if (req.Body != nil && req.Body != http.NoBody) || req.GetBody != nil ||
		(req.Method != http.MethodGet && req.Method != http.MethodHead && req.Method != "") {
		return false, h1
	}
	return h1, h1
}

// noteProto remembers whether req's host answers over HTTP/1.x; was is
// what noResend found.
func (t *limitsTransport) noteProto(req *http.Request, resp *http.Response, was bool) {
	switch is := resp.ProtoMajor == 1; {
	case is && !was:
		t.h1.Store(req.URL.Host, struct{}{})
	case was && !is:
		t.h1.Delete(req.URL.Host)
	}
}

func (t *limitsTransport) CloseIdleConnections() { closeIdle(t.base) }

func (t *limitsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	b, _ := req.Context().Value(budgetKey{}).(*budget)
	hop, _ := req.Context().(*budgetCtx) // straight from botTransport: its limitedBody is free
	ctx, cancel := req.Context(), context.CancelFunc(nop)
	deadline, timed := b.start()
	once, h1 := t.noResend(req)
	var sends *sendWatch
	if t.watch != nil {
		sends = new(sendWatch)
		ctx = sends.watch(ctx)
	}
	if timed || once || sends != nil {
		if timed {
			ctx, cancel = context.WithDeadline(ctx, deadline)
		}
		req = req.WithContext(ctx) // a shallow copy: the caller's request is not changed
		if once {
			req.Body, req.TransferEncoding = sendOnce{}, t.identity
		}
	}
	resp, err := t.base.RoundTrip(req)
	if sends != nil {
		sends.report(t.watch, req)
	}
	if err != nil {
		timedOut := timed && errors.Is(ctx.Err(), context.DeadlineExceeded)
		cancel()
		if timedOut {
			return nil, &Error{Outcome: Timeout, URL: req.URL.Redacted(), Err: err}
		}
		return nil, err
	}
	t.noteProto(req, resp, h1)
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	var lb *limitedBody
	if hop != nil && !hop.limUsed {
		hop.limUsed = true
		lb = &hop.lim
	} else {
		lb = new(limitedBody)
	}
	left := t.maxBody
	if left >= 0 && left < MachineFileMaxBytes && isMachineFile(req.Context()) {
		left = MachineFileMaxBytes
	}
	*lb = limitedBody{rc: resp.Body, left: left, ctx: ctx, timed: timed, cancel: cancel, url: req.URL}
	resp.Body = lb
	if c, ok := req.Context().Value(robotsReqKey{}).(*chain); ok && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		resp.Body = &robotsTee{ReadCloser: resp.Body, c: c, key: politeness.HostKey(req.URL)}
	}
	return resp, nil
}

// limitedBody stops at the byte limit, closing the connection, and reports a
// budget that ran out while reading as Timeout.
type limitedBody struct {
	rc     io.ReadCloser
	left   int64 // -1: no limit
	ctx    context.Context
	timed  bool
	cancel context.CancelFunc
	url    *url.URL
	err    error
	once   sync.Once
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left == 0 {
		// At the limit: is there more? Closing unread drops the connection.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n == 0 && err != nil {
			return 0, b.fail(err)
		}
		b.err = &Error{Outcome: TooLarge, URL: b.url.Redacted(), Err: ErrTooLarge}
		b.Close()
		return 0, b.err
	}
	if b.left > 0 && int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	if b.left > 0 {
		b.left -= int64(n)
	}
	if err != nil {
		return n, b.fail(err)
	}
	return n, nil
}

func (b *limitedBody) fail(err error) error {
	if err == io.EOF {
		return err
	}
	if b.timed && errors.Is(b.ctx.Err(), context.DeadlineExceeded) {
		b.err = &Error{Outcome: Timeout, URL: b.url.Redacted(), Err: err}
		return b.err
	}
	return err
}

func (b *limitedBody) Close() error {
	var err error
	b.once.Do(func() {
		err = b.rc.Close()
		b.cancel()
	})
	return err
}

func nop() {}

// withDeadline is context.WithDeadline; the caller hands the cancel func to
// the response body (cancelBody) or calls it on the error paths.
func withDeadline(ctx context.Context, d time.Time) (context.Context, func()) {
	return context.WithDeadline(ctx, d)
}

// cancelBody releases a context when the body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel func()
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
