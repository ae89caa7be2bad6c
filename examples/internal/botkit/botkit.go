// Package botkit is the plumbing the example bots share: the common flags,
// logging, signing keys (-key / -genkey), the on-disk state file, JSON
// results on stdout and progress on stderr. Each bot's main stays short.
package botkit

import (
	"crypto/ed25519"

	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/goodbot-go/goodbot/signing/identity"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"
)

// Env is what a bot's run function gets from its process: the standard
// streams and, for tests and the demo, a base transport to reach a test web
// and a time scale. The zero Env is not usable; use [OS].
type Env struct {
	Stdout, Stderr io.Writer
	// Transport, when set, replaces net/http's default transport at the
	// bottom of the bot's stack (tests: an in-memory web; demo: loopback).
	Transport http.RoundTripper
	// Scale multiplies every duration of the bot's politeness profile
	// (delays, pauses, backoff, timeouts). 0 means 1. Only the demo sets it,
	// to show hours of behaviour in seconds; operators never do.
	Scale float64
	// Observe, when set, receives the bot's pacing events (the demo draws
	// its timeline from them).
	Observe func(Event)
	// StatusListening, when set, is called with the status page's URL once
	// the -status endpoint listens (tests learn the port of ":0" from it).
	StatusListening func(url string)
}

// Event is one thing a bot did or waited for, for timelines.
type Event struct {
	Time   time.Time
	Host   string
	Kind   string // "wait", "pause", "give_up", "host_down", ...
	Dur    time.Duration
	Reason string
}

// OS returns the Env of the running process.
func OS() Env { return Env{Stdout: os.Stdout, Stderr: os.Stderr} }

// ScaleDur scales d by e.Scale.
func (e Env) ScaleDur(d time.Duration) time.Duration {
	if e.Scale <= 0 || e.Scale == 1 {
		return d
	}
	return time.Duration(float64(d) * e.Scale)
}

// Main runs a bot's run function with a context canceled on interrupt and
// exits with its status.
func Main(run RunFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], OS())
	stop()
	os.Exit(code)
}

// Exit statuses, the table of examples/README.md ("Exit status"). Every bot
// returns one of these, decided by [Parse], [Start] and [Session.Exit].
const (
	ExitOK      = 0 // all work done
	ExitFailure = 1 // the bot could not run (bad flags, key, state)
	ExitPartial = 3 // the bot ran, but some work failed (bad rows, unreachable sites, timeouts, pages not written) or was interrupted
	// ExitUsage is a bad command line: the bot could not run, so it is
	// ExitFailure (flag's own status 2 is not used).
	ExitUsage = ExitFailure
)

// Flags are the flags every bot shares.
type Flags struct {
	Name     string // program name, for messages
	State    string
	Key      string
	GenKey   string
	MaxPages int
	JSON     bool
	Verbose  bool
	Signs    bool   // the bot signs its requests: -key / -genkey exist
	Status   string // -status: address of the status endpoint ("": none)
	// AllowInternal is -allow-internal: the internal address ranges the
	// bot may reach (fetch.Bot.AllowInternal); nil: none.
	AllowInternal []netip.Prefix
	// Identity, if set, builds the bot's identity kit from its profile and
	// key: -genkey prints its Signature Agent Card (and IP range file)
	// after the JWKS.
	Identity func(key ed25519.PrivateKey) (*identity.Kit, error)
	// Redis and Crawl are -redis and -crawl ([Flags.RegisterFleet]): with
	// Redis set the bot is one worker of a fleet ([Fleet]) and keeps no
	// state file.
	Redis, Crawl string
	// Resume makes the bot's crawl survive a crash: the frontier is kept in
	// the state file (Session.Journal) and a URL counts as fetched, with
	// its validators, only once its outcome is recorded there. Only for bots
	// whose every fetch goes through a [Crawl] over such a frontier.
	Resume bool
}

// Register adds the common flags to fs. defaultMaxPages < 0 leaves out
// -max-pages (bots that do not crawl).
func (f *Flags) Register(fs *flag.FlagSet, defaultState string, defaultMaxPages int) {
	fs.StringVar(&f.State, "state", defaultState, "on-disk state `file` (robots.txt copies, validators, sitemap lastmods, fetched URLs, listing outcomes); survives between runs")
	if f.Signs {
		fs.StringVar(&f.Key, "key", "", "Ed25519 private key `file` (PKCS#8 PEM) to sign requests with (required)")
		fs.StringVar(&f.GenKey, "genkey", "", "write a new Ed25519 key to `file`, print the JWKS and the Signature Agent Card to publish, and exit")
	}
	if defaultMaxPages >= 0 {
		fs.IntVar(&f.MaxPages, "max-pages", defaultMaxPages, "stop after `N` pages per site")
	}
	fs.Func("allow-internal", "let the bot reach these internal address ranges, `PREFIX[,PREFIX...]` "+
		"(e.g. 10.0.0.0/8 for an intranet; 127.0.0.0/8 for a site on this machine); without it loopback, private, "+
		"link-local (cloud metadata), unspecified and multicast addresses are refused", f.parseAllowInternal)
	fs.BoolVar(&f.JSON, "json", false, "print one JSON object per URL handled on stdout")
	fs.BoolVar(&f.Verbose, "v", false, "debug-level logs on stderr (robots.txt fetches, refusals, pacing)")
	fs.StringVar(&f.Status, "status", "", "serve a status page (/), its JSON (/status.json) and Prometheus metrics (/metrics) on `addr`, e.g. 127.0.0.1:8080 (only there)")
}

