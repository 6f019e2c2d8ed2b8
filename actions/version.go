package actions

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// A record's version pins everything a write must not overwrite unseen: its
// type, every field and value (hashed on the server, so a large value is
// never fetched), its expiry time, and its companion key (the lock beside a
// record, or the record beside a lone lock). State and fingerprint alone
// are not enough: a Powertools record has no fingerprint unless payload
// validation is on, so a new invocation taking over an expired in-progress
// record would look the same. The expiry is absolute (PEXPIRETIME), so a
// re-reservation with the same body still differs: it starts a new TTL.
//
// versionLua is the one definition, shared by the read script and every
// compare-and-set script, so the two can never drift apart.
const versionLua = `
local MAX_FIELDS = 4096
-- field_expiry returns the fields' own expiry times (Redis 7.4+ hash-field
-- TTLs; 0 or less: none), or nil where the server has none to give. Any
-- other refusal (an ACL without HPEXPIRETIME) stops the script: a write
-- that cannot see field TTLs could drop them.
local function field_expiry(key, names)
  if #names == 0 then return nil end
  local ok, r = pcall(redis.call, 'HPEXPIRETIME', key, 'FIELDS', #names, unpack(names))
  if ok then return r end
  local msg = tostring(type(r) == 'table' and r.err or r)
  local low = string.lower(msg)
  -- "unknown command" (Valkey), "Unknown Redis command called from script" (Redis 7.0)
  if string.find(low, 'unknown', 1, true) and string.find(low, 'command', 1, true) then return nil end
  error('reading hash-field TTLs (HPEXPIRETIME) was refused: ' .. msg)
end
local function content_of(key, t)
  if t == 'string' then
    return 'string:' .. redis.sha1hex(redis.call('GET', key))
  end
  if t == 'hash' then
    local n = redis.call('HLEN', key)
    if n > MAX_FIELDS then return nil, n end
    local all = redis.call('HGETALL', key)
    local idx = {}
    for i = 1, #all, 2 do idx[#idx + 1] = i end
    table.sort(idx, function(a, b) return all[a] < all[b] end)
    local names = {}
    for _, i in ipairs(idx) do names[#names + 1] = all[i] end
    local exp = field_expiry(key, names)
    local parts = {}
    for j, i in ipairs(idx) do
      local p = #all[i] .. ':' .. all[i] .. '=' .. redis.sha1hex(all[i + 1])
      if exp and exp[j] > 0 then p = p .. '@' .. exp[j] end
      parts[#parts + 1] = p
    end
    return 'hash:' .. redis.sha1hex(table.concat(parts, '\n'))
  end
  return t
end
local function expiry_of(key)
  local ok, e = pcall(redis.call, 'PEXPIRETIME', key)
  if ok and type(e) == 'number' then return tostring(e) end
  -- servers before 7.0: only whether it expires
  if redis.call('PTTL', key) >= 0 then return 'volatile' end
  return '-1'
end
local function companion_of(key)
  if key == nil then return '' end
  local t = redis.call('TYPE', key)['ok']
  if t == 'none' then return 'none' end
  if t ~= 'string' then return t end
  local n = redis.call('STRLEN', key)
  return redis.sha1hex(n .. ':' .. redis.call('GETRANGE', key, 0, 1023) .. ':' .. expiry_of(key))
end
-- version returns {type, content, expiry, companion}, or nil and the field
-- count of a hash too large to pin.
local function version(key, comp)
  local t = redis.call('TYPE', key)['ok']
  if t == 'none' then return {'none', '', '', companion_of(comp)} end
  local c, n = content_of(key, t)
  if c == nil then return nil, n end
  return {t, c, expiry_of(key), companion_of(comp)}
end
`

// readVersionBody runs the version definition alone: KEYS[1] the key,
// KEYS[2] its companion if any.
const readVersionBody = versionLua + `
local v, n = version(KEYS[1], KEYS[2])
if v == nil then return {'too_large', tostring(n)} end
return v
`

// readVersion declares itself read-only (Redis 7's script flags), so it
// runs during CLIENT PAUSE WRITE, under maxmemory and on replicas like the
// other reads. Servers that cannot parse the flags line (before 7.0, and
// the demo's embedded server) run readVersionPlain instead.
var (
	readVersion      = newCAS("#!lua flags=no-writes\n" + readVersionBody)
	readVersionPlain = newCAS(readVersionBody)
	noScriptFlags    atomic.Bool
)

