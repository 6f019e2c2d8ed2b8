package inspect

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// fetcher reads one batch of keys in as few round trips as the read caps
// allow: usually two pipelines (metadata, then the schema's fields), never a
// command per key per round trip, never an unbounded value.
type fetcher struct {
	c     redis.UniversalClient
	ks    *Keyspace
	memOn *atomic.Bool // cleared once the server refuses MEMORY USAGE
	// noSamples is set once the server rejects MEMORY USAGE's SAMPLES
	// argument (Redis-compatible servers such as miniredis).
	noSamples atomic.Bool
	// respAll measures every hash record's response length (one HSTRLEN
	// per key), not only those whose size could exceed the threshold.
	respAll bool
	// noFieldTTL is set once the server rejects HPTTL (Redis before 7.4,
	// Valkey 8): it has no hash-field TTLs to read.
	noFieldTTL atomic.Bool
	// span brackets the batch's pipelines with TIME commands, so the batch
	// says how long the server took over each (the latency budget's
	// measure).
	span bool
	// samples bounds MEMORY USAGE's walk (0: memSamples). A hash with at
	// most that many fields is measured exactly; a bigger collection gets
	// an estimate, never a walk of every element.
	samples int64
}

// memSamples is MEMORY USAGE's sample count: above the listpack limit a
// record hash is converted at (128 fields by default), so every hash that
// could be a record is measured whole, and a 10,000,000-field hash costs
// the server 128 steps, not ten million (SAMPLES 0 walks them all).
const memSamples = 128

func (f *fetcher) sampleCount() int64 {
	if f.samples > 0 {
		return f.samples
	}
	return memSamples
}

type fetched struct {
	records  []Record
	nowMs    int64
	vanished int64
	// serverSpan is the server's time from the first to the last command
	// of the batch's longest pipeline, when fetcher.span asks for it; 0
	// otherwise.
	serverSpan time.Duration
}

func (f *fetcher) fetch(ctx context.Context, keys []string) (fetched, error) {
	return f.fetchAhead(ctx, keys, nil)
}

// scanAhead is the next SCAN, sent in the last pipeline of a batch's read
// under a latency budget: one round trip a batch fewer, with the server's
// work per round trip still measured (it sits inside the TIME bracket).
type scanAhead struct {
	cursor uint64
	match  string
	count  int64
	cmd    *redis.ScanCmd // set once queued
}

