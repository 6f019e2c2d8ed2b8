package ui

import (
	"cmp"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
	"github.com/idemctl/idemctl/inspect/recordstore"
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
	recs     recordstore.Store
	view     []int32
	f        filter.Filter
	sortCol  column
	sortDesc bool
	unsorted int           // records appended to the view since the last sort
	edits    int           // filter or sort changes: a refresh started before one must redo its view
	scratch  []int32       // merge buffer, reused
	seen     inspect.Flags // every flag some record has: f cycles through these only
	group    *grouping     // the view aggregated by a capture; nil: not grouped
	// sortedBy is the order the view was last sorted in. all is every
	// record in the order allBy, kept from a view that held them all: a
	// filter then walks it instead of sorting what it keeps (at 10M
	// records the sort, not the match, was most of a filter's time).
	sortedBy order
	all      []int32
	allBy    order
	peek     recordstore.Peeker // scratch for reading records on the UI goroutine
	// keyHash is each record's key hashed (64-bit FNV-1a), by record
	// index: rows the sort column ties are ordered by it, an order a
	// refresh keeps, without decoding two keys a comparison.
	keyHash []uint64
	// limit bounds the records held (Options.MaxRecords): past it only
	// the ones that need attention are kept, and dropped counts the rest.
	limit   int
	dropped int64
	// idx and marks serve a live view's edits (store_live.go).
	idx   keyIndex
	marks []uint64 // records seen by the running re-sync; nil: none runs
}

// order is a sort column and direction.
type order struct {
	col  column
	desc bool
}

// nextFlag is the flag filter after cur that some record has, in the
// order of inspect.AllFlags, or 0 (no flag filter) after the last.
func (s *store) nextFlag(cur inspect.Flags) inspect.Flags {
	passed := cur == 0
	for _, fi := range inspect.AllFlags() {
		if passed && s.seen&fi.Flag != 0 {
			return fi.Flag
		}
		passed = passed || fi.Flag == cur
	}
	return 0
}

// newStore is an empty store in the default order: what needs attention
// (stale, then stuck) first.
func newStore(limit int) *store {
	return &store{sortCol: colState, sortedBy: order{col: colState}, limit: limit}
}

// DefaultMaxRecords is what 1.5 GB holds at the 124 B a record the TUI
// was measured to take at 10M records (docs/performance.md).
const DefaultMaxRecords = 12_000_000

// notable: a record the table keeps past its limit.
func notable(r *inspect.Record) bool {
	return r.State == inspect.StateProcessing || r.Stale() || r.Flags&^inspect.FlagMemoryEstimated != 0
}

func (s *store) add(b []inspect.Record) {
	if room := s.limit - s.recs.Len(); s.limit > 0 && len(b) > room {
		kept := b[:max(room, 0):max(room, 0)]
		for i := max(room, 0); i < len(b); i++ {
			if notable(&b[i]) {
				kept = append(kept, b[i])
			} else {
				s.dropped++
			}
		}
		b = kept
	}
	first := s.recs.Len()
	s.idx.built = false
	s.recs.Append(b)
	for i := range b {
		s.keyHash = append(s.keyHash, keyHash(b[i].Key))
	}
	for i := first; i < s.recs.Len(); i++ {
		s.seen |= s.recs.Flags(i)
		if s.recs.Match(&s.f, i, &s.peek) {
			s.view = append(s.view, int32(i))
			s.unsorted++
			if s.group != nil {
				s.group.add(s.recs.Peek(i, &s.peek))
			}
		}
	}
}

// rebuild recomputes the view after a filter or sort change.
func (s *store) rebuild() {
	s.edits++
	now := order{s.sortCol, s.sortDesc}
	if n := s.recs.Len(); len(s.view) == n && n > 0 && s.unsorted == 0 && s.sortedBy == now {
		s.all, s.allBy = append(s.all[:0], s.view...), now // every record, in order
	}
	if len(s.all) == s.recs.Len() && len(s.all) > 0 && s.allBy == now {
		// Match in record order (memory read in sequence), then keep the
		// matches in the full order from a bitmap that stays in cache.
		kept := s.matching()
		s.view = s.view[:0]
		for _, i := range s.all {
			if kept[i>>6]&(1<<(i&63)) != 0 {
				s.view = append(s.view, i)
			}
		}
		s.unsorted = 0
	} else {
		s.view = s.view[:0]
		for i := range s.recs.Len() {
			if s.recs.Match(&s.f, i, &s.peek) {
				s.view = append(s.view, int32(i))
			}
		}
		s.sort()
	}
	if g := s.group; g != nil {
		s.setGrouping(g.name)
		s.group.expanding = g.expanding
	}
}

