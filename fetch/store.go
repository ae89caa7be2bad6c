package fetch

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/goodbot-go/goodbot/internal/urinorm"

	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
)

// Validator is what a server said about a page version, sent back on a
// refetch: ETag as If-None-Match, Last-Modified as If-Modified-Since,
// both verbatim as received.
type Validator struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
}

// IsZero reports whether v holds nothing to send.
func (v Validator) IsZero() bool { return v.ETag == "" && v.LastModified == "" }

// ValidatorStore keeps a [Validator] per normalised URL (see [Normalize]).
// Implementations must be safe for concurrent use; fetch/boltstate keeps
// them in the bot's state file. A loaded value that is not a valid header
// value (a control character, from a damaged record) is not sent: the
// [Fetcher] logs it, saves the validator back without it and fetches the
// page without that condition.
type ValidatorStore interface {
	Load(ctx context.Context, url string) (v Validator, ok bool, err error)
	Save(ctx context.Context, url string, v Validator) error
}

// FetchedSet is the set of normalised URLs a bot has fetched.
// Implementations must be safe for concurrent use.
type FetchedSet interface {
	// Add puts url in the set and reports whether it was new. Concurrent
	// Adds of one url report true to exactly one caller.
	Add(ctx context.Context, url string) (added bool, err error)
	// Has reports whether url is in the set.
	Has(ctx context.Context, url string) (bool, error)
}

// FetchedRemover is a [FetchedSet] that can take a URL out again. With
// Bot.Once, [Fetcher.Get] marks a URL before fetching it (so concurrent Gets
// fetch it once) and removes the mark when the fetch ended with a
// [Outcome.Retryable] outcome, so that the page is fetched again later. A
// FetchedSet without Remove keeps such marks: the URL then ends as
// Duplicate even though it was never fetched.
type FetchedRemover interface {
	FetchedSet
	Remove(ctx context.Context, url string) error
}

// MemoryValidators is a [ValidatorStore] in memory. The zero value is ready
// to use; it is safe for concurrent use.
type MemoryValidators struct {
	mu sync.Mutex // guards m
	m  map[string]Validator
}

// Load implements [ValidatorStore].
func (s *MemoryValidators) Load(_ context.Context, url string) (Validator, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[url]
	return v, ok, nil
}

// Save implements [ValidatorStore].
func (s *MemoryValidators) Save(_ context.Context, url string, v Validator) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]Validator{}
	}
	s.m[url] = v
	return nil
}

// MemorySet is a [FetchedSet] in memory. The zero value is ready to use; it
// is safe for concurrent use.
type MemorySet struct {
	mu sync.Mutex // guards m
	m  map[string]struct{}
}

// Add implements [FetchedSet].
func (s *MemorySet) Add(_ context.Context, url string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[url]; ok {
		return false, nil
	}
	if s.m == nil {
		s.m = map[string]struct{}{}
	}
	s.m[url] = struct{}{}
	return true, nil
}

// Remove implements [FetchedRemover].
func (s *MemorySet) Remove(_ context.Context, url string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, url)
	return nil
}

// Has implements [FetchedSet].
func (s *MemorySet) Has(_ context.Context, url string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[url]
	return ok, nil
}

// Normalize returns the form of rawURL under which fetch keeps validators
// and the fetched set: the scheme lowercased; the host spelled as its
// site key spells it ([politeness.HostKey]: IDNA ASCII form, lowercase, no
// trailing dot; IP addresses as net/netip writes them) with the default port
// dropped and a zero-padded port read as a number; the fragment and an empty
// query dropped; an empty path made "/"; dot segments resolved;
// percent-escapes of unreserved characters decoded, all other escapes
// upper-cased, and spaces, control and non-ASCII bytes escaped. The query
// keeps its order. Only absolute http and https URLs without user
// information are accepted.
//
// Normalize is idempotent (Normalize of its result returns that result),
// and every spelling of one site gives one host, so the normalised URL has
// the site key of rawURL.
func Normalize(rawURL string) (string, error) {
	raw := strings.TrimSpace(rawURL)
	u, err := url.Parse(raw)
	if err != nil {
		return "", badURL(rawURL, err)
	}
	return normalizeURL(u, raw)
}

