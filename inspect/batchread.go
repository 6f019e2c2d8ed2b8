package inspect

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// batchRead is one batch of keys read by a fetcher: what each pipeline
// asked per key, kept until the next pipeline reads it. Phase A (meta)
// asks TTL, memory and, for strings, the value up to the cap; phase B
// (fields) the fields of hashes known to be small and the sizes of the
// others'; phase C (rare) types of keys not of the schema's container and
// the small fields of hashes too big to HMGET blindly.
type batchRead struct {
	f        *fetcher
	ks       *Keyspace
	s        *Schema
	keys     []string
	obs      []observed
	boxed    []any // each key boxed once for all its commands
	fieldSet hmgetFields
	useMem   bool
	isHash   bool
	samples  int64
	// exactBelow: a hash MEMORY USAGE puts under it has at most samples
	// fields (each takes at least 4 bytes), so its size is exact and
	// HLEN need not be asked — of most records, a command a key saved.
	exactBelow int64

	// phase A
	pttl, mem, lockTTL []*redis.IntCmd
	probe              []*redis.IntCmd    // STRLEN, or HSTRLEN(response) of a hash
	getr               []*redis.StringCmd // strings: GETRANGE 0 cap-1
	lens               [][]*redis.IntCmd  // hashes without memory: HSTRLEN per field
	// phase B
	memRetry []*redis.IntCmd
	// hlen is HLEN of the hashes MEMORY USAGE may have sampled (see
	// exactBelow): it says whether the size is exact.
	hlen []*redis.IntCmd
	hm   []*hmget
	fttl []*redis.IntSliceCmd
	// phase C
	typ    []*redis.StatusCmd
	fpHead []*redis.Cmd
}

func newBatchRead(f *fetcher, keys []string) *batchRead {
	n := len(keys)
	s := f.ks.Schema
	b := &batchRead{f: f, ks: f.ks, s: s, keys: keys, obs: make([]observed, n), boxed: make([]any, n),
		fieldSet: newHmgetFields(s), useMem: f.memOn.Load(), isHash: s.Container == ContainerHash, samples: f.sampleCount(),
		pttl: make([]*redis.IntCmd, n), mem: make([]*redis.IntCmd, n), probe: make([]*redis.IntCmd, n),
		getr: make([]*redis.StringCmd, n), lens: make([][]*redis.IntCmd, n)}
	b.exactBelow = 4 * (b.samples + 1)
	if b.isHash && b.useMem {
		b.hlen = make([]*redis.IntCmd, n)
	}
	if s.Lock != nil {
		b.lockTTL = make([]*redis.IntCmd, n)
	}
	for i, k := range keys {
		b.boxed[i] = any(k)
		b.obs[i] = observed{key: k, mem: -1}
		b.obs[i].f.respLen = -1
	}
	return b
}

// meta is phase A. A hash's response length is measured here only when
// the whole record's size is unknown or every response is asked for
// (--response-sizes): otherwise MEMORY USAGE bounds it and phase B
// measures the few that could be large, sparing the server a command per
// key.
func (b *batchRead) meta(ctx context.Context) (fetched, error) {
	pipe := b.f.c.Pipeline()
	timeCmd := pipe.Time(ctx)
	for i, k := range b.keys {
		kb := b.boxed[i]
		b.pttl[i] = intCmd(ctx, pipe, "pttl", kb)
		if b.lockTTL != nil {
			b.lockTTL[i] = intCmd(ctx, pipe, "pttl", b.s.Lock.LockKey(k))
		}
		if b.useMem && b.f.noSamples.Load() {
			b.mem[i] = keyIntCmd(ctx, pipe, "memory", "usage", kb)
		} else if b.useMem {
			b.mem[i] = keyIntCmd(ctx, pipe, "memory", "usage", kb, "samples", b.samples)
		}
		switch {
		case !b.isHash:
			b.probe[i] = intCmd(ctx, pipe, "strlen", kb)
			b.getr[i] = redis.NewStringCmd(ctx, "getrange", kb, 0, b.ks.MaxValue-1)
			_ = pipe.Process(ctx, b.getr[i])
		case !b.useMem:
			b.lens[i] = fieldLens(ctx, pipe, kb, b.s)
			b.probe[i] = respLen(ctx, pipe, kb, b.s)
		case b.f.respAll:
			b.probe[i] = respLen(ctx, pipe, kb, b.s)
		}
	}
	return b.f.execFirst(ctx, pipe, timeCmd)
}

