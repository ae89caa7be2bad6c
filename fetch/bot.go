package fetch

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/goodbot-go/goodbot/challenge"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/signing"
)

// Bot is a bot's profile: who it says it is and the promises it keeps. [New],
// [Wrap] and [NewFetcher] compose it into a client. Only UserAgent is
// required; every other zero field means a polite default, documented on the
// field. A Bot is plain configuration: the clients made from it copy what
// they need, so changing a Bot afterwards changes nothing.
type Bot struct {
	// Token is the product token robots.txt groups are matched against
	// (e.g. "ExampleBot"). Empty means the product name at the start of
	// UserAgent (its text before the first "/"), unless that is "Mozilla",
	// which is an error: a browser-style User-Agent needs an explicit Token.
	Token string
	// FormerTokens are names the bot used before; robots.txt groups written
	// for them still apply.
	FormerTokens []string

	// Purposes are what the bot does with what it fetches (feeding an
	// assistant: robots.AIInput; building a search index: robots.Search).
	// Sites state preferences about them in robots.txt (Content-Usage,
	// Content-Signal, purpose tokens) and in response headers
	// (Content-Usage, tdm-reservation); UsageMode says what the bot does when
	// one is refused. Nil declares none, and nothing is refused.
	Purposes []robots.Purpose
	// PurposeTokens are control-only robots.txt product tokens that speak
	// for one purpose each (see [robots.PurposeToken]). They never change
	// which URLs may be fetched.
	PurposeTokens []robots.PurposeToken
	// UsageMode is what happens when a site refuses one of Purposes. The
	// zero value, UsageRecord, fetches as usual and records the verdict in
	// [Page.Usage]; UsageRefuse sends no request for a URL that robots.txt
	// alone refuses and drops a response whose header refuses, both as
	// UsageRefused.
	UsageMode UsageMode

	// UserAgent is the User-Agent sent with every request, robots.txt
	// fetches included. It may contain placeholders "{name}" filled per
	// request from [WithUserAgentVar] (such as "verification for {directory}");
	// a request whose context lacks a placeholder's value is refused with
	// ErrUserAgent. Control characters are rejected.
	UserAgent string
	// From is the From header (an email address); empty sends none.
	From string
	// Accept is the Accept header set when a request has none. Empty means
	// "text/html,application/xhtml+xml;q=0.9" for HTML-only bots and
	// "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	// otherwise.
	Accept string

	// RobotsTTL is how long a robots.txt copy is used before it is fetched
	// again. Zero means 24 hours.
	RobotsTTL time.Duration
	// RobotsStore keeps robots.txt copies (nil: in memory). Use
	// fetch/boltstate to keep them in the bot's state file.
	RobotsStore robots.Store
	// RobotsTimeout bounds one robots.txt fetch, redirects, body and any
	// politeness wait included; a robots.txt that times out closes the site,
	// however slowly its bytes still come. Zero (or negative) means
	// the bot's fetch time limit (Limits.Timeout) when that is shorter than
	// 30 s, else 30 s.
	RobotsTimeout time.Duration
	// RobotsRetry is the robots.txt failure policy: after a server error,
	// 429, timeout or network error the whole site is closed and
	// its robots.txt asked for again at most once per RobotsRetry (however
	// often the site is checked) until it answers 2xx or 4xx. Zero means
	// one minute.
	RobotsRetry time.Duration

	// Politeness is the pacing policy (zero: polite defaults, see
	// [politeness.Policy]).
	Politeness politeness.Policy
	// Gate holds the per-host pacing state; nil means a new in-memory gate
	// per client. Share one Gate (or a politeness/redisgate) between clients
	// of one bot so that they pace together.
	Gate politeness.Gate
	// Observe, if set, receives the politeness decisions (waits, pauses,
	// give-ups, breaker trips).
	Observe func(politeness.Event)
	// Events, if set, receives each request as it leaves and ends (robots.txt
	// fetches included) and the end of each [Fetcher.Get]: see [Event]. It
	// is called from the goroutines doing the work, possibly several at once,
	// so it must be quick and safe for concurrent use, and must not call back
	// into the client. Nil costs nothing.
	Events func(Event)

	// Signer signs every request, robots.txt fetches included, at the moment
	// it leaves (after any politeness wait). Nil sends unsigned requests.
	Signer *signing.Signer

	// Pay, when set, lets the bot pay for pages sites sell (pay per
	// crawl), up to a price per page and a budget per Fetcher: see
	// [PayPolicy]. It needs a Signer, whose signatures then also cover the
	// crawler-max-price field. Nil (the default) pays nothing: a 402 ends
	// as PaymentRequired.
	Pay *PayPolicy

	// Limits bound each fetch (zero: 30 s, 5 redirects, 10 MiB).
	Limits Limits

	// HTMLOnly makes the bot ask for HTML and refuse other content types:
	// a 2xx answer whose Content-Type is set and is not text/html or
	// application/xhtml+xml fails with NotHTML, its body unread. Requests
	// under [WithMachineFile] (sitemaps, /llms.txt) are exempt.
	HTMLOnly bool
	// Deny lists URL words that are never fetched (carts, checkouts,
	// accounts). A pattern is one or more words ("cart", "add-to-cart");
	// it matches a URL whose path or query, split into words at every
	// character that is not a letter or digit, contains the pattern's words
	// in a row, case-insensitively. Nil means [DefaultDeny]; an empty
	// non-nil slice denies nothing.
	Deny []string
	// Login lists the words of login pages (same matching as Deny): a URL
	// matching one, asked for directly or reached by a redirect, is never
	// fetched and ends as AuthRequired. Nil means [DefaultLogin].
	Login []string
	// BlockedDomains are never fetched, nor their subdomains:
	// "example.com" blocks example.com and www.example.com. Names compare
	// as site keys do ([politeness.HostKey]): in any case, with or without
	// trailing dots, with any IDNA full stop, full-width letters, and
	// Unicode or punycode labels.
	BlockedDomains []string

	// AllowInternal lists the internal address ranges the bot may connect
	// to. Nil (the default) allows none: a URL, redirect hop or robots.txt
	// fetch whose host is, or resolves to, a loopback (127.0.0.0/8, ::1),
	// private (RFC 1918, fc00::/7), link-local (169.254.0.0/16, among them
	// the cloud metadata address 169.254.169.254, and fe80::/10),
	// unspecified (0.0.0.0/8, ::), multicast, broadcast, shared
	// (100.64.0.0/10) or other reserved address (the ranges IANA's
	// special-purpose registries mark as not globally reachable:
	// documentation, benchmarking 198.18.0.0/15, 240.0.0.0/4, ...), or an
	// IPv6 form of one (IPv4-mapped, NAT64 64:ff9b::/96, IPv4-compatible,
	// 6to4, Teredo; the ranges are matched against the IPv4 address such a
	// form reaches), ends as
	// InternalAddress without a request. Only the listed ranges are opened:
	// an intranet bot listing 10.0.0.0/8 still never reaches
	// 169.254.169.254. A public address is always allowed.
	//
	// Literal addresses and "localhost" names are checked on the URL of
	// every hop. Other names are checked on the address actually dialled,
	// after DNS, by the dialer of the base transport fetch builds (Transport
	// nil, also under [Wrap] of a client without one, or the transport Wrap
	// clones to set LocalAddr); a caller's own Transport dials
	// by itself, so for it only literal addresses are checked. Behind a
	// proxy, the address dialled is the proxy's (list it here if it is
	// internal), and the sites' names are resolved by the proxy.
	AllowInternal []netip.Prefix
	// RefuseDowngrade refuses a redirect from an https URL to a plain http
	// one (outcome InsecureRedirect), so that a signed bot's requests and
	// what it reads never leave TLS once they were on it. robots.txt
	// redirects are not affected. False (the default) follows such
	// redirects.
	RefuseDowngrade bool

	// LocalAddr, if valid, is the source address of every outgoing
	// connection. It applies to the base transport New builds, and to a
	// wrapped *http.Transport (cloned).
	LocalAddr netip.Addr
	// Transport is the base transport under the chain. Nil means a new
	// *http.Transport with at most one connection per host and
	// LocalAddr, that keeps each host's connection idle for
	// Politeness.LongestGap() plus 30 seconds, with no global idle cap. It sends each request once: a retrying transport
	// here
	// would retry inside one politeness turn, so the chain logs a Warn line
	// when it sees one request written several times. Put retries above the
	// bot's client instead (see the package documentation).
	Transport http.RoundTripper
	// Jar stores and sends cookies. Nil (the default) means none are sent
	// or stored, not even a Cookie header set on the request. It
	// is about cookies only: Authorization and Proxy-Authorization headers
	// are removed from every request, with or without a Jar.
	Jar http.CookieJar

	// Challenge detects challenge pages; nil means the default rules.
	Challenge *challenge.Detector

	// Validators keeps ETag / Last-Modified per URL for conditional
	// refetches by [Fetcher.Get]. Nil means in memory.
	Validators ValidatorStore
	// MaxPagesPerSite, if positive, is the most pages [Fetcher.Get] fetches
	// from one site (scheme, host, port) in the Fetcher's life (a
	// readiness crawl capped at a few hundred pages, for example); later calls for the
	// site end as GaveUp without a request. robots.txt does not count.
	MaxPagesPerSite int
	// Once makes [Fetcher.Get] fetch each normalised URL at most once;
	// later calls, and calls while a fetch of the URL is under way, end as
	// Duplicate. A fetch that ended without a definitive answer (a
	// [Outcome.Retryable] outcome: rate limited, gave up, unreachable,
	// timeout or cancelled) does not count: the URL is fetched again on a
	// later call.
	Once bool
	// Fetched is the set of URLs fetched, used when Once is set. Nil means
	// in memory. A set that is not a [FetchedRemover] cannot give the mark
	// of a retryable fetch back.
	Fetched FetchedSet

	// Logger receives debug records of refusals; nil means silent.
	Logger *slog.Logger
}

