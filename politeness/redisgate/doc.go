// Package redisgate is a [politeness.Gate] backed by Redis, so that a fleet of
// crawler processes, on one machine or many, keeps every per-host promise
// together: one request in flight per host across the fleet, and the gap,
// pauses, backoff and breaker state (the host's [politeness.State]) shared.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	gate := redisgate.New(rdb, nil)
//	defer gate.Close()
//	client := &http.Client{Transport: &politeness.Transport{Gate: gate}}
//
// It is a subpackage so that the politeness package itself stays free of
// dependencies; it uses github.com/redis/go-redis/v9, the Redis project's own
// Go client.
//
// # How it works
//
// Each host has a lease key holding the holder's random token, set with SET NX
// and a time-to-live (Options.LeaseTTL, 10 s by default), and a State key
// holding the State as JSON (new State fields need no change here). Taking,
// renewing and releasing a lease are Lua scripts, so each is atomic; a release
// stores the next State only if the token still matches. A holder renews its
// lease every LeaseTTL/3 while it holds it, so a slow download keeps its turn,
// and a worker that crashes (even by SIGKILL) blocks its hosts for at most one
// LeaseTTL.
//
// Waiting does not poll. Within one process, callers for a host queue in
// arrival order and only the first talks to Redis; across processes, a queue
// in Redis (a sorted set of waiters by arrival) hands the host to the process
// that has waited longest, so one busy process cannot starve the others. A
// waiter sleeps until the lease is released (every release is published on
// one channel, to which each gate subscribes once), until the lease's own
// expiry, or at most Options.MaxWait; a waiter that crashed loses its place
// after 2×MaxWait + 1 s.
// When the Transport's ready callback asks for a wait, the gate sleeps for
// exactly that long: holding the lease for waits up to LeaseTTL (the host's
// next request is then this caller's), releasing it for longer pauses so that
// other processes can see the host's State and sleep too.
//
// # Failures
//
// The gate fails closed: when Redis cannot be reached, Acquire returns an
// *[Error] matching [ErrUnavailable] (and the network cause), and the caller
// gets no lease, so the politeness Transport sends no request. A caller that
// prefers to carry on with local pacing can fall back to a
// [politeness.MemoryGate] on that error. How fast a failure surfaces is the
// client's configuration (go-redis retries commands MaxRetries times and
// dials DialerRetries times by default); a fleet that wants quick errors sets
// them low. Release errors are logged to Options.Logger.
//
// A Redis restart without persistence loses every lease and State. The gate
// notices (a marker key is gone) and grants no lease until Options.Fence after
// the server's start (LeaseTTL plus one minute by default). Meanwhile holders
// from before the restart re-assert their leases and store their next States,
// and the gaps that were running when the data was lost run out (if they are
// shorter than the fence), so no request overlaps another and no gap is cut
// short. The fence also applies to the first use of a Redis server that
// started less than Fence ago.
//
// The guarantees assume that each process's renewals reach Redis within
// LeaseTTL: a process frozen or cut off from Redis for longer than LeaseTTL
// while its request is still running cannot be stopped by the gate, and its
// release then fails with [ErrLeaseLost]. Keep Redis's maxmemory-policy at
// noeviction (the default): lease and State keys must not be evicted. State
// keys expire at State.Expires.
// A State's instants (the end of the gap, of a pause...) are stored on the
// Redis server's clock: on each acquisition and renewal a worker bounds the
// offset between that clock and its own from the server's time and the
// call's round trip, and moves the instants by it, each way on the late
// side. Workers whose clocks disagree (by seconds or hours) therefore pace a
// host together: none reads a gap as over before it is, and an instant
// comes at most about a round trip late. Workers whose clocks agree, to
// within that bound, read exactly what was written.
//
// # Fleet-wide fetched set, and robots.txt copies
//
// [FetchedSet] has the method set of fetch.FetchedSet on one Redis set, so
// each URL is fetched once by the whole fleet. The robots.txt copies are
// shared by robots/redisstore (a robots.Store in Redis: an origin's robots.txt
// is fetched once per TTL by the fleet instead of once per process); it lives
// under robots so that this package imports no sibling of politeness.
// Package redistest starts a private redis-server for such tests.
//
// All keys of a gate share one Redis Cluster hash tag (see Options.Prefix),
// so the gate works on a cluster but uses one shard.
package redisgate
