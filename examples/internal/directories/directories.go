// Package directories is DirectoriesBot's reciprocal-link checker (seed
// 004), run by examples/directoriesbot and by the demo. It reads listings
// (listing URL, the backlink the page must contain, the directory's domain,
// the schedule) from a CSV or JSON file, checks the listings that are due
// (or one on demand), fetching exactly each listing URL with the
// directory's name in the User-Agent, and records the outcome in its state
// file: verified with the matching link, link missing, unverified (robots.txt
// disallows), or error with the status.
package directories

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/botkit"
	"github.com/goodbot-go/goodbot/examples/internal/listings"
	"github.com/goodbot-go/goodbot/examples/internal/profiles"
	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/links"
	"github.com/goodbot-go/goodbot/signing"
)

const usage = "directoriesbot -key FILE -listings FILE [flags]\n\n" +
	"Checks the listings that are due (daily, weekly, monthly) for their reciprocal link, or one\n" +
	"listing now with -recheck LISTING_URL, and records each outcome in the state file."

// Run is directoriesbot's main. It returns the exit status.
func Run(ctx context.Context, args []string, env botkit.Env) int {
	f := botkit.Flags{Name: "directoriesbot", Signs: true, Identity: profiles.DirectoriesKit}
	fs := f.FlagSet(env, -1)
	file := fs.String("listings", "", "listings `file`: CSV with header listing_url,backlink,directory,schedule, or JSON")
	recheck := fs.String("recheck", "", "check this one `listing_url` now, whatever its schedule (D12)")
	blockFile := fs.String("blocklist", "", "`file` of domains never to fetch, one a line (D14)")
	parallel := fs.Int("parallel", 16, "`N` listings checked at once (one request at a time per host still)")
	list := fs.Bool("list", false, "print the recorded outcomes (JSON lines) and exit")
	serve := fs.String("serve-keys", "", "serve the key directory (JWKS, signed) and the Signature Agent Card on `addr` until interrupted (D2)")
	if code, ok := botkit.Parse(fs, args, usage); !ok {
		return code
	}
	if *file == "" && f.GenKey == "" && !*list && *serve == "" {
		botkit.UsageError(fs, "-listings is required")
		return botkit.ExitUsage
	}
	if len(fs.Args()) > 0 {
		botkit.Fail(env.Stderr, f.Name, "takes no URL arguments (listings come from -listings); got %q", fs.Args())
		return botkit.ExitUsage
	}
	keyDir := profiles.KeyDirectory(profiles.DirectoriesAgent)
	if *list || *serve != "" {
		f.Signs = f.Signs && *serve != "" // reading the state needs no key
		s, code, done := botkit.Start(ctx, &f, env, keyDir)
		if done {
			return code
		}
		defer s.Close()
		if *list {
			return printRecords(&listings.Store{DB: s.DB}, env)
		}
		return serveKeys(ctx, *serve, s.Key, env)
	}

	code := botkit.ExitOK
	var blocked []string
	if *blockFile != "" {
		bf, err := botkit.OpenBounded(*blockFile, botkit.MaxBlockListBytes)
		if err != nil {
			botkit.Fail(env.Stderr, f.Name, "block list: %v", err)
			return botkit.ExitFailure // never run without the block list asked for
		}
		blocked, err = listings.ParseBlockList(bf)
		bf.Close()
		if err != nil {
			botkit.Fail(env.Stderr, f.Name, "%s: %v", *blockFile, err)
			return botkit.ExitFailure
		}
	}
	s, fetcher, exit, done := botkit.Begin(ctx, &f, env, keyDir,
		func(k ed25519.PrivateKey) fetch.Bot { return profiles.Directories(k, blocked, env.Scale) })
	if done {
		return exit
	}
	defer s.Close()
	lf, err := botkit.OpenBounded(*file, botkit.MaxListingsBytes)
	if err != nil {
		botkit.Fail(env.Stderr, f.Name, "%v", err)
		return botkit.ExitFailure
	}
	all, err := listings.Parse(lf, *file)
	lf.Close()
	var fe *listings.FileError
	switch {
	case errors.As(err, &fe):
		fmt.Fprintln(env.Stderr, err) // every bad row, by line; the others still run
		code = botkit.ExitPartial
	case err != nil:
		botkit.Fail(env.Stderr, f.Name, "%v", err)
		return botkit.ExitFailure
	}

	store := &listings.Store{DB: s.DB}

	due, err := selectDue(all, *recheck, store, s)
	if err != nil {
		botkit.Fail(env.Stderr, f.Name, "%v", err)
		return botkit.ExitUsage
	}
	s.Log.Info("listings", "in_file", len(all), "due", len(due))
	c := &checker{s: s, f: fetcher, store: store}
	// A pool of workers; listings on one host still queue at its politeness
	// gate, one request at a time (D10).
	work := make(chan listings.Listing)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range min(max(1, *parallel), max(1, len(due))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l := range work {
				if !c.check(ctx, l) {
					mu.Lock()
					code = botkit.ExitPartial
					mu.Unlock()
				}
			}
		}()
	}
	for _, l := range due {
		if ctx.Err() != nil {
			break
		}
		work <- l
	}
	close(work)
	wg.Wait()
	return s.Exit(ctx, code)
}

