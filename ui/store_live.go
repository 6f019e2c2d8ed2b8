package ui

import (
	"slices"

	"github.com/idemctl/idemctl/inspect"
)

// keyIndex finds a held record by its key's hash, for the edits of a
// live view: the hashes sorted beside their record indices (12 bytes a
// record), and the records added since in a small map. Built on first
// use; a scan's appends make it stale (built false).
type keyIndex struct {
	h      []uint64
	i      []int32 // beside h; -1: removed
	recent map[uint64]int32
	built  bool
}

// liveEdit is what one batch of live updates changed: the indices whose
// record is new, replaced or moved, re-placed in the view at its end.
type liveEdit struct {
	changed map[int32]bool
	n       int      // edits in this batch
	bits    []uint64 // changed as a bitmap, for the pass over the view
	add     []int32  // the changed records the filter keeps, in order
}

// buildIndex sorts every held record's key hash.
func (s *store) buildIndex() {
	n := s.recs.Len()
	ix := &s.idx
	ix.i = ix.i[:0]
	for i := range n {
		ix.i = append(ix.i, int32(i))
	}
	slices.SortFunc(ix.i, func(a, b int32) int {
		ha, hb := s.keyHash[a], s.keyHash[b]
		if ha < hb {
			return -1
		}
		if ha > hb {
			return 1
		}
		return 0
	})
	ix.h = ix.h[:0]
	for _, i := range ix.i {
		ix.h = append(ix.h, s.keyHash[i])
	}
	ix.recent, ix.built = map[uint64]int32{}, true
}

// lookup is the index of key's record, -1 when none is held.
func (s *store) lookup(key string) int {
	ix := &s.idx
	if !ix.built || len(ix.recent) > 1024+len(ix.h)/8 {
		s.buildIndex()
	}
	h := keyHash(key)
	if i, ok := ix.recent[h]; ok && s.recs.KeyIs(int(i), key) {
		return int(i)
	}
	j, _ := slices.BinarySearch(ix.h, h)
	for ; j < len(ix.h) && ix.h[j] == h; j++ {
		if i := ix.i[j]; i >= 0 && s.recs.KeyIs(int(i), key) {
			return int(i)
		}
	}
	return -1
}

// reindex says record index from now holds the record with hash h at
// index to (to -1: removed).
func (s *store) reindex(h uint64, from, to int32) {
	ix := &s.idx
	if i, ok := ix.recent[h]; ok && i == from {
		if to < 0 {
			delete(ix.recent, h)
		} else {
			ix.recent[h] = to
		}
		return
	}
	j, _ := slices.BinarySearch(ix.h, h)
	for ; j < len(ix.h) && ix.h[j] == h; j++ {
		if ix.i[j] == from {
			ix.i[j] = to
			return
		}
	}
}

// upsert puts r in place of its key's record, or adds it (within the
// store's limit, as a scan does).
func (s *store) upsert(e *liveEdit, r *inspect.Record) {
	e.n++
	if i := s.lookup(r.Key); i >= 0 {
		s.recs.Set(i, r)
		s.seen |= r.Flags
		e.changed[int32(i)] = true
		s.mark(i)
		return
	}
	if s.limit > 0 && s.recs.Len() >= s.limit && !notable(r) {
		s.dropped++
		return
	}
	i := s.recs.Len()
	s.recs.Append([]inspect.Record{*r})
	h := keyHash(r.Key)
	s.keyHash = append(s.keyHash, h)
	s.idx.recent[h] = int32(i)
	s.seen |= r.Flags
	e.changed[int32(i)] = true
	s.mark(i)
}

// remove drops key's record, if held.
func (s *store) remove(e *liveEdit, key string) {
	if i := s.lookup(key); i >= 0 {
		s.removeAt(e, i)
	}
}

// removeAt drops record i: the last record moves into its place.
func (s *store) removeAt(e *liveEdit, i int) {
	e.n++
	s.reindex(s.keyHash[i], int32(i), -1)
	last := s.recs.SwapRemove(i)
	delete(e.changed, int32(last))
	if last != i {
		s.keyHash[i] = s.keyHash[last]
		s.reindex(s.keyHash[i], int32(last), int32(i))
		e.changed[int32(i)] = true
		if s.marks != nil {
			s.setMark(i, s.marked(last))
		}
	}
	s.keyHash = s.keyHash[:last]
}

// finish re-places the changed records in the view, in order, and
// compacts the store once what edits left behind outweighs what it holds.
func (s *store) finish(e *liveEdit) {
	if e.n == 0 {
		return
	}
	n := int32(s.recs.Len())
	s.mergeTail(true) // the tail sorted first: dropping rows keeps the order
	e.bits = slices.Grow(e.bits[:0], int(n)/64+1)[:int(n)/64+1]
	clear(e.bits)
	e.add = e.add[:0]
	for i := range e.changed {
		if i >= n {
			continue
		}
		e.bits[i>>6] |= 1 << (i & 63)
		if s.recs.Match(&s.f, int(i), &s.peek) {
			e.add = append(e.add, i)
		}
	}
	kept := s.view[:0]
	for _, v := range s.view {
		if v < n && e.bits[v>>6]&(1<<(v&63)) == 0 {
			kept = append(kept, v)
		}
	}
	s.view = s.insertSorted(kept, e.add)
	s.all = s.all[:0]
	if g := s.group; g != nil {
		s.setGrouping(g.name)
		s.group.expanding = g.expanding
	}
	if g := s.recs.Garbage(); g > 4096 && g > s.recs.Len() {
		s.recs.Compact()
	}
	clear(e.changed)
	e.n = 0
}

// insertSorted inserts add into the sorted view: each place found by a
// binary search (a few comparisons a record, not one per row), the rows
// between moved by copy.
func (s *store) insertSorted(view, add []int32) []int32 {
	if len(add) == 0 {
		return view
	}
	slices.SortFunc(add, s.less)
	pos := make([]int, len(add))
	for j, a := range add {
		pos[j], _ = slices.BinarySearchFunc(view, a, s.less)
	}
	n := len(view)
	view = slices.Grow(view, len(add))[:n+len(add)]
	hi := n // view[:hi] is still to be moved
	for j := len(add) - 1; j >= 0; j-- {
		copy(view[pos[j]+j+1:], view[pos[j]:hi])
		view[pos[j]+j] = add[j]
		hi = pos[j]
	}
	s.sortedBy = order{s.sortCol, s.sortDesc}
	return view
}

// startMarks begins a re-sync: from now every record upserted is marked,
// and sweep removes the others.
func (s *store) startMarks() {
	s.marks = make([]uint64, (s.recs.Len()+63)/64+1)
}

func (s *store) mark(i int) {
	if s.marks != nil {
		s.setMark(i, true)
	}
}

func (s *store) setMark(i int, on bool) {
	for i>>6 >= len(s.marks) {
		s.marks = append(s.marks, 0)
	}
	if on {
		s.marks[i>>6] |= 1 << (i & 63)
	} else {
		s.marks[i>>6] &^= 1 << (i & 63)
	}
}

func (s *store) marked(i int) bool {
	return i>>6 < len(s.marks) && s.marks[i>>6]&(1<<(i&63)) != 0
}

// sweep ends a re-sync: the records it did not see are gone.
func (s *store) sweep(e *liveEdit) {
	if s.marks == nil {
		return
	}
	for i := s.recs.Len() - 1; i >= 0; i-- { // a moved record was seen already
		if !s.marked(i) {
			s.removeAt(e, i)
		}
	}
	s.marks = nil
}
