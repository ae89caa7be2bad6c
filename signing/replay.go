package signing

import (
	"sync"
	"time"
)

// DefaultMaxNonces is the capacity of a NonceCache whose Max is zero.
const DefaultMaxNonces = 100_000

// NonceCache remembers the nonces of verified signatures until the
// signatures expire, so that a [Verifier] whose Nonces field points to it
// refuses a signature replayed with the same nonce (ReasonReplayed,
// invalid) and one without a nonce (ReasonMissingParam). Memory is bounded
// twice: an entry is kept only until its signature's expires (plus the
// verifier's skew), and at most Max entries are held; when the cache is
// full of unexpired entries a signature cannot be recorded and its
// verification ends unverified (ReasonReplayState), never verified without
// replay protection.
//
// Only signatures that verified are recorded, so forged requests cannot
// fill the cache. The state is local to the process: a fleet of verifiers
// needs a shared store.
//
// The zero value is ready to use with DefaultMaxNonces. Safe for concurrent
// use.
type NonceCache struct {
	// Max is the number of nonces held at most. Zero means DefaultMaxNonces.
	Max int

	mu       sync.Mutex
	seen     map[string]time.Time // key -> until
	earliest time.Time            // no entry expires before this
}

// record notes key until until. It reports seen when key is already held
// and unexpired, and full when there is no room.
func (c *NonceCache) record(key string, until, now time.Time) (seen, full bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]time.Time{}
	}
	if u, ok := c.seen[key]; ok && now.Before(u) {
		return true, false
	}
	max := c.Max
	if max <= 0 {
		max = DefaultMaxNonces
	}
	if len(c.seen) >= max && !now.Before(c.earliest) {
		c.earliest = time.Time{}
		for k, u := range c.seen {
			if !now.Before(u) {
				delete(c.seen, k)
			} else if c.earliest.IsZero() || u.Before(c.earliest) {
				c.earliest = u
			}
		}
	}
	if len(c.seen) >= max {
		return false, true
	}
	c.seen[key] = until
	if c.earliest.IsZero() || until.Before(c.earliest) {
		c.earliest = until
	}
	return false, false
}
