package inspect

import (
	"strconv"
	"strings"

	"github.com/idemctl/idemctl/inspect/keytemplate"
)

// observed is what the pipeline learned about one key.
type observed struct {
	key  string
	pttl int64 // ms; -1 none; -2 vanished
	mem  int64 // -1 unknown
	// memEstimated: MEMORY USAGE sampled a big collection rather than
	// walking it, so mem is an estimate (and no bound on any one field).
	memEstimated bool
	typ          KeyType
	wrongType    bool
	f            fields
	value        string // string containers: the value, up to the read cap
	valueLen     int64  // string containers: STRLEN
	lockPTTL     int64  // companion lock's PTTL, when the schema has one
}

// classify turns one key's observations into a Record, using the Redis
// server's clock (nowMs) for every age.
func classify(ks *Keyspace, o *observed, nowMs int64) Record { return classifyIn(ks, o, nowMs, nil) }

// classifyIn is classify with the record's captures carved from slab (nil:
// their own allocation): a snapshot read classifies a million records a
// second, and Groups were an allocation each.
func classifyIn(ks *Keyspace, o *observed, nowMs int64, slab *keytemplate.Slab) Record {
	s := ks.Schema
	r := Record{
		Key:         o.key,
		Keyspace:    ks,
		TTLms:       o.pttl,
		MemoryBytes: o.mem,
		AgeMs:       -1,
		ResponseLen: -1,
		Type:        o.typ,
	}
	if o.memEstimated {
		r.Flags |= FlagMemoryEstimated
	}
	if g, ok := ks.Template.MatchIn(o.key, slab); ok {
		r.Groups = g
	} else {
		r.Flags |= FlagTemplateMismatch
	}
	if r.TTLms == -1 && o.f.fieldTTLRead {
		// No key TTL, but hash-field TTLs (Redis 7.4+): the record ends,
		// as a record, when its first field does.
		r.TTLms = o.f.fieldTTL
		if o.f.fieldTTLMixed {
			r.Flags |= FlagFieldTTLMixed
		}
	}
	if r.TTLms == -1 {
		r.Flags |= FlagNoTTL
	}
	if o.wrongType {
		// not a record of this schema: its state is not "unknown", it has none
		r.Flags |= FlagWrongType | FlagUndecoded
		r.State = StateUnknown
		return r
	}
	if s.Lock != nil {
		r.LockTTLms = o.lockPTTL
	}
	f := &o.f
	if s.Codec == CodecRaw {
		decodeRaw(s, o, f)
	}
	if f.decodeErr {
		r.Flags |= FlagDecodeError
	}
	if f.truncated {
		r.Flags |= FlagTruncated
	}
	if n := len(s.Requires); n > 0 && !f.truncated && f.required != 1<<n-1 {
		// another format under the same pattern: nothing of it is this schema's
		r.Flags |= FlagUndecoded
		return r
	}
	classifyFields(ks, &r, f, nowMs)
	return r
}

// classifyFields derives state, fingerprint, status, response and age from
// the fields read.
func classifyFields(ks *Keyspace, r *Record, f *fields, nowMs int64) {
	s := ks.Schema
	st, raw, known := s.mapState(f.val[slotState], f.has[slotState])
	if st == StateSucceeded && f.has[slotFailure] && f.val[slotFailure] != "" {
		st = StateFailed // a stored failure, replayed as such
	}
	r.State, r.RawState = st, capString(raw, 128)
	switch {
	case known:
	case f.has[slotState] && f.val[slotState] != "" || s.Codec == CodecRaw && !f.decodeErr:
		r.Flags |= FlagUnknownState // a stored state the schema does not map (a marker's value is its state)
	default:
		r.Flags |= FlagUndecoded // no state at all, and the schema gives none for that
	}
	if s.Fingerprint != "" {
		if f.has[slotFingerprint] && f.val[slotFingerprint] != "" {
			r.Fingerprint = capString(f.val[slotFingerprint], fpKeep)
			f.fpLong = f.fpLong || len(f.val[slotFingerprint]) > fpKeep
		} else if !s.FingerprintOptional && !f.fpLong {
			r.Flags |= FlagMissingFingerprint
		}
		if f.fpLong {
			r.Flags |= FlagLongFingerprint
		}
	}
	if f.decodeErr && !f.has[slotState] && !f.has[slotFingerprint] {
		r.Flags |= FlagUndecoded // not this format at all
	}
	if f.has[slotStatus] && f.val[slotStatus] != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(f.val[slotStatus]), 10, 32)
		if err != nil || n < 0 {
			r.Flags |= FlagDecodeError
		} else {
			r.Status = int32(n)
		}
	}
	r.ResponseLen = f.respLen
	if r.ResponseLen > ks.LargeResponse {
		r.Flags |= FlagLargeResponse
	}
	if s.Expires != nil && f.has[slotExpires] && f.val[slotExpires] != "" {
		if ms, ok := parseTimeMs(f.val[slotExpires], s.Expires.Unit); !ok {
			r.Flags |= FlagDecodeError
		} else if ms < nowMs {
			r.State = StateExpired // derived: the library treats it as gone
		}
	}
	ageAndStale(ks, r, f, nowMs)
}

