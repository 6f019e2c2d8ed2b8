package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
	"github.com/idemctl/idemctl/ui/common"
)

// recordsScreen is the Records screen: the table over the store's view
// (or its grouped view), the cursor, the marks, and the / filter's and
// ctrl+f's inputs.
type recordsScreen struct {
	*shared
	w, h     int
	scanning func() bool // the root's scan is running: groups are sorted when it ends

	layout         tableLayout
	cursor, offset int
	// The grouped view: its cursor, and the search to restore when an
	// opened group is closed.
	groupCursor, groupOffset int
	groupSearch              filter.Search

	filterLine          // /
	find       *findBar // ctrl+f
	marks      map[string]bool
}

func newRecordsScreen(c *shared, scanning func() bool) *recordsScreen {
	return &recordsScreen{shared: c, scanning: scanning, find: newFindBar(c),
		filterLine: filterLine{input: common.NewLine("/ ", "key text, glob*, principal=customer-42, state=processing, flag=stuck, stale", 256)}}
}

// SetSize lays the table out for the width.
func (rs *recordsScreen) SetSize(width, height int) {
	if width != rs.w {
		rs.layout = computeLayout(width)
	}
	rs.w, rs.h = width, height
	rs.input.SetWidth(max(width-4, 10))
}

// Update takes the screen's keys: the / filter's or find's while one is
// typed; else the moves, marks, filters, grouping and find, then the view
// keys (sort, states). Other messages (the cursor's blink) go to the
// filter while it is typed.
func (rs *recordsScreen) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	switch {
	case ok && rs.filtering:
		return rs.onFilterKey(k)
	case ok && rs.find.active:
		return rs.onFindKey(k)
	case !ok:
		if !rs.filtering {
			return nil
		}
		var cmd tea.Cmd
		rs.input, cmd = rs.input.Update(msg)
		return cmd
	}
	if cmd, ok := common.Dispatch(k, rs.keyActions()); ok {
		return cmd
	}
	rs.onViewKey(k)
	return nil
}

// onRecordsKey is a key on the Records screen: the grouped view's first;
// then, as a read-only session says the write keys are off, the keys
// that leave the screen (open, write, copy), which are the root's; then
// the screen's own.
func (m *Model) onRecordsKey(msg tea.KeyPressMsg) tea.Cmd {
	rs := m.records
	rs.SetSize(m.Width, m.bodyHeight())
	if rs.grouped() {
		if cmd, done := (recordGroups{rs}).onGroupsKey(msg); done {
			return cmd
		}
	}
	if !m.CanWrite() && m.Keys.IsWriteKey(msg) {
		m.Status = m.OffHint(m.screen == screenStreams)
		return nil
	}
	k := m.Keys
	if cmd, ok := common.Dispatch(msg, []common.KeyAction{
		{Binding: k.Open, Do: func() tea.Cmd { return m.openDetail(false) }},
		{Binding: k.Reveal, Do: func() tea.Cmd { return m.openDetail(true) }},
		{Binding: k.Expire, Do: func() tea.Cmd { return m.openDialog(write.KindExpire) }},
		{Binding: k.Fail, Do: func() tea.Cmd { return m.openDialog(write.KindFail) }},
		{Binding: k.Reconcile, Do: func() tea.Cmd { return m.openDialog(write.KindReconcile) }},
		{Binding: k.Triage, Do: func() tea.Cmd {
			if why := m.triageOff(); why != "" {
				m.Status = why
				return nil
			}
			return m.openDialog(kindTriage)
		}},
		{Binding: k.CopyKey, Do: func() tea.Cmd { return m.copyKey(rs.selection()) }},
		{Binding: k.CopyCommand, Do: func() tea.Cmd { return m.copyCommand(rs.selection()) }},
	}); ok {
		return cmd
	}
	return rs.Update(msg)
}

// recordsSized is the Records screen sized to the body as it is now: the
// banners above it come and go with the data.
func (m *Model) recordsSized() *recordsScreen {
	m.records.SetSize(m.Width, m.bodyHeight())
	return m.records
}

// keyActions are the keys that move the cursor, mark, filter, group or
// find.
func (rs *recordsScreen) keyActions() []common.KeyAction {
	k := rs.Keys
	return []common.KeyAction{
		{Binding: k.Up, Do: common.NoCmd(func() { rs.moveCursor(-1) })},
		{Binding: k.Down, Do: common.NoCmd(func() { rs.moveCursor(1) })},
		{Binding: k.PageUp, Do: common.NoCmd(func() { rs.moveCursor(-rs.tableRows()) })},
		{Binding: k.PageDown, Do: common.NoCmd(func() { rs.moveCursor(rs.tableRows()) })},
		{Binding: k.Top, Do: common.NoCmd(func() { rs.cursorTo(0) })},
		{Binding: k.Bottom, Do: common.NoCmd(func() { rs.cursorTo(len(rs.store.view) - 1) })},
		{Binding: k.Mark, Do: common.NoCmd(rs.toggleMark)},
		{Binding: k.MarkAll, Do: common.NoCmd(rs.markAllInView)},
		{Binding: k.Unmark, Do: common.NoCmd(rs.unmarkAll)},
		{Binding: k.Filter, Do: func() tea.Cmd { return rs.filterLine.start(rs.store.f.Search.String()) }},
		{Binding: k.GroupBy, Do: common.NoCmd(rs.cycleGrouping)},
		{Binding: k.Search, Do: rs.find.Open},
		{Binding: k.NextMatch, Do: common.NoCmd(func() { rs.findNext(1) })},
		{Binding: k.PrevMatch, Do: common.NoCmd(func() { rs.findNext(-1) })},
	}
}

