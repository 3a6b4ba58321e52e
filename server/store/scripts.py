"""Lua scripts: each multi-key change is one script, so it is atomic and one round trip.

Every script only touches keys of one hash tag (see ``keys.py``), so they also run on
Redis Cluster. ``nonce`` fields make create/commit safe to retry: redis-py retries a
command once after a connection error, and if the first attempt ran but its reply was
lost, the retry finds its own nonce and reports success instead of a bogus conflict.
"""

from __future__ import annotations

# KEYS: doc hash, log list. ARGV: doc, nonce.
# Returns {1, 1} on success, {0, current version} if the table exists.
CREATE = """
local cur = redis.call('HMGET', KEYS[1], 'version', 'nonce')
if cur[1] then
  if cur[2] == ARGV[2] and cur[1] == '1' then return {1, 1} end
  return {0, tonumber(cur[1])}
end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[1], 'version', 1, 'doc', ARGV[1], 'nonce', ARGV[2])
return {1, 1}
"""

# KEYS: doc hash, log list. ARGV: expected version, doc, nonce, log_max, entries...
# Returns {1, new version}, {0, current version} on conflict, {0, -1} if no table.
COMMIT = """
local cur = redis.call('HMGET', KEYS[1], 'version', 'nonce')
if not cur[1] then return {0, -1} end
local v = tonumber(cur[1])
local expected = tonumber(ARGV[1])
if v ~= expected then
  if v == expected + 1 and cur[2] == ARGV[3] then return {1, v} end
  return {0, v}
end
local nv = v + 1
redis.call('HSET', KEYS[1], 'version', nv, 'doc', ARGV[2], 'nonce', ARGV[3])
for i = 5, #ARGV, 1000 do  -- chunks: unpack() of thousands of values overflows Lua's stack
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[4]), -1)
return {1, nv}
"""

# KEYS: log list, doc hash. ARGV: after_seq.
# Entries are 8-byte big-endian seq + payload, in increasing seq order, so a binary
# search finds the first entry past after_seq without shipping the whole log.
# Returns {1, {entries...}}, or {0} when the caller must resync from a snapshot
# (entries it needs were trimmed, or the table is gone).
READ_LOG = """
if redis.call('EXISTS', KEYS[2]) == 0 then return {0} end
local n = redis.call('LLEN', KEYS[1])
if n == 0 then return {1, {}} end
local after = tonumber(ARGV[1])
local function seq(i)
  return (struct.unpack('>I8', redis.call('LINDEX', KEYS[1], i)))
end
if seq(0) > after + 1 then return {0} end
local lo, hi = 0, n
while lo < hi do
  local mid = math.floor((lo + hi) / 2)
  if seq(mid) > after then hi = mid else lo = mid + 1 end
end
if lo >= n then return {1, {}} end
return {1, redis.call('LRANGE', KEYS[1], lo, -1)}
"""

# KEYS: old token key, new token key. ARGV: ttl seconds (0 = none).
# Returns the player id, or nil if the old token maps to nobody. If the old token is
# gone but the new one is bound, this is a retry of our own successful rotation (the
# new digest is a fresh secret only the rotating caller knows), so report that player.
ROTATE_TOKEN = """
local pid = redis.call('GET', KEYS[1])
if not pid then
  return redis.call('GET', KEYS[2])
end
redis.call('DEL', KEYS[1])
local ttl = tonumber(ARGV[1])
if ttl > 0 then
  redis.call('SET', KEYS[2], pid, 'EX', ttl)
else
  redis.call('SET', KEYS[2], pid)
end
return pid
"""
