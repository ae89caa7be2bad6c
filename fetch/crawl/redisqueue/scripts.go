package redisqueue

import "github.com/redis/go-redis/v9"

// Every script gets the same keys, all under the crawl's prefix (one Redis
// Cluster hash tag, so one slot):
//
//	KEYS[1] sched   sorted set: site -> when it is due (unix ms × 1024 plus
//	                 a counter mod 1024, so that sites due at one instant
//	                 are served in the order they became due); a site is
//	                 in it while it has queued items and no item leased
//	KEYS[2] leases  sorted set: site -> when its lease runs out (unix ms); a
//	                 site has at most one item leased
//	KEYS[3] held    hash: site -> lease token "\n" key of the leased item
//	KEYS[4] items   hash: key -> encoded item, for every item queued or leased
//	KEYS[5] seen    set of the keys ever admitted or marked
//	KEYS[6] count   hash: site -> items admitted (for the per-site cap)
//	KEYS[7] ready   hash: site -> when it is due after its last item (unix ms)
//	KEYS[8] done    set of the keys whose outcome was recorded
//	KEYS[9] bad     list of damaged entries moved aside
//	KEYS[10] order  counter of the times sites became due (ties)
//
// plus, outside KEYS, a claim per URL being fetched (prefix .. "claim:" ..
// url, see [Fetched]).
//
// ARGV[1] is the prefix, from which each site's queue is named: a list of
// the keys of its queued items, prefix .. "q:" .. site. Those lists cannot
// all be declared in KEYS (Lease does not know its site beforehand); they
// share the hash tag, so they live in the same slot, which Redis Cluster
// accepts.
//
// Times are the workers' wall clocks in unix milliseconds, passed in.
const prelude = `
local K = {sched = KEYS[1], leases = KEYS[2], held = KEYS[3], items = KEYS[4], seen = KEYS[5],
  count = KEYS[6], ready = KEYS[7], done = KEYS[8], bad = KEYS[9], order = KEYS[10]}
local P = ARGV[1]
-- schedule makes site due at ms (unix ms), after the sites made due at the
-- same ms before it; nx: only if it is not scheduled yet.
local function schedule(site, ms, nx)
  local score = tonumber(ms) * 1024 + redis.call('INCR', K.order) % 1024
  if nx then
    redis.call('ZADD', K.sched, 'NX', score, site)
  else
    redis.call('ZADD', K.sched, score, site)
  end
end
-- add queues one item unless its key was seen or its site is at the cap. A
-- site without a lease becomes due at its ready time (at once if none).
local function add(key, site, enc, cap)
  if redis.call('SISMEMBER', K.seen, key) == 1 then return 0 end
  if cap > 0 and (tonumber(redis.call('HGET', K.count, site)) or 0) >= cap then return 0 end
  redis.call('SADD', K.seen, key)
  redis.call('HINCRBY', K.count, site, 1)
  redis.call('HSET', K.items, key, enc)
  redis.call('RPUSH', P .. 'q:' .. site, key)
  if redis.call('HEXISTS', K.held, site) == 0 then
    schedule(site, tonumber(redis.call('HGET', K.ready, site)) or 0, true)
  end
  return 1
end
`

// addScript admits items.
//
//	ARGV: prefix, cap, then (key, site, encoded item) per item
//	-> one 1 (queued) or 0 (seen before, or over the cap) per item
var addScript = redis.NewScript(prelude + `
local cap = tonumber(ARGV[2])
local out = {}
for i = 3, #ARGV, 3 do
  out[#out + 1] = add(ARGV[i], ARGV[i + 1], ARGV[i + 2], cap)
end
return out
`)

