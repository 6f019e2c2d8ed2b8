package actions

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/units"
)

// MaxImage bounds a before-image: a record whose DUMP is longer is never
// fetched, and its writes are announced as not undoable. Base64 makes it
// about 350 KiB in the log, under the 1 MiB line limit (MaxAuditLine).
const MaxImage = 256 << 10

// imageBody reads the version (versionLua) and, when the DUMP fits in
// ARGV[1] bytes, the DUMP itself, in one script: the image is exactly the
// version's. It answers {type, content, expiry, companion, expire_at_ms,
// pttl, now_ms, dump_len, dump or ”}.
const imageBody = versionLua + `
local key = KEYS[1]
local v, n = version(key, KEYS[2])
if v == nil then return {'too_large', tostring(n)} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if v[1] == 'none' then
  return {v[1], v[2], v[3], v[4], '0', '-2', string.format('%.0f', now), '0', ''}
end
local pttl = redis.call('PTTL', key)
local at = 0
if pttl >= 0 then at = now + pttl end
local ok, e = pcall(redis.call, 'PEXPIRETIME', key)
if ok and type(e) == 'number' and e > 0 then at = e end
-- The size is bounded before DUMP runs: serializing a large value would
-- stall the server. Only the record containers are imaged.
local size = -1
if v[1] == 'string' then
  size = redis.call('STRLEN', key)
elseif v[1] == 'hash' then
  size = 0
  for _, f in ipairs(redis.call('HKEYS', key)) do
    size = size + string.len(f) + redis.call('HSTRLEN', key, f)
  end
end
local fmt = function(x) return string.format('%.0f', x) end
if size < 0 or size > tonumber(ARGV[1]) then
  return {v[1], v[2], v[3], v[4], fmt(at), tostring(pttl), fmt(now), tostring(size), ''}
end
local d = redis.call('DUMP', key)
return {v[1], v[2], v[3], v[4], fmt(at), tostring(pttl), fmt(now), tostring(string.len(d)), d}
`

var (
	readImage      = newCAS("#!lua flags=no-writes\n" + imageBody)
	readImagePlain = newCAS(imageBody)
)

// fetchImage reads a record's version and its image (the DUMP only up to
// MaxImage). The image is nil, with why, where the record is too large or
// the server would not DUMP (an ACL without it, a server without it): the
// version is then read alone, and the write goes on, announced as not
// undoable.
func fetchImage(ctx context.Context, c redis.UniversalClient, key, comp string) (write.Version, *write.Image, string, error) {
	reply, err := runReadOnly(ctx, c, readImage, readImagePlain, scriptKeys(key, comp), MaxImage)
	if comp != "" && crossSlot(err) {
		if reply, err = runReadOnly(ctx, c, readImage, readImagePlain, []string{key}, MaxImage); err == nil && len(reply) == 9 {
			var cv write.Version
			if cv, err = fetchVersion(ctx, c, comp, ""); err == nil {
				reply[3] = companionDigest(cv)
			}
		}
	}
	if err != nil && isServerError(err) {
		v, verr := fetchVersion(ctx, c, key, comp)
		why := units.Clip(units.OneLine(err.Error()), 160)
		if scriptACLRefusal(err.Error()) || strings.HasPrefix(err.Error(), "NOPERM") {
			why += "; an undo needs +hkeys +hstrlen +dump"
		}
		return v, nil, "the server would not give the record's DUMP (" + why + ")", verr
	}
	if err != nil {
		return write.Version{}, nil, "", err
	}
	if len(reply) == 2 && reply[0] == "too_large" {
		return write.Version{}, nil, "", fmt.Errorf("the record has %s fields, more than idemctl pins (4,096): it is not an idempotency record; repair it by hand", reply[1])
	}
	if len(reply) != 9 {
		return write.Version{}, nil, "", fmt.Errorf("unexpected reply from the image script (%d parts)", len(reply))
	}
	v := write.Version{Type: reply[0], Content: reply[1], Expiry: reply[2], Companion: reply[3]}
	num := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	im := &write.Image{Exists: v.Type != "none", ExpireAtMs: num(reply[4]), TTLms: num(reply[5]), NowMs: num(reply[6]), Len: num(reply[7]), Version: v}
	switch {
	case im.Exists && im.Len < 0:
		return v, nil, "a " + v.Type + " is not a record container idemctl images", nil
	case im.Exists && (im.Len > MaxImage || reply[8] == ""):
		return v, nil, fmt.Sprintf("the record holds %d bytes, over the %d-byte before-image cap", im.Len, MaxImage), nil
	}
	im.Dump = base64.StdEncoding.EncodeToString([]byte(reply[8]))
	return v, im, "", nil
}
