package ui

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/idemctl/idemctl/inspect"
)

// column identifies a table column, for sorting.
type column int

const (
	colNone column = iota // scan order
	colState
	colAge
	colTTL
	colMemory
	colFingerprint
	colFlags
	colKey
	numSortCols
)

var columnNames = [...]string{"scan order", "state", "age", "ttl", "memory", "fingerprint", "flags", "key"}

// store holds the scanned records and the filtered, sorted view over them.
// The view is a slice of indices, so filtering and sorting never copy records.
type store struct {
	recs     inspect.RecordStore
	view     []int32
	f        inspect.Filter
	sortCol  column
	sortDesc bool
	unsorted int // records appended to the view since the last sort
}

func (s *store) add(b []inspect.Record) {
	first := s.recs.Len()
	s.recs.Append(b)
	for i := first; i < s.recs.Len(); i++ {
		if s.f.Match(s.recs.At(i)) {
			s.view = append(s.view, int32(i))
			s.unsorted++
		}
	}
}

// rebuild recomputes the view after a filter change.
func (s *store) rebuild() {
	s.view = s.view[:0]
	for i := range s.recs.Len() {
		if s.f.Match(s.recs.At(i)) {
			s.view = append(s.view, int32(i))
		}
	}
	s.sort()
}

// sort orders the view by the current column (stable, so ties keep scan order).
func (s *store) sort() {
	s.unsorted = 0
	if s.sortCol == colNone {
		if s.sortDesc {
			slices.Reverse(s.view)
		}
		return
	}
	recs, col, desc := &s.recs, s.sortCol, s.sortDesc
	slices.SortStableFunc(s.view, func(a, b int32) int {
		c := compareBy(col, recs.At(int(a)), recs.At(int(b)))
		if desc {
			return -c
		}
		return c
	})
}

func compareBy(col column, a, b *inspect.Record) int {
	switch col {
	case colState:
		if c := cmp.Compare(statePriority(a), statePriority(b)); c != 0 {
			return c
		}
		return cmp.Compare(b.AgeMs, a.AgeMs) // oldest first within a state
	case colAge:
		return cmp.Compare(a.AgeMs, b.AgeMs)
	case colTTL:
		return cmp.Compare(ttlOrder(a.TTLms), ttlOrder(b.TTLms))
	case colMemory:
		return cmp.Compare(a.MemoryBytes, b.MemoryBytes)
	case colFingerprint:
		return cmp.Compare(a.Fingerprint, b.Fingerprint)
	case colFlags:
		return cmp.Compare(bits.OnesCount32(uint32(a.Flags)), bits.OnesCount32(uint32(b.Flags)))
	case colKey:
		return cmp.Compare(a.Key, b.Key)
	}
	return 0
}

// statePriority puts what needs attention first: stale, then stuck forever,
// then processing, unknown, failed, and finished records last.
func statePriority(r *inspect.Record) int {
	switch {
	case r.Stale():
		return 0
	case r.Flags.Has(inspect.FlagProcessingNoTTL):
		return 1
	case r.State == inspect.StateProcessing:
		return 2
	case r.State == inspect.StateUnknown:
		return 3
	case r.State == inspect.StateFailed:
		return 4
	}
	return 5 + int(r.State)
}

// ttlOrder sorts "no TTL" after every finite TTL.
func ttlOrder(ms int64) int64 {
	if ms == -1 {
		return 1 << 62
	}
	return ms
}

// find returns the view position of key, or -1.
func (s *store) find(key string) int {
	for pos, idx := range s.view {
		if s.recs.At(int(idx)).Key == key {
			return pos
		}
	}
	return -1
}

// at returns the record at a view position.
func (s *store) at(pos int) *inspect.Record {
	if pos < 0 || pos >= len(s.view) {
		return nil
	}
	return s.recs.At(int(s.view[pos]))
}
