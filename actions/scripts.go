package actions

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Every write is one of these compare-and-set scripts: it first checks that
// the record still holds the state and fingerprint the operator saw, and
// only then changes it. They answer {'applied', server_ms},
// {'conflict', what, current}, or {'not_found'}. A conflict changes nothing.
//
// Common ARGV: 1 mode (update|delete), 2 ttl (keep|set), 3 ttl ms,
// 4 state field, 5 expected state, 6 fingerprint field ("" skips),
// 7 expected fingerprint, 8 number of field/value pairs, then the pairs.
// A value of "\0now" becomes the server time in epoch ms. With no pairs, an
// update only sets the TTL: the value is never rewritten for an expire.

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
func (s *casScript) run(ctx context.Context, c redis.UniversalClient, keys []string, args ...any) *redis.Cmd {
	cmd := s.send(ctx, c, "evalsha", s.Hash(), keys, args)
	if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		cmd = s.send(ctx, c, "eval", s.src, keys, args)
	}
	return cmd
}

func (s *casScript) send(ctx context.Context, c redis.UniversalClient, name, body string, keys []string, args []any) *redis.Cmd {
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

// casHash guards hash records (the lesson's format).
var casHash = newCAS(`
local key = KEYS[1]
if redis.call('EXISTS', key) == 0 then return {'not_found'} end
local t = redis.call('TYPE', key)['ok']
if t ~= 'hash' then return {'conflict', 'type', t} end
local st = redis.call('HGET', key, ARGV[4]) or ''
if st ~= ARGV[5] then return {'conflict', 'state', string.sub(st, 1, 256)} end
if ARGV[6] ~= '' then
  local fp = redis.call('HGET', key, ARGV[6]) or ''
  if fp ~= ARGV[7] then return {'conflict', 'fingerprint', string.sub(fp, 1, 256)} end
end
local now = redis.call('TIME')
local ms = string.format('%.0f', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
if ARGV[1] == 'delete' then
  redis.call('DEL', key)
  return {'applied', ms}
end
local n = tonumber(ARGV[8])
local args = {}
for i = 0, n - 1 do
  local v = ARGV[10 + 2 * i]
  if v == '\0now' then v = ms end
  args[#args + 1] = ARGV[9 + 2 * i]
  args[#args + 1] = v
end
if #args > 0 then redis.call('HSET', key, unpack(args)) end
if ARGV[2] == 'set' then
  if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', key, ARGV[3]) else redis.call('PERSIST', key) end
end
return {'applied', ms}
`)

// casJSON guards JSON-string records; field names are dot paths. Values are
// JSON literals so numbers stay numbers.
var casJSON = newCAS(`
local key = KEYS[1]
if redis.call('EXISTS', key) == 0 then return {'not_found'} end
local t = redis.call('TYPE', key)['ok']
if t ~= 'string' then return {'conflict', 'type', t} end
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
      if type(cur[last]) ~= 'table' then cur[last] = {} end
      cur = cur[last]
    end
    last = part
  end
  cur[last] = v
end
local function text(v)
  if v == nil or v == cjson.null then return '' end
  if type(v) == 'table' then return cjson.encode(v) end
  return tostring(v)
end
local st = text(get(ARGV[4]))
if st ~= ARGV[5] then return {'conflict', 'state', string.sub(st, 1, 256)} end
if ARGV[6] ~= '' then
  local fp = text(get(ARGV[6]))
  if fp ~= ARGV[7] then return {'conflict', 'fingerprint', string.sub(fp, 1, 256)} end
end
local now = redis.call('TIME')
local msn = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ms = string.format('%.0f', msn)
if ARGV[1] == 'delete' then
  redis.call('DEL', key)
  return {'applied', ms}
end
if tonumber(ARGV[8]) == 0 then
  if ARGV[2] == 'set' then
    if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', key, ARGV[3]) else redis.call('PERSIST', key) end
  end
  return {'applied', ms}
end
local n = tonumber(ARGV[8])
for i = 0, n - 1 do
  local v = ARGV[10 + 2 * i]
  if v == '\0now' then set(ARGV[9 + 2 * i], msn) else set(ARGV[9 + 2 * i], cjson.decode(v)) end
end
local out = cjson.encode(doc)
if ARGV[2] == 'set' then
  if tonumber(ARGV[3]) > 0 then redis.call('SET', key, out, 'PX', ARGV[3]) else redis.call('SET', key, out) end
else
  redis.call('SET', key, out, 'KEEPTTL')
end
return {'applied', ms}
`)

// casRaw guards bare markers: the expected state is the value's first bytes
// (ARGV[5]) and its length (ARGV[7]), since a replaced value may be long.
// The single pair's value replaces the marker.
var casRaw = newCAS(`
local key = KEYS[1]
if redis.call('EXISTS', key) == 0 then return {'not_found'} end
local t = redis.call('TYPE', key)['ok']
if t ~= 'string' then return {'conflict', 'type', t} end
local v = redis.call('GETRANGE', key, 0, string.len(ARGV[5]) - 1)
local n = redis.call('STRLEN', key)
if v ~= ARGV[5] or tostring(n) ~= ARGV[7] then
  return {'conflict', 'state', string.sub(redis.call('GETRANGE', key, 0, 255), 1, 256)}
end
local now = redis.call('TIME')
local ms = string.format('%.0f', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
if ARGV[1] == 'delete' then
  redis.call('DEL', key)
  return {'applied', ms}
end
if tonumber(ARGV[8]) == 0 then
  if ARGV[2] == 'set' then
    if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', key, ARGV[3]) else redis.call('PERSIST', key) end
  end
  return {'applied', ms}
end
local nv = ARGV[10]
if ARGV[2] == 'set' then
  if tonumber(ARGV[3]) > 0 then redis.call('SET', key, nv, 'PX', ARGV[3]) else redis.call('SET', key, nv) end
else
  redis.call('SET', key, nv, 'KEEPTTL')
end
return {'applied', ms}
`)