// Limits bound one fetch. The zero value means the polite defaults given on
// each field (30 s, 5 redirects, 10 MiB); it is plain data, copied into the
// clients made from a [Bot].
type Limits struct {
	// Timeout is the longest a fetch may take, redirects included, counted
	// from the moment its first request is sent (a politeness wait before
	// that does not count; one between redirect hops does). It also bounds
	// reading the body. Zero means 30 seconds; negative means no limit.
	Timeout time.Duration
	// MaxRedirects is the most redirects followed. Zero means 5; negative
	// means none are followed.
	MaxRedirects int
	// MaxBodyBytes is the most body bytes read; at that point reading stops
	// with ErrTooLarge and the connection is closed. Zero means 10 MiB;
	// negative means no limit. Under [WithMachineFile] the limit is never
	// below [MachineFileMaxBytes] (50 MiB), the size sitemaps.org allows a
	// sitemap, so that the sitemap reader's own limits are what stop one.
	MaxBodyBytes int64
	// MaxHeaderBytes is the most bytes of an answer's status line and
	// header fields that the default base transport reads (Bot.Transport
	// nil; over HTTP/2, the header list size it advertises); past it the
	// fetch ends as TooLarge with [ErrHeaderTooLarge] and the connection is
	// closed. A robots.txt whose answer passes it counts as unreachable.
	// Zero means [DefaultMaxHeaderBytes]; negative means net/http's own
	// bound (10 MiB). A Transport of your own keeps its own bound
	// (http.Transport.MaxResponseHeaderBytes).
	MaxHeaderBytes int64
}