// selectDue returns the listings due now, or the one asked for by recheck.
func selectDue(all []listings.Listing, recheck string, store *listings.Store, s *botkit.Session) ([]listings.Listing, error) {
	if recheck != "" {
		var out []listings.Listing
		for _, l := range all {
			if l.URL == recheck || links.NormalizeString(l.URL) == links.NormalizeString(recheck) {
				out = append(out, l)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("-recheck %s: no such listing in the listings file", recheck)
		}
		return out, nil
	}
	now := time.Now()
	var due []listings.Listing
	for _, l := range all {
		rec, _, err := store.Get(listings.Key(l.Directory, l.URL))
		if err != nil {
			s.Log.Warn("unreadable record; checking the listing again", "listing", l.URL, "err", err)
		}
		if l.Due(rec.Checked, now) {
			due = append(due, l)
		} else {
			s.Log.Debug("not due", "listing", l.URL, "schedule", l.Schedule, "next", l.Schedule.Next(rec.Checked))
		}
	}
	return due, nil
}

type checker struct {
	s     *botkit.Session
	f     *fetch.Fetcher
	store *listings.Store
}

// check checks one listing, prints the result and stores the outcome (D6).
// Blocks (a challenge, a blocked domain, an unreachable robots.txt) are
// reported but not stored: the listing keeps its last outcome and stays due.
func (c *checker) check(ctx context.Context, l listings.Listing) bool {
	rec := listings.Record{Listing: l.URL, Backlink: l.Backlink, Directory: l.Directory, Checked: time.Now()}
	res := botkit.Result{URL: l.URL, Listing: l.Directory}
	uctx, err := fetch.WithUserAgentVar(ctx, profiles.DirectoriesVar, l.Directory) // D1
	var p *fetch.Page
	if err == nil {
		p, err = c.f.Get(uctx, l.URL) // D3: exactly the URL entered
	}
	res = botkit.ResultOf(l.URL, p, err)
	res.Listing = l.Directory
	rec.Status, rec.FetchedAs = res.Status, res.FinalURL
	if rec.FetchedAs == "" {
		rec.FetchedAs = l.URL
	}
	outcome := fetch.OutcomeOf(err)
	if p != nil {
		outcome = p.Outcome
	}
	store := true
	switch {
	case outcome == fetch.Disallowed: // D13: unverified, not broken
		rec.Outcome, rec.Detail = listings.Unverified, res.Reason
	case outcome == fetch.Blocked, outcome == fetch.BlockedDomain, botkit.StopsSite(err):
		store = false // D8, D14 and challenges: reported, not recorded
	case (outcome == fetch.OK || outcome == fetch.TooLarge) && p != nil && p.Status >= 200 && p.Status < 300:
		rec.Outcome = listings.LinkMissing
		if m, ok := matchBacklink(p, l.Backlink); ok {
			rec.Outcome, rec.Matched = listings.Verified, m
		} else if outcome == fetch.TooLarge {
			rec.Outcome, rec.Detail = listings.Error, res.Reason
		}
	default:
		rec.Outcome, rec.Detail = listings.Error, res.Outcome
		if res.Reason != "" {
			rec.Detail += ": " + res.Reason
		}
	}
	if store {
		res.Outcome, res.Matched = rec.Outcome, rec.Matched
		if err := c.store.Put(rec); err != nil {
			c.s.Log.Error("state: outcome not saved", "listing", l.URL, "err", err)
			return false
		}
	}
	c.s.Out.Emit(res)
	return store && rec.Outcome != listings.Error
}

// matchBacklink reads the links on the page (D6) and returns the one that
// points at backlink.
func matchBacklink(p *fetch.Page, backlink string) (string, bool) {
	base, err := url.Parse(p.FinalURL)
	if err != nil {
		return "", false
	}
	target, err := url.Parse(backlink)
	if err != nil {
		return "", false
	}
	ls, _ := links.Extract(base, bytes.NewReader(p.Body))
	m, ok := links.Match(ls, target)
	if !ok {
		return "", false
	}
	return m.URL.String(), true
}

func printRecords(store *listings.Store, env botkit.Env) int {
	recs, err := store.All()
	if err != nil {
		fmt.Fprintln(env.Stderr, "directoriesbot:", err)
		return botkit.ExitFailure
	}
	enc := json.NewEncoder(env.Stdout)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			fmt.Fprintln(env.Stderr, "directoriesbot: records not written:", err)
			return botkit.ExitPartial
		}
	}
	return botkit.ExitOK
}

// KeyDirectory is the handler of the bot's key directory (D2): the JWKS
// with media type application/http-message-signatures-directory+json,
// signed with every key it lists.
func KeyDirectory(keys ...ed25519.PrivateKey) http.Handler {
	d := &signing.Directory{}
	for _, k := range keys {
		d.Keys = append(d.Keys, k)
	}
	mux := http.NewServeMux()
	mux.Handle(signing.DirectoryPath, d)
	return mux
}

func serveKeys(ctx context.Context, addr string, key ed25519.PrivateKey, env botkit.Env) int {
	kit, err := profiles.DirectoriesKit(key)
	if err != nil {
		fmt.Fprintln(env.Stderr, "directoriesbot:", err)
		return botkit.ExitFailure
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(env.Stderr, "directoriesbot:", err)
		return botkit.ExitFailure
	}
	srv := &http.Server{Handler: kit.Handler(), ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() { srv.Close() })
	defer stop() // no goroutine left waiting when Serve fails
	card, _ := url.Parse(kit.Card.ClientID)
	fmt.Fprintf(env.Stderr, "directoriesbot: serving the Signature Agent Card at http://%s%s\n", ln.Addr(), card.Path)
	fmt.Fprintf(env.Stderr, "directoriesbot: serving the key directory at http://%s%s\n", ln.Addr(), signing.DirectoryPath)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(env.Stderr, "directoriesbot:", err)
		return botkit.ExitFailure
	}
	return botkit.ExitOK
}
