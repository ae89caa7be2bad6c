// Package boltstate keeps all of a bot's crawl state in one bbolt file:
// robots.txt copies, sitemap state, page validators (ETag, Last-Modified)
// and the set of URLs fetched, each in its own bucket, so a bot restarted
// tomorrow still makes a one-request freshness check.
//
//	st, err := boltstate.Open("crawl.db", nil)
//	if err != nil { ... }
//	defer st.Close()
//	bot := fetch.Bot{...}
//	st.Apply(&bot)                  // RobotsStore, Validators, Fetched
//	walker := sitemap.Walker{Store: st.Sitemaps, ...}
//
// bbolt (go.etcd.io/bbolt) is a small, pure-Go embedded store with ACID
// transactions and a file lock, so a crash mid-write leaves the last state
// readable and two processes cannot share one file by accident. It lives in
// this subpackage so that importing fetch pulls in no storage engine.
//
// A damaged file is never used and never a crash: [Open] checks the file
// before bbolt maps it ([Check]: both meta pages, the file's size against
// their high-water mark, every page reference) and runs bbolt's consistency
// check; a file that fails, or makes bbolt panic, is renamed
// path.corrupt-TIME, a warning is logged, and a fresh file is started.
//
// Writes to the validator store and the fetched set are group-committed
// (bbolt's DB.Batch): writes made at the same time by many goroutines share
// one transaction and one fsync, so a crawl of thousands of hosts does not
// pay an fsync per URL. Each Add, Remove or Save still returns only after
// the transaction holding its write committed: a write that returned
// survives a crash of the process. A lone writer waits up to
// DB.MaxBatchDelay (bbolt's default, 10 ms) for others to join its
// transaction; DB.MaxBatchDelay and DB.MaxBatchSize tune the trade-off.
//
// A record that does not decode (from a damaged file or an older version)
// reads as absent, with an error the stores report; the next save replaces
// it.
package boltstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/robots"
	robotsbolt "github.com/goodbot-go/goodbot/robots/boltstore"
	sitemapbolt "github.com/goodbot-go/goodbot/sitemap/boltstore"
)

// Bucket names.
const (
	RobotsBucket     = "robots"
	SitemapsBucket   = "sitemaps"
	ValidatorsBucket = "validators"
	FetchedBucket    = "fetched"
)

// Options configure [Open]. A nil *Options means the defaults.
type Options struct {
	// LockTimeout is how long Open waits for another process's lock on the
	// file. Zero means one second.
	LockTimeout time.Duration
	// ReadOnly opens the file read-only (the buckets must exist). A damaged
	// file is then an error, and left where it is.
	ReadOnly bool
	// Logger receives the warning about a damaged file moved aside. Nil
	// means slog.Default().
	Logger *slog.Logger
}

// ErrLocked is returned by [Open] and [OpenDB] when another process holds
// the file's lock for longer than Options.LockTimeout.
var ErrLocked = errors.New("boltstate: state file is locked by another process")

// State is one bot's state file and the stores over its buckets: robots.txt
// copies through robots/boltstore, sitemap state through sitemap/boltstore,
// validators and the fetched set through this package. The stores are safe
// for concurrent use.
type State struct {
	DB         *bbolt.DB
	Robots     robots.Store
	Sitemaps   *sitemapbolt.Store
	Validators fetch.ValidatorStore
	Fetched    fetch.FetchedSet
}

// Open opens (creating if needed) the bbolt file at path with [OpenDB] and
// the stores over its buckets.
func Open(path string, opts *Options) (*State, error) {
	db, err := OpenDB(path, opts)
	if err != nil {
		return nil, err
	}
	st, err := New(db)
	if err != nil {
		db.Close()
		return nil, err
	}
	return st, nil
}

