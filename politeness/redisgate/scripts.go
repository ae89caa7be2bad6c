package redisgate

import "github.com/redis/go-redis/v9"

// The scripts keep every decision atomic on the server. Keys (all under
// Options.Prefix): the epoch marker, and per host a lease (a string holding
// the holder's random token, with a TTL) and a State (JSON, optionally with an
// expiry). Times inside scripts come from the server's clock (TIME), so the
// fence does not depend on the workers' clocks; the scripts that hand a
// State out return that time too, so that the workers keep the State's
// instants on the server's clock (see clock.go).

// acquireScript takes host's lease if it is free (or already ours) and no
// other process queued for it earlier.
//
//	KEYS: epoch, lease, state, queue, alive
//	ARGV: token, lease TTL ms, fence ms (<= 0: none), ticket life ms
//	-> {1, state JSON or nil, server time unix ms}
//	                            lease taken
//	-> {0, lease PTTL ms}       lease held by someone else (at least 1 ms
//	                            while held; 0: free, but another waiter is
//	                            ahead): queued
//	-> {2, ms left}             Redis lost its data recently: fenced
//
// The queue (a sorted set of tokens by arrival time) serves the processes in
// arrival order, so a process with many callers for a host cannot keep it
// from the others. A ticket lives for the ticket life after its holder last
// looked (alive: token -> deadline), so a crashed waiter holds up the queue
// only that long.
//
// The epoch key marks a Redis that has seen this gate. When it is missing
// (first use of this Redis, or a restart that lost the data), the fence runs
// until the server's start time plus the fence length: leases and States lost
// in a restart belong to requests that began before the server started, and
// their holders re-assert or finish within the fence.
var acquireScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fence = redis.call('GET', KEYS[1])
if fence then
  fence = tonumber(fence) or 0
else
  fence = 0
  local f = tonumber(ARGV[3])
  if f > 0 then
    local up = tonumber(string.match(redis.call('INFO', 'server'), 'uptime_in_seconds:(%d+)')) or 0
    fence = now - up * 1000 + f
  end
  redis.call('SET', KEYS[1], string.format('%d', fence))
end
if fence > now then
  return {2, fence - now}
end
local cur = redis.call('GET', KEYS[2])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  return {1, redis.call('GET', KEYS[3]), now}
end
local dead = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now)
for _, w in ipairs(dead) do
  redis.call('ZREM', KEYS[4], w)
  redis.call('ZREM', KEYS[5], w)
end
if not cur then
  local head = redis.call('ZRANGE', KEYS[4], 0, 0)[1]
  if not head or head == ARGV[1] then
    redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
    if head then
      redis.call('ZREM', KEYS[4], head)
      redis.call('ZREM', KEYS[5], head)
    end
    return {1, redis.call('GET', KEYS[3]), now}
  end
end
local life = tonumber(ARGV[4])
redis.call('ZADD', KEYS[4], 'NX', now, ARGV[1])
redis.call('ZADD', KEYS[5], now + life, ARGV[1])
redis.call('PEXPIRE', KEYS[4], life)
redis.call('PEXPIRE', KEYS[5], life)
if cur then
  local left = redis.call('PTTL', KEYS[2])
  if left == 0 then
    left = 1 -- expires within the millisecond: look again then, not after MaxWait
  end
  return {0, left}
end
return {0, 0}
`)

// touchScript renews a held lease and reads the State.
//
//	KEYS: lease, state   ARGV: token, lease TTL ms
//	-> {1, state, server time unix ms}  still ours, TTL renewed
//	-> {2, nil, server time unix ms}    the lease had vanished with the State
//	                                    (Redis lost its data): re-asserted
//	                                    for us
//	-> {0, nil}    lost: someone else holds it, or another holder has come
//	               and gone since ours expired
var touchScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, redis.call('GET', KEYS[2]), now}
end
if cur or redis.call('EXISTS', KEYS[2]) == 1 then
  return {0, false}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {2, false, now}
`)

// releaseScript frees a held lease, storing the next State or keeping the
// current one, and publishes the host on the wake channel. It also takes the
// token out of the queue, so a waiter that gives up calls it too.
//
//	KEYS: lease, state, queue, alive
//	ARGV: token, "s" (store) or "k" (keep), state JSON,
//	      expire-at unix ms ("0": none), channel, host
//	-> 1 released (or nothing held)   0 lost (nothing written)
//
// A lease that vanished together with the State (Redis lost its data) still
// counts as ours.
var releaseScript = redis.NewScript(`
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
local cur = redis.call('GET', KEYS[1])
local ours = cur == ARGV[1] or (not cur and redis.call('EXISTS', KEYS[2]) == 0)
if ours and ARGV[2] == 's' then
  if ARGV[4] ~= '0' then
    redis.call('SET', KEYS[2], ARGV[3], 'PXAT', ARGV[4])
  else
    redis.call('SET', KEYS[2], ARGV[3])
  end
end
if cur == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
if not cur or cur == ARGV[1] then
  redis.call('PUBLISH', ARGV[5], ARGV[6])
end
if ours then
  return 1
end
return 0
`)