// fetchAhead is fetch that also sends ahead (nil: none) with its last
// pipeline.
func (f *fetcher) fetchAhead(ctx context.Context, keys []string, ahead *scanAhead) (fetched, error) {
	ks, s := f.ks, f.ks.Schema
	obs := make([]observed, len(keys))
	useMem := f.memOn.Load()
	isHash := s.Container == ContainerHash
	boxed := make([]any, len(keys)) // each key boxed once for all its commands
	fieldSet := newHmgetFields(s)

	// Phase A: TTL and memory; for strings also the value up to the cap. A
	// hash's response length is measured here only when the whole record's
	// size is unknown or every response is asked for (--response-sizes):
	// otherwise MEMORY USAGE bounds it and phase B measures the few that
	// could be large, sparing the server a command per key.
	pipe := f.c.Pipeline()
	timeCmd := pipe.Time(ctx)
	pttl := make([]*redis.IntCmd, len(keys))
	mem := make([]*redis.IntCmd, len(keys))
	probe := make([]*redis.IntCmd, len(keys))   // STRLEN, or HSTRLEN(response) of a hash
	getr := make([]*redis.StringCmd, len(keys)) // strings: GETRANGE 0 cap-1
	lens := make([][]*redis.IntCmd, len(keys))  // hashes without memory: HSTRLEN per field
	var hlen []*redis.IntCmd                    // hashes: HLEN, which says whether MEMORY USAGE is exact
	if isHash && useMem {
		hlen = make([]*redis.IntCmd, len(keys))
	}
	samples := f.sampleCount()
	var lockTTL []*redis.IntCmd
	if s.Lock != nil {
		lockTTL = make([]*redis.IntCmd, len(keys))
	}
	for i, k := range keys {
		kb := any(k)
		boxed[i] = kb
		obs[i] = observed{key: k, mem: -1}
		obs[i].f.respLen = -1
		pttl[i] = intCmd(ctx, pipe, "pttl", kb)
		if lockTTL != nil {
			lockTTL[i] = intCmd(ctx, pipe, "pttl", s.Lock.LockKey(k))
		}
		if useMem && f.noSamples.Load() {
			mem[i] = keyIntCmd(ctx, pipe, "memory", "usage", kb)
		} else if useMem {
			mem[i] = keyIntCmd(ctx, pipe, "memory", "usage", kb, "samples", samples)
		}
		if hlen != nil {
			hlen[i] = intCmd(ctx, pipe, "hlen", kb)
		}
		switch {
		case !isHash:
			probe[i] = intCmd(ctx, pipe, "strlen", kb)
			getr[i] = redis.NewStringCmd(ctx, "getrange", kb, 0, ks.MaxValue-1)
			_ = pipe.Process(ctx, getr[i])
		case !useMem:
			lens[i] = fieldLens(ctx, pipe, kb, s)
			probe[i] = respLen(ctx, pipe, kb, s)
		case f.respAll:
			probe[i] = respLen(ctx, pipe, kb, s)
		}
	}
	out, err := f.execFirst(ctx, pipe, timeCmd)
	if err != nil {
		return fetched{}, err
	}

	// Phase B: the fields of hashes known to be small, the sizes of the
	// others' fields, and the response length where the record could hold a
	// large one.
	pipe = f.c.Pipeline()
	var spanB [2]*redis.TimeCmd
	if f.span {
		spanB[0] = pipe.Time(ctx)
	}
	memRetry := make([]*redis.IntCmd, len(keys))
	hm := make([]*hmget, len(keys))
	fttl := make([]*redis.IntSliceCmd, len(keys))
	needB := false
	for i := range keys {
		o := &obs[i]
		o.pttl = pttl[i].Val()
		if err := pttl[i].Err(); err != nil {
			o.pttl = TTLUnknown
		}
		if o.pttl == -2 {
			continue // deleted or expired since SCAN
		}
		if lockTTL != nil {
			o.lockPTTL = lockTTL[i].Val()
			if lockTTL[i].Err() != nil {
				o.lockPTTL = TTLUnknown
			}
		}
		if mem[i] != nil {
			if v, err := mem[i].Result(); err == nil {
				o.mem = v
			} else if refusedCommand(err) {
				f.memOn.Store(false)
			} else if strings.Contains(err.Error(), "syntax error") {
				f.noSamples.Store(true)
				memRetry[i] = keyIntCmd(ctx, pipe, "memory", "usage", boxed[i])
				needB = true
			}
		}
		// Past the sample count MEMORY USAGE extrapolates: it is then no
		// bound on any one field, and the record says it is an estimate.
		if hlen != nil && o.mem >= 0 && hlen[i].Err() == nil && hlen[i].Val() > samples {
			o.memEstimated = true
		}
		if hlen != nil && isWrongType(hlen[i].Err()) {
			o.memEstimated = o.mem >= 0 // another type: its size may be sampled
		}
		if !isHash {
			o.wrongType = isWrongType(probe[i].Err())
			o.memEstimated = o.wrongType && o.mem >= 0 // a collection's size is sampled
			if !o.wrongType {
				o.typ = TypeString
				o.valueLen = probe[i].Val()
				o.value = getr[i].Val()
				if s.Codec == CodecJSON {
					cut := o.valueLen > int64(len(o.value))
					decodeJSON(s, []byte(o.value), cut, &o.f)
					o.f.truncated = o.f.truncated || cut
					o.value = "" // the fields keep what they need
				}
			}
			continue
		}
		o.typ = TypeHash // until a command says WRONGTYPE
		switch {
		case probe[i] != nil && isWrongType(probe[i].Err()), hlen != nil && isWrongType(hlen[i].Err()):
			o.wrongType = true
			continue
		case !o.memEstimated && small(o.mem, lens[i], ks.MaxValue):
			hm[i] = hmgetCmd(ctx, pipe, boxed[i], fieldSet, nil, ks.MaxValue)
			needB = needB || hm[i] != nil
		case lens[i] == nil:
			lens[i] = fieldLens(ctx, pipe, boxed[i], s)
			needB = true
		}
		if probe[i] == nil && (o.mem < 0 || o.memEstimated || o.mem > ks.LargeResponse) {
			probe[i] = respLen(ctx, pipe, boxed[i], s)
			needB = needB || probe[i] != nil
		}
		if o.pttl == -1 && !f.noFieldTTL.Load() {
			// No key TTL: the fields may carry their own (Redis 7.4+).
			// Asked only of such records, so a keyspace with key TTLs
			// pays nothing.
			fttl[i] = fieldTTLCmd(ctx, pipe, boxed[i], fieldSet, s)
			needB = true
		}
	}
	if ahead != nil {
		ahead.cmd = pipe.Scan(ctx, ahead.cursor, ahead.match, ahead.count)
		needB = true
	}
	if needB {
		if f.span {
			spanB[1] = pipe.Time(ctx)
		}
		if err := execPipe(ctx, pipe); err != nil {
			return fetched{}, err
		}
		out.serverSpan = max(out.serverSpan, timeSpan(spanB[0], spanB[1]))
	}

	// Phase C, rare: the types of keys that are not the schema's container,
	// and the small fields of hashes too big to HMGET blindly.
	pipe = f.c.Pipeline()
	typ := make([]*redis.StatusCmd, len(keys))
	fpHead := make([]*redis.Cmd, len(keys))
	needC := false
	for i := range keys {
		o := &obs[i]
		if o.pttl == -2 {
			continue
		}
		if memRetry[i] != nil && memRetry[i].Err() == nil {
			o.mem = memRetry[i].Val()
		}
		if fttl[i] != nil {
			f.readFieldTTLs(fttl[i], &o.f)
		}
		if isHash && !o.wrongType {
			if probe[i] != nil && probe[i].Err() == nil && probe[i].Val() > 0 {
				o.f.respLen = probe[i].Val()
			}
			if hm[i] != nil {
				hm[i].read(&o.f, o)
			}
			// hm's read may already have said WRONGTYPE
			o.wrongType = o.wrongType || (probe[i] != nil && isWrongType(probe[i].Err())) || anyWrongType(lens[i])
			if hm[i] == nil && lens[i] != nil && !o.wrongType {
				hm[i] = hmgetCmd(ctx, pipe, boxed[i], fieldSet, lens[i], ks.MaxValue)
				o.f.truncated = anyOver(lens[i], ks.MaxValue)
				if l := lens[i][slotFingerprint]; l != nil && l.Val() > ks.MaxValue {
					o.f.fpLong = true
					if l.Val() <= fpPrefixMax {
						fpHead[i] = fpPrefixCmd(ctx, pipe, boxed[i], s.Fingerprint)
						needC = true
					}
				}
				if hm[i] != nil {
					needC = true
					hm[i].late = true
				}
			}
		}
		if o.wrongType {
			typ[i] = redis.NewStatusCmd(ctx, "type", boxed[i])
			_ = pipe.Process(ctx, typ[i])
			needC = true
		}
	}
	if needC {
		if err := execPipe(ctx, pipe); err != nil {
			return fetched{}, err
		}
	}

	out.records = make([]Record, 0, len(keys))
	for i := range keys {
		o := &obs[i]
		if typ[i] != nil {
			o.typ = parseKeyType(typ[i].Val())
			if o.typ == TypeUnknown || typ[i].Val() == "none" {
				o.pttl = -2
			}
			if o.typ == TypeString {
				o.memEstimated = false // a string's size is never sampled
			}
		}
		if o.pttl == -2 {
			out.vanished++
			continue
		}
		if hm[i] != nil && hm[i].late {
			hm[i].read(&o.f, o)
		}
		if fpHead[i] != nil {
			if v, err := fpHead[i].Text(); err == nil && v != "" {
				o.f.val[slotFingerprint], o.f.has[slotFingerprint] = v, true
			}
		}
		out.records = append(out.records, classify(ks, o, out.nowMs))
	}
	return out, nil
}

