"""Lua scripts: each multi-key change is one script, so it is atomic and one round trip.

Every script only touches keys of one hash tag (see ``keys.py``), so they also run on
Redis Cluster; COMMIT reaches the lobby's keys too only when the store is one node.
``nonce`` fields make create/commit safe to retry: redis-py retries a
command once after a connection error, and if the first attempt ran but its reply was
lost, the retry finds its own nonce and reports success instead of a bogus conflict.
"""

from __future__ import annotations

# Numbers one change of a table's lobby entry (its create, a new description, its delete):
# the table is scored by the number, so the set holds each table once, at its last change.
# Past ``kept`` the oldest are dropped and the clock's ``trimmed`` says up to where.
# Returns the change's number. Shared by NOTE_LOBBY and, on a single node, COMMIT and
# CREATE.
_NOTE_LOBBY_FN = """
local function note_lobby(changes, clock, id, kept, ttl)
  local seq = redis.call('HINCRBY', clock, 'seq', 1)
  redis.call('ZADD', changes, seq, id)
  local over = redis.call('ZCARD', changes) - kept
  if over > 0 then
    local last = redis.call('ZRANGE', changes, over - 1, over - 1, 'WITHSCORES')
    redis.call('ZREMRANGEBYRANK', changes, 0, over - 1)
    redis.call('HSET', clock, 'trimmed', last[2])
  end
  if ttl > 0 then
    redis.call('EXPIRE', changes, ttl)
    redis.call('EXPIRE', clock, ttl)
  end
  return seq
end
"""

# KEYS: doc hash, log list, deltas list, and on one node the tables' index set, the lobby's
# changes zset and clock hash. ARGV: doc, nonce, ttl seconds (0: none), lobby info, the
# table id to index and note ('' on a Cluster: the caller does both apart), lobby changes
# kept, their ttl, entries... Returns {1, 1} on success, {0, current version} if the table
# exists. On one node the create, its place in the index and its lobby change are one call
# (issue 32: three round trips were 2% of a process at full pace, a table a match).
CREATE = _NOTE_LOBBY_FN + """
local cur = redis.call('HMGET', KEYS[1], 'version', 'nonce')
if cur[1] then
  if cur[2] == ARGV[2] and cur[1] == '1' then return {1, 1} end
  return {0, tonumber(cur[1])}
end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('HSET', KEYS[1], 'version', 1, 'doc', ARGV[1], 'nonce', ARGV[2], 'info', ARGV[4])
if #ARGV >= 8 then redis.call('RPUSH', KEYS[2], unpack(ARGV, 8, #ARGV)) end
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
end
if ARGV[5] ~= '' then
  redis.call('SADD', KEYS[4], ARGV[5])
  if ARGV[4] ~= '' then
    note_lobby(KEYS[5], KEYS[6], ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7]))
  end
end
return {1, 1}
"""

# KEYS: doc hash, log list, replies list, events channel, deltas list, record strings...
# (all of one table's hash tag; the channel is declared as a key so that a Redis Cluster
# routes the sharded publish to the table's slot).
# ARGV: expected version, doc or delta, nonce, log_max, ttl (0: none), reply entry ('' for
#       none), replies kept, replies ttl, record ('' for none), record ttl (0: none),
#       lobby info ('' for unchanged), event message ('' for none), 'publish' or
#       'spublish', 'doc' or 'delta', the table id to note as a lobby change ('' for
#       none; else the last two KEYS are the lobby's changes zset and clock hash), lobby
#       changes kept, their ttl, entries...
# Returns {1, new version}, {0, current version} on conflict, {0, -1} if no table.
# The reply and the record are written in the same script as the state they belong to, so
# an acknowledged command always has its remembered reply, and a finished match always
# has its record: neither can be lost between two writes. The event message reaches the
# other server processes in the same round trip (issue 11): one call per command.
# A 'doc' commit writes the whole document and starts the deltas afresh; a 'delta' commit
# appends what changed (issue 32): the table is its document followed by its deltas.
# On a single node a new lobby description is numbered in the same script (issue 32: a
# second call cost 4% of a process at full pace); a Cluster keeps the lobby's keys in
# another slot, so there the caller numbers it with NOTE_LOBBY after the commit.
COMMIT = _NOTE_LOBBY_FN + """
local cur = redis.call('HMGET', KEYS[1], 'version', 'nonce')
if not cur[1] then return {0, -1} end
local v = tonumber(cur[1])
local expected = tonumber(ARGV[1])
if v ~= expected then
  if v == expected + 1 and cur[2] == ARGV[3] then return {1, v} end
  return {0, v}
end
local nv = v + 1
local ttl = tonumber(ARGV[5])
if ARGV[14] == 'delta' then
  redis.call('HSET', KEYS[1], 'version', nv, 'nonce', ARGV[3])
  redis.call('RPUSH', KEYS[5], ARGV[2])
  if ttl > 0 then redis.call('EXPIRE', KEYS[5], ttl) end
else
  redis.call('HSET', KEYS[1], 'version', nv, 'doc', ARGV[2], 'nonce', ARGV[3])
  redis.call('DEL', KEYS[5])
end
if ARGV[11] ~= '' then redis.call('HSET', KEYS[1], 'info', ARGV[11]) end
for i = 18, #ARGV, 1000 do  -- chunks: unpack() of thousands of values overflows Lua's stack
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[4]), -1)
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
end
if ARGV[6] ~= '' then
  redis.call('LPUSH', KEYS[3], ARGV[6])
  redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[7]) - 1)
  redis.call('EXPIRE', KEYS[3], tonumber(ARGV[8]))
end
local records = #KEYS
if ARGV[15] ~= '' then records = records - 2 end
if ARGV[9] ~= '' then
  local rttl = tonumber(ARGV[10])
  for k = 6, records do
    if rttl > 0 then
      redis.call('SET', KEYS[k], ARGV[9], 'EX', rttl)
    else
      redis.call('SET', KEYS[k], ARGV[9])
    end
  end
end
if ARGV[12] ~= '' then redis.call(ARGV[13], KEYS[4], ARGV[12]) end
if ARGV[15] ~= '' then
  note_lobby(KEYS[#KEYS - 1], KEYS[#KEYS], ARGV[15], tonumber(ARGV[16]), tonumber(ARGV[17]))
end
return {1, nv}
"""

