// Package boltstore keeps [sitemap.State] in a bbolt database, so a bot's
// sitemap state survives restarts and a freshness check run tomorrow, in a
// new process, costs one conditional request.
//
// It takes a *bbolt.DB the caller has already opened, and a bucket name,
// so a bot keeps all of its state (robots.txt copies, validators, sitemap
// lastmods) in one file. bbolt (go.etcd.io/bbolt) is used because it is a
// small, pure-Go, well-kept embedded store with ACID transactions: every
// Save is one write transaction, so a crash in the middle of an update
// leaves the previous state readable. It lives in this subpackage so that
// importing sitemap alone pulls in nothing but the standard library.
package boltstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/goodbot-go/goodbot/sitemap"
)

// errNoDB is the error of a Store that New did not make.
var errNoDB = errors.New("boltstore: Store has no database (use New)")

// Store is a [sitemap.Store] in one bucket of a bbolt database: one key
// per site, holding the site's state as JSON. It is safe for concurrent
// use (bbolt serialises writers). The zero value is not usable: make one
// with [New]; the methods of a zero Store return an error.
type Store struct {
	db     *bbolt.DB
	bucket []byte
}

var _ sitemap.Store = (*Store)(nil)

// New returns a Store that keeps its data in the named bucket of db,
// creating the bucket if needed (db must then be writable). The caller
// keeps ownership of db and closes it. Open db with
// fetch/boltstate.OpenDB to have a damaged file checked and moved aside
// before use (bbolt.Open alone can crash on a truncated file).
func New(db *bbolt.DB, bucket string) (*Store, error) {
	if db == nil || bucket == "" {
		return nil, errors.New("boltstore: nil database or empty bucket name")
	}
	s := &Store{db: db, bucket: []byte(bucket)}
	if !db.IsReadOnly() {
		err := db.Update(func(tx *bbolt.Tx) error {
			_, err := tx.CreateBucketIfNotExists(s.bucket)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("boltstore: creating bucket %q: %w", bucket, err)
		}
	}
	return s, nil
}

// Load implements [sitemap.Store]. A record that does not decode (a
// damaged file, another version's format) is an error matching
// [sitemap.ErrBadState]; the walker's next Save replaces it.
func (s *Store) Load(ctx context.Context, site string) (*sitemap.State, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s == nil || s.db == nil {
		return nil, errNoDB
	}
	var st *sitemap.State
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(s.bucket)
		if b == nil {
			return nil
		}
		v := b.Get([]byte(site))
		if v == nil {
			return nil
		}
		st = new(sitemap.State)
		if err := json.Unmarshal(v, st); err != nil { // v is only valid inside the transaction
			return fmt.Errorf("%w: %w", sitemap.ErrBadState, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("boltstore: loading %s: %w", site, err)
	}
	return st, nil
}

// Save implements [sitemap.Store]: one write transaction, so the site's
// previous state stays in place if it fails.
func (s *Store) Save(ctx context.Context, site string, st *sitemap.State) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s == nil || s.db == nil {
		return errNoDB
	}
	v, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("boltstore: encoding %s: %w", site, err)
	}
	err = s.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(s.bucket)
		if err != nil {
			return err
		}
		return b.Put([]byte(site), v)
	})
	if err != nil {
		return fmt.Errorf("boltstore: saving %s: %w", site, err)
	}
	return nil
}
