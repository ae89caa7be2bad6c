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
// Writes to the validator store, the fetched set and a [Stage] (and any
// [State.Write]) go through a redo log beside the file, PATH-wal.a and
// PATH-wal.b: each write is appended as one checksummed record and
// returns once the log is synced, so a write that returned survives a
// crash of the process (SIGKILL, a panic) and a write that did not
// return leaves nothing half done; a write of more than one record holds
// (256 MiB) is refused with [ErrWriteTooLarge]. Writes made at the same
// time share one sync (group commit), and while many writers crowd the log
// is synced at most once every 8 ms; there is no bbolt transaction per
// write.
// The writes are applied to the bbolt file later, in one transaction with
// their keys in order, each time the log holds Options.CheckpointBytes
// ([DefaultCheckpointBytes], 16 MiB) and at Close (a checkpoint); until
// then they are also held in memory, so reads see them: a State holds at
// most about twice CheckpointBytes of writes in memory, and writers wait
// for a checkpoint rather than go beyond. Opening the file replays what
// its log holds (a killed process's writes), then empties the log;
// Close leaves no log behind. A record cut short by a crash was never
// acknowledged and is dropped; a damaged record (its checksums) stops the
// replay there, the log files are copied aside (FILE.corrupt-TIME) and a
// warning is logged. BENCHMARKS.md compares the log with bbolt's own
// group commit (DB.Batch), which it replaces.
//
// What a crash may lose (a cache, a spill its owner empties when it
// starts again) is written with [State.WriteUnlogged]: read at once and
// applied with the next checkpoint like the log's writes, but never
// appended to the log nor synced, and gone if the process dies before
// that checkpoint. Many small writes with keys spread over a large bucket
// cost far less that way than in a bbolt transaction each, which rewrites
// a page of the bucket for nearly every key.
//
// The fetched set and the validators keep a Bloom filter of their URLs in
// memory (read from the file at open, 1.3 to 4 bytes a URL each): a URL
// never fetched, the common question of a crawl finding new pages, is
// answered without a read of the file.
//
// Buckets written through the log must not be written through DB
// directly; robots/boltstore and sitemap/boltstore write their own
// buckets there, outside the log.
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
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/internal/bloom"
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
	// CheckpointBytes is how much the log holds (the writes' keys and
	// values) before they are applied to the bbolt file (see the package
	// doc). Zero means [DefaultCheckpointBytes].
	//
	// A checkpoint rewrites every page of the file its keys fall in; keys
	// spread over large buckets (a crawl's URLs) fall in most of them, so
	// a checkpoint costs about the size of those buckets, and a write's
	// share of it grows with the file. A larger value makes checkpoints
	// rarer and that share smaller, for up to twice as much memory.
	CheckpointBytes int

	betweenResets func() // tests: runs at open between emptying the log's older file and its newer
	unchecked     bool   // tests: bbolt opens the file without [Check] first, to exercise what stands behind it
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

	log   *slog.Logger
	limit int // CheckpointBytes
	logs  [2]*logFile
	w     *logWriter // nil for a read-only state
	wmu   sync.Mutex // held by a write from its first read to its append, and by a checkpoint switching files
	tx    Tx         // the write holding wmu's
	bg    sync.WaitGroup

	full          atomic.Bool              // both layers are full: writes wait for the checkpoint (checkpointing && active.bytes >= limit)
	mu            sync.Mutex               // guards the fields below
	cond          sync.Cond                // on mu: a checkpoint ended
	filters       map[string]*bloom.Filter // of each of filteredBuckets: every key, file and layers
	active        *layer                   // writes since the last checkpoint began
	frozen        *layer                   // the writes a running checkpoint applies (nil: none)
	checkpointing bool
	closed        bool
	err           error // sticky: a checkpoint failed

	// tests: runs in a checkpoint once it has frozen the active layer
	// ("frozen") and once its transaction committed, before it empties the
	// log file it applied ("applied").
	checkpointHook func(stage string)
}

