package actions

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Every write is one of these compare-and-set scripts: it first checks that
// the record is still the one the plan read — state, fingerprint, and its
// whole version (every field, the expiry time, the lock companion; see
// versionLua) — and only then changes it. They answer {'applied',
// server_ms}, {'conflict', what, current}, or {'not_found'}. A conflict
// changes nothing.
//
// KEYS: 1 the record, 2 its companion (optional).
// Common ARGV: 1 mode (update|delete), 2 ttl (keep|set), 3 ttl ms,
// 4 state field, 5 expected state, 6 fingerprint field ("" skips),
// 7 expected fingerprint, 8 expected type, 9 content, 10 expiry,
// 11 companion, 12 number of field/value pairs, then the pairs.
// Values starting with "\0" are server times (see timeLua). With no pairs,
// an update only sets the TTL: the value is never rewritten for an expire.

// casScript is a CAS script with its source, sent at most once per write
// (see run).
type casScript struct {
	*redis.Script
	src string
}

func newCAS(src string) *casScript { return &casScript{Script: redis.NewScript(src), src: src} }

// noRetry marks a command go-redis must never resend. The client resends a
// command after a timeout or a dropped connection (MaxRetries); a resent
// compare-and-set whose first copy ran would meet its own write and answer
// "conflict" — a write that happened reported as one that did not.
type noRetry struct{ *redis.Cmd }

func (noRetry) NoRetry() bool { return true }

// run sends the script once: EVALSHA, then EVAL only if the server answers
// NOSCRIPT (in which case nothing ran). Uncertain failures are left to the
// caller, which re-reads the record instead of resending.
func (s *casScript) run(ctx context.Context, c processor, keys []string, args ...any) *redis.Cmd {
	cmd := s.send(ctx, c, "evalsha", s.Hash(), keys, args)
	if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		cmd = s.send(ctx, c, "eval", s.src, keys, args)
	}
	return cmd
}

// processor sends one command: a client, or a pipeline that queues it.
type processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

func (s *casScript) send(ctx context.Context, c processor, name, body string, keys []string, args []any) *redis.Cmd {
	a := make([]any, 0, 3+len(keys)+len(args))
	a = append(a, name, body, len(keys))
	for _, k := range keys {
		a = append(a, k)
	}
	a = append(a, args...)
	cmd := redis.NewCmd(ctx, a...)
	cmd.SetFirstKeyPos(3)
	_ = c.Process(ctx, noRetry{cmd})
	return cmd
}

// timeLua turns the pair markers into server times: "\0now" is the server
// time in epoch ms (a number); "\0at:UNIT:OFFSET_MS" is the server time
// plus OFFSET_MS in a stored expiry's unit (s, ms, float_s numbers; rfc3339
// text, UTC). Computed inside the script, the stored expiry and the Redis
// TTL are set from the same clock at the same moment.
const timeLua = `
local now = redis.call('TIME')
local msn = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ms = string.format('%.0f', msn)
local function rfc3339(t)
  local secs = math.floor(t / 1000)
  local days = math.floor(secs / 86400)
  local rem = secs - days * 86400
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp + 3
  if mp >= 10 then m = mp - 9 end
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return string.format('%04d-%02d-%02dT%02d:%02d:%02d.%03dZ', y, m, d,
    math.floor(rem / 3600), math.floor((rem % 3600) / 60), rem % 60, t % 1000)
end
-- marker returns the value for v, as a number where the unit is one, and
-- whether v was a marker at all.
local function marker(v)
  if v == '\0now' then return msn, true end
  if string.sub(v, 1, 4) ~= '\0at:' then return v, false end
  local unit, off = string.match(v, '^%zat:([%w_]+):(%-?%d+)$')
  local t = msn + tonumber(off)
  if unit == 's' then return math.floor(t / 1000), true end
  if unit == 'ms' then return t, true end
  if unit == 'float_s' then return t / 1000, true end
  return rfc3339(t), true
end
local function text(v)
  if type(v) == 'number' then
    if v == math.floor(v) then return string.format('%.0f', v) end
    return string.format('%.3f', v)
  end
  return v
end
`

// guardLua checks the version the plan read (ARGV 8-11); it runs after the
// state and fingerprint checks, whose answers say more.
const guardLua = `
-- applied answers a write that was made, with the version it left: the
-- after-state an undo compares-and-sets on.
local function applied()
  local v = version(KEYS[1], KEYS[2])
  if v == nil then return {'applied', ms} end
  return {'applied', ms, v[1], v[2], v[3], v[4]}
end
local function guard()
  local v, n = version(KEYS[1], KEYS[2])
  if v == nil then return {'conflict', 'fields', 'more than 4096 fields'} end
  if v[1] ~= ARGV[8] then return {'conflict', 'type', v[1]} end
  if v[2] ~= ARGV[9] then return {'conflict', 'fields', ''} end
  if v[3] ~= ARGV[10] then return {'conflict', 'ttl', v[3]} end
  if v[4] ~= ARGV[11] then return {'conflict', 'companion', v[4]} end
  return nil
end
local function set_ttl(key)
  if ARGV[2] == 'set' then
    if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', key, ARGV[3]) else redis.call('PERSIST', key) end
  end
end
-- present checks the record is still there, in the schema's container.
local function present(key, want)
  if redis.call('EXISTS', key) == 0 then return {'not_found'} end
  local t = redis.call('TYPE', key)['ok']
  if t ~= want then return {'conflict', 'type', t} end
  return nil
end
-- checked runs the version guard and, for a delete, deletes: it answers
-- when the script is done, nil when the update goes on.
local function checked(key)
  local c = guard()
  if c then return c end
  if ARGV[1] == 'delete' then
    redis.call('DEL', key)
    return applied()
  end
  return nil
end
-- set_string replaces a string's value with the TTL the plan asks for.
local function set_string(key, v)
  if ARGV[2] ~= 'set' then
    redis.call('SET', key, v, 'KEEPTTL')
  elseif tonumber(ARGV[3]) > 0 then
    redis.call('SET', key, v, 'PX', ARGV[3])
  else
    redis.call('SET', key, v)
  end
end
`