# KEYS: lobby changes zset, lobby clock hash. ARGV: table id, changes kept, ttl seconds.
NOTE_LOBBY = _NOTE_LOBBY_FN + """
return note_lobby(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
"""

# KEYS: lobby changes zset, lobby clock hash. ARGV: the last change the reader has (-1:
# none), the most ids it takes. Returns {seq, 1} when the reader must read every table
# (it has nothing, changes it lacks were dropped, the clock is behind it as after a store
# that lost its data, or more changed than it takes), else {seq, 0, id, id...}: the tables
# whose entries changed after its last.
LOBBY_CHANGES = """
local clock = redis.call('HMGET', KEYS[2], 'seq', 'trimmed')
local seq = tonumber(clock[1] or '0')
local trimmed = tonumber(clock[2] or '0')
local after = tonumber(ARGV[1])
if after < 0 or after < trimmed or after > seq then return {seq, 1} end
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. after, '+inf', 'LIMIT', 0,
                       tonumber(ARGV[2]) + 1)
if #ids > tonumber(ARGV[2]) then return {seq, 1} end
local out = {seq, 0}
for i = 1, #ids do out[i + 2] = ids[i] end
return out
"""

# KEYS: doc hash, deltas list. ARGV (optional): a version the caller has. Returns
# {version, doc, {deltas...}} read together (the document and the changes after it), or
# {version} alone if the caller has that version already (nothing newer to send), or {}
# if there is no table.
LOAD_TABLE = """
local cur = redis.call('HMGET', KEYS[1], 'version', 'doc')
if not cur[1] or not cur[2] then return {} end
if ARGV[1] and tonumber(cur[1]) <= tonumber(ARGV[1]) then return {cur[1]} end
return {cur[1], cur[2], redis.call('LRANGE', KEYS[2], 0, -1)}
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

# KEYS: session hash. ARGV: presented token digest, new digest, now (unix s), grace s,
# ttl s. A session has one current token; the one a hello presents stays usable only
# until ``now + grace`` (or the first command on the new connection), in case the welcome
# carrying the new token is lost on the way. Any older token dies here.
# ARGV[6], when not empty, is the name the hello gave: the session takes it (1.5).
# Returns {1, name, generation} or {0} when the presented token is not this session's; the
# generation counts the session's rotations: of two hellos at once, the later rotation (the
# higher generation) holds the current token, whatever order their answers arrive in.
SESSION_HELLO = """
local s = redis.call('HMGET', KEYS[1], 'current', 'previous', 'previous_until', 'name')
if not s[1] then return {0} end
local now = tonumber(ARGV[3])
local ok = (s[1] == ARGV[1]) or (s[2] == ARGV[1] and s[3] and tonumber(s[3]) >= now)
if not ok then return {0} end
redis.call('HSET', KEYS[1], 'current', ARGV[2], 'previous', ARGV[1],
           'previous_until', now + tonumber(ARGV[4]))
local name = s[4]
if ARGV[6] and ARGV[6] ~= '' then
  name = ARGV[6]
  redis.call('HSET', KEYS[1], 'name', name)
end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
return {1, name, redis.call('HINCRBY', KEYS[1], 'gen', 1)}
"""

# KEYS: session hash. ARGV: the connection's token digest, ttl s.
# The new token was used, so the welcome arrived: the presented one dies now.
# Returns 1 if the digest is still the session's current token, else 0 (replaced since).
SESSION_CONFIRM = """
if redis.call('HGET', KEYS[1], 'current') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'previous', 'previous_until')
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
"""

# KEYS: lease key. ARGV: this process, the holder it saw ('' for none), key ttl s.
# Takes a table's lease from whoever was seen holding it (a process whose heartbeat has
# stopped, or nobody): a compare-and-set, so two processes never both take it.
TAKE_LEASE = """
local cur = redis.call('GET', KEYS[1])
if (not cur and ARGV[2] == '') or cur == ARGV[2] then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[3]))
  return 1
end
return 0
"""

# KEYS: lease key. ARGV: this process. Lets a lease go, if it is still ours.
RELEASE_LEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
"""

# KEYS: presence hash. ARGV: field, delta, ttl s. One process's count of one player's
# connections to one table; a field that reaches 0 goes.
PRESENCE = """
local n = redis.call('HINCRBY', KEYS[1], ARGV[1], tonumber(ARGV[2]))
if n <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return n
"""

# KEYS: presence hashes (one per count; a table may come twice). ARGV: ttl s, then a field
# and a delta per key. PRESENCE for a batch, in one call on one node (issue 32: redis-py's
# pipeline of scripts asked the store whether it knew the script before every batch).
PRESENCE_MANY = """
local ttl = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  local field = ARGV[2 * i]
  local n = redis.call('HINCRBY', key, field, tonumber(ARGV[2 * i + 1]))
  if n <= 0 then redis.call('HDEL', key, field) end
  redis.call('EXPIRE', key, ttl)
end
return #KEYS
"""

# KEYS: presence hashes. Each one's fields and counts, flat, in one call on one node.
PRESENTS = """
local out = {}
for i, key in ipairs(KEYS) do out[i] = redis.call('HGETALL', key) end
return out
"""