// DefaultMaxHeaderBytes is the default Limits.MaxHeaderBytes: 256 KiB, the
// bound Chromium puts on a response's header, so that an answer a browser
// reads is read, while a server that sends an endless header costs a
// fetch no more than that.
const DefaultMaxHeaderBytes = 256 << 10

func (l Limits) timeout() time.Duration {
	switch {
	case l.Timeout == 0:
		return 30 * time.Second
	case l.Timeout < 0:
		return 0
	}
	return l.Timeout
}

// robotsTimeout is the bound of one robots.txt fetch (Bot.RobotsTimeout).
func (b *Bot) robotsTimeout() time.Duration {
	if b.RobotsTimeout > 0 {
		return b.RobotsTimeout
	}
	if t := b.Limits.timeout(); t > 0 && t < 30*time.Second {
		return t
	}
	return 30 * time.Second
}

func (l Limits) maxRedirects() int {
	switch {
	case l.MaxRedirects == 0:
		return 5
	case l.MaxRedirects < 0:
		return 0
	}
	return l.MaxRedirects
}

// maxHeader is the base transport's MaxResponseHeaderBytes (0: net/http's).
func (l Limits) maxHeader() int64 {
	switch {
	case l.MaxHeaderBytes == 0:
		return DefaultMaxHeaderBytes
	case l.MaxHeaderBytes < 0:
		return 0
	}
	return l.MaxHeaderBytes
}