// companionKey is the key whose presence and value belong to the record:
// the schema's lock beside a record, or the record beside a lone lock.
func companionKey(ks *inspect.Keyspace, key string, isLock bool) string {
	lk := ks.Schema.Lock
	if lk == nil {
		return ""
	}
	if isLock {
		rec, _ := lk.RecordKey(key)
		return rec
	}
	return lk.LockKey(key)
}

// scriptKeys lists KEYS for a script over key and its companion.
func scriptKeys(key, comp string) []string {
	if comp == "" {
		return []string{key}
	}
	return []string{key, comp}
}

// fetchVersion reads a record's version. A cluster answers CROSSSLOT when
// the companion lives in another slot; it is then read apart, which a
// write re-checks just before its script (see Executor.Apply).
func fetchVersion(ctx context.Context, c redis.UniversalClient, key, comp string) (write.Version, error) {
	reply, err := runReadVersion(ctx, c, scriptKeys(key, comp))
	if comp != "" && crossSlot(err) {
		if reply, err = runReadVersion(ctx, c, []string{key}); err == nil && len(reply) == 4 {
			var cv write.Version
			if cv, err = fetchVersion(ctx, c, comp, ""); err == nil {
				reply[3] = companionDigest(cv)
			}
		}
	}
	if err != nil {
		return write.Version{}, err
	}
	if len(reply) == 2 && reply[0] == "too_large" {
		return write.Version{}, fmt.Errorf("the record has %s fields, more than idemctl pins (4,096): it is not an idempotency record; repair it by hand", reply[1])
	}
	if len(reply) != 4 {
		return write.Version{}, fmt.Errorf("unexpected reply from the version script: %q", reply)
	}
	return write.Version{Type: reply[0], Content: reply[1], Expiry: reply[2], Companion: reply[3]}, nil
}

func runReadVersion(ctx context.Context, c redis.UniversalClient, keys []string) ([]string, error) {
	return runReadOnly(ctx, c, readVersion, readVersionPlain, keys)
}

// runReadOnly runs a read script: flagged no-writes where the server knows
// script flags, plain where it cannot parse them.
func runReadOnly(ctx context.Context, c redis.UniversalClient, flagged, plain *casScript, keys []string, args ...any) ([]string, error) {
	if !noScriptFlags.Load() {
		// EVAL, not EVALSHA: a paused server holds an EVALSHA it has no
		// script for, since it cannot know that script's flags.
		reply, err := flagged.send(ctx, c, "eval", flagged.src, keys, args).StringSlice()
		if err == nil || !isServerError(err) || !strings.Contains(err.Error(), "compiling script") {
			return reply, err
		}
		noScriptFlags.Store(true)
	}
	return plain.send(ctx, c, "eval", plain.src, keys, args).StringSlice()
}

// companionDigest is the companion part of a version read apart (cluster,
// another slot). It differs in form from the script's, but a write in that
// case compares it in Go, with a version read the same way.
func companionDigest(v write.Version) string {
	if v.Type == "none" {
		return "none"
	}
	return "apart:" + v.Type + ":" + v.Content + ":" + v.Expiry
}

func crossSlot(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "CROSSSLOT")
}

// versionConflict says what a script's version conflict means.
func (p *Plan) versionConflict(what, cur string) string {
	switch what {
	case "type":
		switch {
		case p.Kind == write.KindUndo && cur == "none":
			return "the key is gone (it expired or was deleted)"
		case p.Kind == write.KindUndo && p.version.Type == "none":
			return "the key was re-created"
		}
		return "its type is now " + strconv.Quote(inspect.Sanitize(cur))
	case "expired":
		return "the before-image's expiry has passed: restored, it would be gone at once"
	case "fields":
		return "its stored fields differ from the ones read (state and fingerprint alone would not show it)"
	case "ttl":
		if cur == "-1" {
			return "its TTL was removed"
		}
		return "its TTL was re-set (a new reservation, a completion or another writer)"
	case "companion":
		if p.Before.State == "(lock only)" {
			return "its record " + strconv.Quote(inspect.Sanitize(p.comp)) + " appeared (the request completed)"
		}
		if cur == "none" {
			return "its lock " + strconv.Quote(inspect.Sanitize(p.comp)) + " is gone"
		}
		return "its lock " + strconv.Quote(inspect.Sanitize(p.comp)) + " appeared or changed (another worker took the record)"
	}
	return inspect.Sanitize(what) + " changed"
}
