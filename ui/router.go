package ui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/ui/common"
	"github.com/idemctl/idemctl/ui/streams"
)

// toScreen hands a screen the results it asked for: a fetched record, the
// streams read, the dialog's plans and verdicts. Each screen drops what
// is not for the state it shows now.
func (m *Model) toScreen(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case detailMsg:
		return m.detail.Update(msg), true
	case foundMsg:
		cmd, open := m.finder.found(msg, m.detail)
		if open {
			m.screen = screenDetail
		}
		return cmd, true
	case streams.ReadMsg, streams.EntryMsg:
		return m.streams.Update(msg), true
	case planMsg, triageMsg:
		if m.dialog != nil {
			return m.dialog.Update(msg), true
		}
		return nil, true
	}
	return nil, false
}

// route hands msg to a screen sized to the body as it is now.
func (m *Model) route(c common.Component, msg tea.Msg) tea.Cmd {
	c.SetSize(m.Width, m.bodyHeight())
	return c.Update(msg)
}

// show draws a screen sized to the body as it is now.
func (m *Model) show(c common.Component) string {
	c.SetSize(m.Width, m.bodyHeight())
	return c.View()
}
