package ui

import (
	"testing"

	"github.com/idemctl/idemctl/inspect/filter"
)

// The cursor stays on its record through a filter and a sort (found by
// its index in the same store), and stays in the view when its record is
// filtered out.
func TestCursorKeptOnItsRecord(t *testing.T) {
	m := newTestModel(t, 80, 24, fixture(testKeyspace(t), 70))
	m.records.cursor = 10
	key := m.recordsSized().cursorKey()
	r := m.store.at(m.records.cursor)
	s, err := filter.ParseSearch("principal=" + r.Group("principal"))
	if err != nil {
		t.Fatal(err)
	}
	m.store.f = filter.Filter{Search: s}
	m.recordsSized().withCursorKept(m.store.rebuild)
	if got := m.recordsSized().cursorKey(); got != key || m.records.cursor == 0 {
		t.Fatalf("after the filter the cursor is on %q (row %d), want %q", got, m.records.cursor, key)
	}
	for col := colNone; col < numSortCols; col++ {
		m.store.sortCol, m.store.sortDesc = col, true
		m.recordsSized().withCursorKept(m.store.rebuild)
		if got := m.recordsSized().cursorKey(); got != key {
			t.Fatalf("sorted by %s the cursor is on %q, want %q", columnNames[col], got, key)
		}
	}
	s, _ = filter.ParseSearch("no-such-key")
	m.store.f = filter.Filter{Search: s}
	m.recordsSized().withCursorKept(m.store.rebuild)
	if len(m.store.view) != 0 || m.records.cursor != 0 {
		t.Fatalf("an empty view keeps cursor %d", m.records.cursor)
	}
}