func intCmd(ctx context.Context, p redis.Pipeliner, args ...any) *redis.IntCmd {
	c := redis.NewIntCmd(ctx, args...)
	_ = p.Process(ctx, c)
	return c
}

// keyIntCmd queues a two-word command (MEMORY USAGE) whose key is its third
// argument, so a cluster client routes it by that key.
func keyIntCmd(ctx context.Context, p redis.Pipeliner, args ...any) *redis.IntCmd {
	c := redis.NewIntCmd(ctx, args...)
	c.SetFirstKeyPos(2)
	_ = p.Process(ctx, c)
	return c
}

// fpPrefixMax bounds the fingerprints whose head is read past the read
// cap: the server copies the value to cut it, cheap up to 1 MiB.
const fpPrefixMax = 1 << 20

// fpKeep is how much of a fingerprint a record keeps.
const fpKeep = 512

// fpPrefix returns the head of a hash field, cut on the server so that a
// long fingerprint is shown (truncated) without being fetched whole.
const fpPrefix = `return string.sub(redis.call('HGET', KEYS[1], ARGV[1]) or '', 1, tonumber(ARGV[2]))`

func fpPrefixCmd(ctx context.Context, p redis.Pipeliner, key any, field string) *redis.Cmd {
	c := redis.NewCmd(ctx, "eval", fpPrefix, 1, key, field, fpKeep)
	_ = p.Process(ctx, c)
	return c
}

