package robots

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Entry is one fetch outcome for an origin, as a [Store] keeps it. The rules
// are [FromResponse](Status, Body, nil); a Status of 0 records a network error
// or timeout (the site is closed).
//
// The zero Entry (Status 0, no body) is a failed fetch: it keeps the site
// closed. An Entry is plain data; Body must not be modified once saved.
type Entry struct {
	Fetched time.Time // when the fetch ended
	Status  int       // final HTTP status after redirects; 0 if none was obtained
	Body    []byte    // what was read of a 2xx body (at most the Cache's MaxBytes)
}

// Store persists robots.txt fetch outcomes per origin ("https://host:443").
// Implementations must be safe for concurrent use. robots/boltstore keeps
// them in a bbolt file.
type Store interface {
	// Load returns the entry saved for origin; ok is false if there is none.
	Load(ctx context.Context, origin string) (e Entry, ok bool, err error)
	// Save replaces the entry for origin.
	Save(ctx context.Context, origin string, e Entry) error
}

// MemoryStore is a [Store] in memory. The zero value is ready to use.
//
// It is safe for concurrent use and must not be copied after first use.
type MemoryStore struct {
	mu sync.Mutex // guards m
	m  map[string]Entry
}

// Load implements [Store].
func (s *MemoryStore) Load(_ context.Context, origin string) (Entry, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[origin]
	e.Body = slices.Clone(e.Body)
	return e, ok, nil
}

// Save implements [Store].
func (s *MemoryStore) Save(_ context.Context, origin string, e Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]Entry)
	}
	e.Body = slices.Clone(e.Body)
	s.m[origin] = e
	return nil
}
