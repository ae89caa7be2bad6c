package botkit

import (
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/crawl"
	"github.com/goodbot-go/goodbot/politeness"
	"github.com/goodbot-go/goodbot/robots"
	bolt "go.etcd.io/bbolt"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// Session is what every bot sets up before its work: logger, key, state
// file, output. Close it when done.
type Session struct {
	Env  Env
	Log  *slog.Logger
	Key  ed25519.PrivateKey // nil for bots that do not sign
	DB   *bolt.DB
	Out  *Output
	Prog *Progress
	// Robots is the fetcher's robots.txt cache (fetch.Fetcher.Robots): a
	// bot reads a site's rules and Sitemap lines from it without a second
	// request. Set by [Begin].
	Robots *robots.Cache

	// Fleet is the crawl shared in Redis when the bot runs with -redis
	// (nil otherwise).
	Fleet *Fleet

	stores  stores
	fetcher *fetch.Fetcher
	failed  atomic.Bool // some work failed: the run ends with ExitPartial

	metrics    http.Handler // Prometheus handler when -status is set
	meters     *sdkmetric.MeterProvider
	status     *http.Server // the -status endpoint
	statusDone chan struct{}
}

// WorkFailed logs that a part of the work failed (a site unreachable, a page
// not written) and makes the run end with ExitPartial; the rest of the work
// goes on. Safe for concurrent use.
func (s *Session) WorkFailed(msg string, args ...any) {
	s.failed.Store(true)
	s.Log.Warn(msg, args...)
}

// Exit returns the run's exit status: code (the bot's own verdict), raised
// to ExitPartial when some work failed ([Session.WorkFailed]), results could
// not be written, or ctx ended before the work did (an interrupt). Each
// reason is logged once.
func (s *Session) Exit(ctx context.Context, code int) int {
	if code != ExitOK && code != ExitPartial {
		return code
	}
	if err := s.Out.Err(); err != nil {
		s.failed.Store(true)
		s.Log.Error("results not written", "err", err)
	}
	if err := ctx.Err(); err != nil {
		s.failed.Store(true)
		s.Log.Warn("interrupted: the work is not finished", "err", context.Cause(ctx))
	}
	if s.failed.Load() {
		return ExitPartial
	}
	return code
}

// Start does the common setup for f: it handles -genkey (done is true: the
// caller exits with code), loads the key of a signing bot (refusing to run
// without one and saying how to make one), and opens the state file.
// keyDir is the bot's key directory URL, for the help text. ctx bounds
// what Start waits for (a fleet's Redis: see [Flags.RegisterFleet]).
func Start(ctx context.Context, f *Flags, env Env, keyDir string) (s *Session, code int, done bool) {
	log := Logger(env.Stderr, f.Verbose).With("bot", f.Name)
	s = &Session{Env: env, Log: log, Out: &Output{JSON: f.JSON, Stdout: env.Stdout, Stderr: env.Stderr}}
	if f.Signs {
		if f.GenKey != "" {
			k, err := GenKey(f.GenKey, env.Stdout)
			if err != nil {
				fmt.Fprintf(env.Stderr, "%s: %v\n", f.Name, err)
				return nil, ExitFailure, true
			}
			kid, _ := pubThumb(k)
			fmt.Fprintf(env.Stderr, "%s: wrote %s (keyid %s); publish the JWKS above at %s\n", f.Name, f.GenKey, kid, keyDir)
			if f.Identity != nil {
				kit, err := f.Identity(k)
				if err != nil {
					fmt.Fprintf(env.Stderr, "%s: %v\n", f.Name, err)
					return nil, ExitFailure, true
				}
				fmt.Fprintf(env.Stdout, "%s\n", kit.CardJSON())
				fmt.Fprintf(env.Stderr, "%s: and the Signature Agent Card after it at %s\n", f.Name, kit.Card.ClientID)
				if ips := kit.IPRangesJSON(); ips != nil {
					fmt.Fprintf(env.Stdout, "%s\n", ips)
					fmt.Fprintf(env.Stderr, "%s: and the IP range file after that at %s\n", f.Name, kit.Card.WebBotAuth.IPsURI)
				}
			}
			return nil, ExitOK, true
		}
		k, err := LoadKey(f.Key)
		if errors.Is(err, ErrNoKey) {
			fmt.Fprintf(env.Stderr, "%s: refusing to run unsigned.\n%s\n", f.Name, KeyHelp(f.Name, keyDir))
			return nil, ExitFailure, true
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", f.Name, err)
			return nil, ExitFailure, true
		}
		s.Key = k
	}
	if f.Redis != "" {
		fl, err := openFleet(ctx, f, env, log)
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", f.Name, err)
			return nil, ExitFailure, true
		}
		s.Fleet = fl
		s.stores, _ = openStores(nil, false) // in memory; Apply puts the shared ones in
		return s, 0, false
	}
	db, err := OpenState(f.State, log)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", f.Name, err)
		return nil, ExitFailure, true
	}
	s.DB = db
	if s.stores, err = openStores(db, f.Resume); err != nil {
		db.Close()
		fmt.Fprintf(env.Stderr, "%s: state %s: %v\n", f.Name, f.State, err)
		return nil, ExitFailure, true
	}
	return s, 0, false
}