// decodeRaw reads a bare marker: the value is the state; a value the schema
// does not list is (by the schema's "otherwise") the stored response.
func decodeRaw(s *Schema, o *observed, f *fields) {
	f.respLen = -1
	if o.valueLen > int64(len(o.value)) {
		// Markers are short; a cut value is a response, never a sentinel.
		f.val[slotState], f.has[slotState] = "", o.valueLen > 0
		f.respLen = o.valueLen
		return
	}
	f.val[slotState], f.has[slotState] = o.value, o.value != ""
	if _, ok := s.exact[o.value]; ok {
		return
	}
	if _, ok := s.folded[strings.ToLower(o.value)]; ok {
		return
	}
	if o.value != "" {
		f.respLen = int64(len(o.value))
	}
}

// ageAndStale derives the age (a stored creation time, a stored deadline, or
// the reserve TTL minus the remaining TTL) and the stale flag.
func ageAndStale(ks *Keyspace, r *Record, f *fields, nowMs int64) {
	s := ks.Schema
	timeout := ks.ProcessingTimeout.Milliseconds()
	if s.Deadline != nil && f.has[slotDeadline] && f.val[slotDeadline] != "" {
		if ms, ok := parseTimeMs(f.val[slotDeadline], s.Deadline.Unit); ok {
			r.DeadlineMs = ms
		} else {
			r.Flags |= FlagDecodeError
		}
	}
	// A library that computes EX from whole seconds (Powertools: its
	// expiration minus the current second) may set one second more than
	// the reserve TTL: such a record is new, not of unknown age.
	const exRounding = 1000
	ttlAge := s.AgeFromTTL && r.State == StateProcessing && ks.ReserveTTL > 0 && r.TTLms > 0 && r.TTLms <= ks.ReserveTTL.Milliseconds()+exRounding
	switch {
	case s.Created != nil && f.has[slotCreated] && f.val[slotCreated] != "":
		if ms, ok := parseTimeMs(f.val[slotCreated], s.Created.Unit); ok {
			r.AgeMs, r.AgeSource = max(nowMs-ms, 0), AgeField
		} else {
			r.Flags |= FlagDecodeError
		}
	case ttlAge:
		// The reserve step set the TTL and nothing has touched it since.
		r.AgeMs, r.AgeSource = max(ks.ReserveTTL.Milliseconds()-r.TTLms, 0), AgeTTL
	case r.DeadlineMs > 0 && timeout > 0:
		r.AgeMs, r.AgeSource = max(timeout-(r.DeadlineMs-nowMs), 0), AgeDeadline
	}
	if r.State != StateProcessing {
		return
	}
	if r.TTLms == -1 {
		r.Flags |= FlagProcessingNoTTL
	}
	stale := false
	if r.DeadlineMs > 0 {
		stale = nowMs > r.DeadlineMs
	} else if timeout > 0 && r.AgeMs >= 0 {
		stale = r.AgeMs > timeout
	}
	if s.Lock != nil && s.Lock.StaleIfMissing && r.LockTTLms == LockAbsent {
		r.Flags |= FlagLockMissing
		stale = true // the worker's lock expired or was never renewed
	}
	if stale {
		r.Flags |= FlagStale
	}
}

// capString bounds a string taken from Redis for display and output.
func capString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.Clone(s[:n]) // do not pin the whole reply in memory
}
