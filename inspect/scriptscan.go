package inspect

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// scanned is one step of the scan-mode read script: the keys its SCAN
// returned, in order, what it read of each (got false where the key was
// gone by then), and the cursor to go on from.
type scanned struct {
	keys  []string
	obs   []observed
	got   []bool
	next  uint64
	count int // the COUNT the step's SCAN was sent with
	nowMs int64
	span  time.Duration // the server's time over the call
}

// scanScript runs one scan-mode call from cursor: the script's own SCAN
// MATCH COUNT, then the same reads as a batch call (readbatch.lua). ok is
// false when the rest must go by the client path (refused, killed, busy);
// err only for a broken connection or a cancelled scan.
func (f *fetcher) scanScript(ctx context.Context, cursor uint64, match string, count int) (scanned, bool, error) {
	for attempt := 0; ; attempt++ {
		pipe := f.c.Pipeline()
		t0 := pipe.Time(ctx)
		args := f.scriptArgs()
		argv := make([]any, 0, 3+len(args)+3)
		argv = append(argv, "evalsha", f.script.sha, 0)
		argv = appendArgv(argv, args, "scan")
		argv = append(argv, strconv.FormatUint(cursor, 10), match, count)
		cmd := redis.NewCmd(ctx, argv...)
		_ = pipe.Process(ctx, cmd)
		t1 := pipe.Time(ctx)
		nowMs, err := ExecTimed(ctx, pipe, t0)
		if err != nil {
			return scanned{}, true, err
		}
		if why, bad := scriptFailure(cmd.Err()); bad {
			if f.reloadScript(ctx, attempt, cmd.Err()) {
				continue
			}
			f.script.fallBack(why)
			return scanned{}, false, nil
		}
		out := scanned{count: count, nowMs: nowMs, span: timeSpan(t0, t1)}
		flat, _ := cmd.Slice()
		f.scanReply(&out, &reply{v: flat})
		f.script.served(count, out.span)
		return out, true, nil
	}
}

// reloadScript loads the script again after NOSCRIPT (SCRIPT FLUSH, a
// restart, a failover to a server that never saw it), up to scriptReloads
// times a batch: true when the call should be sent again.
func (f *fetcher) reloadScript(ctx context.Context, attempt int, err error) bool {
	if attempt >= scriptReloads || !isNoScript(err) {
		return false
	}
	sha, lerr := f.c.ScriptLoad(ctx, f.script.body).Result()
	return lerr == nil && sha == f.script.sha
}

// scanReply reads a scan-mode reply: the cursor, the keys, then each
// key's part as a batch call gives it.
func (f *fetcher) scanReply(out *scanned, r *reply) {
	cur, _ := r.next().(string)
	out.next, _ = strconv.ParseUint(cur, 10, 64)
	n := max(r.int(), 0)
	out.keys = make([]string, 0, n)
	for range n {
		k, _ := r.next().(string)
		out.keys = append(out.keys, k)
	}
	out.obs, out.got = make([]observed, len(out.keys)), make([]bool, len(out.keys))
	names := newHmgetFields(f.ks.Schema)
	for i, k := range out.keys {
		out.obs[i] = observed{key: k, mem: -1}
		out.obs[i].f.respLen = -1
		out.got[i] = f.scriptObserved(&out.obs[i], r, names)
	}
}