// respLen queues HSTRLEN of the schema's response field, if it has one.
func respLen(ctx context.Context, p redis.Pipeliner, key any, s *Schema) *redis.IntCmd {
	if s.Response == "" {
		return nil
	}
	return intCmd(ctx, p, "hstrlen", key, s.Response)
}

// fieldLens queues HSTRLEN for each mapped field, in slot order.
func fieldLens(ctx context.Context, p redis.Pipeliner, key any, s *Schema) []*redis.IntCmd {
	out := make([]*redis.IntCmd, numSlots)
	for slot, name := range s.fields {
		if name != "" {
			out[slot] = intCmd(ctx, p, "hstrlen", key, name)
		}
	}
	return out
}

func anyWrongType(cmds []*redis.IntCmd) bool {
	for _, c := range cmds {
		if c != nil && isWrongType(c.Err()) {
			return true
		}
	}
	return false
}

// small reports whether every field of the hash fits under the read cap:
// known from MEMORY USAGE (whole-key size, SAMPLES 0) or from HSTRLEN.
func small(mem int64, lens []*redis.IntCmd, limit int64) bool {
	if lens != nil {
		return !anyOver(lens, limit)
	}
	return mem >= 0 && mem <= limit
}

func anyOver(lens []*redis.IntCmd, limit int64) bool {
	for _, l := range lens {
		if l != nil && l.Val() > limit {
			return true
		}
	}
	return false
}

// fieldTTLCmd queues HPTTL of the schema's mapped fields and its response.
func fieldTTLCmd(ctx context.Context, p redis.Pipeliner, key any, all hmgetFields, s *Schema) *redis.IntSliceCmd {
	names := all.names
	if s.Response != "" {
		names = append(names[:len(names):len(names)], s.Response)
	}
	args := make([]any, 0, 4+len(names))
	args = append(args, "hpttl", key, "fields", len(names))
	args = append(args, names...)
	c := redis.NewIntSliceCmd(ctx, args...)
	_ = p.Process(ctx, c)
	return c
}

