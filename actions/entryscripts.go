package actions

// The pending-entry scripts. The read answers, in one call and without
// sending the entry's content, what the plan shows; the write re-checks
// inside Redis that the entry is still pending to the same consumer with
// the same delivery count, and only then writes (see casScript).

// entryReadBody: KEYS 1 the stream, 2 the dead-letter stream (optional);
// ARGV 1 the group, 2 the id. It answers {status, consumer, idle_ms,
// deliveries, now_ms, dead-letter type, present, fields, bytes, sha1}
// where status is pending, not_pending, no_stream or nogroup (the
// consumer slot then holds what the server said).
const entryReadBody = `
local t = redis.call('TIME')
local now = string.format('%.0f', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
local dlq = ''
if KEYS[2] then dlq = redis.call('TYPE', KEYS[2])['ok'] end
local st = redis.call('TYPE', KEYS[1])['ok']
if st ~= 'stream' then return {'no_stream', st, '0', '0', now, dlq, '0', '0', '0', ''} end
local ok, p = pcall(redis.call, 'XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)
if not ok then
  return {'nogroup', tostring(type(p) == 'table' and p.err or p), '0', '0', now, dlq, '0', '0', '0', ''}
end
local present, n, bytes, sum = '0', 0, 0, ''
local e = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])
if #e == 1 then
  present = '1'
  local f = e[1][2]
  n = #f / 2
  local parts = {}
  for i = 1, #f do
    bytes = bytes + string.len(f[i])
    parts[#parts + 1] = string.len(f[i]) .. ':' .. f[i]
  end
  sum = redis.sha1hex(table.concat(parts, '\n'))
end
local fmt = function(x) return string.format('%.0f', x) end
if #p == 0 then return {'not_pending', '', '0', '0', now, dlq, present, fmt(n), fmt(bytes), sum} end
return {'pending', p[1][2], fmt(p[1][3]), fmt(p[1][4]), now, dlq, present, fmt(n), fmt(bytes), sum}
`

var (
	readEntry      = newCAS("#!lua flags=no-writes\n" + entryReadBody)
	readEntryPlain = newCAS(entryReadBody)
)

// casEntry is the pending-entry write. KEYS: 1 the stream, 2 the
// dead-letter stream (dead-letter only). ARGV: 1 op (claim, claim-justid,
// redeliver, ack, dead-letter, undo), 2 group, 3 id, 4 expected consumer,
// 5 expected deliveries, 6 the consumer it goes to, 7 undo: the last
// delivery time (ms) to restore, 8 undo: the delivery count to restore,
// 9… dead-letter: the origin field/value pairs (idemctl.at is added here,
// from the server's clock).
//
// Every command it may call is checked against the caller's ACL before
// any is made (redis.acl_check_cmd): Redis keeps what a script wrote
// before a refused call, and a copy without its XACK would dead-letter an
// entry twice. It answers {'applied', ms, consumer left, deliveries left,
// dead-letter id}, {'conflict', what, current}, {'not_found', why} or
// {'noperm', command}.
var casEntry = newCAS(`
local s, g, id, op = KEYS[1], ARGV[2], ARGV[3], ARGV[1]
local calls = {{'XPENDING', s, g, id, id, 1}, {'XRANGE', s, id, id}}
if op == 'ack' or op == 'dead-letter' then calls[#calls + 1] = {'XACK', s, g, id}
else calls[#calls + 1] = {'XCLAIM', s, g, ARGV[6], 0, id} end
if op == 'dead-letter' then calls[#calls + 1] = {'XADD', KEYS[2], '*', 'f', 'v'} end
if redis.acl_check_cmd then
  for _, c in ipairs(calls) do
    if not redis.acl_check_cmd(unpack(c)) then return {'noperm', c[1]} end
  end
end
local ok, p = pcall(redis.call, 'XPENDING', s, g, id, id, 1)
if not ok then return {'not_found', tostring(type(p) == 'table' and p.err or p)} end
if #p == 0 then return {'conflict', 'acked', ''} end
local fmt = function(x) return string.format('%.0f', x) end
if p[1][2] ~= ARGV[4] then return {'conflict', 'consumer', p[1][2], fmt(p[1][4])} end
if fmt(p[1][4]) ~= ARGV[5] then return {'conflict', 'deliveries', fmt(p[1][4])} end
local t = redis.call('TIME')
local ms = fmt(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
if op == 'ack' then
  redis.call('XACK', s, g, id)
  return {'applied', ms, '', '', ''}
end
-- XCLAIM drops an entry the stream no longer holds from the pending list:
-- a retry of it would lose it, and there is nothing to dead-letter.
local e = redis.call('XRANGE', s, id, id)
if #e == 0 then return {'conflict', 'trimmed', ''} end
if op == 'dead-letter' then
  local args = {KEYS[2], '*'}
  for _, v in ipairs(e[1][2]) do args[#args + 1] = v end
  for i = 9, #ARGV do args[#args + 1] = ARGV[i] end
  args[#args + 1] = 'idemctl.at'
  args[#args + 1] = ms
  local dl = redis.call('XADD', unpack(args))
  redis.call('XACK', s, g, id)
  return {'applied', ms, '', '', dl}
end
if op == 'claim' then redis.call('XCLAIM', s, g, ARGV[6], 0, id)
elseif op == 'claim-justid' then redis.call('XCLAIM', s, g, ARGV[6], 0, id, 'JUSTID')
elseif op == 'redeliver' then redis.call('XCLAIM', s, g, ARGV[6], 0, id, 'IDLE', 0, 'JUSTID')
elseif op == 'undo' then redis.call('XCLAIM', s, g, ARGV[6], 0, id, 'TIME', ARGV[7], 'RETRYCOUNT', ARGV[8], 'JUSTID')
else return {'not_found', 'unknown op ' .. op} end
p = redis.call('XPENDING', s, g, id, id, 1)
if #p == 0 then return {'applied', ms, '', '', ''} end
return {'applied', ms, p[1][2], fmt(p[1][4]), ''}
`)