// casHash guards hash records (the lesson's format).
var casHash = newCAS(versionLua + timeLua + guardLua + `
local key = KEYS[1]
local c = present(key, 'hash')
if c then return c end
local st = redis.call('HGET', key, ARGV[4]) or ''
if st ~= ARGV[5] then return {'conflict', 'state', string.sub(st, 1, 256)} end
if ARGV[6] ~= '' then
  local fp = redis.call('HGET', key, ARGV[6]) or ''
  if fp ~= ARGV[7] then return {'conflict', 'fingerprint', string.sub(fp, 1, 256)} end
end
c = checked(key)
if c then return c end
local n = tonumber(ARGV[12])
local args, names = {}, {}
for i = 0, n - 1 do
  args[#args + 1] = ARGV[13 + 2 * i]
  args[#args + 1] = text(marker(ARGV[14 + 2 * i]))
  names[#names + 1] = ARGV[13 + 2 * i]
end
-- HSET drops a field's own TTL (Redis 7.4+): the fields it rewrites keep
-- theirs.
local kept = field_expiry(key, names) or {}
if #args > 0 then redis.call('HSET', key, unpack(args)) end
for j, e in ipairs(kept) do
  if e > 0 then redis.call('HPEXPIREAT', key, e, 'FIELDS', 1, names[j]) end
end
if ARGV[2] == 'set' and redis.call('PTTL', key) == -1 then
  -- A record that lives by its fields' TTLs gets the new TTL on those
  -- fields, as its application set them, not a key TTL beside them.
  local all = redis.call('HKEYS', key)
  local exp = field_expiry(key, all) or {}
  local timed = {}
  for j, e in ipairs(exp) do if e > 0 then timed[#timed + 1] = all[j] end end
  if #timed > 0 then
    if tonumber(ARGV[3]) > 0 then
      redis.call('HPEXPIRE', key, ARGV[3], 'FIELDS', #timed, unpack(timed))
    else
      redis.call('HPERSIST', key, 'FIELDS', #timed, unpack(timed))
    end
    return applied()
  end
end
set_ttl(key)
return applied()
`)

// casJSON guards JSON-string records; field names are dot paths. Values are
// JSON literals so numbers stay numbers.
var casJSON = newCAS(versionLua + timeLua + guardLua + `
local key = KEYS[1]
local c = present(key, 'string')
if c then return c end
local raw = redis.call('GET', key)
local ok, doc = pcall(cjson.decode, raw)
if not ok or type(doc) ~= 'table' then return {'conflict', 'decode', 'not a JSON object'} end
local function get(path)
  local cur = doc
  for part in string.gmatch(path, '[^.]+') do
    if type(cur) ~= 'table' then return nil end
    cur = cur[part]
  end
  return cur
end
local function set(path, v)
  local cur, last = doc, nil
  for part in string.gmatch(path, '[^.]+') do
    if last then
      if type(cur[last]) ~= 'table' then
        if v == nil then return end -- removing below a path that is not there
        cur[last] = {}
      end
      cur = cur[last]
    end
    last = part
  end
  cur[last] = v
end
local function show(v)
  if v == nil or v == cjson.null then return '' end
  if type(v) == 'table' then return cjson.encode(v) end
  return tostring(v)
end
local st = show(get(ARGV[4]))
if st ~= ARGV[5] then return {'conflict', 'state', string.sub(st, 1, 256)} end
if ARGV[6] ~= '' then
  local fp = show(get(ARGV[6]))
  if fp ~= ARGV[7] then return {'conflict', 'fingerprint', string.sub(fp, 1, 256)} end
end
c = checked(key)
if c then return c end
local n = tonumber(ARGV[12])
if n == 0 then
  set_ttl(key)
  return applied()
end
for i = 0, n - 1 do
  local v, isTime = marker(ARGV[14 + 2 * i])
  if not isTime then
    v = cjson.decode(v)
    if v == cjson.null then v = nil end -- null removes the path
  end
  set(ARGV[13 + 2 * i], v)
end
set_string(key, cjson.encode(doc))
return applied()
`)

// casRaw guards bare markers and lone locks: the expected state is the
// value's first bytes (ARGV[5]) and its length (ARGV[7]), since a replaced
// value may be long. The single pair's value replaces the marker.
var casRaw = newCAS(versionLua + timeLua + guardLua + `
local key = KEYS[1]
local c = present(key, 'string')
if c then return c end
local v = redis.call('GETRANGE', key, 0, string.len(ARGV[5]) - 1)
local n = redis.call('STRLEN', key)
if v ~= ARGV[5] or tostring(n) ~= ARGV[7] then
  return {'conflict', 'state', string.sub(redis.call('GETRANGE', key, 0, 255), 1, 256)}
end
c = checked(key)
if c then return c end
if tonumber(ARGV[12]) == 0 then
  set_ttl(key)
  return applied()
end
set_string(key, ARGV[14])
return applied()
`)
