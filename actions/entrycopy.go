package actions

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/write"
)

// maxCopyScan bounds the dead-letter entries a search for a copy reads:
// the newest ones since the write was planned.
const maxCopyScan = 100

// entryCopyBody finds a dead-letter copy without sending any entry's
// content. KEYS 1 the dead-letter stream; ARGV 1 the copy's id ("":
// search), 2 stream, 3 group, 4 id, 5 consumer, 6 deliveries (the origin
// fields casEntry appends, last but for idemctl.reason, .by and .at), 7
// the lowest id searched, 8 how many entries at most. It answers {type,
// the copy's id or "", '1' when the search covered every entry from ARGV
// 7 on}.
const entryCopyBody = `
local t = redis.call('TYPE', KEYS[1])['ok']
if t ~= 'stream' then return {t, '', '1'} end
local want = {'idemctl.stream', ARGV[2], 'idemctl.group', ARGV[3], 'idemctl.id', ARGV[4],
  'idemctl.consumer', ARGV[5], 'idemctl.deliveries', ARGV[6], 'idemctl.reason'}
local origin = function(f)
  local n = #f - 15
  if n < 1 or f[#f - 1] ~= 'idemctl.at' then return false end
  for i = 1, #want do
    if f[n + i - 1] ~= want[i] then return false end
  end
  return true
end
local es
if ARGV[1] ~= '' then es = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1])
else es = redis.call('XREVRANGE', KEYS[1], '+', ARGV[7], 'COUNT', tonumber(ARGV[8])) end
for _, e in ipairs(es) do
  if origin(e[2]) then return {t, e[1], '1'} end
end
if ARGV[1] == '' and #es >= tonumber(ARGV[8]) then return {t, '', '0'} end
return {t, '', '1'}
`

var (
	readEntryCopy      = newCAS("#!lua flags=no-writes\n" + entryCopyBody)
	readEntryCopyPlain = newCAS(entryCopyBody)
)

// copyFound is what a search of the dead-letter stream found.
type copyFound struct {
	id       string // the copy's id ("" when not found)
	complete bool   // every entry since the search's start was read
}

// findCopy looks for the dead-letter copy of the entry a (as the write
// read it): at id when the log knows it, else among the newest entries
// added at or after fromMs.
func findCopy(ctx context.Context, c redis.UniversalClient, a *write.EntryAudit, id string, fromMs int64) (copyFound, error) {
	from := strconv.FormatInt(max(fromMs, 0), 10)
	reply, err := runReadOnly(ctx, c, readEntryCopy, readEntryCopyPlain, []string{string(a.DeadLetter)}, id,
		string(a.Stream), string(a.Group), a.ID, string(a.Consumer), strconv.FormatInt(a.Deliveries, 10), from, maxCopyScan)
	if err != nil {
		return copyFound{}, fmt.Errorf("reading the dead-letter stream: %s", explainEntry(err, ""))
	}
	if len(reply) != 3 {
		return copyFound{}, fmt.Errorf("unexpected reply from the dead-letter read (%d parts)", len(reply))
	}
	return copyFound{id: reply[1], complete: reply[2] == "1"}, nil
}