// parseAllowInternal adds the prefixes of -allow-internal (comma-separated;
// a bare address is its own /32 or /128).
func (f *Flags) parseAllowInternal(v string) error {
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return fmt.Errorf("%q is not an address prefix such as 10.0.0.0/8", s)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		f.AllowInternal = append(f.AllowInternal, p)
	}
	return nil
}

// Parse parses args into fs. With -h it prints the usage and every flag
// (exit ExitOK); on a bad flag it prints one line naming the problem (exit
// ExitFailure). It returns false (and the exit status) when the program
// should stop.
func Parse(fs *flag.FlagSet, args []string, usage string) (int, bool) {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n\nflags:\n", usage)
		fs.PrintDefaults()
	}
	out := fs.Output()
	fs.SetOutput(io.Discard) // flag's own message is the error plus the whole usage
	err := fs.Parse(args)
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return ExitOK, false
	case err != nil:
		UsageError(fs, "%v", err)
		return ExitFailure, false
	}
	return 0, true
}

// UsageError prints one line naming a command-line problem, and where to
// read the flags, on fs's output.
func UsageError(fs *flag.FlagSet, format string, args ...any) {
	fmt.Fprintf(fs.Output(), "%s: %s (see %s -h)\n", fs.Name(), fmt.Sprintf(format, args...), fs.Name())
}

// Logger returns a text logger on w: info level, or debug with verbose.
func Logger(w io.Writer, verbose bool) *slog.Logger {
	lvl := slog.LevelInfo
	if verbose {
		lvl = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl}))
}

// Result is one URL handled, as printed by -json.
type Result struct {
	URL      string `json:"url"`
	FinalURL string `json:"final_url,omitempty"` // empty only when nothing was fetched
	Status   int    `json:"status"`
	Outcome  string `json:"outcome"`
	Bytes    int64  `json:"bytes"`
	Matched  string `json:"matched_link,omitempty"` // directoriesbot: the link that matched
	Reason   string `json:"reason,omitempty"`       // why: rule, vendor, error text, what the page's directives changed
	Rules    string `json:"rules,omitempty"`        // the page's directives for the bot ("noindex, nofollow"), see Use.ApplyRules
	NotKept  bool   `json:"not_kept,omitempty"`     // fetched ok, but its directives forbid keeping it for the bot's use
	Listing  string `json:"listing,omitempty"`      // directoriesbot: the directory
}

// Output prints results: JSON lines on Stdout with -json, else a short
// line per URL on Stderr. Safe for concurrent use.
type Output struct {
	JSON   bool
	Stdout io.Writer
	Stderr io.Writer

	mu  sync.Mutex // guards writes, enc and err
	enc *json.Encoder
	err error // the first write error
}

// Emit prints r. A write error (stdout on a full disk, a closed pipe) is
// kept for [Output.Err]. Nothing is kept of r: a crawl's output costs no
// memory however long it runs.
func (o *Output) Emit(r Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.JSON {
		if o.enc == nil {
			o.enc = json.NewEncoder(o.Stdout)
		}
		if err := o.enc.Encode(r); err != nil && o.err == nil {
			o.err = err
		}
		return
	}
	line := fmt.Sprintf("%-13s %3d %7d  %s", r.Outcome, r.Status, r.Bytes, r.URL)
	if r.FinalURL != "" && r.FinalURL != r.URL {
		line += " -> " + r.FinalURL
	}
	if r.Matched != "" {
		line += "  link: " + r.Matched
	}
	if r.Reason != "" {
		line += "  (" + r.Reason + ")"
	}
	fmt.Fprintln(o.Stderr, line)
}

// Err returns the first error met writing results, or nil.
func (o *Output) Err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// Fail prints a one-line error for the operator on stderr.
func Fail(w io.Writer, name string, format string, args ...any) {
	fmt.Fprintf(w, "%s: %s\n", name, fmt.Sprintf(format, args...))
}

// RunFunc is a bot's run function: it parses args, does the work and
// returns the exit status.
type RunFunc func(ctx context.Context, args []string, env Env) int

// ParseResults reads the JSON result lines a bot printed with -json.
func ParseResults(stdout string) []Result {
	var out []Result
	for _, line := range strings.Split(stdout, "\n") {
		var r Result
		if json.Unmarshal([]byte(line), &r) == nil && r.URL != "" {
			out = append(out, r)
		}
	}
	return out
}

// FlagSet returns a flag set for the bot named f.Name, writing to
// env.Stderr, with the common flags registered (defaultMaxPages < 0: no
// -max-pages).
func (f *Flags) FlagSet(env Env, defaultMaxPages int) *flag.FlagSet {
	fs := flag.NewFlagSet(f.Name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	f.Register(fs, DefaultStatePath(f.Name), defaultMaxPages)
	return fs
}

// ParseSites parses args for a bot that works on sites given as arguments:
// at least one is required, except with -genkey or -redis (a fleet worker
// may join a crawl started by others). It returns false (and the
// exit status) when the program should stop.
func (f *Flags) ParseSites(fs *flag.FlagSet, args []string, usage string) (int, bool) {
	if code, ok := Parse(fs, args, usage); !ok {
		return code, false
	}
	if fs.NArg() == 0 && f.GenKey == "" && f.Redis == "" {
		UsageError(fs, "no site given")
		return ExitFailure, false
	}
	return 0, true
}
