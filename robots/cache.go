package robots

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/goodbot-go/goodbot/internal/sitekey"
)

// Defaults for the zero fields of a [Cache].
const (
	// DefaultTTL is how long a fetched copy is used before it is fetched
	// again. RFC 9309 §2.4 asks for no more than 24 hours; a bot that wants
	// fresher rules sets a shorter TTL.
	DefaultTTL = 24 * time.Hour
	// DefaultMaxBytes is how much of a robots.txt body is read; the rest is
	// not downloaded.
	DefaultMaxBytes = MaxParseBytes
	// DefaultTimeout bounds one robots.txt fetch, redirects included. It
	// covers any wait the Transport imposes (a pacing transport may hold the
	// request for a Crawl-delay of up to a minute), so it is generous.
	DefaultTimeout = 2 * time.Minute
	// DefaultMaxRedirects is how many redirects are followed (RFC 9309
	// §2.3.1.2 recommends at least five).
	DefaultMaxRedirects = 5
	// DefaultRetryInterval is how soon a closed site's robots.txt is asked
	// for again.
	DefaultRetryInterval = time.Minute
	// DefaultMaxEntries is how many origins the Cache keeps in memory
	// (about 1 KB each for a typical robots.txt, so about 10 MB).
	DefaultMaxEntries = 10_000
)

// Cache keeps one compiled robots.txt per origin (scheme, host, port) and
// fetches it when it is missing or stale.
//
// A fetch goes through Transport, so the bot's User-Agent, signature and
// pacing apply to robots.txt requests too. Redirects are followed, up
// to MaxRedirects hops, each through Transport; a chain longer than that, or a
// redirect without a usable Location, counts as "unavailable" (allow all), as
// RFC 9309 §2.3.1.2 permits. At most MaxBytes of the body are read and parsed.
// Concurrent callers for one origin share one fetch.
//
// A copy is used for TTL. After a server error, 429, timeout or network error
// the site is closed (everything but /robots.txt is disallowed) until a later
// fetch gets a 2xx or 4xx; while closed, robots.txt is asked for again at
// most once per RetryInterval, however often the site is checked. A stale copy
// is always replaced by the outcome of the new fetch, so a server error after
// a good copy closes the site too.
//
// The Cache keeps, in memory, one entry (the compiled file) per origin, for
// at most MaxEntries origins: past that bound the origin used least
// recently is forgotten, and its robots.txt is read again (from the Store,
// or fetched) the next time it is asked about, as RFC 9309 §2.4 allows at
// any time. Memory is thus bounded by MaxEntries times the size of a
// compiled file, whatever the number of origins a bot meets.
//
// The zero value is ready to use: it fetches through http.DefaultTransport,
// keeps copies in memory only, and uses the Default* values above. A Cache
// must not be copied after first use. It is safe for concurrent use.
type Cache struct {
	// Transport carries robots.txt requests. nil means http.DefaultTransport.
	Transport http.RoundTripper
	// Header is added to every robots.txt request (for instance User-Agent
	// when Transport does not set it). May be nil.
	Header http.Header
	// TTL is how long a fetched copy is used. Zero means DefaultTTL.
	TTL time.Duration
	// Store persists copies, so that a restarted bot does not refetch a fresh
	// one. nil means memory only. The Cache consults it when an origin is not
	// in memory and saves every fetch outcome to it. A stored copy dated
	// later than the current time (a clock that was ahead when it was saved,
	// another machine's clock, a damaged record) is fetched again: its age
	// is unknown.
	Store Store
	// MaxBytes caps the body read. Zero means DefaultMaxBytes. A body cut
	// at the cap loses its partial last line too, as in [Parse].
	MaxBytes int64
	// Timeout bounds one fetch, redirects, body and any wait in Transport
	// included. Zero means DefaultTimeout. A fetch that times out closes the
	// site. Keep it above the longest pacing wait Transport may impose.
	Timeout time.Duration
	// MaxRedirects is how many redirects are followed. Zero means
	// DefaultMaxRedirects; values below 5 are raised to 5.
	MaxRedirects int
	// RetryInterval is how soon a closed site's robots.txt is fetched again.
	// Zero means DefaultRetryInterval.
	RetryInterval time.Duration
	// Logger receives one record per fetch. nil means silent.
	Logger *slog.Logger
	// MaxEntries is how many origins are kept in memory; past it, the one
	// used least recently (asked about, or fetched) is forgotten. Zero means
	// DefaultMaxEntries; negative means no bound.
	MaxEntries int

	mu    sync.Mutex       // guards sites, lru and the sites' links
	sites map[string]*site // origin -> current copy
	lru   site             // sentinel of the ring of sites, most recently used after it
	sf    singleflight.Group
}

