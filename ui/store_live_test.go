package ui

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
)

// Live edits (replace, add, remove, sweep, compaction) leave the view
// as a rebuild from scratch would: the same rows in the same order,
// under a filter and a sort.
func TestStoreLiveEditsMatchARebuild(t *testing.T) {
	ks := testKeyspace(t)
	all := fixture(ks, 12_000)
	s := newStore(0)
	s.add(all[:8000])
	s.f = filter.Filter{States: filter.StatesOf(inspect.StateProcessing, inspect.StateSucceeded)}
	s.rebuild()
	e := &liveEdit{changed: map[int32]bool{}}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 40 {
		for range 300 {
			r := all[rng.IntN(len(all))]
			switch rng.IntN(4) {
			case 0:
				s.remove(e, r.Key)
			case 1:
				r.State, r.Flags = inspect.StateFailed, 0
				s.upsert(e, &r)
			default:
				s.upsert(e, &r)
			}
		}
		if round == 20 {
			s.startMarks()
			for i := range 5000 {
				s.upsert(e, &all[i])
			}
			s.sweep(e)
		}
		s.finish(e)
		want := append([]int32(nil), s.view...)
		s.rebuild()
		if !slices.Equal(want, s.view) {
			t.Fatalf("round %d: the edited view (%d rows) is not the rebuilt one (%d rows)", round, len(want), len(s.view))
		}
		if round == 20 && s.recs.Len() > 5000 {
			t.Fatalf("the sweep left %d records of the 5,000 the pass saw", s.recs.Len())
		}
		for i := range s.recs.Len() {
			if got := s.lookup(s.recs.At(i).Key); got != i {
				t.Fatalf("round %d: record %d found at %d", round, i, got)
			}
		}
	}
	if s.recs.Garbage() > 4096 && s.recs.Garbage() > s.recs.Len() {
		t.Fatalf("garbage %d of %d records: never compacted", s.recs.Garbage(), s.recs.Len())
	}
}