// leaseScript first puts the items of expired leases back at the head of
// their sites' queues (due at once, their fetch claims dropped), then leases the head item of the site
// due first, if it is due.
//
//	ARGV: prefix, now ms, lease TTL ms, token
//	-> {1, site, key, encoded item}          leased
//	-> {0, due ms or -1, expiry ms or -1}    nothing due: when the first site
//	   is due (-1: none queued) and when the first lease runs out (-1: none)
var leaseScript = redis.NewScript(prelude + `
local now = tonumber(ARGV[2])
for _, site in ipairs(redis.call('ZRANGEBYSCORE', K.leases, '-inf', now)) do
  local h = redis.call('HGET', K.held, site)
  if h then
    local nl = string.find(h, '\n', 1, true)
    if nl then
      local key = string.sub(h, nl + 1)
      redis.call('LPUSH', P .. 'q:' .. site, key)
      redis.call('DEL', P .. 'claim:' .. key) -- the dead worker's fetch claim
    end
    redis.call('HDEL', K.held, site)
  end
  redis.call('ZREM', K.leases, site)
  if redis.call('LLEN', P .. 'q:' .. site) > 0 then
    schedule(site, now, false)
  end
end
while true do
  local first = redis.call('ZRANGE', K.sched, 0, 0, 'WITHSCORES')
  if #first == 0 or math.floor(tonumber(first[2]) / 1024) > now then
    local due, exp = -1, -1
    if #first > 0 then due = math.floor(tonumber(first[2]) / 1024) end
    local l = redis.call('ZRANGE', K.leases, 0, 0, 'WITHSCORES')
    if #l > 0 then exp = tonumber(l[2]) end
    return {0, due, exp}
  end
  local site = first[1]
  redis.call('ZREM', K.sched, site)
  local key = redis.call('LPOP', P .. 'q:' .. site)
  while key do
    local enc = redis.call('HGET', K.items, key)
    if enc then
      redis.call('ZADD', K.leases, now + tonumber(ARGV[3]), site)
      redis.call('HSET', K.held, site, ARGV[4] .. '\n' .. key)
      return {1, site, key, enc}
    end
    key = redis.call('LPOP', P .. 'q:' .. site)
  end
end
`)

// finishScript ends a lease and applies the step, in one go: the done keys
// are recorded (their fetch claims become the done mark) and, like the dropped keys, leave the queue; with drop the
// site's queue is emptied; the queued items are added (one flagged as the
// leased item's retry goes back to the end of its site's queue, not counted,
// unless the site is dropped); the
// leased item leaves the queue if the step named it, else it goes back to
// the head; the site is due again at ready if it has items left.
//
//	ARGV: prefix, token, site, ready ms, cap, drop ('1'/'0'),
//	      number of done keys, (key, site) per done key,
//	      number of dropped keys, (key, site) per dropped key,
//	      then (key, site, encoded item, retry '1'/'0') per queued item
//	-> {-1}                 the lease is not this token's: nothing applied
//	-> {1, queued flags...} applied; one 1 or 0 per queued item (see add)
var finishScript = redis.NewScript(prelude + `
local site = ARGV[3]
local tok = ARGV[2] .. '\n'
local h = redis.call('HGET', K.held, site)
if not h or string.sub(h, 1, #tok) ~= tok then
  return {-1}
end
local leased = string.sub(h, #tok + 1)
local q = P .. 'q:' .. site
redis.call('HDEL', K.held, site)
redis.call('ZREM', K.leases, site)
redis.call('HSET', K.ready, site, ARGV[4])
local named, retried = false, false
local function gone(key, s)
  if key == leased then
    named = true
  elseif redis.call('HDEL', K.items, key) == 1 then
    redis.call('LREM', P .. 'q:' .. s, 0, key)
  end
end
local i = 8
for _ = 1, tonumber(ARGV[7]) do
  redis.call('SADD', K.seen, ARGV[i])
  redis.call('SADD', K.done, ARGV[i])
  redis.call('DEL', P .. 'claim:' .. ARGV[i])
  gone(ARGV[i], ARGV[i + 1])
  i = i + 2
end
local nx = tonumber(ARGV[i])
i = i + 1
for _ = 1, nx do
  gone(ARGV[i], ARGV[i + 1])
  i = i + 2
end
if ARGV[6] == '1' then
  named = true
  for _, key in ipairs(redis.call('LRANGE', q, 0, -1)) do
    redis.call('HDEL', K.items, key)
  end
  redis.call('DEL', q)
end
local cap = tonumber(ARGV[5])
local out = {1}
for j = i, #ARGV, 4 do
  if ARGV[j + 3] == '1' and ARGV[j] == leased then
    named = true
    if ARGV[6] == '1' then
      out[#out + 1] = 0
    else
      retried = true
      redis.call('HSET', K.items, leased, ARGV[j + 2])
      redis.call('RPUSH', q, leased)
      out[#out + 1] = 1
    end
  else
    out[#out + 1] = add(ARGV[j], ARGV[j + 1], ARGV[j + 2], cap)
  end
end
if not named then
  redis.call('LPUSH', q, leased)
elseif not retried then
  redis.call('HDEL', K.items, leased)
end
if redis.call('LLEN', q) > 0 then
  schedule(site, ARGV[4], false)
end
return out
`)