// Close closes the fetcher's idle connections and the state file.
func (s *Session) Close() error {
	if s == nil {
		return nil
	}
	s.closeStatus()
	if s.fetcher != nil {
		s.fetcher.CloseIdleConnections()
	}
	if s.Fleet != nil {
		s.Fleet.Close()
	}
	if s.stores.state != nil {
		return s.stores.state.Close() // the log applied to the file, then the file closed
	}
	if s.DB == nil {
		return nil
	}
	return s.DB.Close()
}

// Apply fills in the parts of bot that come from the session rather than
// the bot's promises: the test/demo transport, logging, the pacing
// observer, and the stores kept in the state file (or, for a fleet worker,
// the gate and stores shared in Redis).
func (s *Session) Apply(bot *fetch.Bot) error {
	if s.Env.Transport != nil {
		bot.Transport = s.Env.Transport
	}
	bot.Logger = s.Log
	prog := s.Prog
	if prog == nil {
		prog = &Progress{W: s.Env.Stderr}
		s.Prog = prog
	}
	next := s.Env.Observe
	obs := prog.Observe(next)
	bot.Observe = func(e politeness.Event) {
		obs(Event{Time: time.Now(), Host: e.Host, Kind: e.Kind.String(), Dur: eventDur(e), Reason: eventReason(e)})
	}
	bot.RobotsStore = s.stores.robots
	bot.Validators = s.stores.validators
	bot.Fetched = s.stores.fetched
	if s.Fleet != nil {
		s.Fleet.apply(bot)
	}
	return nil
}

func eventDur(e politeness.Event) time.Duration {
	if e.Duration > 0 {
		return e.Duration
	}
	if !e.Until.IsZero() {
		return time.Until(e.Until)
	}
	return 0
}

func eventReason(e politeness.Event) string {
	r := e.Reason
	if e.Status != 0 {
		r = fmt.Sprintf("%s (status %d)", r, e.Status)
	}
	if e.Err != nil {
		r = fmt.Sprintf("%s: %v", r, e.Err)
	}
	if r == "" {
		r = e.Kind.String()
	}
	return r
}

// Journal returns the crawl journal kept in the state file, for
// crawl.Frontier.Journal: nil unless the bot's Flags.Resume is set and it
// has a state file.
func (s *Session) Journal() crawl.Journal {
	if s.stores.journal == nil {
		return nil
	}
	return s.stores.journal
}

// Spill returns the state file's spill for crawl.Frontier.Spill (the
// queued URLs beyond the frontier's MaxInMemory wait in the file): nil
// unless [Session.Journal] is not nil.
func (s *Session) Spill() crawl.Spill {
	if s.stores.journal == nil {
		return nil
	}
	return s.stores.journal
}

