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
	// samples bounds MEMORY USAGE's walk (0: MemorySamples). A hash with at
	// most that many fields is measured exactly; a bigger collection gets
	// an estimate, never a walk of every element.
	samples int64
	// script is the server-side read path (nil: the client's pipelines).
	script *scriptPath
}

// MemorySamples is MEMORY USAGE's sample count: above the listpack limit a
// record hash is converted at (128 fields by default), so every hash that
// could be a record is measured whole, and a 10,000,000-field hash costs
// the server 128 steps, not ten million (SAMPLES 0 walks them all).
const MemorySamples = 128

func (f *fetcher) sampleCount() int64 {
	if f.samples > 0 {
		return f.samples
	}
	return MemorySamples
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
// pipeline: the record reader of a live scan, in up to three pipelines
// (batchread.go), whose observations go through the same classify as a
// snapshot's.
func (f *fetcher) fetchAhead(ctx context.Context, keys []string, ahead *scanAhead) (fetched, error) {
	if f.script.on() {
		if out, ok, err := f.fetchScript(ctx, keys, ahead); ok {
			return out, err
		}
	}
	b := newBatchRead(f, keys)
	out, err := b.meta(ctx)
	if err != nil {
		return fetched{}, err
	}
	span, err := b.fields(ctx, ahead)
	if err != nil {
		return fetched{}, err
	}
	out.serverSpan = max(out.serverSpan, span)
	if err := b.rare(ctx); err != nil {
		return fetched{}, err
	}
	out.records = b.assemble(out.nowMs)
	out.vanished = int64(len(keys) - len(out.records)) // every key left is a record
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
	applyFieldTTLs(ttls, fs)
}

// applyFieldTTLs records HPTTL's answer for the fields.
func applyFieldTTLs(ttls []int64, fs *fields) {
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

// ExecPipe runs a pipeline. A server's error answer to one command stays on
// that command (a WRONGTYPE is a finding, not a failure); only a broken
// connection or a cancelled context fails the batch.
func ExecPipe(ctx context.Context, pipe redis.Pipeliner) error {
	if _, err := pipe.Exec(ctx); err != nil && !isServerErr(err) {
		return err
	}
	return nil
}

// ExecTimed runs a pipeline queued behind timeCmd (its TIME) and returns the
// server's clock in milliseconds, the "now" its answers are judged against.
func ExecTimed(ctx context.Context, pipe redis.Pipeliner, timeCmd *redis.TimeCmd) (int64, error) {
	if err := ExecPipe(ctx, pipe); err != nil {
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
	nowMs, err := ExecTimed(ctx, pipe, timeCmd)
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
		out.records = append(out.records, LockOnly(ks, k, pttl[i].Val(), parseKeyType(typ[i].Val()), val[i].Val(), out.nowMs))
	}
	return out, nil
}

// LockOnly is the record of a lock whose record does not exist: a request
// in flight, or a worker that died holding the lock. val is the head of the
// lock's value (a time or a token).
func LockOnly(ks *Keyspace, key string, pttl int64, typ KeyType, val string, nowMs int64) Record {
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
