package botkit

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/robots"
	"github.com/goodbot-go/goodbot/signing"
	"github.com/goodbot-go/goodbot/sitemap"
	bolt "go.etcd.io/bbolt"
)

// Bucket names in the state file.
const (
	robotsBucket     = "robots"
	validatorsBucket = "validators"
	fetchedBucket    = "fetched"
	sitemapBucket    = "sitemaps"
)

type stores struct {
	robots     robots.Store
	validators fetch.ValidatorStore
	fetched    fetch.FetchedSet
}

func boltStores(db *bolt.DB) (stores, error) {
	if db == nil {
		return stores{robots: &robots.MemoryStore{}, validators: &fetch.MemoryValidators{}, fetched: &fetch.MemorySet{}}, nil
	}
	return stores{
		robots:     jsonBucket[robots.Entry]{db, robotsBucket},
		validators: jsonBucket[fetch.Validator]{db, validatorsBucket},
		fetched:    setBucket{db, fetchedBucket},
	}, nil
}

// SitemapStore returns the sitemap.Store kept in the session's state file.
func (s *Session) SitemapStore() sitemap.Store {
	if s.DB == nil {
		return &sitemap.MemoryStore{}
	}
	return sitemapBucketStore{jsonBucket[*sitemap.State]{s.DB, sitemapBucket}}
}

// jsonBucket keeps JSON values by key in one bucket. A value that does not
// decode (an older or damaged record) is an error for that key only; the
// caller refetches and the next Save replaces it.
type jsonBucket[T any] struct {
	db   *bolt.DB
	name string
}

func (b jsonBucket[T]) Load(_ context.Context, key string) (T, bool, error) {
	var v T
	var raw []byte
	err := b.db.View(func(tx *bolt.Tx) error {
		if bk := tx.Bucket([]byte(b.name)); bk != nil {
			raw = append(raw, bk.Get([]byte(key))...)
		}
		return nil
	})
	if err != nil || raw == nil {
		return v, false, err
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		var zero T
		return zero, false, fmt.Errorf("state: %s/%s: undecodable record: %w", b.name, key, err)
	}
	return v, true, nil
}

func (b jsonBucket[T]) Save(_ context.Context, key string, v T) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.db.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists([]byte(b.name))
		if err != nil {
			return err
		}
		return bk.Put([]byte(key), raw)
	})
}

type sitemapBucketStore struct{ b jsonBucket[*sitemap.State] }

func (s sitemapBucketStore) Load(ctx context.Context, site string) (*sitemap.State, error) {
	st, _, err := s.b.Load(ctx, site)
	return st, err
}

func (s sitemapBucketStore) Save(ctx context.Context, site string, st *sitemap.State) error {
	return s.b.Save(ctx, site, st)
}

// setBucket is a fetch.FetchedSet in one bucket.
type setBucket struct {
	db   *bolt.DB
	name string
}

func (s setBucket) Add(_ context.Context, key string) (added bool, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists([]byte(s.name))
		if err != nil {
			return err
		}
		if bk.Get([]byte(key)) != nil {
			return nil
		}
		added = true
		return bk.Put([]byte(key), []byte{1})
	})
	return added, err
}

func (s setBucket) Has(_ context.Context, key string) (has bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if bk := tx.Bucket([]byte(s.name)); bk != nil {
			has = bk.Get([]byte(key)) != nil
		}
		return nil
	})
	return has, err
}

func pubThumb(k ed25519.PrivateKey) (string, error) {
	return signing.Thumbprint(k.Public().(ed25519.PublicKey))
}
