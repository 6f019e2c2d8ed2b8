package ui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/inspect"
)

// onWritesKey is the Writes screen: the moves select a line, u undoes
// it through the write dialog (reason, the exact restore, the same
// confirmation and executor as every write); the other moves scroll.
func (m *Model) onWritesKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	if !m.canWrite() && k.isWriteKey(msg) {
		m.status = m.readOnlyHint()
		return nil
	}
	if key.Matches(msg, k.Undo) {
		return m.openUndo()
	}
	// Every move moves the selection; the screen follows it.
	if d, ok := m.keys.moves(msg, m.bodyHeight()); ok {
		lines, _ := m.writeLines()
		m.writeSel = min(max(m.writeSel+d, 0), max(len(lines)-1, 0))
		m.followSel = true
	}
	return nil
}

// openUndo opens the undo dialog on the selected write.
func (m *Model) openUndo() tea.Cmd {
	_, idx := m.writeLines()
	if m.writeSel >= len(idx) {
		m.status = "no write selected: this session has made none"
		return nil
	}
	i := idx[m.writeSel]
	r := m.writes[i].Result
	if r.Outcome != actions.Applied || r.AuditID == "" {
		m.status = "this write was not applied (" + string(r.Outcome) + "): there is nothing to undo"
		return nil
	}
	cmd := m.openDialogOn(actions.KindUndo, []inspect.Record{{Key: r.Key}})
	if m.dialog != nil {
		m.dialog.undoID = r.AuditID
	}
	return cmd
}

// planUndo plans the dialog's undo from the audit log, in the background.
func (m *Model) planUndo(reason string) tea.Cmd {
	ex, ctx, id, kss := m.opts.Executor, m.ctx, m.dialog.undoID, m.opts.Keyspaces
	return func() tea.Msg {
		lg, err := actions.ReadAudit(ex.Audit.Path())
		if err != nil {
			return planMsg{err: err}
		}
		x := actions.IndexUndo(lg.Entries)
		t, err := x.Lookup(id)
		if err != nil {
			return planMsg{err: err}
		}
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		plans, err := ex.PlanUndo(pctx, x, []actions.UndoTarget{t}, kss, reason)
		return planMsg{plans: plans, err: err}
	}
}
