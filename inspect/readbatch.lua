#!lua flags=no-writes
-- idemctl's server-side record reader: one call reads a batch of keys and
-- returns what the client path's pipelines would. Read-only (so it runs on
-- replicas and is SCRIPT KILL-safe); no value over the read cap leaves the
-- server (its length does instead). Every redis.call costs the server
-- more than the command itself, so a record is read in as few as the
-- answers allow: PTTL, MEMORY USAGE and HMGET for a small hash.
--
-- KEYS: the records, then (when the schema has one) each record's lock key;
-- on a cluster node none, the same keys following the fields in ARGV (see
-- below).
-- ARGV: 1 read cap, 2 MEMORY USAGE samples (0: memory off), 3 measure every
-- response (0/1), 4 large-response threshold, 5 read field TTLs (0/1),
-- 6 records in KEYS ('scan': none, the script finds them), 7 lock keys follow (0/1), 8 container (hash|string),
-- 9 response field ('' none), 10 fingerprint's index among the fields (0
-- none), 11 fingerprint bytes kept, 12 longest fingerprint whose head is cut
-- here, 13 how many fields follow, then the schema's fields.
--
-- In scan mode the fields are followed by a SCAN cursor, MATCH pattern and
-- COUNT: the script runs that SCAN itself (the keys never cross the wire
-- twice, nor are they parsed into a call's arguments) and its reply starts
-- with the next cursor, the number of keys and the keys.
--
-- One flat reply (no table per key, which costs as much as a command), per
-- key: pttl; -2 ends the key (it does not exist). Then the lock's pttl when
-- locks follow, memory (-1 not asked, -3 refused), and a kind: the key's
-- TYPE when it is not the container's (which ends the key), else a number
-- whose bits say what follows the length: 1 the response's length, 2 the
-- fields' TTLs (a count, then HPTTL's answers), 4 the fingerprint's head,
-- 8 HPTTL was refused. Then the length (a string's; HLEN, or -1 when
-- memory proves it is under the sample count), the parts the bits name, and the
-- value: a string's head, or per field its value, false when missing, or
-- its length when over the cap.
local call, pcall = redis.call, redis.pcall
local cap = tonumber(ARGV[1])
local samples = tonumber(ARGV[2])
local respAll = ARGV[3] == '1'
local large = tonumber(ARGV[4])
local wantTTL = ARGV[5] == '1'
local n = tonumber(ARGV[6])
local withLock = ARGV[7] == '1'
local isHash = ARGV[8] == 'hash'
local resp = ARGV[9]
local fpAt = tonumber(ARGV[10])
local fpKeep = tonumber(ARGV[11])
local fpMax = tonumber(ARGV[12])
local nf = tonumber(ARGV[13])
local names = {}
for i = 1, nf do names[i] = ARGV[13 + i] end
-- A cluster node's batch spans many slots, all served here: a script's
-- declared keys must share one, so idemctl loads this script there with
-- allow-cross-slot-keys and passes the keys after the fields, undeclared.
local K = KEYS
local out, o = {}, 0
if ARGV[6] == 'scan' then
  local r = call('SCAN', ARGV[14 + nf], 'MATCH', ARGV[15 + nf], 'COUNT', ARGV[16 + nf])
  K, n = r[2], #r[2]
  out[1], out[2], o = r[1], n, 2
  for i = 1, n do o = o + 1; out[o] = K[i] end
elseif #KEYS == 0 and #ARGV > 13 + nf then
  K = {}
  for i = 14 + nf, #ARGV do K[#K + 1] = ARGV[i] end
end
local capEnd = tostring(cap - 1)
-- A listpack or hash-table field takes at least 4 bytes (two entries of
-- two), so a hash MEMORY USAGE puts under this has at most `samples`
-- fields: its size is exact and HLEN need not be asked.
local exactBelow = 4 * (samples + 1)

local function put(v) o = o + 1; out[o] = v end

local function refused(e)
  local m = e.err or ''
  -- ACL refusals read "NOPERM" or, inside a script, "can't run this
  -- command" (Redis 7, Valkey) or "ACL failure in script" (Redis 8); a
  -- command the server lacks, "Unknown".
  return m:find('NOPERM') or m:find("can't run") or m:find('ACL failure') or m:find('no permissions') or
    m:find('nknown') or m:find('not allowed')
end

