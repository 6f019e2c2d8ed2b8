package inspect

import (
	"strings"
	"unsafe"
)

// RecordStore holds records for a long-lived reader (the TUI) at a small,
// flat cost per record. Records sit in fixed-size chunks, so growth never
// copies a million records or leaves a quarter of a slice unused; each
// batch's strings are copied into one shared string, so a record pins no
// reply buffer and pays no allocator rounding per string; raw states are
// interned. Append-only: indices stay valid until Reset.
type RecordStore struct {
	chunks [][]Record
	n      int
	states map[string]string // interned raw states, bounded
}

const (
	chunkShift = 12 // 4,096 records (576 KiB) per chunk
	chunkSize  = 1 << chunkShift
	maxStates  = 256     // raw states interned; beyond that they join the batch's string
	bigString  = 4 << 10 // longer strings keep their own allocation
)

// Len is the number of records held.
func (s *RecordStore) Len() int { return s.n }

// At returns the i-th record in append order. Use the pointer before the
// next Append: the first chunk still grows by reallocation.
func (s *RecordStore) At(i int) *Record { return &s.chunks[i>>chunkShift][i&(chunkSize-1)] }

// Reset drops every record.
func (s *RecordStore) Reset() { *s = RecordStore{} }

// Append copies a batch in. The records' strings no longer alias b's.
func (s *RecordStore) Append(b []Record) {
	if len(b) == 0 {
		return
	}
	if s.states == nil {
		s.states = map[string]string{}
	}
	// One string for the batch's keys, fingerprints and uninterned raw
	// states, written in this order; one slab for its template captures.
	states := make([]string, len(b))
	size, ngroups := 0, 0
	for i := range b {
		r := &b[i]
		var ok bool
		if states[i], ok = s.intern(r.RawState); !ok {
			size += pooled(r.RawState)
		}
		size += pooled(r.Key) + pooled(r.Fingerprint)
		ngroups += len(r.Groups)
	}
	var sb strings.Builder
	sb.Grow(size)
	for i := range b {
		sb.WriteString(poolPart(b[i].Key))
		sb.WriteString(poolPart(b[i].Fingerprint))
		if states[i] == "" {
			sb.WriteString(poolPart(b[i].RawState))
		}
	}
	pool, off := sb.String(), 0
	slab := make([]string, ngroups)
	for i := range b {
		r := b[i]
		key := r.Key
		r.Key, off = take(pool, off, r.Key)
		r.Fingerprint, off = take(pool, off, r.Fingerprint)
		if states[i] != "" {
			r.RawState = states[i]
		} else {
			r.RawState, off = take(pool, off, r.RawState)
		}
		if r.Groups != nil {
			g := slab[:len(r.Groups):len(r.Groups)]
			slab = slab[len(r.Groups):]
			for j, v := range r.Groups {
				g[j] = rebase(v, key, r.Key)
			}
			r.Groups = g
		}
		s.push(r)
	}
}

func (s *RecordStore) push(r Record) {
	if s.n&(chunkSize-1) == 0 { // the last chunk is full, or there is none
		// The first chunk grows with append (small scans stay small); the
		// others are made whole.
		c := 0
		if len(s.chunks) > 0 {
			c = chunkSize
		}
		s.chunks = append(s.chunks, make([]Record, 0, c))
	}
	last := len(s.chunks) - 1
	s.chunks[last] = append(s.chunks[last], r)
	s.n++
}

// intern returns the shared copy of a raw state, for the few distinct
// values a keyspace has; false once the table is full.
func (s *RecordStore) intern(v string) (string, bool) {
	if v == "" {
		return "", true
	}
	if h, ok := s.states[v]; ok {
		return h, true
	}
	if len(s.states) < maxStates {
		h := strings.Clone(v)
		s.states[h] = h
		return h, true
	}
	return "", false
}

// pooled is how many bytes v takes in a batch's string: long values keep an
// allocation of their own so one 64 KB key does not pin its batch's string.
func pooled(v string) int {
	if len(v) > bigString {
		return 0
	}
	return len(v)
}

func poolPart(v string) string { return v[:pooled(v)] }

// take returns v's copy in pool at off and the offset after it, or a clone
// of v if it was not pooled.
func take(pool string, off int, v string) (string, int) {
	if v == "" {
		return "", off
	}
	if pooled(v) == 0 {
		return strings.Clone(v), off
	}
	return pool[off : off+len(v)], off + len(v)
}

// rebase moves a capture that aliases oldKey onto the same bytes of newKey;
// anything else is cloned.
func rebase(g, oldKey, newKey string) string {
	if len(g) == 0 {
		return ""
	}
	off := int(uintptr(unsafe.Pointer(unsafe.StringData(g))) - uintptr(unsafe.Pointer(unsafe.StringData(oldKey))))
	if off >= 0 && off+len(g) <= len(oldKey) && len(oldKey) == len(newKey) {
		return newKey[off : off+len(g)]
	}
	return strings.Clone(g)
}

// Capacity is how many records the allocated chunks can hold.
func (s *RecordStore) Capacity() int {
	n := 0
	for _, c := range s.chunks {
		n += cap(c)
	}
	return n
}