// cursorTo puts the cursor on row pos, clamped to the view.
func (rs *recordsScreen) cursorTo(pos int) {
	rs.cursor = pos
	rs.clampCursor()
}

// toggleMark marks or unmarks the record under the cursor and moves on,
// so space marks a run of records.
func (rs *recordsScreen) toggleMark() {
	if r := rs.store.at(rs.cursor); r != nil {
		if rs.marks == nil {
			rs.marks = map[string]bool{}
		}
		if rs.marks[r.Key] {
			delete(rs.marks, r.Key)
		} else {
			rs.marks[r.Key] = true
		}
		rs.moveCursor(1)
	}
}

func (rs *recordsScreen) unmarkAll() {
	rs.Status = "nothing was marked (space marks a record, a all in view)"
	if n := len(rs.marks); n > 0 {
		rs.Status = "unmarked " + common.Count(n)
	}
	rs.marks = nil
}

// onViewKey is the Records screen's filter, sort and state keys: they
// change what the table shows, never a record.
func (rs *recordsScreen) onViewKey(msg tea.KeyPressMsg) {
	k := rs.Keys
	switch {
	case key.Matches(msg, k.ClearFilter):
		if !rs.store.f.Active() {
			rs.Status = "no filter to clear"
		}
		rs.store.f = filter.Filter{}
		rs.input.SetValue("")
		rs.withCursorKept(rs.store.rebuild)
	case key.Matches(msg, k.StaleOnly):
		rs.store.f.Stale = !rs.store.f.Stale
		rs.withCursorKept(rs.store.rebuild)
	case key.Matches(msg, k.CycleFlag):
		rs.store.f.Flags = rs.store.nextFlag(rs.store.f.Flags)
		rs.withCursorKept(rs.store.rebuild)
	case key.Matches(msg, k.Sort):
		rs.store.sortCol = (rs.store.sortCol + 1) % numSortCols
		rs.store.sortDesc = rs.store.sortCol == colAge || rs.store.sortCol == colMemory || rs.store.sortCol == colFlags
		rs.withCursorKept(rs.store.rebuild)
	case key.Matches(msg, k.SortReverse):
		rs.store.sortDesc = !rs.store.sortDesc
		rs.withCursorKept(rs.store.rebuild)
	case key.Matches(msg, k.Processing):
		rs.setStateFilter(inspect.StateProcessing)
	case key.Matches(msg, k.Succeeded):
		rs.setStateFilter(inspect.StateSucceeded)
	case key.Matches(msg, k.Failed):
		rs.setStateFilter(inspect.StateFailed)
	case key.Matches(msg, k.Reconciled):
		rs.setStateFilter(inspect.StateReconciled)
	case key.Matches(msg, k.Unknown):
		rs.setStateFilter(inspect.StateUnknown)
	case key.Matches(msg, k.AllStates):
		if rs.store.f.States == 0 {
			rs.Status = "every state is shown already (1-5 show one)"
		}
		rs.store.f.States = 0
		rs.withCursorKept(rs.store.rebuild)
	}
}

func (rs *recordsScreen) setStateFilter(st inspect.State) {
	f := &rs.store.f
	only := f.States.Has(st)
	f.States = 0
	if !only { // pressing the same state again clears it
		f.States = filter.StatesOf(st)
	}
	rs.withCursorKept(rs.store.rebuild)
}

// markAllInView marks every record matching the filter, or clears the
// marks when they already are.
func (rs *recordsScreen) markAllInView() {
	all := len(rs.marks) > 0 && len(rs.marks) == len(rs.store.view)
	rs.marks = map[string]bool{}
	if all {
		return
	}
	for pos := range rs.store.view {
		rs.marks[rs.store.at(pos).Key] = true
	}
}

// onFilterKey edits the `/` filter; the search applied (enter, when it
// parses) rebuilds the view.
func (rs *recordsScreen) onFilterKey(msg tea.KeyPressMsg) tea.Cmd {
	search, cmd := rs.filterLine.onKey(msg)
	if search != nil {
		rs.store.f.Search = *search
		rs.withCursorKept(rs.store.rebuild)
	}
	return cmd
}