// OpenDB opens (creating if needed) the bbolt file at path, after taking its
// lock and checking it ([Check], then bbolt's consistency check). A damaged
// file, or one that makes bbolt panic, is renamed path.corrupt-TIME (see
// [MoveAside]), a warning naming both files is logged, and a fresh file is
// opened in its place: the caller gets a usable, empty state rather than a
// crash. With Options.ReadOnly the damage is returned as a [*CorruptError]
// instead. A file another process holds is [ErrLocked].
func OpenDB(path string, opts *Options) (*bbolt.DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.LockTimeout == 0 {
		o.LockTimeout = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	db, err := openChecked(path, o)
	if !errors.Is(err, ErrCorrupt) || o.ReadOnly {
		return db, err
	}
	moved, merr := MoveAside(path, "corrupt")
	if merr != nil {
		return nil, fmt.Errorf("%w (and it could not be moved aside: %v)", err, merr)
	}
	o.Logger.Warn("state file is corrupt; kept it aside and started a fresh one", "file", path, "kept_as", moved, "err", err)
	return openChecked(path, o)
}

// openChecked is one attempt of OpenDB, without the move.
func openChecked(path string, o Options) (db *bbolt.DB, err error) {
	var file *os.File
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if file != nil {
				file.Close()
			}
			db, err = nil, &CorruptError{Path: path, Reason: "bbolt failed reading it", Err: fmt.Errorf("panic: %v", r)}
		}
	}()
	openFile := func(name string, flag int, mode os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, mode)
		if err != nil {
			return nil, err
		}
		if err := lock(f, o.ReadOnly, o.LockTimeout); err != nil {
			f.Close()
			return nil, err
		}
		if err := checkFile(f, name); err != nil {
			f.Close()
			return nil, err
		}
		file = f
		return f, nil
	}
	db, err = bbolt.Open(path, 0o600, &bbolt.Options{Timeout: o.LockTimeout, ReadOnly: o.ReadOnly, OpenFile: openFile})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("%w: %s", ErrLocked, path)
	case errors.Is(err, ErrCorrupt):
		return nil, err
	case err != nil && isContentError(err):
		return nil, &CorruptError{Path: path, Reason: "bbolt refused it", Err: err}
	case err != nil:
		return nil, fmt.Errorf("boltstate: open %s: %w", path, err)
	}
	if err := consistent(db); err != nil {
		db.Close()
		return nil, &CorruptError{Path: path, Reason: "bbolt's consistency check failed", Err: err}
	}
	return db, nil
}

// isContentError reports whether an error of bbolt.Open is about the file's
// content (rather than its permissions, directory, lock or memory).
func isContentError(err error) bool {
	return errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrVersionMismatch) || errors.Is(err, berrors.ErrChecksum)
}

// MoveAside renames the file at path to path.why-TIME (UTC, to the second,
// with a counter if that name is taken) and returns the new name. The file
// is kept, never deleted, so that nothing in it is lost.
func MoveAside(path, why string) (string, error) {
	stamp := time.Now().UTC().Format("20060102T150405Z")
	dst := fmt.Sprintf("%s.%s-%s", path, why, stamp)
	for i := 1; ; i++ {
		if _, err := os.Lstat(dst); errors.Is(err, os.ErrNotExist) {
			break
		}
		dst = fmt.Sprintf("%s.%s-%s-%d", path, why, stamp, i)
	}
	return dst, os.Rename(path, dst)
}

