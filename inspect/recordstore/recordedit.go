package recordstore

import (
	"github.com/idemctl/idemctl/inspect"
)

// Set replaces record i with r, for a view kept live (the TUI following
// the keyspace). The old record's bytes stay in the arena until Compact;
// Garbage counts the records so left behind.
func (s *Store) Set(i int, r *inspect.Record) {
	sl := s.slot(i)
	if sl.bits&heldWide != 0 {
		delete(s.wide, int32(i))
	}
	*sl = slot{}
	s.fill(i, r, sl)
	s.garbage++
}

// SwapRemove removes record i by moving the last record into its place
// (the last index then no longer exists). It returns the index the moved
// record had, i itself when i was the last.
func (s *Store) SwapRemove(i int) int {
	last := s.n - 1
	if sl := s.slot(i); sl.bits&heldWide != 0 {
		delete(s.wide, int32(i))
	}
	if i != last {
		*s.slot(i) = *s.slot(last)
		if w, ok := s.wide[int32(last)]; ok {
			s.wide[int32(i)] = w
			delete(s.wide, int32(last))
		}
	}
	*s.slot(last) = slot{}
	s.n--
	s.garbage++
	return last
}

// Garbage is how many records' bytes Set and SwapRemove left in the
// arena since the last Compact.
func (s *Store) Garbage() int { return s.garbage }

// Compact packs the records again into fresh memory, in the same order
// (indices stay valid), and frees what Set and SwapRemove left behind.
func (s *Store) Compact() {
	old := *s
	*s = Store{}
	var p Peeker
	for i := range old.n {
		s.push(old.Peek(i, &p))
	}
	if old.mem != nil {
		old.mem.free() // its cleanup, still registered, then finds nothing
	}
}