// RobotsEntry returns the robots.txt fetch outcome kept in the state file
// for u's origin (status, body, when), as the fetcher's robots cache saved
// it, without any request. For the rules themselves use the fetcher's
// cache: [Session.Robots].Get or Cached.
func (s *Session) RobotsEntry(ctx context.Context, u *url.URL) (robots.Entry, bool) {
	e, ok, err := s.stores.robots.Load(ctx, politeness.HostKey(u))
	if err != nil || !ok {
		return robots.Entry{}, false
	}
	return e, true
}

// SiteURL parses a site argument: an absolute http(s) URL, or a bare host
// name, taken as https.
func SiteURL(arg string) (*url.URL, error) {
	s := strings.TrimSpace(arg)
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %v", fetch.Redact(s), errors.Unwrap(err))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("%q is not an http(s) URL of a site (without credentials)", u.Redacted())
	}
	if u.Path == "" {
		u.Path = "/"
	}
	u.Fragment = ""
	return u, nil
}

// Begin is [Start] followed by the bot's fetcher: profile builds the bot's
// fetch.Bot from its key (nil for bots that do not sign), the session's
// parts are applied to it, and the fetcher is made. When done is true the
// caller returns code. Close the session when done: it also closes the
// fetcher's idle connections.
func Begin(ctx context.Context, f *Flags, env Env, keyDir string, profile func(key ed25519.PrivateKey) fetch.Bot) (s *Session, fetcher *fetch.Fetcher, code int, done bool) {
	s, code, done = Start(ctx, f, env, keyDir)
	if done {
		return nil, nil, code, true
	}
	bot := profile(s.Key)
	bot.AllowInternal = f.AllowInternal
	err := s.Apply(&bot)
	if err == nil && f.Status != "" {
		err = s.instrument(&bot)
	}
	if err != nil {
		Fail(env.Stderr, f.Name, "%v", err)
		s.Close()
		return nil, nil, ExitFailure, true
	}
	fetcher, err = fetch.NewFetcher(bot)
	if err != nil {
		Fail(env.Stderr, f.Name, "%v", err)
		s.Close()
		return nil, nil, ExitFailure, true
	}
	s.fetcher = fetcher
	s.Robots = fetcher.Robots()
	s.Prog.Paused = func() int { return pausedHosts(fetcher, time.Now()) }
	if f.Status != "" {
		if err := s.serveStatus(f.Name, f.Status); err != nil {
			Fail(env.Stderr, f.Name, "%v", err)
			s.Close()
			return nil, nil, ExitFailure, true
		}
	}
	return s, fetcher, 0, false
}

// checkInternal refuses a site whose host is an internal address (a literal
// one, or localhost) that -allow-internal does not open, naming the flag.
// Names that resolve to internal addresses are refused when fetched.
func (f *Flags) checkInternal(u *url.URL) error {
	var ie *fetch.InternalAddressError
	if err := fetch.CheckHost(u, f.AllowInternal); errors.As(err, &ie) {
		return fmt.Errorf("%s is on an internal address (%s, %s): run with -allow-internal %s to crawl it",
			u.Redacted(), ie.Addr, ie.Kind, netip.PrefixFrom(ie.Addr, ie.Addr.BitLen()))
	}
	return nil
}

// Sites parses the site arguments of fs, printing a clear message for each
// bad one and skipping it; code is ExitPartial when one was bad, else ExitOK.
func (f *Flags) Sites(fs *flag.FlagSet, env Env) (sites []*url.URL, code int) {
	code = ExitOK
	for _, arg := range fs.Args() {
		u, err := SiteURL(arg)
		if err == nil {
			err = f.checkInternal(u)
		}
		if err != nil {
			Fail(env.Stderr, f.Name, "%v; skipped", err)
			code = ExitPartial
			continue
		}
		sites = append(sites, u)
	}
	return sites, code
}
