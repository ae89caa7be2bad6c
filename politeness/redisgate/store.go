package redisgate

import (
	"context"

	"github.com/redis/go-redis/v9"
)

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
