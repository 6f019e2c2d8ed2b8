package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// The Records screen's keys and the / filter's input.

// onRecordsKey is the Records screen's keys: the grouped view's first,
// then the record keys, then the view keys (filters, sort, states).
func (m *Model) onRecordsKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.grouped() {
		if cmd, done := m.onGroupsKey(msg); done {
			return cmd
		}
	}
	if !m.canWrite() && m.keys.isWriteKey(msg) {
		m.status = m.readOnlyHint()
		return nil
	}
	if cmd, ok := dispatch(msg, m.recordsKeys()); ok {
		return cmd
	}
	m.onViewKey(msg)
	return nil
}

// recordsKeys are the keys that move the cursor, open, mark, write, find
// or copy a record.
func (m *Model) recordsKeys() []keyAction {
	k := m.keys
	return []keyAction{
		{k.Up, noCmd(func() { m.moveCursor(-1) })},
		{k.Down, noCmd(func() { m.moveCursor(1) })},
		{k.PageUp, noCmd(func() { m.moveCursor(-m.tableRows()) })},
		{k.PageDown, noCmd(func() { m.moveCursor(m.tableRows()) })},
		{k.Top, noCmd(func() { m.cursorTo(0) })},
		{k.Bottom, noCmd(func() { m.cursorTo(len(m.store.view) - 1) })},
		{k.Open, m.openRecord},
		{k.Reveal, m.revealRecord},
		{k.Mark, noCmd(m.toggleMark)},
		{k.MarkAll, noCmd(m.markAllInView)},
		{k.Unmark, noCmd(m.unmarkAll)},
		{k.Expire, func() tea.Cmd { return m.openDialog(actions.KindExpire) }},
		{k.Fail, func() tea.Cmd { return m.openDialog(actions.KindFail) }},
		{k.Reconcile, func() tea.Cmd { return m.openDialog(actions.KindReconcile) }},
		{k.Triage, m.openTriage},
		{k.Filter, m.startFilter},
		{k.GroupBy, noCmd(m.cycleGrouping)},
		{k.Search, m.find.Open},
		{k.NextMatch, noCmd(func() { m.findNext(1) })},
		{k.PrevMatch, noCmd(func() { m.findNext(-1) })},
		{k.CopyKey, m.copyKey},
		{k.CopyCommand, m.copyCommand},
	}
}

// cursorTo puts the cursor on row pos, clamped to the view.
func (m *Model) cursorTo(pos int) {
	m.cursor = pos
	m.clampCursor()
}

func (m *Model) openRecord() tea.Cmd {
	if m.store.at(m.cursor) == nil {
		m.status = "no record to open here (c clears the filters)"
	}
	return m.openDetail()
}

// revealRecord shows the record's response: it is the detail's, so the
// record opens there, shown.
func (m *Model) revealRecord() tea.Cmd {
	cmd := m.openDetail()
	if m.detail.cur != nil {
		m.detail.setReveal(true)
	}
	return cmd
}

// toggleMark marks or unmarks the record under the cursor and moves on,
// so space marks a run of records.
func (m *Model) toggleMark() {
	if r := m.store.at(m.cursor); r != nil {
		if m.marks == nil {
			m.marks = map[string]bool{}
		}
		if m.marks[r.Key] {
			delete(m.marks, r.Key)
		} else {
			m.marks[r.Key] = true
		}
		m.moveCursor(1)
	}
}

func (m *Model) unmarkAll() {
	m.status = "nothing was marked (space marks a record, a all in view)"
	if n := len(m.marks); n > 0 {
		m.status = "unmarked " + count(n)
	}
	m.marks = nil
}

// startFilter opens the / filter on the current search, to edit: a
// search in force is followed by a space, so what is typed after it is a
// term of its own (in a group, principal=customer-1 then flag=stuck).
func (m *Model) startFilter() tea.Cmd {
	m.filtering = true
	text := m.store.f.Search.String()
	if text != "" {
		text += " "
	}
	m.input.SetValue(text)
	m.input.CursorEnd()
	return m.input.Focus()
}

// onViewKey is the Records screen's filter, sort and state keys: they
// change what the table shows, never a record.
func (m *Model) onViewKey(msg tea.KeyPressMsg) {
	k := m.keys
	switch {
	case key.Matches(msg, k.ClearFilter):
		if !m.store.f.Active() {
			m.status = "no filter to clear"
		}
		m.store.f = inspect.Filter{}
		m.input.SetValue("")
		m.withCursorKept(m.store.rebuild)
	case key.Matches(msg, k.StaleOnly):
		m.store.f.Stale = !m.store.f.Stale
		m.withCursorKept(m.store.rebuild)
	case key.Matches(msg, k.CycleFlag):
		m.store.f.Flags = m.store.nextFlag(m.store.f.Flags)
		m.withCursorKept(m.store.rebuild)
	case key.Matches(msg, k.Sort):
		m.store.sortCol = (m.store.sortCol + 1) % numSortCols
		m.store.sortDesc = m.store.sortCol == colAge || m.store.sortCol == colMemory || m.store.sortCol == colFlags
		m.withCursorKept(m.store.rebuild)
	case key.Matches(msg, k.SortReverse):
		m.store.sortDesc = !m.store.sortDesc
		m.withCursorKept(m.store.rebuild)
	case key.Matches(msg, k.Processing):
		m.setStateFilter(inspect.StateProcessing)
	case key.Matches(msg, k.Succeeded):
		m.setStateFilter(inspect.StateSucceeded)
	case key.Matches(msg, k.Failed):
		m.setStateFilter(inspect.StateFailed)
	case key.Matches(msg, k.Reconciled):
		m.setStateFilter(inspect.StateReconciled)
	case key.Matches(msg, k.Unknown):
		m.setStateFilter(inspect.StateUnknown)
	case key.Matches(msg, k.AllStates):
		if m.store.f.States == 0 {
			m.status = "every state is shown already (1-5 show one)"
		}
		m.store.f.States = 0
		m.withCursorKept(m.store.rebuild)
	}
}

func (m *Model) setStateFilter(st inspect.State) {
	f := &m.store.f
	only := f.States.Has(st)
	f.States = 0
	if !only { // pressing the same state again clears it
		f.States = inspect.StatesOf(st)
	}
	m.withCursorKept(m.store.rebuild)
}

// markAllInView marks every record matching the filter, or clears the
// marks when they already are.
func (m *Model) markAllInView() {
	all := len(m.marks) > 0 && len(m.marks) == len(m.store.view)
	m.marks = map[string]bool{}
	if all {
		return
	}
	for pos := range m.store.view {
		m.marks[m.store.at(pos).Key] = true
	}
}

// onFilterKey edits the `/` filter; enter applies, esc abandons.
func (m *Model) onFilterKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "enter":
		text := strings.TrimSpace(m.input.Value())
		search, err := inspect.ParseSearch(text)
		if err != nil {
			m.filterErr = inspect.Sanitize(units.OneLine(err.Error()))
			return nil
		}
		m.filtering, m.filterErr = false, ""
		m.input.Blur()
		m.store.f.Search = search
		m.withCursorKept(m.store.rebuild)
		return nil
	case "esc":
		m.filtering, m.filterErr = false, ""
		m.input.Blur()
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}
