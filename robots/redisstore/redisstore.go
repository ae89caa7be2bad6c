// Package redisstore keeps robots.txt copies in Redis, so that a fleet of
// crawler processes shares them: once one process has fetched an origin's
// robots.txt, the others use that copy until their [robots.Cache]'s TTL says
// it is stale (one fetch per TTL for the whole fleet, give or take processes
// that miss at the same moment). It also keeps a closed site closed across the
// fleet: a 5xx outcome is shared like any other.
//
// It depends on github.com/redis/go-redis/v9, the Redis client the
// politeness/redisgate fleet gate uses too; importing robots alone pulls in
// neither.
package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/goodbot-go/goodbot/robots"
	"github.com/redis/go-redis/v9"
)

// ErrBadEntry reports a key that holds something other than an entry this
// package saved.
var ErrBadEntry = errors.New("redisstore: not a robots.txt entry")

var errNoClient = errors.New("redisstore: Store has no Client")

// Store is a [robots.Store] in Redis: each origin is one key holding the
// [robots.Entry] as JSON.
//
// Client must be set (without it every call fails); the other fields have
// working zero values. A Store is safe for concurrent use.
type Store struct {
	Client redis.Cmdable
	// Prefix starts every key. Zero means "goodbot:robots:".
	Prefix string
	// Expire is how long Redis keeps a copy after it was saved. Zero means
	// 7 days (well past any robots.txt TTL, so that a 5xx outcome and the
	// time it was seen are kept); negative means forever.
	Expire time.Duration
}

var _ robots.Store = (*Store)(nil)

func (s *Store) key(origin string) string {
	p := s.Prefix
	if p == "" {
		p = "goodbot:robots:"
	}
	return p + origin
}

// Load implements [robots.Store].
func (s *Store) Load(ctx context.Context, origin string) (robots.Entry, bool, error) {
	if s.Client == nil {
		return robots.Entry{}, false, errNoClient
	}
	b, err := s.Client.Get(ctx, s.key(origin)).Bytes()
	if errors.Is(err, redis.Nil) {
		return robots.Entry{}, false, nil
	}
	if err != nil {
		return robots.Entry{}, false, fmt.Errorf("redisstore: load %s: %w", origin, err)
	}
	var e robots.Entry
	if err := json.Unmarshal(b, &e); err != nil {
		return robots.Entry{}, false, fmt.Errorf("%w: %s: %v", ErrBadEntry, origin, err)
	}
	return e, true, nil
}

// Save implements [robots.Store].
func (s *Store) Save(ctx context.Context, origin string, e robots.Entry) error {
	if s.Client == nil {
		return errNoClient
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("redisstore: save %s: %w", origin, err)
	}
	exp := s.Expire
	switch {
	case exp == 0:
		exp = 7 * 24 * time.Hour
	case exp < 0:
		exp = 0 // SET without expiry
	}
	if err := s.Client.Set(ctx, s.key(origin), b, exp).Err(); err != nil {
		return fmt.Errorf("redisstore: save %s: %w", origin, err)
	}
	return nil
}