// Open opens (creating if needed) the bbolt file at path with [OpenDB] and
// the stores over its buckets.
func Open(path string, opts *Options) (*State, error) {
	db, err := OpenDB(path, opts)
	if err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	st, err := newState(db, o)
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
		if !o.unchecked {
			if err := checkFile(f, name); err != nil {
				f.Close()
				return nil, err
			}
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
// is kept, never deleted, so that nothing in it is lost; the files of its
// log (see [LogSuffixes]) move with it, to the new name plus their
// suffixes.
func MoveAside(path, why string) (string, error) {
	dst := asideName(path, why)
	if err := os.Rename(path, dst); err != nil {
		return dst, err
	}
	for _, suffix := range LogSuffixes {
		err := os.Rename(path+suffix, dst+suffix)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return dst, err
		}
	}
	return dst, nil
}

// asideName is a free name path.why-TIME, for a file moved or copied aside.
func asideName(path, why string) string {
	stamp := time.Now().UTC().Format("20060102T150405Z")
	dst := fmt.Sprintf("%s.%s-%s", path, why, stamp)
	for i := 1; ; i++ {
		if _, err := os.Lstat(dst); errors.Is(err, os.ErrNotExist) {
			return dst
		}
		dst = fmt.Sprintf("%s.%s-%s-%d", path, why, stamp, i)
	}
}

// New returns the stores over an already open db (creating the buckets if
// db is writable), with its log (see the package doc) and the default
// Options. One State at a time may use a file: a second is refused with
// [ErrLocked]. [State.Close] closes db.
func New(db *bbolt.DB) (*State, error) {
	return newState(db, Options{})
}

func newState(db *bbolt.DB, o Options) (*State, error) {
	if db == nil {
		return nil, errors.New("boltstate: nil database")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.CheckpointBytes <= 0 {
		o.CheckpointBytes = DefaultCheckpointBytes
	}
	if o.LockTimeout == 0 {
		o.LockTimeout = time.Second
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
	st := &State{DB: db, Robots: rb, Sitemaps: sm, log: o.Logger, limit: o.CheckpointBytes, active: newLayer()}
	st.cond.L = &st.mu
	st.Validators = jsonBucket[fetch.Validator]{st, ValidatorsBucket}
	st.Fetched = setBucket{st, FetchedBucket}
	if err := st.openLog(o.LockTimeout, o.betweenResets); err != nil {
		return nil, err
	}
	if err := st.filterBuckets(); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// filteredBuckets are the buckets a State keeps a Bloom filter of: the
// fetched set and the validators, whose common question in a crawl that
// finds new pages is about a URL they do not hold.
var filteredBuckets = [...]string{FetchedBucket, ValidatorsBucket}

// filterRoom is the first room of a bucket's filter.
const filterRoom = 1 << 16

// filterBuckets fills the filter of each of filteredBuckets with its keys,
// so that a key never written is known so without a read of the file. The
// State's reads and writes come after it: the filters are never missing
// there.
func (s *State) filterBuckets() error {
	filters := map[string]*bloom.Filter{}
	for _, name := range filteredBuckets {
		f := bloom.New(filterRoom)
		err := s.ForEach(context.Background(), name, func(k, _ []byte) error {
			f.Add(string(k))
			return nil
		})
		if err != nil {
			return fmt.Errorf("boltstate: reading the %s bucket: %w", name, err)
		}
		filters[name] = f
	}
	s.mu.Lock()
	s.filters = filters
	s.mu.Unlock()
	return nil
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

// Close applies the log to the bbolt file (a last checkpoint), removes the
// emptied log files and closes the file. Writes still running may fail
// with [ErrClosed]. If the checkpoint fails, the log is kept: the next
// open applies it.
func (s *State) Close() error {
	if s.w == nil {
		closeLogFiles(s.logs)
		return s.DB.Close()
	}
	s.mu.Lock()
	for s.checkpointing {
		s.cond.Wait()
	}
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	err := s.err
	if err == nil {
		s.checkpointing = true
	}
	s.mu.Unlock()
	s.bg.Wait()
	if err == nil {
		err = s.checkpoint()
	}
	s.w.close()
	if err == nil {
		for _, l := range s.logs {
			if rerr := os.Remove(l.path); rerr != nil && err == nil {
				err = fmt.Errorf("boltstate: log: %w", rerr)
			}
		}
	}
	closeLogFiles(s.logs)
	return errors.Join(err, s.DB.Close())
}

// jsonBucket keeps JSON values by key in one bucket.
type jsonBucket[T any] struct {
	s    *State
	name string
}

func (b jsonBucket[T]) Load(ctx context.Context, key string) (T, bool, error) {
	var v T
	if err := ctx.Err(); err != nil {
		return v, false, err
	}
	raw, err := b.s.get(b.name, key)
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
	return b.s.Write(ctx, func(tx *Tx) error { return tx.Put(b.name, key, raw) })
}

// setBucket is a [fetch.FetchedRemover]: keys are URLs, values the time added.
type setBucket struct {
	s    *State
	name string
}

func (b setBucket) Add(ctx context.Context, url string) (bool, error) {
	added := false
	err := b.s.Write(ctx, func(tx *Tx) error {
		v, err := tx.Get(b.name, url)
		if err != nil || v != nil {
			return err
		}
		added = true
		return tx.Put(b.name, url, []byte(time.Now().UTC().Format(time.RFC3339)))
	})
	return added && err == nil, err
}

func (b setBucket) Has(ctx context.Context, url string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	v, err := b.s.get(b.name, url)
	return v != nil, err
}

func (b setBucket) Remove(ctx context.Context, url string) error {
	return b.s.Write(ctx, func(tx *Tx) error { return tx.Delete(b.name, url) })
}

// view is db.View with a panic inside bbolt (a damaged page the open-time
// checks could not see) returned as an error.
func view(db *bbolt.DB, fn func(*bbolt.Tx) error) (err error) {
	defer recoverInto(&err)
	return db.View(fn)
}

func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: bbolt: %v", ErrCorrupt, r)
	}
}

// Stage is a view of a [State] for a crawler that records each page's
// outcome itself: the fetched marks and validators a [fetch.Fetcher] makes
// are held in memory, and become durable only when the crawler commits them
// ([Stage.Commit]) with its own record of the outcome, in one write of the
// state's log.
// A process killed mid-fetch therefore leaves no URL marked fetched whose
// outcome was never recorded, and no validator without its page (a refetch
// after the crash is a full one, not a 304 for a page never read).
//
// Stage implements both [fetch.FetchedRemover] and [fetch.ValidatorStore];
// reads see the staged records first, then the file. Make one with
// [State.Stage]; it is safe for concurrent use. Committing many URLs in one
// call costs one write of the log; concurrent Commits share its syncs.
type Stage struct {
	s          *State
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
	return &Stage{s: s, fetched: setBucket{s, FetchedBucket}, validators: jsonBucket[fetch.Validator]{s, ValidatorsBucket},
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
// has) and runs also (if not nil) in the same write (see [State.Write]), so
// that they become durable together with the caller's record of the
// outcome: Commit returns once they are. Concurrent Commits share one sync
// of the log. On error nothing is written and the records stay staged.
func (g *Stage) Commit(ctx context.Context, urls []string, also func(tx *Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	type staged struct {
		url string
		v   fetch.Validator
		raw []byte
	}
	g.mu.Lock()
	var marks []string
	var vals []staged
	for _, u := range urls {
		if g.claims[u] {
			marks = append(marks, u)
		}
		if v, ok := g.pending[u]; ok {
			vals = append(vals, staged{url: u, v: v})
		}
	}
	g.mu.Unlock()
	var stamp []byte
	if len(marks) > 0 {
		stamp = time.Now().UTC().AppendFormat(make([]byte, 0, 20), time.RFC3339)
	}
	for i := range vals {
		raw, err := json.Marshal(vals[i].v)
		if err != nil {
			return fmt.Errorf("boltstate: commit: %w", err)
		}
		vals[i].raw = raw
	}
	err := g.s.Write(ctx, func(tx *Tx) error {
		for _, u := range marks {
			if err := tx.Put(g.fetched.name, u, stamp); err != nil {
				return err
			}
		}
		for _, v := range vals {
			if err := tx.Put(g.validators.name, v.url, v.raw); err != nil {
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
	for _, v := range vals {
		if g.pending[v.url] == v.v {
			delete(g.pending, v.url)
		}
	}
	g.mu.Unlock()
	return nil
}
