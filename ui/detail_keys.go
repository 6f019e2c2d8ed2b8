package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/ui/common"
)

// openDetail opens the record under the cursor on the Detail screen, its
// response shown with reveal.
func (m *Model) openDetail(reveal bool) tea.Cmd {
	r := m.records.current()
	if r == nil {
		if !reveal {
			m.Status = "no record to open here (c clears the filters)"
		}
		return nil
	}
	m.screen = screenDetail
	cmd := m.detail.Open(r)
	if reveal {
		m.detail.setReveal(true)
	}
	return cmd
}

// onDetailKey is a key on the Detail screen: back, copy and the write
// keys are the root's (they leave the screen or open the dialog); the
// screen takes the rest.
func (m *Model) onDetailKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.Keys
	switch {
	case key.Matches(msg, k.Back):
		m.screen = screenRecords
		m.detail.close()
		return nil
	case key.Matches(msg, k.Reveal), key.Matches(msg, k.Rescan):
		return m.detail.Update(msg)
	case key.Matches(msg, k.CopyKey):
		return m.copyKey([]inspect.Record{m.detail.cur.shown()})
	case key.Matches(msg, k.CopyCommand):
		return m.copyCommand([]inspect.Record{m.detail.cur.shown()})
	case k.IsWriteKey(msg) && !m.CanWrite():
		m.Status = m.OffHint(m.screen == screenStreams)
		return nil
	case key.Matches(msg, k.Fail):
		return m.openDialogOn(write.KindFail, []inspect.Record{m.detail.cur.shown()})
	case key.Matches(msg, k.Reconcile):
		return m.openDialogOn(write.KindReconcile, []inspect.Record{m.detail.cur.shown()})
	case key.Matches(msg, k.Expire):
		return m.openDialogOn(write.KindExpire, []inspect.Record{m.detail.cur.shown()})
	}
	return m.detail.Update(msg)
}

// footer is the help line's keys on the Detail screen: the write keys, or
// where a session that writes has them, said off.
func (ds *detailScreen) footer() []common.KeyBinding {
	k := ds.Keys
	if ds.CanWrite() {
		return []common.KeyBinding{k.Back, k.Fail, k.Reconcile, k.Expire, k.Reveal, k.Rescan, k.Help, k.Quit}
	}
	return []common.KeyBinding{k.Back, common.WritesOff(ds.OffNote(false), k.Fail, k.Reconcile, k.Expire), k.Reveal, k.Rescan, k.Up, k.Down, k.Help, k.Quit}
}
