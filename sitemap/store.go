package sitemap

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"sync"
	"time"
)

// Store keeps the last read of each site's sitemaps between runs, so a
// freshness check tomorrow, in a new process, costs one conditional
// request. Implementations must be safe for concurrent use and must
// replace a site's state atomically: after a failed or interrupted Save,
// Load returns the previous state. [MemoryStore] keeps it in memory;
// sitemap/boltstore keeps it in a bbolt file.
type Store interface {
	// Load returns the site's state, or nil and no error when there is none.
	// A stored state that does not decode (a damaged file, another
	// version's format) is an error for which errors.Is(err, ErrBadState)
	// holds: [Walker.Check] then reads the site as never read and its Save
	// replaces that state.
	Load(ctx context.Context, site string) (*State, error)
	// Save replaces the site's state.
	Save(ctx context.Context, site string, st *State) error
}

// ErrBadState is the error (matched with errors.Is) of a [Store]'s Load
// whose stored state does not decode.
var ErrBadState = errors.New("sitemap: stored state does not decode")

// State is the last read of one site's sitemaps: per sitemap, its
// validators and what it listed. It is plain data and JSON-serialisable.
//
// The zero State is a site never read. A State is not safe for concurrent
// modification; [State.Clone] makes an independent copy.
type State struct {
	// Read is when the read was made (server clock when known).
	Read time.Time `json:"read"`
	// Complete is true when every sitemap was read to its end.
	Complete bool `json:"complete,omitempty"`
	// Sitemaps maps each sitemap URL reached to its state.
	Sitemaps map[string]*SitemapState `json:"sitemaps,omitempty"`
}

// SitemapState is one sitemap file's validators and content.
//
// It is plain data; the zero value is a file never read (no validators, no
// pages). Use [State.Clone] before changing a State another goroutine may
// read.
type SitemapState struct {
	// ETag and LastModified are the response's validators, sent back as
	// If-None-Match and If-Modified-Since so an unchanged file costs a 304.
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	// Children lists the sitemaps of an index.
	Children []string `json:"children,omitempty"`
	// Cut is the Walker.MaxURLs at which the read of this file stopped
	// (0: read to its end). A walk with a larger MaxURLs reads the file in
	// full instead of sending its validators.
	Cut int `json:"cut,omitempty"`
	// Pages maps the page URLs the file listed to their lastmod (zero:
	// none given; see [LastModOf]). A URL listed twice keeps its latest
	// lastmod.
	Pages map[string]time.Time `json:"pages,omitempty"`
}

// Snapshot merges the pages of all sitemaps (the latest lastmod wins when
// a page is listed twice).
func (s *State) Snapshot() Snapshot {
	if s == nil {
		return Snapshot{}
	}
	snap := Snapshot{Read: s.Read, Complete: s.Complete, Pages: make(map[string]time.Time)}
	for _, sm := range s.Sitemaps {
		for u, lm := range sm.Pages {
			if old, ok := snap.Pages[u]; !ok || lm.After(old) {
				snap.Pages[u] = lm
			}
		}
	}
	return snap
}

// Clone returns a deep copy.
func (s *State) Clone() *State {
	if s == nil {
		return nil
	}
	c := &State{Read: s.Read, Complete: s.Complete, Sitemaps: make(map[string]*SitemapState, len(s.Sitemaps))}
	for u, sm := range s.Sitemaps {
		c.Sitemaps[u] = &SitemapState{
			ETag: sm.ETag, LastModified: sm.LastModified, Cut: sm.Cut,
			Children: append([]string(nil), sm.Children...),
			Pages:    maps.Clone(sm.Pages),
		}
	}
	return c
}

// MemoryStore is a [Store] in memory. Its zero value is ready to use; it
// is safe for concurrent use and keeps copies, so callers may modify what
// they saved or loaded.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string][]byte // guarded by mu: site -> JSON state
}

// Load implements [Store].
func (m *MemoryStore) Load(ctx context.Context, site string) (*State, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	b, ok := m.m[site]
	m.mu.Unlock()
	if !ok {
		return nil, nil
	}
	st := new(State)
	if err := json.Unmarshal(b, st); err != nil {
		return nil, err
	}
	return st, nil
}

// Save implements [Store].
func (m *MemoryStore) Save(ctx context.Context, site string, st *State) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = make(map[string][]byte)
	}
	m.m[site] = b
	return nil
}
