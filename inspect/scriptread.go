package inspect

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// scriptCall is one queued call of the read script: the batch positions
// of the keys it reads, in order.
type scriptCall struct {
	cmd *redis.Cmd
	at  []int
}

// scriptReloads bounds how often one batch loads the script again after
// NOSCRIPT: a cache flushed again between the load and the call is read
// anew, a server that keeps losing it is left for the client path.
const scriptReloads = 3

// fetchScript reads a batch with the read script: one pipeline of calls,
// each within the script's server-time cap, bracketed by TIME. ok is false when the batch must be read by
// the client path instead (the script was refused, killed or is busy);
// err only for a broken connection or a cancelled scan.
func (f *fetcher) fetchScript(ctx context.Context, keys []string, ahead *scanAhead) (fetched, bool, error) {
	p := f.script
	for attempt := 0; ; attempt++ {
		out, calls, err := f.sendScript(ctx, keys, ahead)
		if err != nil {
			return fetched{}, true, err
		}
		failed, failErr := "", error(nil)
		for _, c := range calls {
			if why, bad := scriptFailure(c.cmd.Err()); bad {
				failed, failErr = why, c.cmd.Err()
				break
			}
		}
		if failed == "" {
			p.served(len(keys), out.serverSpan)
			out.records, out.vanished = f.scriptRecords(keys, calls, out.nowMs)
			return out, true, nil
		}
		if f.reloadScript(ctx, attempt, failErr) {
			continue
		}
		p.fallBack(failed)
		return fetched{}, false, nil
	}
}

// sendScript queues and runs the batch's calls (and ahead's SCAN).
func (f *fetcher) sendScript(ctx context.Context, keys []string, ahead *scanAhead) (fetched, []scriptCall, error) {
	pipe := f.c.Pipeline()
	t0 := pipe.Time(ctx)
	args := f.scriptArgs()
	var calls []scriptCall
	for from := 0; from < len(keys); {
		to := min(len(keys), from+f.script.callKeys())
		calls = append(calls, f.queueCall(ctx, pipe, keys[from:to], from, args))
		from = to
	}
	if ahead != nil {
		ahead.cmd = pipe.Scan(ctx, ahead.cursor, ahead.match, ahead.count)
	}
	t1 := pipe.Time(ctx)
	nowMs, err := ExecTimed(ctx, pipe, t0)
	if err != nil {
		return fetched{}, nil, err
	}
	return fetched{nowMs: nowMs, serverSpan: timeSpan(t0, t1)}, calls, nil
}

// scriptArgs are the ARGV every call of this batch shares
// (readbatch.lua's header lists them).
func (f *fetcher) scriptArgs() []any {
	s, ks := f.ks.Schema, f.ks
	samples := int64(0)
	if f.memOn.Load() {
		samples = f.sampleCount()
	}
	names := newHmgetFields(s)
	fpAt := 0
	for j, slot := range names.slots {
		if slot == slotFingerprint {
			fpAt = j + 1
		}
	}
	container := "string"
	if s.Container == ContainerHash {
		container = "hash"
	}
	args := []any{ks.MaxValue, samples, flag01(f.respAll), ks.LargeResponse, flag01(!f.noFieldTTL.Load()),
		0, flag01(s.Lock != nil), container, s.Response, fpAt, fpKeep, fpPrefixMax, len(names.names)}
	return append(args, names.names...)
}

// appendArgv appends the batch's shared ARGV with records (ARGV 6: how
// many records KEYS holds, or 'scan') in its place; scriptArgs leaves a 0
// there.
func appendArgv(args, argv []any, records any) []any {
	const at = 5 // ARGV 6, 0-based
	args = append(args, argv[:at]...)
	args = append(args, records)
	return append(args, argv[at+1:]...)
}

func flag01(b bool) int {
	if b {
		return 1
	}
	return 0
}

