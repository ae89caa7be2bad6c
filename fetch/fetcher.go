package fetch

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/goodbot-go/goodbot/challenge"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
)

// Page is the result of [Fetcher.Get]: plain data owned by the caller (Get
// keeps no reference to it).
type Page struct {
	URL         string            // the URL asked for
	FinalURL    string            // the URL of the last hop (after redirects)
	Status      int               // HTTP status of the last answer; 0 if none
	Header      http.Header       // header of the last answer; nil if none
	Body        []byte            // the body read (up to the limit); nil for a challenge page
	Truncated   bool              // the body passed the byte limit and was cut (Outcome TooLarge)
	NotModified bool              // 304 to a conditional request (Outcome NotModified)
	Outcome     Outcome           // how the fetch ended
	Verdict     challenge.Verdict // the challenge verdict when Outcome is Blocked
	Usage       robots.Usage      // what robots.txt and the response header say about using the page (see Bot.Purposes)
	Payment     PaymentRequest    // what a 402 asked (Outcome PaymentRequired); zero otherwise
	// Rules are what the page says to this bot about keeping it and
	// following its links (noindex, nofollow, noai...): its Robots-Tag and
	// X-Robots-Tag fields and, for HTML, the robots meta elements of its
	// head, for every bot and for the bot's own names (token and former
	// names), as they stand when the answer came (a past
	// unavailable_after is noindex). Get only reports them: what to keep
	// is the caller's decision.
	Rules robots.PageRules
}

// Fetcher fetches pages as a bot and says how each fetch ended. Make one with
// [NewFetcher] (a zero Fetcher has no bot: its Get fails with
// ErrNoBot); it is safe for concurrent use.
type Fetcher struct {
	client     *http.Client
	chain      *chain
	validators ValidatorStore
	fetched    FetchedSet
	once       bool
	rateLimit  []int
	log        *slog.Logger
	events     func(Event)

	maxPages int
	mu       sync.Mutex     // guards pages
	pages    map[string]int // pages asked for, by site
}

// ErrNoBot is returned by the methods of a Fetcher not made by [NewFetcher].
var ErrNoBot = errors.New("fetch: Fetcher has no Bot (use NewFetcher)")

// ErrSiteBudget is the cause of a GaveUp [*Error] when a site's page budget
// (Bot.MaxPagesPerSite) is spent.
var ErrSiteBudget = errors.New("fetch: page budget for the site spent")

// takePage counts one page for u's site and reports whether the budget
// allowed it.
func (f *Fetcher) takePage(u *url.URL) bool {
	if f.maxPages <= 0 {
		return true
	}
	key := politeness.HostKey(u)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pages[key] >= f.maxPages {
		return false
	}
	if f.pages == nil {
		f.pages = map[string]int{}
	}
	f.pages[key]++
	return true
}

// NewFetcher returns a Fetcher for bot (see [New] for the client under it).
func NewFetcher(bot Bot) (*Fetcher, error) {
	c, err := newChain(bot)
	if err != nil {
		return nil, err
	}
	f := &Fetcher{
		client:     c.client(nil),
		chain:      c,
		validators: bot.Validators,
		fetched:    bot.Fetched,
		once:       bot.Once,
		rateLimit:  bot.Politeness.RateLimitStatuses,
		log:        c.log,
		maxPages:   bot.MaxPagesPerSite,
		events:     bot.Events,
	}
	if f.validators == nil {
		f.validators = &MemoryValidators{}
	}
	if f.fetched == nil {
		f.fetched = &MemorySet{}
	}
	if f.rateLimit == nil {
		f.rateLimit = []int{http.StatusTooManyRequests, http.StatusServiceUnavailable}
	}
	return f, nil
}

// Client returns the Fetcher's *http.Client: the same chain and state
// (robots cache, pacing), for requests Get does not cover. It is nil for a
// zero Fetcher, and so is [Fetcher.Robots].
func (f *Fetcher) Client() *http.Client { return f.client }