func (l Limits) maxBody() int64 {
	switch {
	case l.MaxBodyBytes == 0:
		return 10 << 20
	case l.MaxBodyBytes < 0:
		return -1
	}
	return l.MaxBodyBytes
}

// DefaultDeny returns the URL words a bot never fetches unless its profile
// says otherwise (Bot.Deny nil): shopping carts, checkouts, accounts,
// sign-ups and sign-outs, which change state or hold nothing public.
func DefaultDeny() []string {
	return []string{
		"cart", "basket", "checkout", "account", "myaccount", "wishlist",
		"logout", "log-out", "signout", "sign-out", "register", "signup", "sign-up",
		"unsubscribe", "wp-admin",
	}
}

// DefaultLogin returns the words of login pages (Bot.Login nil).
func DefaultLogin() []string {
	return []string{"login", "log-in", "signin", "sign-in", "logon", "wp-login", "sso"}
}

// agent returns the robots.txt agent of the profile.
func (b *Bot) agent() (robots.Agent, error) {
	tok := b.Token
	if tok == "" {
		tok, _, _ = strings.Cut(b.UserAgent, "/")
		tok = strings.TrimSpace(tok)
		if tok == "" || strings.EqualFold(tok, "Mozilla") || strings.ContainsAny(tok, " {") {
			return robots.Agent{}, fmt.Errorf("%w: set Bot.Token (cannot derive it from %q)", ErrUserAgent, b.UserAgent)
		}
	}
	return robots.Agent{Token: tok, Former: append([]string(nil), b.FormerTokens...),
		PurposeTokens: append([]robots.PurposeToken(nil), b.PurposeTokens...)}, nil
}

// A uaTemplate is a User-Agent split at its "{name}" placeholders.
type uaTemplate struct {
	fixed string   // the whole value when there are no placeholders
	parts []string // literal, name, literal, name, ..., literal
}

func parseUA(s string) (uaTemplate, error) {
	if s == "" {
		return uaTemplate{}, fmt.Errorf("%w: Bot.UserAgent is empty", ErrUserAgent)
	}
	if err := checkHeaderText(s); err != nil {
		return uaTemplate{}, fmt.Errorf("%w: %v", ErrUserAgent, err)
	}
	if !strings.Contains(s, "{") {
		return uaTemplate{fixed: s}, nil
	}
	var t uaTemplate
	rest := s
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			t.parts = append(t.parts, rest)
			return t, nil
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return uaTemplate{}, fmt.Errorf("%w: unclosed placeholder in %q", ErrUserAgent, s)
		}
		name := rest[i+1 : i+j]
		if name == "" {
			return uaTemplate{}, fmt.Errorf("%w: empty placeholder in %q", ErrUserAgent, s)
		}
		t.parts = append(t.parts, rest[:i], name)
		rest = rest[i+j+1:]
	}
}