// readFieldTTLs records the fields' own TTLs: the earliest one among the
// fields present, and whether they end at different times (some never, or
// more than a second apart). A server that does not know HPTTL is not
// asked again.
func (f *fetcher) readFieldTTLs(c *redis.IntSliceCmd, fs *fields) {
	ttls, err := c.Result()
	if err != nil {
		if refusedCommand(err) {
			f.noFieldTTL.Store(true)
		}
		return
	}
	lo, hi, never := int64(-1), int64(-1), false
	for _, t := range ttls {
		switch {
		case t == -2: // no such field
		case t < 0:
			never = true
		default:
			if lo < 0 || t < lo {
				lo = t
			}
			hi = max(hi, t)
		}
	}
	fs.fieldTTLRead, fs.fieldTTL = true, lo
	fs.fieldTTLMixed = lo >= 0 && (never || hi-lo > 1000)
}

// hmget is a queued HMGET and the field slots its replies fill, in order.
type hmget struct {
	cmd   *redis.SliceCmd
	slots []int // shared, read-only
	late  bool  // sent in phase C
}

// hmgetFields lists the schema's mapped fields once per batch: their names,
// boxed for go-redis, and their slots.
type hmgetFields struct {
	names []any
	slots []int
}

func newHmgetFields(s *Schema) hmgetFields {
	var h hmgetFields
	for slot, name := range s.fields {
		if name != "" {
			h.names = append(h.names, name)
			h.slots = append(h.slots, slot)
		}
	}
	return h
}

// hmgetCmd queues HMGET of the mapped fields; with lens, only those under the cap.
func hmgetCmd(ctx context.Context, p redis.Pipeliner, key any, all hmgetFields, lens []*redis.IntCmd, limit int64) *hmget {
	args := make([]any, 2, 2+len(all.names))
	args[0], args[1] = "hmget", key
	h := &hmget{slots: all.slots}
	if lens == nil {
		args = append(args, all.names...)
	} else {
		h.slots = nil
		for j, slot := range all.slots {
			if l := lens[slot]; l != nil && l.Val() > limit {
				continue
			}
			args = append(args, all.names[j])
			h.slots = append(h.slots, slot)
		}
	}
	if len(h.slots) == 0 {
		return nil
	}
	h.cmd = redis.NewSliceCmd(ctx, args...)
	_ = p.Process(ctx, h.cmd)
	return h
}

func (h *hmget) read(f *fields, o *observed) {
	vals, err := h.cmd.Result()
	if err != nil {
		if isWrongType(err) {
			o.wrongType = true
		}
		return
	}
	for j, slot := range h.slots {
		if j < len(vals) {
			if v, ok := vals[j].(string); ok {
				f.val[slot], f.has[slot] = v, true
			}
		}
	}
}

// execPipe runs a pipeline. A server's error answer to one command stays on
// that command (a WRONGTYPE is a finding, not a failure); only a broken
// connection or a cancelled context fails the batch.
func execPipe(ctx context.Context, pipe redis.Pipeliner) error {
	if _, err := pipe.Exec(ctx); err != nil && !isServerErr(err) {
		return err
	}
	return nil
}

// execTimed runs a pipeline queued behind timeCmd (its TIME) and returns the
// server's clock in milliseconds, the "now" its answers are judged against.
func execTimed(ctx context.Context, pipe redis.Pipeliner, timeCmd *redis.TimeCmd) (int64, error) {
	if err := execPipe(ctx, pipe); err != nil {
		return 0, err
	}
	now, err := timeCmd.Result()
	if err != nil {
		return 0, err
	}
	return now.UnixMilli(), nil
}

// execFirst runs a batch's first pipeline, queued behind timeCmd: the
// answer starts with the server's "now" and, when the pacer asks for it,
// the server's own time for the pipeline (a second TIME at its end).
func (f *fetcher) execFirst(ctx context.Context, pipe redis.Pipeliner, timeCmd *redis.TimeCmd) (fetched, error) {
	var endCmd *redis.TimeCmd
	if f.span {
		endCmd = pipe.Time(ctx)
	}
	nowMs, err := execTimed(ctx, pipe, timeCmd)
	if err != nil {
		return fetched{}, err
	}
	return fetched{nowMs: nowMs, serverSpan: timeSpan(timeCmd, endCmd)}, nil
}

