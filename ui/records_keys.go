package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
	"github.com/idemctl/idemctl/internal/units"
)

// recordsScreen is the Records screen: the table over the store's view
// (or its grouped view), the cursor, the marks, and the / filter's and
// ctrl+f's inputs.
type recordsScreen struct {
	*common
	w, h     int
	scanning func() bool // the root's scan is running: groups are sorted when it ends

	layout         tableLayout
	cursor, offset int
	// The grouped view: its cursor, and the search to restore when an
	// opened group is closed.
	groupCursor, groupOffset int
	groupSearch              filter.Search

	input     textinput.Model
	filtering bool
	filterErr string   // why the typed filter was not applied, shown under the input
	find      *findBar // ctrl+f
	marks     map[string]bool
}

func newRecordsScreen(c *common, scanning func() bool) *recordsScreen {
	return &recordsScreen{common: c, scanning: scanning, find: newFindBar(c),
		input: newLine("/ ", "key text, glob*, principal=customer-42, state=processing, flag=stuck, stale", 256)}
}

// SetSize lays the table out for the width.
func (rs *recordsScreen) SetSize(width, height int) {
	if width != rs.w {
		rs.layout = computeLayout(width)
	}
	rs.w, rs.h = width, height
}

// Update takes the screen's keys: the moves, marks, filters, grouping and
// find, then the view keys (sort, states). Other messages (the cursor's
// blink) go to the filter while it is typed.
func (rs *recordsScreen) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		if !rs.filtering {
			return nil
		}
		var cmd tea.Cmd
		rs.input, cmd = rs.input.Update(msg)
		return cmd
	}
	if cmd, ok := dispatch(k, rs.keyActions()); ok {
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
	rs.SetSize(m.width, m.bodyHeight())
	if rs.grouped() {
		if cmd, done := rs.onGroupsKey(msg); done {
			return cmd
		}
	}
	if !m.canWrite() && m.keys.isWriteKey(msg) {
		m.status = m.offHint(m.screen == screenStreams)
		return nil
	}
	k := m.keys
	if cmd, ok := dispatch(msg, []keyAction{
		{k.Open, func() tea.Cmd { return m.openDetail(false) }},
		{k.Reveal, func() tea.Cmd { return m.openDetail(true) }}, // the response is the detail's: shown there
		{k.Expire, func() tea.Cmd { return m.openDialog(write.KindExpire) }},
		{k.Fail, func() tea.Cmd { return m.openDialog(write.KindFail) }},
		{k.Reconcile, func() tea.Cmd { return m.openDialog(write.KindReconcile) }},
		{k.Triage, func() tea.Cmd {
			if why := m.triageOff(); why != "" {
				m.status = why
				return nil
			}
			return m.openDialog(kindTriage)
		}},
		{k.CopyKey, func() tea.Cmd { return m.copyKey(rs.selection()) }},
		{k.CopyCommand, func() tea.Cmd { return m.copyCommand(rs.selection()) }},
	}); ok {
		return cmd
	}
	return rs.Update(msg)
}

// recordsSized is the Records screen sized to the body as it is now: the
// banners above it come and go with the data.
func (m *Model) recordsSized() *recordsScreen {
	m.records.SetSize(m.width, m.bodyHeight())
	return m.records
}

// keyActions are the keys that move the cursor, mark, filter, group or
// find.
func (rs *recordsScreen) keyActions() []keyAction {
	k := rs.keys
	return []keyAction{
		{k.Up, noCmd(func() { rs.moveCursor(-1) })},
		{k.Down, noCmd(func() { rs.moveCursor(1) })},
		{k.PageUp, noCmd(func() { rs.moveCursor(-rs.tableRows()) })},
		{k.PageDown, noCmd(func() { rs.moveCursor(rs.tableRows()) })},
		{k.Top, noCmd(func() { rs.cursorTo(0) })},
		{k.Bottom, noCmd(func() { rs.cursorTo(len(rs.store.view) - 1) })},
		{k.Mark, noCmd(rs.toggleMark)},
		{k.MarkAll, noCmd(rs.markAllInView)},
		{k.Unmark, noCmd(rs.unmarkAll)},
		{k.Filter, rs.startFilter},
		{k.GroupBy, noCmd(rs.cycleGrouping)},
		{k.Search, rs.find.Open},
		{k.NextMatch, noCmd(func() { rs.findNext(1) })},
		{k.PrevMatch, noCmd(func() { rs.findNext(-1) })},
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
	rs.status = "nothing was marked (space marks a record, a all in view)"
	if n := len(rs.marks); n > 0 {
		rs.status = "unmarked " + count(n)
	}
	rs.marks = nil
}

// startFilter opens the / filter on the current search, to edit: a
// search in force is followed by a space, so what is typed after it is a
// term of its own (in a group, principal=customer-1 then flag=stuck).
func (rs *recordsScreen) startFilter() tea.Cmd {
	rs.filtering = true
	text := rs.store.f.Search.String()
	if text != "" {
		text += " "
	}
	rs.input.SetValue(text)
	rs.input.CursorEnd()
	return rs.input.Focus()
}

// onViewKey is the Records screen's filter, sort and state keys: they
// change what the table shows, never a record.
func (rs *recordsScreen) onViewKey(msg tea.KeyPressMsg) {
	k := rs.keys
	switch {
	case key.Matches(msg, k.ClearFilter):
		if !rs.store.f.Active() {
			rs.status = "no filter to clear"
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
			rs.status = "every state is shown already (1-5 show one)"
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

// onFilterKey edits the `/` filter; enter applies, esc abandons.
func (rs *recordsScreen) onFilterKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "enter":
		text := strings.TrimSpace(rs.input.Value())
		search, err := filter.ParseSearch(text)
		if err != nil {
			rs.filterErr = inspect.Sanitize(units.OneLine(err.Error()))
			return nil
		}
		rs.filtering, rs.filterErr = false, ""
		rs.input.Blur()
		rs.store.f.Search = search
		rs.withCursorKept(rs.store.rebuild)
		return nil
	case "esc":
		rs.filtering, rs.filterErr = false, ""
		rs.input.Blur()
		return nil
	}
	var cmd tea.Cmd
	rs.input, cmd = rs.input.Update(msg)
	return cmd
}