// expand returns the User-Agent for a request with ctx.
func (t *uaTemplate) expand(ctx context.Context) (string, error) {
	if t.parts == nil {
		return t.fixed, nil
	}
	vars, _ := ctx.Value(uaVarsKey{}).(map[string]string)
	var b strings.Builder
	for i, p := range t.parts {
		if i%2 == 0 {
			b.WriteString(p)
			continue
		}
		v, ok := vars[p]
		if !ok {
			return "", fmt.Errorf("%w: no value for {%s} (use fetch.WithUserAgentVar)", ErrUserAgent, p)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// checkHeaderText rejects control characters and non-ASCII bytes.
func checkHeaderText(s string) error {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return fmt.Errorf("control or non-ASCII byte %#x at %d", c, i)
		}
	}
	return nil
}

type uaVarsKey struct{}

// WithUserAgentVar returns a context whose requests fill the User-Agent
// placeholder "{name}" with value (for example the directory whose
// listing is checked). The value must be printable ASCII without the characters that
// would let it break out of its field: ( ) ; , " \ { } and control
// characters (CR, LF...) are refused with ErrUserAgent, here and when the
// request is sent.
func WithUserAgentVar(ctx context.Context, name, value string) (context.Context, error) {
	if err := checkHeaderText(value); err != nil {
		return ctx, fmt.Errorf("%w: value of {%s}: %v", ErrUserAgent, name, err)
	}
	if i := strings.IndexAny(value, `();,"\{}`); i >= 0 {
		return ctx, fmt.Errorf("%w: value of {%s} contains %q", ErrUserAgent, name, value[i])
	}
	old, _ := ctx.Value(uaVarsKey{}).(map[string]string)
	vars := make(map[string]string, len(old)+1)
	for k, v := range old {
		vars[k] = v
	}
	vars[name] = value
	return context.WithValue(ctx, uaVarsKey{}, vars), nil
}

type freshKey struct{}

// WithFresh returns a context whose requests carry Cache-Control: no-cache,
// asking caches on the way for the page as it is now (freshness
// refetches). It is for users of the *http.Client, who cannot pass
// arguments to a request's transport; a [Fetcher] user passes
// GetOptions{Fresh: true} to [Fetcher.Get] instead.
func WithFresh(ctx context.Context) context.Context {
	return context.WithValue(ctx, freshKey{}, true)
}

func isFresh(ctx context.Context) bool {
	v, _ := ctx.Value(freshKey{}).(bool)
	return v
}

type machineFileKey struct{}

// MachineFileMaxBytes is the least body limit of a request under
// [WithMachineFile]: 50 MiB, the largest uncompressed sitemap sitemaps.org
// allows (with at most 50,000 URLs).
const MachineFileMaxBytes = 50 << 20

// WithMachineFile returns a context whose requests fetch a file meant for
// programs rather than a page: a sitemap, /llms.txt, a feed. An HTML-only
// bot (Bot.HTMLOnly) then asks for XML and text (unless the request sets
// Accept itself) and takes whatever content type comes back instead of
// failing with NotHTML. The body limit (Limits.MaxBodyBytes) is raised to
// [MachineFileMaxBytes] if it is lower, so that a sitemap within the
// protocol's limits is read whole (the sitemap reader bounds it then).
// Everything else stays: robots.txt, pacing, signing, the time limit, and
// challenge pages are still Blocked. robots.txt itself is fetched this
// way already.
//
// It is for users of the *http.Client (such as the sitemap walker below);
// a [Fetcher] user passes GetOptions{MachineFile: true} to [Fetcher.Get]
// instead.
//
//	walker.Walk(fetch.WithMachineFile(ctx), sitemaps, fn) // walker.Client = fetcher.Client()
func WithMachineFile(ctx context.Context) context.Context {
	return context.WithValue(ctx, machineFileKey{}, true)
}

func isMachineFile(ctx context.Context) bool {
	v, _ := ctx.Value(machineFileKey{}).(bool)
	return v
}