// site is the current copy for one origin. Its fields other than the links
// are set before it is shared and never change.
type site struct {
	robots  *Robots
	fetched time.Time
	err     error // why the site is closed, if it is

	key        string
	prev, next *site       // the Cache's recency ring, under Cache.mu
	gone       atomic.Bool // no longer in sites (replaced or forgotten), set under Cache.mu
}

// touch moves s to the front of the recency ring (inserting it if it is
// not in it). c.mu must be held.
func (c *Cache) touch(s *site) {
	if c.lru.next == nil {
		c.lru.next, c.lru.prev = &c.lru, &c.lru
	}
	if s.next != nil {
		s.prev.next, s.next.prev = s.next, s.prev
	}
	s.prev, s.next = &c.lru, c.lru.next
	c.lru.next.prev = s
	c.lru.next = s
}

// unlink removes s from the recency ring. c.mu must be held.
func (c *Cache) unlink(s *site) {
	s.prev.next, s.next.prev = s.next, s.prev
	s.prev, s.next = nil, nil
}

// Get returns the robots.txt rules for target's origin, fetching them if the
// cache has no fresh copy. A robots.txt that cannot be fetched is not an
// error: Get returns rules that disallow everything and report
// [Robots.Unreachable]. Errors are [ErrBadURL] and ctx's error; a caller that
// gives up does not cancel a fetch other callers share, which runs to its
// Timeout.
func (c *Cache) Get(ctx context.Context, target *url.URL) (*Robots, error) {
	s, err := c.get(ctx, target)
	if err != nil {
		return nil, err
	}
	return s.robots, nil
}

// GetHeld is [Cache.Get] with a Held for the copy returned, which tells
// later, without looking the copy up again, whether it is still the one in
// memory for target's origin.
func (c *Cache) GetHeld(ctx context.Context, target *url.URL) (*Robots, Held, error) {
	s, err := c.get(ctx, target)
	if err != nil {
		return nil, Held{}, err
	}
	return s.robots, Held{s}, nil
}

// Held is one copy as a Cache held it, from [Cache.GetHeld]. The zero Held
// holds nothing.
type Held struct{ s *site }

// Current reports whether the copy is still the one the Cache holds in
// memory for its origin, as [Cache.Cached] would return it: false once the
// copy was replaced (fetched again, or loaded from the Store) or forgotten
// (MaxEntries), and for the zero Held. It costs one atomic load and is safe
// for concurrent use.
func (h Held) Current() bool { return h.s != nil && !h.s.gone.Load() }

// Cached returns the copy in memory for target's origin, fresh or stale,
// without fetching and without touching the Store.
func (c *Cache) Cached(target *url.URL) (*Robots, bool) {
	if s, err := c.lookupURL(target); err == nil && s != nil {
		return s.robots, true
	}
	return nil, false
}

// Fresh returns the copy in memory for target's origin if it is fresh (Get
// would answer from it without fetching), without fetching and without
// touching the Store.
func (c *Cache) Fresh(target *url.URL) (*Robots, bool) {
	if s, err := c.lookupURL(target); err == nil && s != nil && c.fresh(s) {
		return s.robots, true
	}
	return nil, false
}

// FetchedAt returns when the copy in memory for target's origin was fetched
// (or loaded from the Store, with its original fetch time), fresh or stale,
// without fetching. ok is false when there is no copy in memory. It costs
// one map lookup under the Cache's lock and is safe for concurrent use.
func (c *Cache) FetchedAt(target *url.URL) (fetched time.Time, ok bool) {
	if s, err := c.lookupURL(target); err == nil && s != nil {
		return s.fetched, true
	}
	return time.Time{}, false
}