// normalizeURL is Normalize of u; raw, when not "", is the string u was
// parsed from, returned itself (no string built) when it is already the
// normalised form.
func normalizeURL(u *url.URL, raw string) (string, error) {
	scheme := strings.ToLower(u.Scheme)
	if (scheme != "http" && scheme != "https") || u.Host == "" || u.User != nil {
		return "", fmt.Errorf("%w: %s", ErrBadURL, u.Redacted())
	}
	host := u.Host
	if !plainHost(u) {
		var ok bool
		if host, ok = authority(u); !ok {
			return "", fmt.Errorf("%w: %s: no host", ErrBadURL, u.Redacted())
		}
	}
	path := urinorm.DotSegments(urinorm.Escapes(u.EscapedPath()))
	if path == "" {
		path = "/"
	}
	query := ""
	if u.RawQuery != "" {
		query = urinorm.Escapes(u.RawQuery)
	}
	if spells(raw, scheme, host, path, query) {
		return raw, nil
	}
	var b strings.Builder
	b.Grow(len(scheme) + len("://") + len(host) + len(path) + 1 + len(query))
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	b.WriteString(path)
	if query != "" {
		b.WriteByte('?')
		b.WriteString(query)
	}
	return b.String(), nil
}

// spells reports whether raw is scheme://host path, followed by ?query
// when query is not empty.
func spells(raw, scheme, host, path, query string) bool {
	for _, part := range [...]string{scheme, "://", host, path} {
		var ok bool
		if raw, ok = strings.CutPrefix(raw, part); !ok {
			return false
		}
	}
	if query == "" {
		return raw == ""
	}
	return len(raw) == 1+len(query) && raw[0] == '?' && raw[1:] == query
}

// authority returns the host and port of u's site key ([politeness.HostKey])
// as a URL writes them: the default port dropped, non-ASCII bytes and an
// IPv6 zone's '%' escaped. It reports false when the host is empty, holds
// an ASCII byte no URL host may hold (a bracket outside an IP literal among
// them), or is in brackets but no IPv6 address.
func authority(u *url.URL) (string, bool) {
	_, hostport, _ := strings.Cut(politeness.SiteOrigin(u), "://")
	if hostport == "" || hostport[0] == ':' {
		return "", false
	}
	var b strings.Builder
	rest := hostport
	if end := strings.LastIndexByte(hostport, ']'); hostport[0] == '[' && end > 0 {
		addr, zone, ok := strings.Cut(hostport[1:end], "%")
		if ip, err := netip.ParseAddr(addr); err != nil || !ip.Is6() {
			return "", false // brackets hold an IPv6 address, nothing else
		}
		b.WriteByte('[')
		b.WriteString(addr) // as net/netip writes it
		if ok {
			b.WriteString("%25")
			for i := 0; i < len(zone); i++ {
				if c := zone[i]; urinorm.IsUnreserved(c) {
					b.WriteByte(c)
				} else {
					fmt.Fprintf(&b, "%%%02X", c)
				}
			}
		}
		b.WriteByte(']')
		rest = hostport[end+1:]
	}
	for i := 0; i < len(rest); i++ {
		switch c := rest[i]; {
		case validHostByte(c):
			b.WriteByte(c)
		case c >= 0x80:
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// validHostByte reports whether c may stand unescaped in a URL's host
// name and port (RFC 3986 reg-name and the port's colon; an IP literal's
// brackets are read apart).
func validHostByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("-._~!$&'()*+,;=:", c) >= 0
}

// conditional carries the validators of one fetch to the hop that asks for
// the URL they belong to.
type conditional struct {
	url string // normalised
	v   Validator
	// admitted is the URL of the Get's first request when the Fetcher
	// admitted it (URL rules, robots.txt) before waiting for the host: the
	// chain does not check that request again.
	admitted *url.URL
	// gap is the Crawl-delay of the robots.txt copy that admitted it, for
	// the gap after it (chain.crawlDelayFor).
	gap admittedDelay
}

// admittedDelay is the Crawl-delay of the robots.txt copy that admitted a
// request, with the cache's hold on that copy (zero: no copy).
type admittedDelay struct {
	held  robots.Held
	delay time.Duration
	ok    bool
}

type validatorsKey struct{}

// getCtx is context.WithValue(ctx, validatorsKey{}, &cond), in one
// allocation.
type getCtx struct {
	context.Context
	cond conditional
}

func (c *getCtx) Value(key any) any {
	if key == (validatorsKey{}) {
		return &c.cond
	}
	return c.Context.Value(key)
}

// fetcherGet returns the conditional of ctx's Get when ctx is a
// Fetcher's Get (nil otherwise).
func fetcherGet(ctx context.Context) *conditional {
	c, _ := ctx.Value(validatorsKey{}).(*conditional)
	return c
}

func (c *conditional) apply(req *http.Request) {
	if c.v.IsZero() {
		return
	}
	if k, err := normalizeURL(req.URL, ""); err != nil || k != c.url {
		return
	}
	if c.v.ETag != "" {
		req.Header.Set("If-None-Match", c.v.ETag)
	}
	if c.v.LastModified != "" {
		req.Header.Set("If-Modified-Since", c.v.LastModified)
	}
}