// queueCall queues one call reading keys, the batch's from position on:
// declared, or on a cluster node after the fields (readbatch.lua says why).
func (f *fetcher) queueCall(ctx context.Context, pipe redis.Pipeliner, keys []string, from int, argv []any) scriptCall {
	lock := f.ks.Schema.Lock
	all := keys
	if lock != nil {
		all = make([]string, 0, 2*len(keys))
		all = append(all, keys...)
		for _, k := range keys {
			all = append(all, lock.LockKey(k))
		}
	}
	args := make([]any, 0, 3+len(all)+len(argv))
	args = append(args, "evalsha", f.script.sha)
	if f.script.cluster {
		args = append(args, 0)
	} else {
		args = append(args, len(all))
		args = appendKeys(args, all)
	}
	args = appendArgv(args, argv, strconv.Itoa(len(keys)))
	if f.script.cluster {
		args = appendKeys(args, all)
	}
	c := redis.NewCmd(ctx, args...)
	_ = pipe.Process(ctx, c)
	at := make([]int, len(keys))
	for i := range at {
		at[i] = from + i
	}
	return scriptCall{cmd: c, at: at}
}

func appendKeys(args []any, keys []string) []any {
	for _, k := range keys {
		args = append(args, k)
	}
	return args
}

// scriptRecords classifies the calls' replies in the batch's key order.
func (f *fetcher) scriptRecords(keys []string, calls []scriptCall, nowMs int64) ([]Record, int64) {
	obs := make([]observed, len(keys))
	got := make([]bool, len(keys))
	names := newHmgetFields(f.ks.Schema)
	for _, c := range calls {
		flat, _ := c.cmd.Slice()
		r := reply{v: flat}
		for _, i := range c.at {
			obs[i] = observed{key: keys[i], mem: -1}
			obs[i].f.respLen = -1
			got[i] = f.scriptObserved(&obs[i], &r, names)
		}
	}
	recs := make([]Record, 0, len(keys))
	for i := range keys {
		if got[i] {
			recs = append(recs, classify(f.ks, &obs[i], nowMs))
		}
	}
	return recs, int64(len(keys) - len(recs))
}

// reply walks a call's flat reply (readbatch.lua's header gives its shape).
type reply struct {
	v  []any
	at int
}

func (r *reply) next() any {
	if r.at >= len(r.v) {
		return nil
	}
	r.at++
	return r.v[r.at-1]
}

func (r *reply) int() int64 {
	n, _ := r.next().(int64)
	return n
}

// Bits of a key's kind: what follows its length.
const (
	partResp     = 1
	partTTLs     = 2
	partHead     = 4
	partTTLNoCmd = 8
)

// scriptObserved fills o from one key's part of the reply exactly as the
// client path's phases would: false when the key no longer exists.
func (f *fetcher) scriptObserved(o *observed, r *reply, names hmgetFields) bool {
	s := f.ks.Schema
	if o.pttl = r.int(); o.pttl == -2 {
		return false
	}
	if s.Lock != nil {
		o.lockPTTL = r.int()
	}
	if o.mem = r.int(); o.mem == -3 {
		f.memOn.Store(false)
		o.mem = -1
	}
	kind := r.next()
	if t, ok := kind.(string); ok {
		o.wrongType, o.typ = true, parseKeyType(t)
		o.memEstimated = o.mem >= 0 && o.typ != TypeString // a collection's size is sampled
		return o.typ != TypeUnknown && t != "none"
	}
	bits, _ := kind.(int64)
	length := r.int()
	if s.Container != ContainerHash {
		o.typ, o.valueLen = TypeString, length
		o.value, _ = r.next().(string)
		decodeStringValue(s, o)
		return true
	}
	o.typ = TypeHash
	o.memEstimated = o.mem >= 0 && length > f.sampleCount()
	f.scriptHash(o, r, bits, names)
	return true
}

// scriptHash reads a hash record's parts after its length.
func (f *fetcher) scriptHash(o *observed, r *reply, bits int64, names hmgetFields) {
	if bits&partResp != 0 {
		if l := r.int(); l > 0 {
			o.f.respLen = l
		}
	}
	if bits&partTTLNoCmd != 0 {
		f.noFieldTTL.Store(true)
	}
	if bits&partTTLs != 0 {
		ttls := make([]int64, max(r.int(), 0))
		for i := range ttls {
			ttls[i] = r.int()
		}
		applyFieldTTLs(ttls, &o.f)
	}
	head := ""
	if bits&partHead != 0 {
		head, _ = r.next().(string)
	}
	for _, slot := range names.slots {
		switch x := r.next().(type) {
		case string:
			o.f.val[slot], o.f.has[slot] = x, true
		case int64: // over the read cap: its length only
			o.f.truncated = true
			if slot == slotFingerprint {
				o.f.fpLong = true
			}
		}
	}
	if head != "" {
		o.f.val[slotFingerprint], o.f.has[slotFingerprint] = head, true
	}
}
