package redisgate

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/goodbot-go/goodbot/robots"
	"github.com/redis/go-redis/v9"
)

// RobotsStore is a [robots.Store] in Redis, so that a fleet shares its
// robots.txt copies: once one process has fetched an origin's robots.txt, the
// others use that copy until the robots.Cache's TTL says it is stale (one
// fetch per TTL for the fleet, give or take processes that miss at the same
// moment). Each origin is one key holding the Entry as JSON.
//
// Client must be set (without it every call fails with [ErrUnavailable]);
// the other fields have working zero values. It is safe
// for concurrent use.
type RobotsStore struct {
	Client redis.Cmdable
	// Prefix starts every key. Zero means "goodbot:robots:".
	Prefix string
	// Expire is how long Redis keeps a copy after it was saved. Zero means
	// 7 days (well past any robots.txt TTL, so that a 5xx outcome and the
	// time it was seen are kept); negative means forever.
	Expire time.Duration
}

var _ robots.Store = (*RobotsStore)(nil)

func (s *RobotsStore) key(origin string) string {
	p := s.Prefix
	if p == "" {
		p = "goodbot:robots:"
	}
	return p + origin
}

// Load implements [robots.Store].
func (s *RobotsStore) Load(ctx context.Context, origin string) (robots.Entry, bool, error) {
	if s.Client == nil {
		return robots.Entry{}, false, &Error{Op: "robots-load", Host: origin, Kind: ErrUnavailable, Err: errNoClient}
	}
	b, err := s.Client.Get(ctx, s.key(origin)).Bytes()
	if errors.Is(err, redis.Nil) {
		return robots.Entry{}, false, nil
	}
	if err != nil {
		return robots.Entry{}, false, opError("robots-load", origin, err)
	}
	var e robots.Entry
	if err := json.Unmarshal(b, &e); err != nil {
		return robots.Entry{}, false, &Error{Op: "robots-load", Host: origin, Kind: ErrBadState, Err: err}
	}
	return e, true, nil
}

// Save implements [robots.Store].
func (s *RobotsStore) Save(ctx context.Context, origin string, e robots.Entry) error {
	if s.Client == nil {
		return &Error{Op: "robots-save", Host: origin, Kind: ErrUnavailable, Err: errNoClient}
	}
	b, err := json.Marshal(e)
	if err != nil {
		return &Error{Op: "robots-save", Host: origin, Kind: ErrBadState, Err: err}
	}
	exp := s.Expire
	switch {
	case exp == 0:
		exp = 7 * 24 * time.Hour
	case exp < 0:
		exp = 0 // KEEPTTL-free SET: no expiry
	}
	if err := s.Client.Set(ctx, s.key(origin), b, exp).Err(); err != nil {
		return opError("robots-save", origin, err)
	}
	return nil
}

// FetchedSet is the set of URLs a fleet has fetched (S8 across processes),
// one Redis set. It has the method set of fetch.FetchedSet: Add reports true
// to exactly one caller in the whole fleet for each URL.
//
// Client must be set (without it every call fails with [ErrUnavailable]);
// Key has a working zero value. It is safe for concurrent
// use.
type FetchedSet struct {
	Client redis.Cmdable
	// Key is the Redis set. Zero means "goodbot:fetched".
	Key string
}

func (s *FetchedSet) key() string {
	if s.Key == "" {
		return "goodbot:fetched"
	}
	return s.Key
}

// Add puts url in the set and reports whether it was new.
func (s *FetchedSet) Add(ctx context.Context, url string) (bool, error) {
	if s.Client == nil {
		return false, &Error{Op: "fetched-add", Host: url, Kind: ErrUnavailable, Err: errNoClient}
	}
	n, err := s.Client.SAdd(ctx, s.key(), url).Result()
	if err != nil {
		return false, opError("fetched-add", url, err)
	}
	return n == 1, nil
}

// Has reports whether url is in the set.
func (s *FetchedSet) Has(ctx context.Context, url string) (bool, error) {
	if s.Client == nil {
		return false, &Error{Op: "fetched-has", Host: url, Kind: ErrUnavailable, Err: errNoClient}
	}
	ok, err := s.Client.SIsMember(ctx, s.key(), url).Result()
	if err != nil {
		return false, opError("fetched-has", url, err)
	}
	return ok, nil
}