// New returns the stores over an already open db (creating the buckets if
// db is writable). The caller keeps ownership of db; [State.Close] closes it.
func New(db *bbolt.DB) (*State, error) {
	if db == nil {
		return nil, errors.New("boltstate: nil database")
	}
	if !db.IsReadOnly() {
		err := db.Update(func(tx *bbolt.Tx) error {
			for _, b := range []string{ValidatorsBucket, FetchedBucket} {
				if _, err := tx.CreateBucketIfNotExists([]byte(b)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("boltstate: creating buckets: %w", err)
		}
	}
	rb, err := robotsbolt.New(db, RobotsBucket)
	if err != nil {
		return nil, err
	}
	sm, err := sitemapbolt.New(db, SitemapsBucket)
	if err != nil {
		return nil, err
	}
	return &State{
		DB:         db,
		Robots:     rb,
		Sitemaps:   sm,
		Validators: jsonBucket[fetch.Validator]{db, ValidatorsBucket},
		Fetched:    setBucket{db, FetchedBucket},
	}, nil
}

// Apply sets bot's RobotsStore, Validators and Fetched to the file's stores
// where they are nil.
func (s *State) Apply(bot *fetch.Bot) {
	if bot.RobotsStore == nil {
		bot.RobotsStore = s.Robots
	}
	if bot.Validators == nil {
		bot.Validators = s.Validators
	}
	if bot.Fetched == nil {
		bot.Fetched = s.Fetched
	}
}

// Close closes the file.
func (s *State) Close() error { return s.DB.Close() }

// jsonBucket keeps JSON values by key in one bucket.
type jsonBucket[T any] struct {
	db   *bbolt.DB
	name string
}

func (b jsonBucket[T]) Load(ctx context.Context, key string) (T, bool, error) {
	var v T
	if err := ctx.Err(); err != nil {
		return v, false, err
	}
	var raw []byte
	err := view(b.db, func(tx *bbolt.Tx) error {
		if bk := tx.Bucket([]byte(b.name)); bk != nil {
			if got := bk.Get([]byte(key)); got != nil {
				raw = append([]byte{}, got...)
			}
		}
		return nil
	})
	if err != nil || raw == nil {
		return v, false, err
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		var zero T
		return zero, false, fmt.Errorf("boltstate: %s %q: undecodable record: %w", b.name, key, err)
	}
	return v, true, nil
}

func (b jsonBucket[T]) Save(ctx context.Context, key string, v T) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("boltstate: %s %q: %w", b.name, key, err)
	}
	return batch(b.db, func(tx *bbolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists([]byte(b.name))
		if err != nil {
			return err
		}
		return bk.Put([]byte(key), raw)
	})
}

// setBucket is a [fetch.FetchedRemover]: keys are URLs, values the time added.
type setBucket struct {
	db   *bbolt.DB
	name string
}

func (b setBucket) Add(ctx context.Context, url string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	added := false
	err := batch(b.db, func(tx *bbolt.Tx) error {
		added = false // Batch may run this again, alone, if the shared transaction fails
		bk, err := tx.CreateBucketIfNotExists([]byte(b.name))
		if err != nil {
			return err
		}
		if bk.Get([]byte(url)) != nil {
			return nil
		}
		added = true
		return bk.Put([]byte(url), []byte(time.Now().UTC().Format(time.RFC3339)))
	})
	return added, err
}

func (b setBucket) Has(ctx context.Context, url string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	has := false
	err := view(b.db, func(tx *bbolt.Tx) error {
		if bk := tx.Bucket([]byte(b.name)); bk != nil {
			has = bk.Get([]byte(url)) != nil
		}
		return nil
	})
	return has, err
}

func (b setBucket) Remove(ctx context.Context, url string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return batch(b.db, func(tx *bbolt.Tx) error {
		if bk := tx.Bucket([]byte(b.name)); bk != nil {
			return bk.Delete([]byte(url))
		}
		return nil
	})
}

// view and update are db.View and db.Update with a panic inside bbolt (a
// damaged page the open-time checks could not see) returned as an error.
func view(db *bbolt.DB, fn func(*bbolt.Tx) error) (err error) {
	defer recoverInto(&err)
	return db.View(fn)
}

// batch is a write through bbolt's DB.Batch, with a panic returned as
// view does: concurrent writes share one transaction (group commit); it
// returns once the write is committed.
func batch(db *bbolt.DB, fn func(*bbolt.Tx) error) (err error) {
	defer recoverInto(&err)
	return db.Batch(fn)
}

func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: bbolt: %v", ErrCorrupt, r)
	}
}

// Stage is a view of a [State] for a crawler that records each page's
// outcome itself: the fetched marks and validators a [fetch.Fetcher] makes
// are held in memory, and become durable only when the crawler commits them
// ([Stage.Commit]) with its own record of the outcome, in one transaction.
// A process killed mid-fetch therefore leaves no URL marked fetched whose
// outcome was never recorded, and no validator without its page (a refetch
// after the crash is a full one, not a 304 for a page never read).
//
// Stage implements both [fetch.FetchedRemover] and [fetch.ValidatorStore];
// reads see the staged records first, then the file. Make one with
// [State.Stage]; it is safe for concurrent use. Committing many URLs in one
// call costs one transaction (one fsync).
type Stage struct {
	db         *bbolt.DB
	fetched    setBucket
	validators jsonBucket[fetch.Validator]

	mu      sync.Mutex // guards claims, pending and commits
	claims  map[string]bool
	pending map[string]fetch.Validator
	commits uint64 // Commits that moved claims to the file so far

	afterRead func() // tests: runs in Add between its read of the file and its claim
}

var (
	_ fetch.FetchedRemover = (*Stage)(nil)
	_ fetch.ValidatorStore = (*Stage)(nil)
)

// Stage returns a new [Stage] over the state's fetched set and validators.
func (s *State) Stage() *Stage {
	return &Stage{db: s.DB, fetched: setBucket{s.DB, FetchedBucket}, validators: jsonBucket[fetch.Validator]{s.DB, ValidatorsBucket},
		claims: map[string]bool{}, pending: map[string]fetch.Validator{}}
}

