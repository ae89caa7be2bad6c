package redisgate

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// FetchedSet is the set of URLs a fleet has fetched (each URL once across
// processes), one Redis set. It has the method set of fetch.FetchedRemover:
// Add reports true to exactly one caller in the whole fleet for each URL,
// and Remove gives a mark back.
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

// Remove takes url out of the set, so that a fetch which ended without a
// definitive answer (rate limited, unreachable, timed out) is made again by
// some worker later. Removing a URL not in the set is not an error.
func (s *FetchedSet) Remove(ctx context.Context, url string) error {
	if s.Client == nil {
		return &Error{Op: "fetched-remove", Host: url, Kind: ErrUnavailable, Err: errNoClient}
	}
	if err := s.Client.SRem(ctx, s.key(), url).Err(); err != nil {
		return opError("fetched-remove", url, err)
	}
	return nil
}