// Check returns nil if a may fetch target, and otherwise a
// *[DisallowedError] (fetching robots.txt first if needed). Other errors are
// those of [Cache.Get].
func (c *Cache) Check(ctx context.Context, a Agent, target *url.URL) error {
	s, err := c.get(ctx, target)
	if err != nil {
		return err
	}
	ok, rule := s.robots.Decide(a, target.RequestURI())
	if ok {
		return nil
	}
	return &DisallowedError{
		URL:         target.Redacted(),
		Agent:       a.Token,
		Rule:        rule,
		Unreachable: s.robots.Unreachable(),
		Err:         s.err,
	}
}

func (c *Cache) get(ctx context.Context, target *url.URL) (*site, error) {
	if s, err := c.lookupURL(target); err != nil {
		return nil, err
	} else if s != nil && c.fresh(s) {
		return s, nil
	}
	o, err := originOf(target)
	if err != nil {
		return nil, err
	}
	ch := c.sf.DoChan(o.key, func() (any, error) {
		return c.refresh(context.WithoutCancel(ctx), o), nil
	})
	select {
	case res := <-ch:
		return res.Val.(*site), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *Cache) lookup(key string) *site {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hit(c.sites[key])
}

// hit marks s (nil: a miss) as just used and returns it. c.mu must be held.
func (c *Cache) hit(s *site) *site {
	if s != nil {
		c.touch(s)
	}
	return s
}

// fresh reports whether s may still be used: younger than the TTL (or,
// for a closed site, the retry interval). A copy dated later than now is
// not fresh: only a stored copy can be (one fetched in this process is
// timed on the monotonic clock), written under a clock that was ahead of
// this one, or damaged, and its real age is unknown, so using it could
// keep a robots.txt longer than RFC 9309 §2.4's 24 hours, even for good.
func (c *Cache) fresh(s *site) bool {
	age := time.Since(s.fetched)
	if age < 0 {
		return false
	}
	if s.robots.Unreachable() {
		return age < min(c.retryInterval(), c.ttl())
	}
	return age < c.ttl()
}

// refresh runs once per origin at a time (singleflight).
func (c *Cache) refresh(ctx context.Context, o origin) *site {
	prev := c.lookup(o.key)
	if prev != nil && c.fresh(prev) {
		return prev // a flight that ended just before this one fetched it
	}
	if prev == nil && c.Store != nil {
		e, ok, err := c.Store.Load(ctx, o.key)
		if err != nil {
			c.log().Warn("robots: store load failed", "origin", o.key, "err", err)
		}
		if ok && err == nil {
			s := &site{robots: FromResponse(e.Status, e.Body, nil), fetched: e.Fetched}
			if s.robots.Unreachable() {
				s.err = &StatusError{URL: o.robotsURL(), Status: e.Status}
			}
			if c.fresh(s) {
				c.put(o.key, s)
				return s
			}
		}
	}
	e, err := c.fetch(ctx, o.robotsURL())
	s := &site{robots: FromResponse(e.Status, e.Body, err), fetched: e.Fetched, err: err}
	if err == nil && s.robots.Unreachable() {
		s.err = &StatusError{URL: o.robotsURL(), Status: e.Status}
	}
	c.put(o.key, s)
	c.log().Info("robots: fetched", "origin", o.key, "status", e.Status, "bytes", len(e.Body),
		"unreachable", s.robots.Unreachable(), "err", err)
	if c.Store != nil {
		if err := c.Store.Save(ctx, o.key, e); err != nil {
			c.log().Warn("robots: store save failed", "origin", o.key, "err", err)
		}
	}
	return s
}

func (c *Cache) put(key string, s *site) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sites == nil {
		c.sites = make(map[string]*site)
	}
	if old := c.sites[key]; old != nil {
		c.unlink(old)
		old.gone.Store(true)
	}
	s.key = key
	c.sites[key] = s
	c.touch(s)
	if max := c.maxEntries(); max > 0 {
		for len(c.sites) > max {
			last := c.lru.prev
			c.unlink(last)
			delete(c.sites, last.key)
			last.gone.Store(true)
		}
	}
}