// Apply sets bot's Fetched and Validators to g.
func (g *Stage) Apply(bot *fetch.Bot) {
	bot.Fetched = g
	bot.Validators = g
}

// Add implements [fetch.FetchedSet]: url is new when neither staged nor in
// the file; the mark is staged. The file is read without the Stage's lock
// (concurrent Adds do not wait for each other's reads); if a Commit moved
// claims to the file meanwhile, the file is read again, so one URL is
// claimed once.
func (g *Stage) Add(ctx context.Context, url string) (bool, error) {
	g.mu.Lock()
	for {
		if g.claims[url] {
			g.mu.Unlock()
			return false, nil
		}
		seen := g.commits
		g.mu.Unlock()
		has, err := g.fetched.Has(ctx, url)
		if err != nil || has {
			return false, err
		}
		if g.afterRead != nil {
			g.afterRead()
		}
		g.mu.Lock()
		if g.commits == seen {
			break
		}
	}
	defer g.mu.Unlock()
	if g.claims[url] {
		return false, nil
	}
	g.claims[url] = true
	return true, nil
}

// Has implements [fetch.FetchedSet].
func (g *Stage) Has(ctx context.Context, url string) (bool, error) {
	g.mu.Lock()
	claimed := g.claims[url]
	g.mu.Unlock()
	if claimed {
		return true, nil
	}
	return g.fetched.Has(ctx, url)
}

// Remove implements [fetch.FetchedRemover]: it drops a staged mark, and a
// committed one from the file.
func (g *Stage) Remove(ctx context.Context, url string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.claims[url] {
		delete(g.claims, url)
		return nil
	}
	if has, err := g.fetched.Has(ctx, url); err != nil || !has {
		return err
	}
	return g.fetched.Remove(ctx, url)
}

// Load implements [fetch.ValidatorStore].
func (g *Stage) Load(ctx context.Context, url string) (fetch.Validator, bool, error) {
	g.mu.Lock()
	v, ok := g.pending[url]
	g.mu.Unlock()
	if ok {
		return v, true, nil
	}
	return g.validators.Load(ctx, url)
}

// Save implements [fetch.ValidatorStore]: the validator is staged.
func (g *Stage) Save(ctx context.Context, url string, v fetch.Validator) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending[url] = v
	return nil
}

// Commit writes the staged mark and validator of each of urls (those it
// has) to the file and runs also (if not nil) in the same transaction, so
// that they become durable together with the caller's record of the
// outcome. Concurrent Commits share one transaction (bbolt's Batch: also
// may run more than once, in a fresh transaction each time). On error
// nothing is written and the records stay staged.
func (g *Stage) Commit(ctx context.Context, urls []string, also func(tx *bbolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.mu.Lock()
	marks := make([]string, 0, len(urls))
	vals := map[string]fetch.Validator{}
	for _, u := range urls {
		if g.claims[u] {
			marks = append(marks, u)
		}
		if v, ok := g.pending[u]; ok {
			vals[u] = v
		}
	}
	g.mu.Unlock()
	stamp := []byte(time.Now().UTC().Format(time.RFC3339))
	// Group commit: concurrent Commits share one transaction and one
	// fsync; each returns once its records are durable.
	err := batch(g.db, func(tx *bbolt.Tx) error {
		fb, err := tx.CreateBucketIfNotExists([]byte(g.fetched.name))
		if err != nil {
			return err
		}
		for _, u := range marks {
			if err := fb.Put([]byte(u), stamp); err != nil {
				return err
			}
		}
		vb, err := tx.CreateBucketIfNotExists([]byte(g.validators.name))
		if err != nil {
			return err
		}
		for u, v := range vals {
			raw, err := json.Marshal(v)
			if err != nil {
				return err
			}
			if err := vb.Put([]byte(u), raw); err != nil {
				return err
			}
		}
		if also != nil {
			return also(tx)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("boltstate: commit: %w", err)
	}
	g.mu.Lock()
	if len(marks) > 0 {
		g.commits++
	}
	for _, u := range marks {
		delete(g.claims, u)
	}
	for u, v := range vals {
		if g.pending[u] == v {
			delete(g.pending, u)
		}
	}
	g.mu.Unlock()
	return nil
}
