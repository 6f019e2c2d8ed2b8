package ui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
)

// onWritesKey is a key on the Writes screen: u undoes the selected write
// through the write dialog (reason, the exact restore, the same
// confirmation and executor as every write); the screen takes the rest.
func (m *Model) onWritesKey(msg tea.KeyPressMsg) tea.Cmd {
	if !m.CanWrite() || !key.Matches(msg, m.Keys.Undo) {
		return m.route(m.writes, msg)
	}
	r, ok := m.writes.undoable()
	if !ok {
		return nil
	}
	cmd := m.openDialogOn(write.KindUndo, []inspect.Record{{Key: r.Key}})
	if m.dialog != nil {
		m.dialog.undoID = r.AuditID
	}
	return cmd
}

// undoable is the selected write when u can undo it; else the status
// says why not.
func (ws *writesScreen) undoable() (actions.Result, bool) {
	w, ok := ws.selected()
	if !ok {
		ws.Status = "no write selected: this session has made none"
		return actions.Result{}, false
	}
	r := w.Result
	if r.Outcome != write.Applied || r.AuditID == "" {
		ws.Status = "this write was not applied (" + string(r.Outcome) + "): there is nothing to undo"
		return actions.Result{}, false
	}
	return r, true
}

// planUndo plans the dialog's undo from the audit log, in the background.
func (d *dialog) planUndo(reason string) tea.Cmd {
	ex, ctx, id, kss := d.Opts.Executor, d.Ctx, d.undoID, d.Opts.Keyspaces
	return func() tea.Msg {
		lg, err := audit.Read(ex.Audit.Path())
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