// matching is a bitmap of the records the filter keeps. Large stores are
// matched in parallel, each worker on its own words of the bitmap.
func (s *store) matching() []uint64 {
	n := s.recs.Len()
	kept := make([]uint64, (n+63)/64)
	workers := 1
	if n >= parallelMatch {
		workers = min(runtime.GOMAXPROCS(0), 4)
	}
	per := (len(kept) + workers - 1) / workers * 64 // records per worker, whole words
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			var p recordstore.Peeker
			for i := lo; i < hi; i++ {
				if s.recs.Match(&s.f, i, &p) {
					kept[i>>6] |= 1 << (i & 63)
				}
			}
		}(lo, min(lo+per, n))
	}
	wg.Wait()
	return kept
}

// parallelMatch is the store size from which a filter is matched on
// several cores.
const parallelMatch = 1 << 16

// sort orders the view by the current column.
func (s *store) sort() {
	s.unsorted, s.sortedBy = 0, order{s.sortCol, s.sortDesc}
	slices.SortFunc(s.view, s.less) // a total order: no stability needed
}

// less is the view's order over record indices; scan order is index order.
// Sorted by a column it is a total order: rows the column ties are ordered
// by their key's hash, whatever the direction, so a refresh, which reads
// the keys in another order, never swaps them (the index last orders only
// the same key read twice: 64-bit hashes of distinct keys do not meet).
func (s *store) less(a, b int32) int {
	if s.sortCol == colNone {
		if s.sortDesc {
			return cmp.Compare(b, a)
		}
		return cmp.Compare(a, b)
	}
	c := compareBy(s.sortCol, &s.recs, int(a), int(b))
	if s.sortDesc {
		c = -c
	}
	if c == 0 && s.sortCol != colKey {
		c = cmp.Compare(s.keyHash[a], s.keyHash[b])
	}
	return cmp.Or(c, cmp.Compare(a, b))
}

// mergeTail sorts the records appended since the last sort and merges them
// into the sorted prefix: O(n) instead of a full O(n log n) sort. It waits
// until the tail is an eighth of the prefix (or the view is small), so a
// long scan does O(n) work a bounded number of times, not once per batch.
// Until then the tail shows after the sorted rows. It reports whether any
// record moved before one that was already shown.
func (s *store) mergeTail(force bool) bool {
	k := s.unsorted
	if k == 0 {
		return false
	}
	n := len(s.view)
	head := n - k
	if !force && head >= 50_000 && k < head/8 {
		return false
	}
	s.unsorted, s.sortedBy = 0, order{s.sortCol, s.sortDesc}
	tail := s.view[head:]
	slices.SortFunc(tail, s.less)
	if head == 0 || s.less(s.view[head-1], tail[0]) <= 0 {
		return false // already in order: the rows shown keep their places
	}
	s.scratch = append(s.scratch[:0], s.view[:head]...)
	// Writing at i never passes the tail element still to be read (i ≤ head+j).
	i, a, j := 0, 0, 0
	for a < len(s.scratch) && j < k {
		if s.less(s.scratch[a], tail[j]) <= 0 { // ties keep the earlier record first
			s.view[i] = s.scratch[a]
			a++
		} else {
			s.view[i] = tail[j]
			j++
		}
		i++
	}
	for ; a < len(s.scratch); a++ {
		s.view[i] = s.scratch[a]
		i++
	}
	return true
}

// compareBy orders records a and b of rs by a column, on the store's
// compact form: a sort of ten million records decodes none of them.
func compareBy(col column, rs *recordstore.Store, a, b int) int {
	switch col {
	case colState:
		if c := cmp.Compare(statePriority(rs.State(a), rs.Flags(a)), statePriority(rs.State(b), rs.Flags(b))); c != 0 {
			return c
		}
		return cmp.Compare(rs.AgeMs(b), rs.AgeMs(a)) // oldest first within a state
	case colAge:
		return cmp.Compare(rs.AgeMs(a), rs.AgeMs(b))
	case colTTL:
		return cmp.Compare(ttlOrder(rs.TTLms(a)), ttlOrder(rs.TTLms(b)))
	case colMemory:
		return cmp.Compare(rs.MemoryBytes(a), rs.MemoryBytes(b))
	case colFingerprint:
		return rs.CompareFingerprints(a, b)
	case colFlags:
		return cmp.Compare(bits.OnesCount32(uint32(rs.Flags(a))), bits.OnesCount32(uint32(rs.Flags(b))))
	case colKey:
		return rs.CompareKeys(a, b)
	}
	return 0
}

// statePriority puts what needs attention first: stale, then stuck forever,
// then processing, unknown, failed, and finished records last.
func statePriority(st inspect.State, f inspect.Flags) int {
	switch {
	case f.Has(inspect.FlagStale):
		return 0
	case f.Has(inspect.FlagProcessingNoTTL):
		return 1
	case st == inspect.StateProcessing:
		return 2
	case st == inspect.StateUnknown:
		return 3
	case st == inspect.StateFailed:
		return 4
	}
	return 5 + int(st)
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
		if s.recs.KeyIs(int(idx), key) {
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

// keyHash is 64-bit FNV-1a over a key: the tie order of the view.
func keyHash(k string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(k); i++ {
		h ^= uint64(k[i])
		h *= 1099511628211
	}
	return h
}