// discardScript moves a leased entry that could not be read to the bad
// list and ends its lease; the site is due again now if it has items left.
//
//	ARGV: prefix, token, site, now ms   -> 1 done, 0 not this token's lease
var discardScript = redis.NewScript(prelude + `
local site = ARGV[3]
local tok = ARGV[2] .. '\n'
local h = redis.call('HGET', K.held, site)
if not h or string.sub(h, 1, #tok) ~= tok then
  return 0
end
local key = string.sub(h, #tok + 1)
redis.call('RPUSH', K.bad, redis.call('HGET', K.items, key) or key)
redis.call('HDEL', K.items, key)
redis.call('HDEL', K.held, site)
redis.call('ZREM', K.leases, site)
if redis.call('LLEN', P .. 'q:' .. site) > 0 then
  schedule(site, ARGV[4], false)
end
return 1
`)

// markScript records keys as seen; counted ones also count against their
// site's cap the first time.
//
//	ARGV: prefix, counted ('1'/'0'), then (key, site) per item  -> 0
var markScript = redis.NewScript(prelude + `
for i = 3, #ARGV, 2 do
  if redis.call('SADD', K.seen, ARGV[i]) == 1 and ARGV[2] == '1' then
    redis.call('HINCRBY', K.count, ARGV[i + 1], 1)
  end
end
return 0
`)

// statScript answers Seen (ARGV[2] a key: 1 or 0) and Len (no ARGV[2]: the
// number of items queued or leased).
var statScript = redis.NewScript(prelude + `
if ARGV[2] then
  return redis.call('SISMEMBER', K.seen, ARGV[2])
end
return redis.call('HLEN', K.items)
`)

// renewScript extends a lease that is still this token's.
//
//	ARGV: prefix, site, token, new expiry ms   -> 1 renewed, 0 lost
var renewScript = redis.NewScript(prelude + `
local tok = ARGV[3] .. '\n'
local h = redis.call('HGET', K.held, ARGV[2])
if not h or string.sub(h, 1, #tok) ~= tok then
  return 0
end
redis.call('ZADD', K.leases, 'XX', ARGV[4], ARGV[2])
return 1
`)

// claimScript claims a URL for one fetch, unless its outcome is recorded
// (done) or another fetch holds a claim (prefix .. "claim:" .. url, which
// expires after the claim TTL, so a dead worker's claim does not last).
//
//	ARGV: prefix, url, claim TTL ms   -> 1 claimed, 0 done or claimed
var claimScript = redis.NewScript(prelude + `
if redis.call('SISMEMBER', K.done, ARGV[2]) == 1 then
  return 0
end
if redis.call('SET', P .. 'claim:' .. ARGV[2], '1', 'NX', 'PX', ARGV[3]) then
  return 1
end
return 0
`)

// unclaimScript gives a claim back (ARGV: prefix, url) -> 0.
var unclaimScript = redis.NewScript(prelude + `
redis.call('DEL', P .. 'claim:' .. ARGV[2])
return 0
`)

// doneScript reports whether a URL's outcome is recorded (ARGV: prefix, url).
var doneScript = redis.NewScript(prelude + `
return redis.call('SISMEMBER', K.done, ARGV[2])
`)
