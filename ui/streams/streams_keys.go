package streams

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/ui/common"
)

// The Streams screen's keys: the KeyMap's, in the meanings the help gives
// them (enter opens, esc goes back, / filters, x stale only, c clears, r
// re-reads); what they do not take, the shared screen keys do.

// OnKey is a key the root does not take here; ok is false when the
// screen does not take it either.
func (st *Screen) OnKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := st.Keys
	if d, ok := k.Moves(msg, st.h); ok {
		st.Move(d)
		return nil, true
	}
	if isEntryWriteKey(&st.Keys, msg) && !st.CanWrite() {
		st.Status = st.OffHint(true) // the keys are off, and said so
		return nil, true
	}
	if isRecordWriteKey(&st.Keys, msg) {
		st.Status = "F, R and E write records; here " + EntryWritesHint
		return nil, true
	}
	return common.Dispatch(msg, []common.KeyAction{
		{Binding: k.Mark, Do: common.NoCmd(st.toggleMark)},
		{Binding: k.MarkAll, Do: common.NoCmd(st.markAll)},
		{Binding: k.Unmark, Do: common.NoCmd(st.unmarkAll)},
		{Binding: k.Back, Do: common.NoCmd(st.back)},
		{Binding: k.Open, Do: st.enter},
		{Binding: k.Filter, Do: st.startFilter},
		{Binding: k.StaleOnly, Do: common.NoCmd(func() {
			st.staleOnly = !st.staleOnly
			st.groupSel, st.entrySel = 0, 0
		})},
		{Binding: k.ClearFilter, Do: common.NoCmd(func() {
			st.filter, st.staleOnly = "", false
			st.groupSel, st.entrySel = 0, 0
		})},
		{Binding: k.Rescan, Do: st.reread},
	})

}

// isRecordWriteKey is a record write key (F, R, E) pressed here: said,
// never taken for another meaning.
func isRecordWriteKey(k *common.KeyMap, msg tea.KeyPressMsg) bool {
	for _, b := range []key.Binding{k.Fail, k.Reconcile, k.Expire} {
		if slices.Contains(b.Keys(), msg.String()) {
			return true
		}
	}
	return false
}

// Move moves the selection of the level shown (the entry view scrolls).
func (st *Screen) Move(d int) {
	switch st.level {
	case LevelGroups:
		st.groupSel = common.ClampAdd(st.groupSel, d) // and to the rows when drawn
	case LevelGroup:
		st.entrySel = common.ClampAdd(st.entrySel, d)
	case LevelEntry:
		st.fieldScroll = common.ClampAdd(st.fieldScroll, d)
	}
}

// back is esc below the groups: up one level (from the groups, the root
// goes back to the screen :streams was opened from).
func (st *Screen) back() {
	switch st.level {
	case LevelEntry:
		st.level, st.entry, st.entryErr = LevelGroup, nil, ""
	case LevelGroup:
		st.level = LevelGroups
		for i, r := range st.groupRows() {
			if r.id == st.open {
				st.groupSel = i
			}
		}
	}
}

// enter is enter: a group's entries, or an entry's fields.
func (st *Screen) enter() tea.Cmd {
	switch st.level {
	case LevelGroups:
		rows := st.groupRows()
		if st.groupSel >= len(rows) {
			st.Status = "no group to open here"
			return nil
		}
		r := rows[min(st.groupSel, len(rows)-1)]
		if r.g == nil {
			st.Status = "stream " + sanitizeText(r.id.stream) + " has no consumer group"
			return nil
		}
		st.open, st.level, st.entrySel, st.entryOff = r.id, LevelGroup, 0, 0
	case LevelGroup:
		es := st.entries()
		if len(es) == 0 {
			st.Status = "no pending entry to open here"
			return nil
		}
		st.entryRow = es[min(st.entrySel, len(es)-1)]
		st.level, st.entry, st.entryErr, st.fieldScroll = LevelEntry, nil, "", 0
		return st.readEntry()
	}
	return nil
}

const rereadStatus = "rescanning the streams…"

// reread is r: the groups read anew, and the entry shown.
func (st *Screen) reread() tea.Cmd {
	if why := Readable(st.Common); why != "" {
		st.Status = why
		return nil
	}
	st.Status = rereadStatus
	cmds := []tea.Cmd{st.Read()}
	if st := st; st.level == LevelEntry {
		cmds = append(cmds, st.readEntry())
	}
	return tea.Batch(cmds...)
}

// startFilter is /: the entries' filter, typed on the status line.
func (st *Screen) startFilter() tea.Cmd {
	if st.level == LevelEntry {
		st.level = LevelGroup
	}
	st.typing = true
	st.input.SetValue(st.filter)
	st.input.SetWidth(max(st.Width-4, 10))
	st.input.CursorEnd()
	return st.input.Focus()
}

// onFilterKey edits the filter; enter applies, esc abandons.
func (st *Screen) onFilterKey(msg tea.KeyPressMsg) tea.Cmd {
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