-- memory is MEMORY USAGE's answer: -1 when not asked or unknown, -3 when
-- refused. The sample count goes as ARGV's string: a Lua number would be
-- formatted anew on every call.
local function memory(k)
  if samples == 0 then return -1 end
  local r = pcall('MEMORY', 'USAGE', k, 'SAMPLES', ARGV[2])
  if type(r) == 'table' then
    if r.err and refused(r) then return -3 end
    return -1
  end
  return r or -1
end

-- lengths reads each field's length.
local function lengths(k, lens)
  for i = 1, nf do lens[i] = call('HSTRLEN', k, names[i]) end
end

-- values are the fields under the cap, read in one HMGET; the others'
-- lengths stand in their place.
local function values(k, lens)
  local want = {}
  for i = 1, nf do
    if lens[i] <= cap then want[#want + 1] = names[i] end
  end
  local got = {}
  if #want > 0 then got = call('HMGET', k, unpack(want)) end
  local vals, j = {}, 0
  for i = 1, nf do
    if lens[i] > cap then vals[i] = lens[i] else j = j + 1; vals[i] = got[j] end
  end
  return vals
end

local function fieldTTLs(k)
  local list = {}
  for i = 1, nf do list[i] = names[i] end
  if resp ~= '' then list[#list + 1] = resp end
  local r = pcall('HPTTL', k, 'FIELDS', #list, unpack(list))
  if type(r) == 'table' and r.err then
    if refused(r) then return 'refused' end
    return nil
  end
  return r
end

local function wrongType(k)
  put(call('TYPE', k).ok)
end

-- hash reads one hash record after its pttl, lock and memory.
local function hash(k, pttl, mem)
  local hlen, vals, lens = -1, nil, nil
  if samples == 0 or mem < 0 or mem >= exactBelow then
    hlen = pcall('HLEN', k)
    if type(hlen) == 'table' then return wrongType(k) end
  end
  local est = mem >= 0 and hlen > samples
  if samples > 0 and not est and mem >= 0 and mem <= cap then
    if nf > 0 then
      vals = pcall('HMGET', k, unpack(names))
      if vals.err then return wrongType(k) end
    end
  else
    lens = {}
    if hlen < 0 and call('TYPE', k).ok ~= 'hash' then return wrongType(k) end
    lengths(k, lens)
    vals = values(k, lens)
  end
  local bits, rl, ttls, head = 0, nil, nil, nil
  if resp ~= '' and (samples == 0 or respAll or mem < 0 or est or mem > large) then
    rl, bits = call('HSTRLEN', k, resp), bits + 1
  end
  if pttl == -1 and wantTTL then
    ttls = fieldTTLs(k)
    if ttls == 'refused' then ttls, bits = nil, bits + 8 elseif ttls then bits = bits + 2 end
  end
  if lens and fpAt > 0 and lens[fpAt] > cap and lens[fpAt] <= fpMax then
    head, bits = string.sub(call('HGET', k, names[fpAt]) or '', 1, fpKeep), bits + 4
  end
  put(bits); put(hlen)
  if rl then put(rl) end
  if ttls then put(#ttls); for i = 1, #ttls do put(ttls[i]) end end
  if head then put(head) end
  for i = 1, nf do put(vals and vals[i] or false) end
end

-- str reads a string record's head; its length is the head's unless the
-- head fills the cap.
local function str(k)
  local v = pcall('GETRANGE', k, '0', capEnd)
  if type(v) == 'table' then return wrongType(k) end
  local l = #v
  if l >= cap then l = call('STRLEN', k) end
  put(0); put(l); put(v)
end

-- The common record (a small hash whose memory proves it whole, with a
-- key TTL) is read inline: a Lua function call per value costs more than
-- the value.
local fastBelow = math.min(exactBelow, cap + 1)
if resp ~= '' then fastBelow = math.min(fastBelow, large + 1) end
local fastOK = isHash and samples > 0 and nf > 0 and not (resp ~= '' and respAll)

for i = 1, n do
  local k = K[i]
  local pttl = call('PTTL', k)
  o = o + 1; out[o] = pttl
  if pttl ~= -2 then
    if withLock then o = o + 1; out[o] = call('PTTL', K[n + i]) end
    local mem = memory(k)
    o = o + 1; out[o] = mem
    if fastOK and mem >= 0 and mem < fastBelow and not (pttl == -1 and wantTTL) then
      local vals = pcall('HMGET', k, unpack(names))
      if vals.err then
        wrongType(k)
      else
        out[o + 1], out[o + 2] = 0, -1
        o = o + 2
        for j = 1, nf do o = o + 1; out[o] = vals[j] end
      end
    elseif isHash then
      hash(k, pttl, mem)
    else
      str(k)
    end
  end
end
return out
