// Package boltstore keeps robots.txt fetch outcomes ([robots.Entry]) in a
// bbolt file, so that a restarted bot does not refetch a copy that is still
// fresh. It takes an already open *bbolt.DB and a bucket name, so a bot
// can keep all its state in one file.
//
// bbolt (go.etcd.io/bbolt) is an embedded, transactional key/value store with
// no server and no cgo; it lives in this subpackage so that importing robots
// alone pulls in nothing else.
package boltstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/goodbot-go/goodbot/robots"
	bolt "go.etcd.io/bbolt"
)

// errCorrupt reports a stored record that cannot be decoded; Load treats it
// as absent, so the origin is simply fetched again.
var errCorrupt = errors.New("boltstore: corrupt record")

// errNoDB is the error of a Store that New did not make.
var errNoDB = errors.New("boltstore: Store has no database (use New)")

// Store is a [robots.Store] in one bucket of a bbolt database. It is safe for
// concurrent use (bbolt serialises writers). The zero value is not usable:
// make one with [New]; the methods of a zero Store return an error.
type Store struct {
	db     *bolt.DB
	bucket []byte
}

var _ robots.Store = (*Store)(nil)

// New returns a Store keeping its records in bucket (created if needed) of
// db. The caller owns db and closes it. Open db with fetch/boltstate.OpenDB
// to have a damaged file checked and moved aside before use (bbolt.Open
// alone can crash on a truncated file).
func New(db *bolt.DB, bucket string) (*Store, error) {
	if db == nil || bucket == "" {
		return nil, errors.New("boltstore: nil db or empty bucket name")
	}
	s := &Store{db: db, bucket: []byte(bucket)}
	if db.IsReadOnly() {
		return s, nil // the bucket is read if it exists
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(s.bucket)
		return err
	}); err != nil {
		return nil, fmt.Errorf("boltstore: create bucket %q: %w", bucket, err)
	}
	return s, nil
}

// Load implements [robots.Store]. A record that cannot be decoded (written by
// a newer version, or damaged) counts as absent, so the origin is fetched
// again.
func (s *Store) Load(ctx context.Context, origin string) (robots.Entry, bool, error) {
	if err := ctx.Err(); err != nil {
		return robots.Entry{}, false, err
	}
	if s == nil || s.db == nil {
		return robots.Entry{}, false, errNoDB
	}
	var e robots.Entry
	var ok bool
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(s.bucket)
		if b == nil {
			return nil
		}
		v := b.Get([]byte(origin))
		if v == nil {
			return nil
		}
		var derr error
		e, derr = decode(v)
		ok = derr == nil
		return nil
	})
	if err != nil {
		return robots.Entry{}, false, fmt.Errorf("boltstore: load %s: %w", origin, err)
	}
	return e, ok, nil
}

// Save implements [robots.Store]. Concurrent Saves share one transaction
// and one fsync (bbolt's Batch): a crawler that reads many sites' robots.txt
// at once does not write them one by one. It returns once e is durable.
func (s *Store) Save(ctx context.Context, origin string, e robots.Entry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s == nil || s.db == nil {
		return errNoDB
	}
	v, err := encode(e)
	if err != nil {
		return err
	}
	if err := s.db.Batch(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(s.bucket)
		if err != nil {
			return err
		}
		return b.Put([]byte(origin), v)
	}); err != nil {
		return fmt.Errorf("boltstore: save %s: %w", origin, err)
	}
	return nil
}

// Record layout, version 1:
//
//	1 byte version | 1 byte n | n bytes time.MarshalBinary | 4 bytes status (big endian) | body
const version = 1

func encode(e robots.Entry) ([]byte, error) {
	t, err := e.Fetched.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("boltstore: encode fetch time: %w", err)
	}
	if len(t) > 255 { // the record keeps its length in one byte
		return nil, fmt.Errorf("boltstore: encode fetch time: %d bytes", len(t))
	}
	v := make([]byte, 0, 2+len(t)+4+len(e.Body))
	v = append(v, version, byte(len(t)))
	v = append(v, t...)
	v = binary.BigEndian.AppendUint32(v, uint32(e.Status))
	return append(v, e.Body...), nil
}

// decode copies what it needs: v is only valid inside the transaction.
func decode(v []byte) (robots.Entry, error) {
	if len(v) < 2 || v[0] != version || len(v) < 2+int(v[1])+4 {
		return robots.Entry{}, errCorrupt
	}
	n := int(v[1])
	var t time.Time
	if err := t.UnmarshalBinary(v[2 : 2+n]); err != nil {
		return robots.Entry{}, errCorrupt
	}
	status := binary.BigEndian.Uint32(v[2+n:])
	body := append([]byte(nil), v[2+n+4:]...)
	return robots.Entry{Fetched: t, Status: int(int32(status)), Body: body}, nil
}