// fields is phase B, which also sends ahead (nil: none); it returns the
// server's time over the pipeline when the fetcher measures it.
func (b *batchRead) fields(ctx context.Context, ahead *scanAhead) (time.Duration, error) {
	pipe := b.f.c.Pipeline()
	var span [2]*redis.TimeCmd
	if b.f.span {
		span[0] = pipe.Time(ctx)
	}
	n := len(b.keys)
	b.memRetry, b.hm, b.fttl = make([]*redis.IntCmd, n), make([]*hmget, n), make([]*redis.IntSliceCmd, n)
	need := false
	for i := range b.keys {
		need = b.readMeta(ctx, pipe, i) || need
	}
	if ahead != nil {
		ahead.cmd = pipe.Scan(ctx, ahead.cursor, ahead.match, ahead.count)
		need = true
	}
	if !need {
		return 0, nil
	}
	if b.f.span {
		span[1] = pipe.Time(ctx)
	}
	if err := ExecPipe(ctx, pipe); err != nil {
		return 0, err
	}
	return timeSpan(span[0], span[1]), nil
}

// readMeta reads key i's phase A replies and queues what phase B asks of
// it; true when it queued anything.
func (b *batchRead) readMeta(ctx context.Context, pipe redis.Pipeliner, i int) bool {
	o := &b.obs[i]
	o.pttl = b.pttl[i].Val()
	if err := b.pttl[i].Err(); err != nil {
		o.pttl = TTLUnknown
	}
	if o.pttl == -2 {
		return false // deleted or expired since SCAN
	}
	if b.lockTTL != nil {
		o.lockPTTL = b.lockTTL[i].Val()
		if b.lockTTL[i].Err() != nil {
			o.lockPTTL = TTLUnknown
		}
	}
	need := b.readMem(ctx, pipe, i)
	if !b.isHash {
		b.readString(i)
		return need
	}
	return b.queueHash(ctx, pipe, i) || need
}

// readMem reads key i's MEMORY USAGE; a server that rejects SAMPLES is
// asked again without it in phase B (true: queued).
func (b *batchRead) readMem(ctx context.Context, pipe redis.Pipeliner, i int) bool {
	o, retry := &b.obs[i], false
	if b.mem[i] != nil {
		if v, err := b.mem[i].Result(); err == nil {
			o.mem = v
		} else if refusedCommand(err) {
			b.f.memOn.Store(false)
		} else if strings.Contains(err.Error(), "syntax error") {
			b.f.noSamples.Store(true)
			b.memRetry[i] = keyIntCmd(ctx, pipe, "memory", "usage", b.boxed[i])
			retry = true
		}
	}
	return retry
}

// readString reads a string record's value, decoded where it is JSON.
func (b *batchRead) readString(i int) {
	o := &b.obs[i]
	o.wrongType = isWrongType(b.probe[i].Err())
	o.memEstimated = o.wrongType && o.mem >= 0 // a collection's size is sampled
	if o.wrongType {
		return
	}
	o.typ = TypeString
	o.valueLen = b.probe[i].Val()
	o.value = b.getr[i].Val()
	decodeStringValue(b.s, o)
}

// decodeStringValue decodes a string record's value where it is JSON.
func decodeStringValue(s *Schema, o *observed) {
	if s.Codec == CodecJSON {
		cut := o.valueLen > int64(len(o.value))
		decodeJSON(s, []byte(o.value), cut, &o.f)
		o.f.truncated = o.f.truncated || cut
		o.value = "" // the fields keep what they need
	}
}

// queueHash queues phase B for hash record i: its fields when it is known
// to be small, else their sizes; its response length where it could be
// large; its fields' TTLs where the key has none.
func (b *batchRead) queueHash(ctx context.Context, pipe redis.Pipeliner, i int) bool {
	o, kb, need := &b.obs[i], b.boxed[i], false
	o.typ = TypeHash // until a command says WRONGTYPE
	// Past the sample count MEMORY USAGE extrapolates: it is then no
	// bound on any one field. Whether it did is HLEN's to say, asked only
	// where the size could hold more fields than were sampled; till it
	// answers, the fields are read by their lengths.
	sampled := b.sampled(i)
	if sampled {
		b.hlen[i] = intCmd(ctx, pipe, "hlen", kb)
		need = true
	}
	switch {
	case b.probe[i] != nil && isWrongType(b.probe[i].Err()):
		o.wrongType = true
		return false
	case !sampled && small(o.mem, b.lens[i], b.ks.MaxValue):
		b.hm[i] = hmgetCmd(ctx, pipe, kb, b.fieldSet, nil, b.ks.MaxValue)
		need = b.hm[i] != nil
	case b.lens[i] == nil:
		b.lens[i] = fieldLens(ctx, pipe, kb, b.s)
		need = true
	}
	if b.probe[i] == nil && (o.mem < 0 || sampled || o.mem > b.ks.LargeResponse) {
		b.probe[i] = respLen(ctx, pipe, kb, b.s)
		need = need || b.probe[i] != nil
	}
	if o.pttl == -1 && !b.f.noFieldTTL.Load() {
		// No key TTL: the fields may carry their own (Redis 7.4+). Asked
		// only of such records, so a keyspace with key TTLs pays nothing.
		b.fttl[i] = fieldTTLCmd(ctx, pipe, kb, b.fieldSet, b.s)
		need = true
	}
	return need
}

