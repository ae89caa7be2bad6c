// Package redisqueue is a crawl frontier in Redis: a crawl.Queue that any
// number of crawler processes, on one machine or many, share to run one
// crawl. Each process makes a [Queue] of the same name on the same Redis and
// drives it like the in-memory one; a process may join or leave at any time.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	q := redisqueue.New(rdb, "news-2026-12", nil)
//	front := &crawl.Frontier{Queue: q, MaxPerSite: 1000}
//
// It uses github.com/redis/go-redis/v9, the client of politeness/redisgate
// (whose gate keeps the per-host pacing of such a fleet); a subpackage, so
// that package crawl itself needs no Redis.
//
// # Layout
//
// A crawl is a handful of keys under "goodbot:crawl:{name}:": one list per
// site holding the keys of its queued items in order, a hash of the items
// themselves (every item queued or leased), the seen set and the per-site
// admitted counts (for the page cap), a schedule (a sorted set: site -> when
// it is due), the leases (a sorted set: site -> when its lease runs out,
// and a hash: site -> lease token and leased key), each site's last ready
// time, the set of keys whose outcome was recorded, and a list of damaged
// entries moved aside. Sites due at the same instant are served in the
// order they became due (up to 1,024 per millisecond). A site has at most
// one item leased; while it has one
// it is out of the schedule, so no other worker takes an item of that site
// and each site sees one request at a time however many processes crawl.
//
// Every operation that must be atomic is one Lua script, run in one round
// trip: Add (deduplicate, cap, queue, schedule), Lease (take back expired
// leases, pick the site due first, pop its head, lease it) and Finish (end
// the lease and apply the whole step: done keys, dropped keys or site,
// links, a retry, the site's next due time). Seen, Mark and Len are one
// round trip each as well.
//
// # Redis Cluster
//
// The braces make the crawl's name a Redis Cluster hash tag: all of a
// crawl's keys hash to one slot, so a crawl lives on one shard. It must:
// a script may only touch keys of one slot, and Lease picks its site (and
// so its site's list) inside the script. Different crawls spread over the
// shards. Because a script reaches site lists it could not name in
// advance, the queue does not suit a Redis that enforces declared keys
// (scripts flagged so, or proxies that route by declared keys only).
//
// # Time
//
// The schedule and the lease expiries are instants of the workers' wall
// clocks, given to [Queue.Lease] and [Queue.Finish]: keep the workers'
// clocks synchronised (NTP). A worker whose clock runs ahead by more than
// the lease TTL would take back leases still in use; one that runs behind
// waits longer for due sites. Redis's own clock (TIME) is not used so that
// the times a caller passes, a fake clock's included, mean the same here as
// in the in-memory queue. Pacing does not depend on it: a site leased early
// still waits for its turn at the politeness gate, whose States
// (politeness/redisgate) are kept on the server's clock.
//
// # Failures
//
// The queue fails closed: when Redis cannot be reached every method returns
// an *[Error] matching [ErrUnavailable] (the sentinel of politeness/redisgate)
// and Lease hands out nothing. A worker that dies, even by SIGKILL, loses
// nothing: the item it had leased goes back to the head of its site's queue
// when the lease runs out, and another worker takes it. So a lease TTL must
// be longer than a worker ever holds an item (the politeness wait before the
// fetch plus the fetch's own deadline); a worker that overruns it has its
// Finish refused ([ErrLeaseLost]) and the item is fetched again. A stored
// entry that cannot be read back (damaged, or not written by this package)
// is moved to the crawl's "bad" list, reported as [ErrBadItem], and its site
// goes on with the next item.
//
// Keep Redis's maxmemory-policy at noeviction (the default) and, for a crawl
// that must survive a Redis restart, its persistence on (AOF): the queue is
// the crawl.
package redisqueue