// Robots returns the Fetcher's robots.txt cache: Get, Cached and Check
// answer from (and fetch through) the same chain and state the Fetcher uses,
// so a bot can read a site's Sitemap lines without a second robots.txt
// request. Do not change its fields.
func (f *Fetcher) Robots() *robots.Cache {
	if f.chain == nil {
		return nil
	}
	return f.chain.robots
}

// CloseIdleConnections closes the idle connections of the base transport.
func (f *Fetcher) CloseIdleConnections() {
	if f.client != nil {
		f.client.CloseIdleConnections()
	}
}

// Get fetches rawURL with GET and returns the page and how the fetch ended.
//
// The page is non-nil except when the request cannot be made at all (a URL
// that is not absolute http(s), a User-Agent placeholder without a value:
// ErrBadURL, ErrUserAgent), and its Outcome is set. The error is nil for OK
// and NotModified and an [*Error] for every other outcome. A refetch carries
// the validators saved from the last 2xx answer for the URL, and answers
// 304 with NotModified. opts (at most one is needed; several are merged)
// ask for Cache-Control: no-cache, a machine file or given validators: see
// [GetOptions]. [WithUserAgentVar] fills User-Agent placeholders.
//
// Get applies the URL rules and robots.txt (fetching it first if need be),
// then waits for the host's gap (see [politeness.Transport.Wait]), and only
// then builds and sends its request: a refused URL does not wait, and a
// Get waiting for its host's turn holds its URL and little else (under
// 2 KB of heap, its goroutine included), so a crawler can keep a waiting
// Get for each of thousands of hosts.
//
// Outcomes by status: 304 NotModified; 401 and 403 AuthRequired; 402
// PaymentRequired (never content: [Error.Payment] carries the price asked,
// if any); the
// politeness rate-limit statuses (default 429 and 503) RateLimited; any other
// 5xx Unreachable; every other status OK (check Page.Status).
func (f *Fetcher) Get(ctx context.Context, rawURL string, opts ...GetOptions) (page *Page, err error) {
	if f == nil || f.chain == nil {
		return nil, ErrNoBot
	}
	defer func() { f.emitGet(rawURL, page, err) }()
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, &url.Error{Op: "Get", URL: Redact(rawURL), Err: badURL(rawURL, err)}
	}
	key, err := normalizeURL(u, rawURL)
	if err != nil {
		return nil, err
	}
	if _, err := f.chain.ua.expand(ctx); err != nil {
		return nil, err
	}
	o, err := mergeOptions(opts)
	if err != nil {
		return nil, err
	}
	ctx = o.context(ctx)
	if !f.once {
		page, _, err := f.get(ctx, u, rawURL, key, o.Validator)
		return page, err
	}
	// The mark is taken before the request, so that concurrent Gets of one
	// URL fetch it once, and given back when the fetch ended without a
	// definitive answer (no repeat requests, but a page refused for now
	// is fetched again later).
	added, err := f.fetched.Add(ctx, key)
	if err != nil {
		return nil, err
	}
	if !added {
		page := &Page{URL: rawURL, FinalURL: rawURL}
		return page.fail(&Error{Outcome: Duplicate, URL: rawURL, Err: ErrDuplicate})
	}
	page, finalKey, err := f.get(ctx, u, rawURL, key, o.Validator)
	keep := context.WithoutCancel(ctx) // the fetch's own ctx may be what ended it
	switch {
	case page == nil || page.Outcome.Retryable() || page.Outcome == PaymentRequired:
		// A page for sale is not fetched: the mark goes back, so that
		// a bot that pays (or has budget again) may still fetch it.
		f.release(keep, key)
	case finalKey != "" && finalKey != key:
		if _, err := f.fetched.Add(keep, finalKey); err != nil {
			f.log.Warn("fetch: fetched set add failed", "url", finalKey, "err", err)
		}
	}
	return page, err
}

