package inspect

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"

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
}

type fetched struct {
	records  []Record
	nowMs    int64
	vanished int64
}

func (f *fetcher) fetch(ctx context.Context, keys []string) (fetched, error) {
	ks, s := f.ks, f.ks.Schema
	obs := make([]observed, len(keys))
	useMem := f.memOn.Load()
	isHash := s.Container == ContainerHash

	// Phase A: TTL, memory, and the cheap O(1) commands that reveal the type
	// and bound the value sizes.
	pipe := f.c.Pipeline()
	timeCmd := pipe.Time(ctx)
	pttl := make([]*redis.IntCmd, len(keys))
	mem := make([]*redis.IntCmd, len(keys))
	probe := make([]*redis.IntCmd, len(keys))   // STRLEN, HSTRLEN(response) or HLEN
	getr := make([]*redis.StringCmd, len(keys)) // strings: GETRANGE 0 cap-1
	lens := make([][]*redis.IntCmd, len(keys))  // hashes without memory: HSTRLEN per field
	var lockTTL []*redis.IntCmd
	if s.Lock != nil {
		lockTTL = make([]*redis.IntCmd, len(keys))
	}
	for i, k := range keys {
		obs[i] = observed{key: k, mem: -1}
		pttl[i] = intCmd(ctx, pipe, "pttl", k)
		if lockTTL != nil {
			lockTTL[i] = intCmd(ctx, pipe, "pttl", s.Lock.LockKey(k))
		}
		if useMem && f.noSamples.Load() {
			mem[i] = redis.NewIntCmd(ctx, "memory", "usage", k)
			mem[i].SetFirstKeyPos(2)
			_ = pipe.Process(ctx, mem[i])
		} else if useMem {
			mem[i] = redis.NewIntCmd(ctx, "memory", "usage", k, "samples", 0)
			mem[i].SetFirstKeyPos(2)
			_ = pipe.Process(ctx, mem[i])
		}
		switch {
		case !isHash:
			probe[i] = intCmd(ctx, pipe, "strlen", k)
			getr[i] = redis.NewStringCmd(ctx, "getrange", k, 0, ks.MaxValue-1)
			_ = pipe.Process(ctx, getr[i])
		case s.Response != "":
			probe[i] = intCmd(ctx, pipe, "hstrlen", k, s.Response)
		default:
			probe[i] = intCmd(ctx, pipe, "hlen", k)
		}
		if isHash && !useMem {
			lens[i] = fieldLens(ctx, pipe, k, s)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !isServerErr(err) {
		return fetched{}, err
	}
	now, err := timeCmd.Result()
	if err != nil {
		return fetched{}, err
	}
	out := fetched{nowMs: now.UnixMilli()}

	// Phase B: types of misfits, and the fields of hashes known to be small.
	pipe = f.c.Pipeline()
	typ := make([]*redis.StatusCmd, len(keys))
	memRetry := make([]*redis.IntCmd, len(keys))
	hm := make([]*hmget, len(keys))
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
				memRetry[i] = redis.NewIntCmd(ctx, "memory", "usage", keys[i])
				memRetry[i].SetFirstKeyPos(2)
				_ = pipe.Process(ctx, memRetry[i])
				needB = true
			}
		}
		perr := probe[i].Err()
		if isWrongType(perr) {
			o.wrongType = true
			typ[i] = redis.NewStatusCmd(ctx, "type", keys[i])
			_ = pipe.Process(ctx, typ[i])
			needB = true
			continue
		}
		if isHash {
			o.typ = TypeHash
			o.f.respLen = -1
			if s.Response != "" && perr == nil && probe[i].Val() > 0 {
				o.f.respLen = probe[i].Val()
			}
			if small(o.mem, lens[i], ks.MaxValue) {
				hm[i] = hmgetCmd(ctx, pipe, keys[i], s, nil, ks.MaxValue)
				needB = needB || hm[i] != nil
			} else if lens[i] == nil {
				lens[i] = fieldLens(ctx, pipe, keys[i], s)
				needB = true
			}
			continue
		}
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
	if needB {
		if _, err := pipe.Exec(ctx); err != nil && !isServerErr(err) {
			return fetched{}, err
		}
	}

	// Phase C, rare: hashes too big to HMGET blindly get only their small fields.
	pipe = f.c.Pipeline()
	needC := false
	for i := range keys {
		o := &obs[i]
		if memRetry[i] != nil && memRetry[i].Err() == nil {
			o.mem = memRetry[i].Val()
		}
		if typ[i] != nil {
			o.typ = parseKeyType(typ[i].Val())
			if o.typ == TypeUnknown || typ[i].Val() == "none" {
				o.pttl = -2
			}
		}
		if hm[i] == nil && lens[i] != nil && !o.wrongType && o.pttl != -2 {
			hm[i] = hmgetCmd(ctx, pipe, keys[i], s, lens[i], ks.MaxValue)
			needC = needC || hm[i] != nil
			o.f.truncated = anyOver(lens[i], ks.MaxValue)
		}
	}
	if needC {
		if _, err := pipe.Exec(ctx); err != nil && !isServerErr(err) {
			return fetched{}, err
		}
	}

	out.records = make([]Record, 0, len(keys))
	for i := range keys {
		o := &obs[i]
		if o.pttl == -2 {
			out.vanished++
			continue
		}
		if hm[i] != nil {
			hm[i].read(&o.f, o)
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

// fieldLens queues HSTRLEN for each mapped field, in slot order.
func fieldLens(ctx context.Context, p redis.Pipeliner, key string, s *Schema) []*redis.IntCmd {
	out := make([]*redis.IntCmd, numSlots)
	for slot, name := range s.fields {
		if name != "" {
			out[slot] = intCmd(ctx, p, "hstrlen", key, name)
		}
	}
	return out
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

// hmget is a queued HMGET and the field slots its replies fill, in order.
type hmget struct {
	cmd   *redis.SliceCmd
	slots []int
}

// hmgetCmd queues HMGET of the mapped fields; with lens, only those under the cap.
func hmgetCmd(ctx context.Context, p redis.Pipeliner, key string, s *Schema, lens []*redis.IntCmd, limit int64) *hmget {
	args := make([]any, 0, 2+numSlots)
	args = append(args, "hmget", key)
	h := &hmget{slots: make([]int, 0, numSlots)}
	for slot, name := range s.fields {
		if name == "" || lens != nil && lens[slot] != nil && lens[slot].Val() > limit {
			continue
		}
		args = append(args, name)
		h.slots = append(h.slots, slot)
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
	if _, err := pipe.Exec(ctx); err != nil && !isServerErr(err) {
		return fetched{}, err
	}
	now, err := timeCmd.Result()
	if err != nil {
		return fetched{}, err
	}
	out := fetched{nowMs: now.UnixMilli()}
	timeout := ks.ProcessingTimeout.Milliseconds()
	for i, k := range locks {
		if exists[i].Val() != 0 || pttl[i].Val() == -2 {
			continue // its record exists (shown there), or the lock is gone
		}
		rec, _ := lk.RecordKey(k)
		r := Record{Key: k, Keyspace: ks, State: StateProcessing, RawState: "(lock only)", TTLms: pttl[i].Val(),
			MemoryBytes: -1, AgeMs: -1, ResponseLen: -1, Type: parseKeyType(typ[i].Val()), Flags: FlagLockOnly}
		if g, ok := ks.Template.Match(rec); ok {
			r.Groups = g
		} else {
			r.Flags |= FlagTemplateMismatch
		}
		if r.TTLms == -1 {
			r.Flags |= FlagNoTTL | FlagProcessingNoTTL
		}
		if lk.Created != "" {
			if ms, ok := parseTimeMs(val[i].Val(), lk.Created); ok {
				r.AgeMs, r.AgeSource = max(out.nowMs-ms, 0), AgeField
			}
		}
		if timeout > 0 && r.AgeMs > timeout {
			r.Flags |= FlagStale
		}
		out.records = append(out.records, r)
	}
	return out, nil
}

func newTrue() *atomic.Bool {
	b := new(atomic.Bool)
	b.Store(true)
	return b
}
