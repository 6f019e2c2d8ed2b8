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

// onKey is a key the root does not take here; ok is false when the
// screen does not take it either.
func (st *streamsScreen) onKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := st.keys
	if d, ok := k.moves(msg, st.h); ok {
		st.move(d)
		return nil, true
	}
	if st.keys.isEntryWriteKey(msg) && !st.canWrite() {
		st.status = st.offHint(true) // the keys are off, and said so
		return nil, true
	}
	if st.keys.isRecordWriteKey(msg) {
		st.status = "F, R and E write records; here " + entryWritesHint
		return nil, true
	}
	return dispatch(msg, []keyAction{
		{k.Mark, noCmd(st.toggleMark)},
		{k.MarkAll, noCmd(st.markAll)},
		{k.Unmark, noCmd(st.unmarkAll)},
		{k.Back, noCmd(st.back)},
		{k.Open, st.enter},
		{k.Filter, st.startFilter},
		{k.StaleOnly, noCmd(func() {
			st.staleOnly = !st.staleOnly
			st.groupSel, st.entrySel = 0, 0
		})},
		{k.ClearFilter, noCmd(func() {
			st.filter, st.staleOnly = "", false
			st.groupSel, st.entrySel = 0, 0
		})},
		{k.Rescan, st.reread},
	})
}

// isRecordWriteKey is a record write key (F, R, E) pressed here: said,
// never taken for another meaning.
func (k *KeyMap) isRecordWriteKey(msg tea.KeyPressMsg) bool {
	for _, b := range []key.Binding{k.Fail, k.Reconcile, k.Expire} {
		if slices.Contains(b.Keys(), msg.String()) {
			return true
		}
	}
	return false
}

// move moves the selection of the level shown (the entry view scrolls).
func (st *streamsScreen) move(d int) {
	switch st.level {
	case levelGroups:
		st.groupSel = clampAdd(st.groupSel, d) // and to the rows when drawn
	case levelGroup:
		st.entrySel = clampAdd(st.entrySel, d)
	case levelEntry:
		st.fieldScroll = clampAdd(st.fieldScroll, d)
	}
}

// back is esc below the groups: up one level (from the groups, the root
// goes back to the screen :streams was opened from).
func (st *streamsScreen) back() {
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
	}
}

// enter is enter: a group's entries, or an entry's fields.
func (st *streamsScreen) enter() tea.Cmd {
	switch st.level {
	case levelGroups:
		rows := st.groupRows()
		if st.groupSel >= len(rows) {
			st.status = "no group to open here"
			return nil
		}
		r := rows[min(st.groupSel, len(rows)-1)]
		if r.g == nil {
			st.status = "stream " + sanitizeText(r.id.stream) + " has no consumer group"
			return nil
		}
		st.open, st.level, st.entrySel, st.entryOff = r.id, levelGroup, 0, 0
	case levelGroup:
		es := st.entries()
		if len(es) == 0 {
			st.status = "no pending entry to open here"
			return nil
		}
		st.entryRow = es[min(st.entrySel, len(es)-1)]
		st.level, st.entry, st.entryErr, st.fieldScroll = levelEntry, nil, "", 0
		return st.readEntry()
	}
	return nil
}

const rereadStatus = "rescanning the streams…"

// reread is r: the groups read anew, and the entry shown.
func (st *streamsScreen) reread() tea.Cmd {
	if why := st.streamsReadable(); why != "" {
		st.status = why
		return nil
	}
	st.status = rereadStatus
	cmds := []tea.Cmd{st.read()}
	if st := st; st.level == levelEntry {
		cmds = append(cmds, st.readEntry())
	}
	return tea.Batch(cmds...)
}

// startFilter is /: the entries' filter, typed on the status line.
func (st *streamsScreen) startFilter() tea.Cmd {
	if st.level == levelEntry {
		st.level = levelGroup
	}
	st.typing = true
	st.input.SetValue(st.filter)
	st.input.SetWidth(max(st.width-4, 10))
	st.input.CursorEnd()
	return st.input.Focus()
}

// onFilterKey edits the filter; enter applies, esc abandons.
func (st *streamsScreen) onFilterKey(msg tea.KeyPressMsg) tea.Cmd {
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