// fetch gets robotsURL, following redirects. The Entry's Status is 0 when err
// is set.
func (c *Cache) fetch(ctx context.Context, robotsURL string) (Entry, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	u := robotsURL
	for hop := 0; ; hop++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return Entry{Fetched: time.Now()}, err
		}
		for k, vs := range c.Header {
			req.Header[k] = append([]string(nil), vs...)
		}
		resp, err := c.transport().RoundTrip(req)
		if err != nil {
			return Entry{Fetched: time.Now()}, err
		}
		if isRedirect(resp.StatusCode) {
			loc := resp.Header.Get("Location")
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
			next, err := req.URL.Parse(loc)
			if hop >= c.maxRedirects() || loc == "" || err != nil ||
				(next.Scheme != "http" && next.Scheme != "https") {
				// Too many hops or nowhere to go: "unavailable" (§2.3.1.2).
				return Entry{Fetched: time.Now(), Status: resp.StatusCode}, nil
			}
			u = next.String()
			continue
		}
		var body []byte
		if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			// Read one byte more than the limit to know whether the body was
			// cut, and if so drop the partial last line.
			body, err = io.ReadAll(io.LimitReader(resp.Body, c.maxBytes()+1))
			body, _ = cutAtLine(body, int(c.maxBytes()))
		}
		resp.Body.Close()
		if err != nil {
			return Entry{Fetched: time.Now()}, err
		}
		return Entry{Fetched: time.Now(), Status: resp.StatusCode, Body: body}, nil
	}
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// StatusError is why a site is closed when its robots.txt answered with a
// server error (or 429); it is the Err of the [DisallowedError].
//
// It is plain data; a zero StatusError reads as a failed fetch.
type StatusError struct {
	URL    string // the robots.txt URL
	Status int    // the HTTP status; 0 for a failure restored from a Store
}

func (e *StatusError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("robots: %s: fetch failed", e.URL)
	}
	return fmt.Sprintf("robots: %s answered %d", e.URL, e.Status)
}

// origin is an RFC 9309 origin: scheme, host and port, as a site key.
type origin struct {
	key string // the site key "scheme://host:port", see sitekey.Append
}

// robotsURL is the origin's /robots.txt URL, on the canonical spelling of
// its host (built only when fetching, so that a cache hit costs one string).
func (o origin) robotsURL() string {
	base := o.key
	if strings.HasPrefix(base, "http://") {
		base = strings.TrimSuffix(base, ":80")
	} else {
		base = strings.TrimSuffix(base, ":443")
	}
	return strings.ReplaceAll(base, "%", "%25") + "/robots.txt" // an IPv6 zone's '%' is escaped in a URL
}

// originOf returns the RFC 9309 origin of u. Every spelling of one site
// (case, trailing dots, zero-padded or default ports, IDNA forms) has one
// origin.
func originOf(u *url.URL) (origin, error) {
	var buf [128]byte
	key, err := appendOriginKey(buf[:0], u)
	if err != nil {
		return origin{}, err
	}
	return origin{key: string(key)}, nil
}

// appendOriginKey appends the site key of u to dst, or returns ErrBadURL if
// u is not an http or https URL with a host.
func appendOriginKey(dst []byte, u *url.URL) ([]byte, error) {
	if u == nil || !(strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https")) {
		return dst, ErrBadURL
	}
	n := len(dst)
	dst = sitekey.Append(dst, u)
	if i := bytes.Index(dst[n:], []byte("://")); i < 0 || n+i+3 >= len(dst) || dst[n+i+3] == ':' {
		return dst[:n], ErrBadURL // no host
	}
	return dst, nil
}

// lookupURL is lookup(originOf(u).key) without building the key string:
// a cache hit, the common case, allocates nothing.
func (c *Cache) lookupURL(u *url.URL) (*site, error) {
	var buf [128]byte
	key, err := appendOriginKey(buf[:0], u)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hit(c.sites[string(key)]), nil
}

func (c *Cache) transport() http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

func (c *Cache) ttl() time.Duration {
	if c.TTL > 0 {
		return c.TTL
	}
	return DefaultTTL
}

func (c *Cache) maxBytes() int64 {
	if c.MaxBytes > 0 {
		return c.MaxBytes
	}
	return DefaultMaxBytes
}

func (c *Cache) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

func (c *Cache) maxRedirects() int {
	return max(c.MaxRedirects, DefaultMaxRedirects)
}

func (c *Cache) retryInterval() time.Duration {
	if c.RetryInterval > 0 {
		return c.RetryInterval
	}
	return DefaultRetryInterval
}

func (c *Cache) maxEntries() int {
	if c.MaxEntries == 0 {
		return DefaultMaxEntries
	}
	return c.MaxEntries
}

func (c *Cache) log() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}
