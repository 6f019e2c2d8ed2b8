#!lua flags=no-writes
-- idemctl's stream entry reader: one entry's fields, each name and value
-- cut to the read cap on the server, so a huge value never leaves it (its
-- length does). Read-only.
--
-- KEYS: 1 the stream. ARGV: 1 the entry ID, 2 the read cap in bytes,
-- 3 the most fields returned.
-- Reply: {0} when the entry does not exist; else {1, field count, then per
-- field returned: name head, name length, value head, value length}.
local cap = tonumber(ARGV[2])
local most = tonumber(ARGV[3])
local r = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1])
if #r == 0 then
  return {0}
end
local f = r[1][2]
local out = {1, #f / 2}
for i = 1, math.min(#f, most * 2), 2 do
  local name, value = f[i], f[i + 1]
  out[#out + 1] = string.sub(name, 1, cap)
  out[#out + 1] = #name
  out[#out + 1] = string.sub(value, 1, cap)
  out[#out + 1] = #value
end
return out
