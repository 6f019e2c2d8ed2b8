package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/ui/common"
)

// onKey routes a key: an open dialog, input or overlay takes every key;
// then the keys of every screen; then the screen's own.
func (m *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	if msg.String() == "ctrl+c" {
		return m.quit()
	}
	switch {
	case m.dialog != nil:
		return m.onDialogKey(msg)
	case m.records.typing():
		return m.route(m.records, msg)
	case m.cmdLine.open:
		return m.onCommandKey(msg)
	case m.streams.Typing():
		return m.route(m.streams, msg)
	case m.keyHelp.open:
		return m.route(m.keyHelp, msg)
	}
	// Quit, help and the banner mean the same on every screen, the detail
	// view included.
	if cmd, ok := common.Dispatch(msg, []common.KeyAction{{Binding: m.Keys.Quit, Do: m.quit}, {Binding: m.Keys.Help, Do: common.NoCmd(func() { m.keyHelp.Open(m.screen == screenStreams) })},
		{Binding: m.Keys.Warning, Do: common.NoCmd(func() {
			if m.chrome.toggle(m.showsGapBanner()) {
				m.resize(m.Width, m.Height)
			}
		})}}); ok {
		return cmd
	}
	if m.screen == screenDetail {
		return m.onDetailKey(msg)
	}
	if m.screen == screenStreams {
		if cmd, ok := m.onStreamsKey(msg); ok {
			return cmd
		}
	}
	if m.screen == screenDoctor && key.Matches(msg, m.Keys.Back) {
		m.showFromTop(m.doctor.from)
		return nil
	}
	if cmd, ok := common.Dispatch(msg, m.screenKeys(msg)); ok {
		return cmd
	}
	return m.onScreenKey(msg)
}

// showFromTop shows screen sc, its page from the top.
func (m *Model) showFromTop(sc screen) {
	m.screen = sc
	m.overview.page.scroll, m.statsScreen.page.scroll, m.writes.page.scroll = 0, 0, 0
}

// cycleScreens is tab (by 1) and shift+tab: the next screen from its top.
func (m *Model) cycleScreens(by screen) {
	m.showFromTop((m.screen + by) % numScreens)
	m.overview.sel, m.statsScreen.sel = 0, 0
}

// quit stops background work and ends the program.
func (m *Model) quit() tea.Cmd {
	m.shutdown()
	return tea.Quit
}

// screenKeys are the keys every screen but the detail shares, tried
// before the screen's own.
func (m *Model) screenKeys(msg tea.KeyPressMsg) []common.KeyAction {
	k := m.Keys
	return []common.KeyAction{
		{Binding: k.NextScreen, Do: common.NoCmd(func() { m.cycleScreens(1) })},
		{Binding: k.PrevScreen, Do: common.NoCmd(func() { m.cycleScreens(numScreens - 1) })},
		{Binding: k.Command, Do: m.cmdLine.Open},
		// The filter is the Records screen's: go there, so what is typed
		// next is the filter and never a string of hotkeys (esc included).
		{Binding: common.OnlyIf(k.Filter, m.screen != screenRecords), Do: func() tea.Cmd {
			m.screen = screenRecords
			return m.onRecordsKey(msg)
		}},
		{Binding: k.Rescan, Do: m.rescan},
		{Binding: k.Cancel, Do: common.NoCmd(m.onCancel)},
	}
}

func (m *Model) rescan() tea.Cmd {
	m.Status = "rescanning…"
	return tea.Batch(m.scan.start(), m.streams.Read()) // the Overview's line on the streams too
}

// onCancel is esc: it cancels a scan, else backs out of a group's records
// or the grouping.
func (m *Model) onCancel() {
	switch g := m.store.group; {
	case m.scan.scanning():
		m.scan.stop()
	case m.screen == screenRecords && g != nil && g.expanding != "":
		m.recordsSized().closeGroup()
	case m.screen == screenRecords && g != nil:
		m.store.setGrouping("")
	case m.screen == screenRecords:
		m.Status = "nothing to go back from (esc closes a group or a record, cancels a scan)"
	}
}

// onScreenKey is a key no shared binding took: the screen's own.
func (m *Model) onScreenKey(msg tea.KeyPressMsg) tea.Cmd {
	switch m.screen {
	case screenRecords:
		return m.onRecordsKey(msg)
	case screenOverview, screenStats:
		return m.onDrillKey(msg)
	case screenWrites:
		return m.onWritesKey(msg)
	case screenDoctor:
		return m.route(m.doctor, msg)
	}
	return nil
}
