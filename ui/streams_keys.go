package ui

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// The Streams screen's keys: the KeyMap's, in the meanings the help gives
// them (enter opens, esc goes back, / filters, x stale only, c clears, r
// re-reads); what they do not take, the shared screen keys do.

// onStreamsKey is a key on the Streams screen; ok is false when the
// screen does not take it.
func (m *Model) onStreamsKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	st := m.streamsState()
	k := m.keys
	if d, ok := k.moves(msg, m.bodyHeight()); ok {
		st.move(d)
		return nil, true
	}
	if m.isEntryWriteKey(msg) && !m.canWrite() {
		m.status = m.readOnlyHint() // the keys are off, and said so
		return nil, true
	}
	if m.isRecordWriteKey(msg) {
		m.status = "F, R and E write records; here " + entryWritesHint
		return nil, true
	}
	return dispatch(msg, append(m.entryWriteKeys(), []keyAction{
		{k.Back, noCmd(m.streamsBack)},
		{k.Open, m.streamsOpen},
		{k.Filter, m.streamsStartFilter},
		{k.StaleOnly, noCmd(func() {
			st.staleOnly = !st.staleOnly
			st.groupSel, st.entrySel = 0, 0
		})},
		{k.ClearFilter, noCmd(func() {
			st.filter, st.staleOnly = "", false
			st.groupSel, st.entrySel = 0, 0
		})},
		{k.Rescan, m.streamsReread},
	}...))
}

// isRecordWriteKey is a record write key (F, R, E) pressed here: said,
// never taken for another meaning.
func (m *Model) isRecordWriteKey(msg tea.KeyPressMsg) bool {
	k := m.keys
	for _, b := range []key.Binding{k.Fail, k.Reconcile, k.Expire} {
		if slices.Contains(b.Keys(), msg.String()) {
			return true
		}
	}
	return false
}

// move moves the selection of the level shown (the entry view scrolls).
func (st *streamsState) move(d int) {
	switch st.level {
	case levelGroups:
		st.groupSel = clampAdd(st.groupSel, d) // and to the rows when drawn
	case levelGroup:
		st.entrySel = clampAdd(st.entrySel, d)
	case levelEntry:
		st.fieldScroll = clampAdd(st.fieldScroll, d)
	}
}

// streamsBack is esc: up one level, and from the groups back to the
// screen :streams was opened from.
func (m *Model) streamsBack() {
	st := m.streamsState()
	switch st.level {
	case levelEntry:
		st.level, st.entry, st.entryErr = levelGroup, nil, ""
	case levelGroup:
		st.level = levelGroups
		for i, r := range st.groupRows() {
			if r.id == st.open {
				st.groupSel = i
			}
		}
	default:
		m.showFromTop(st.from)
	}
}

// streamsOpen is enter: a group's entries, or an entry's fields.
func (m *Model) streamsOpen() tea.Cmd {
	st := m.streamsState()
	switch st.level {
	case levelGroups:
		rows := st.groupRows()
		if st.groupSel >= len(rows) {
			m.status = "no group to open here"
			return nil
		}
		r := rows[min(st.groupSel, len(rows)-1)]
		if r.g == nil {
			m.status = "stream " + sanitizeText(r.id.stream) + " has no consumer group"
			return nil
		}
		st.open, st.level, st.entrySel, st.entryOff = r.id, levelGroup, 0, 0
	case levelGroup:
		es := st.entries()
		if len(es) == 0 {
			m.status = "no pending entry to open here"
			return nil
		}
		st.entryRow = es[min(st.entrySel, len(es)-1)]
		st.level, st.entry, st.entryErr, st.fieldScroll = levelEntry, nil, "", 0
		return m.readEntry()
	}
	return nil
}

const rereadStatus = "rescanning the streams…"

// streamsReread is r: the groups read anew, and the entry shown.
func (m *Model) streamsReread() tea.Cmd {
	if why := m.streamsReadable(); why != "" {
		m.status = why
		return nil
	}
	m.status = rereadStatus
	cmds := []tea.Cmd{m.readStreams()}
	if st := m.streams; st.level == levelEntry {
		cmds = append(cmds, m.readEntry())
	}
	return tea.Batch(cmds...)
}

// streamsStartFilter is /: the entries' filter, typed on the status line.
func (m *Model) streamsStartFilter() tea.Cmd {
	st := m.streamsState()
	if st.level == levelEntry {
		st.level = levelGroup
	}
	st.typing = true
	st.input.SetValue(st.filter)
	st.input.SetWidth(max(m.width-4, 10))
	st.input.CursorEnd()
	return st.input.Focus()
}

func (m *Model) streamsTyping() bool { return m.streams != nil && m.streams.typing }

// onStreamsFilterKey edits the filter; enter applies, esc abandons.
func (m *Model) onStreamsFilterKey(msg tea.KeyPressMsg) tea.Cmd {
	st := m.streams
	switch msg.String() {
	case "enter":
		st.typing, st.filter = false, strings.TrimSpace(st.input.Value())
		st.groupSel, st.entrySel = 0, 0
		st.input.Blur()
		return nil
	case "esc":
		st.typing = false
		st.input.Blur()
		return nil
	}
	var cmd tea.Cmd
	st.input, cmd = st.input.Update(msg)
	return cmd
}