// timeSpan is the server's time between two TIME commands of a pipeline;
// 0 when either is missing or failed.
func timeSpan(first, last *redis.TimeCmd) time.Duration {
	if first == nil || last == nil || first.Err() != nil || last.Err() != nil {
		return 0
	}
	return max(last.Val().Sub(first.Val()), 0)
}

func isServerErr(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, context.Canceled)
}

func isWrongType(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE")
}

// refusedCommand reports errors meaning "this server or user cannot run that
// command at all" (ACL, renamed or unknown command), as opposed to a
// per-key failure.
func refusedCommand(err error) bool {
	if err == nil {
		return false
	}
	m := err.Error()
	return strings.HasPrefix(m, "NOPERM") || strings.Contains(m, "unknown command") ||
		strings.Contains(m, "unknown subcommand") || strings.Contains(m, "not allowed")
}

// fetchOrphans reads lock keys and turns each lock whose record does not
// exist into a record of its own: a request in flight (or a worker that died
// holding the lock), for libraries that write the record only when done.
func (f *fetcher) fetchOrphans(ctx context.Context, locks []string) (fetched, error) {
	ks, lk := f.ks, f.ks.Schema.Lock
	pipe := f.c.Pipeline()
	timeCmd := pipe.Time(ctx)
	exists := make([]*redis.IntCmd, len(locks))
	pttl := make([]*redis.IntCmd, len(locks))
	val := make([]*redis.StringCmd, len(locks))
	typ := make([]*redis.StatusCmd, len(locks))
	for i, k := range locks {
		rec, _ := lk.RecordKey(k)
		exists[i] = intCmd(ctx, pipe, "exists", rec)
		pttl[i] = intCmd(ctx, pipe, "pttl", k)
		typ[i] = pipe.Type(ctx, k)
		val[i] = redis.NewStringCmd(ctx, "getrange", k, 0, 63) // a lock value is a time or a token
		_ = pipe.Process(ctx, val[i])
	}
	out, err := f.execFirst(ctx, pipe, timeCmd)
	if err != nil {
		return fetched{}, err
	}
	for i, k := range locks {
		if exists[i].Val() != 0 || pttl[i].Val() == -2 {
			continue // its record exists (shown there), or the lock is gone
		}
		out.records = append(out.records, lockOnly(ks, k, pttl[i].Val(), parseKeyType(typ[i].Val()), val[i].Val(), out.nowMs))
	}
	return out, nil
}

// lockOnly is the record of a lock whose record does not exist: a request
// in flight, or a worker that died holding the lock. val is the head of the
// lock's value (a time or a token).
func lockOnly(ks *Keyspace, key string, pttl int64, typ KeyType, val string, nowMs int64) Record {
	lk := ks.Schema.Lock
	rec, _ := lk.RecordKey(key)
	r := Record{Key: key, Keyspace: ks, State: StateProcessing, RawState: "(lock only)", TTLms: pttl,
		MemoryBytes: -1, AgeMs: -1, ResponseLen: -1, Type: typ, Flags: FlagLockOnly}
	if g, ok := ks.Template.Match(rec); ok {
		r.Groups = g
	} else {
		r.Flags |= FlagTemplateMismatch
	}
	if r.TTLms == -1 {
		r.Flags |= FlagNoTTL | FlagProcessingNoTTL
	}
	if lk.Created != "" {
		if ms, ok := parseTimeMs(val, lk.Created); ok {
			r.AgeMs, r.AgeSource = max(nowMs-ms, 0), AgeField
		}
	}
	if timeout := ks.ProcessingTimeout.Milliseconds(); timeout > 0 && r.AgeMs > timeout {
		r.Flags |= FlagStale
	}
	return r
}

func newTrue() *atomic.Bool {
	b := new(atomic.Bool)
	b.Store(true)
	return b
}