// rare is phase C, sent only when some key needs it.
func (b *batchRead) rare(ctx context.Context) error {
	pipe := b.f.c.Pipeline()
	n := len(b.keys)
	b.typ, b.fpHead = make([]*redis.StatusCmd, n), make([]*redis.Cmd, n)
	need := false
	for i := range b.keys {
		o := &b.obs[i]
		if o.pttl == -2 {
			continue
		}
		if b.memRetry[i] != nil && b.memRetry[i].Err() == nil {
			o.mem = b.memRetry[i].Val()
		}
		if b.fttl[i] != nil {
			b.f.readFieldTTLs(b.fttl[i], &o.f)
		}
		if b.isHash && !o.wrongType {
			need = b.readHash(ctx, pipe, i) || need
		}
		if o.wrongType {
			b.typ[i] = redis.NewStatusCmd(ctx, "type", b.boxed[i])
			_ = pipe.Process(ctx, b.typ[i])
			need = true
		}
	}
	if !need {
		return nil
	}
	return ExecPipe(ctx, pipe)
}

// readHash reads hash record i's phase B replies and queues, for one too
// big to HMGET blindly, the fields under the cap (and a long
// fingerprint's head); true when it queued anything.
func (b *batchRead) readHash(ctx context.Context, pipe redis.Pipeliner, i int) bool {
	o, probe, lens := &b.obs[i], b.probe[i], b.lens[i]
	if b.sampled(i) {
		b.readHLen(i)
	}
	if probe != nil && probe.Err() == nil && probe.Val() > 0 && !b.respLenOnlyForHLen(i) {
		o.f.respLen = probe.Val()
	}
	if b.hm[i] != nil {
		b.hm[i].read(&o.f, o)
	}
	// hm's read may already have said WRONGTYPE
	o.wrongType = o.wrongType || (probe != nil && isWrongType(probe.Err())) || anyWrongType(lens)
	if b.hm[i] != nil || lens == nil || o.wrongType {
		return false
	}
	need := false
	b.hm[i] = hmgetCmd(ctx, pipe, b.boxed[i], b.fieldSet, lens, b.ks.MaxValue)
	o.f.truncated = anyOver(lens, b.ks.MaxValue)
	if l := lens[slotFingerprint]; l != nil && l.Val() > b.ks.MaxValue {
		o.f.fpLong = true
		if l.Val() <= fpPrefixMax {
			b.fpHead[i] = fpPrefixCmd(ctx, pipe, b.boxed[i], b.s.Fingerprint)
			need = true
		}
	}
	if b.hm[i] != nil {
		need = true
		b.hm[i].late = true
	}
	return need
}

// sampled reports whether MEMORY USAGE may have sampled hash record i
// (read in phase A): its size could hold more fields than were sampled.
func (b *batchRead) sampled(i int) bool {
	return b.hlen != nil && b.mem[i] != nil && b.mem[i].Err() == nil && b.mem[i].Val() >= b.exactBelow
}

// readHLen reads the HLEN asked of hash record i, whose size may have
// been sampled.
func (b *batchRead) readHLen(i int) {
	o, h := &b.obs[i], b.hlen[i]
	switch {
	case isWrongType(h.Err()):
		o.wrongType = true
	case h.Err() == nil && h.Val() > b.samples:
		o.memEstimated = true
	}
}

// respLenOnlyForHLen reports whether hash record i's response length was
// asked only because HLEN had not yet said its size was exact, and HLEN
// then said it was: the length is then no part of the record (the script
// path never asks it).
func (b *batchRead) respLenOnlyForHLen(i int) bool {
	o := &b.obs[i]
	return b.sampled(i) && !o.memEstimated && !b.f.respAll && o.mem <= b.ks.LargeResponse
}

// assemble classifies what the phases read, at the server's time nowMs:
// a record for every key but those gone since SCAN.
func (b *batchRead) assemble(nowMs int64) []Record {
	recs := make([]Record, 0, len(b.keys))
	for i := range b.keys {
		o := &b.obs[i]
		if t := b.typ[i]; t != nil {
			o.typ = parseKeyType(t.Val())
			o.memEstimated = o.mem >= 0 // another type: a collection's size is sampled
			if o.typ == TypeUnknown || t.Val() == "none" {
				o.pttl = -2
			}
			if o.typ == TypeString {
				o.memEstimated = false // a string's size is never sampled
			}
		}
		if o.pttl == -2 {
			continue
		}
		if b.hm[i] != nil && b.hm[i].late {
			b.hm[i].read(&o.f, o)
		}
		if b.fpHead[i] != nil {
			if v, err := b.fpHead[i].Text(); err == nil && v != "" {
				o.f.val[slotFingerprint], o.f.has[slotFingerprint] = v, true
			}
		}
		recs = append(recs, classify(b.ks, o, nowMs))
	}
	return recs
}
