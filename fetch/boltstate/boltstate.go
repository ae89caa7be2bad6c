// Package boltstate keeps all of a bot's crawl state in one bbolt file:
// robots.txt copies, sitemap state, page validators (ETag, Last-Modified)
// and the set of URLs fetched, each in its own bucket, so a bot restarted
// tomorrow still makes a one-request freshness check.
//
//	st, err := boltstate.Open("bothybot.db", nil)
//	if err != nil { ... }
//	defer st.Close()
//	bot := profiles.Bothy(...)
//	st.Apply(&bot)                  // RobotsStore, Validators, Fetched
//	walker := sitemap.Walker{Store: st.Sitemaps, ...}
//
// bbolt (go.etcd.io/bbolt) is a small, pure-Go embedded store with ACID
// transactions and a file lock, so a crash mid-write leaves the last state
// readable and two processes cannot share one file by accident. It lives in
// this subpackage so that importing fetch pulls in no storage engine.
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
	"time"

	"go.etcd.io/bbolt"

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
	// ReadOnly opens the file read-only (the buckets must exist).
	ReadOnly bool
}

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

// Open opens (creating if needed) the bbolt file at path and the stores over
// its buckets.
func Open(path string, opts *Options) (*State, error) {
	if opts == nil {
		opts = &Options{}
	}
	timeout := opts.LockTimeout
	if timeout == 0 {
		timeout = time.Second
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: timeout, ReadOnly: opts.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("boltstate: open %s: %w", path, err)
	}
	st, err := New(db)
	if err != nil {
		db.Close()
		return nil, err
	}
	return st, nil
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
	err := b.db.View(func(tx *bbolt.Tx) error {
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
	return b.db.Batch(func(tx *bbolt.Tx) error {
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
	err := b.db.Batch(func(tx *bbolt.Tx) error {
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
	err := b.db.View(func(tx *bbolt.Tx) error {
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
	return b.db.Batch(func(tx *bbolt.Tx) error {
		if bk := tx.Bucket([]byte(b.name)); bk != nil {
			return bk.Delete([]byte(url))
		}
		return nil
	})
}