// release takes url out of the fetched set, if the set can do that.
func (f *Fetcher) release(ctx context.Context, url string) {
	r, ok := f.fetched.(FetchedRemover)
	if !ok {
		f.log.Debug("fetch: fetched set cannot release a mark", "url", url)
		return
	}
	if err := r.Remove(ctx, url); err != nil {
		f.log.Warn("fetch: fetched set remove failed", "url", url, "err", err)
	}
}

// get is Get after the fetched-set check; it also returns the normalised
// final URL ("" if there was no answer). A non-zero v replaces the stored
// validators.
func (f *Fetcher) get(ctx context.Context, u *url.URL, rawURL, key string, v Validator) (*Page, string, error) {
	page, err := f.fetch(ctx, u, rawURL, key, v)
	finalKey := ""
	switch {
	case page == nil || page.Status == 0:
	case page.FinalURL == rawURL:
		finalKey = key // no redirect: the key already made from rawURL
	default:
		finalKey, _ = Normalize(page.FinalURL)
	}
	return page, finalKey, err
}

func (f *Fetcher) fetch(ctx context.Context, u *url.URL, rawURL, key string, v Validator) (*Page, error) {
	if !f.takePage(u) {
		page := &Page{URL: rawURL, FinalURL: rawURL}
		return page.fail(&Error{Outcome: GaveUp, URL: rawURL, Err: ErrSiteBudget})
	}
	// Admit the URL (its rules, then robots.txt, fetched first if need be)
	// and wait for the host's gap before building anything: a refused URL
	// does not wait, and a Get waiting for its turn holds its URL, not a
	// request. The chain does not check the first request again.
	var rules *robots.Robots // the robots.txt copy that admitted u
	var gap admittedDelay
	var use robots.Usage // what rules say about using u
	err := f.chain.admitURL(u)
	if err == nil {
		rules, gap.held, err = f.chain.admitSite(ctx, u)
	}
	if rules != nil {
		// What the page and the gap after it will need of the copy, read
		// while its rules are at hand.
		gap.delay, gap.ok = rules.CrawlDelay(f.chain.agent)
		use = f.chain.robotsUsage(u, rules)
	}
	if err == nil {
		if err = f.chain.pol.Wait(ctx, u); err != nil {
			err = &Error{Outcome: classify(err), URL: Redact(rawURL), Err: err}
		}
	}
	if err != nil {
		page := &Page{URL: rawURL, FinalURL: rawURL}
		return page.fail(asError(err, Redact(rawURL)))
	}
	page := &Page{URL: rawURL, FinalURL: rawURL}
	if v.IsZero() {
		v = f.storedValidator(ctx, key)
	}
	ctx = &getCtx{Context: ctx, cond: conditional{url: key, v: v, admitted: u, gap: gap}}
	req := newGet(ctx, u)
	// rawURL is how u writes itself when it is its own normalised form:
	// an answer to u then keeps it as the page's FinalURL.
	var asked *url.URL
	if key == rawURL {
		asked = u
	}
	resp, err := f.client.Do(req)
	if err != nil {
		if resp != nil {
			page.setResponse(resp, asked)
		}
		return page.fail(asError(err, rawURL))
	}
	defer resp.Body.Close()
	page.setResponse(resp, asked)
	// Redirected, the final URL's copy is looked up.
	page.Usage = f.chain.pageUsage(resp, use, rules != nil && resp.Request.URL == u)
	body, err := readBody(resp)
	page.Body = body
	page.Rules = f.chain.pageRules(resp.Header, body, time.Now())
	if err != nil {
		fe := asError(err, page.FinalURL)
		page.Truncated = fe.Outcome == TooLarge
		return page.fail(fe)
	}
	finalKey := key // no redirect: the request still has u
	if resp.Request.URL != u {
		finalKey, _ = normalizeURL(resp.Request.URL, "")
	}
	switch s := resp.StatusCode; {
	case s == http.StatusNotModified:
		page.NotModified = true
		page.Outcome = NotModified
		return page, nil
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return page.fail(&Error{Outcome: AuthRequired, URL: page.FinalURL, Status: s, Err: ErrAuthRequired})
	case slices.Contains(f.rateLimit, s):
		return page.fail(&Error{Outcome: RateLimited, URL: page.FinalURL, Status: s, Err: ErrRateLimited})
	case s >= 500:
		return page.fail(&Error{Outcome: Unreachable, URL: page.FinalURL, Status: s, Err: ErrUnreachable})
	case s >= 200 && s < 300 && finalKey != "":
		nv := Validator{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
		if !nv.IsZero() {
			if err := f.validators.Save(ctx, finalKey, nv); err != nil {
				f.log.Warn("fetch: validator store save failed", "url", finalKey, "err", err)
			}
		}
	}
	page.Outcome = OK
	return page, nil
}

// storedValidator returns the validator the store holds for key, without
// a value net/http would refuse to send (a control character: a damaged
// record, or a store that holds anything). Such a value would fail every
// fetch of the page, and the page would never be read again to replace it:
// it is dropped, and the store is given the rest.
func (f *Fetcher) storedValidator(ctx context.Context, key string) Validator {
	v, _, err := f.validators.Load(ctx, key)
	if err != nil {
		f.log.Warn("fetch: validator store load failed", "url", key, "err", err)
		return Validator{}
	}
	ok := v
	if !httpguts.ValidHeaderFieldValue(ok.ETag) {
		ok.ETag = ""
	}
	if !httpguts.ValidHeaderFieldValue(ok.LastModified) {
		ok.LastModified = ""
	}
	if ok != v {
		f.log.Warn("fetch: stored validator is not a valid header value; sent without it", "url", key)
		if err := f.validators.Save(ctx, key, ok); err != nil {
			f.log.Warn("fetch: validator store save failed", "url", key, "err", err)
		}
	}
	return ok
}

// newGet returns a GET request for u, as http.NewRequestWithContext would
// for u.String(), without writing u out and parsing it again (u is not
// copied: the chain never changes a request's URL). Its Host is set only
// when it is not u.Host (an empty port, which net/http drops): the request
// is sent to u.Host otherwise, and http.Client copies the URL of a request
// whose Host is set.
func newGet(ctx context.Context, u *url.URL) *http.Request {
	r := http.Request{Method: http.MethodGet, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: make(http.Header)}
	if h := strings.TrimSuffix(u.Host, ":"); h != u.Host {
		r.Host = h
	}
	return r.WithContext(ctx)
}

// setResponse sets the page's status, header and final URL from resp; an
// answer to asked (nil: none) keeps the FinalURL the page has, which must
// be how asked writes itself.
func (p *Page) setResponse(resp *http.Response, asked *url.URL) {
	p.Status = resp.StatusCode
	p.Header = resp.Header
	if resp.Request != nil && resp.Request.URL != nil && resp.Request.URL != asked {
		p.FinalURL = resp.Request.URL.String()
	}
}

// fail sets the page's outcome (and verdict, status, URL) from e.
func (p *Page) fail(e *Error) (*Page, error) {
	p.Outcome = e.Outcome
	p.Verdict = e.Verdict()
	p.Usage = p.Usage.Combine(e.usage())
	p.Payment, _ = e.Payment()
	if e.Status != 0 {
		p.Status = e.Status
	}
	if e.URL != "" && p.Status == 0 {
		p.FinalURL = e.URL
	}
	if e.Outcome == Blocked || p.Verdict.Blocked {
		p.Body = nil // a challenge page is never content
	}
	return p, e
}

// asError returns the *Error in err's chain, or a new one classifying err.
func asError(err error, url string) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	return &Error{Outcome: classify(err), URL: url, Err: err}
}
