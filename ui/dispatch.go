package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// keyAction is one key of a screen and what it does. A screen's keys are
// a table tried in order, the first match winning, as a switch would: the
// bindings are the KeyMap's, so the help and the footers, drawn from the
// same bindings, say what the keys do.
type keyAction struct {
	binding key.Binding
	do      func() tea.Cmd
}

// dispatch runs the first action whose binding matches msg; ok is false
// when none does.
func dispatch(msg tea.KeyPressMsg, actions []keyAction) (cmd tea.Cmd, ok bool) {
	for _, a := range actions {
		if key.Matches(msg, a.binding) {
			return a.do(), true
		}
	}
	return nil, false
}

// noCmd is an action that changes the model and starts nothing.
func noCmd(f func()) func() tea.Cmd {
	return func() tea.Cmd { f(); return nil }
}

// onlyIf is b matching only while on holds (b itself is left alone).
func onlyIf(b key.Binding, on bool) key.Binding {
	if !on {
		b.SetEnabled(false)
	}
	return b
}

// onKey routes a key: an open dialog, input or overlay takes every key;
// then the keys of every screen; then the screen's own.
func (m *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	if msg.String() == "ctrl+c" {
		return m.quit()
	}
	switch {
	case m.dialog != nil:
		return m.onDialogKey(msg)
	case m.records.filtering:
		return m.recordsSized().onFilterKey(msg)
	case m.records.find.active:
		return m.recordsSized().onFindKey(msg)
	case m.cmdLine.open:
		return m.onCommandKey(msg)
	case m.streams.typing:
		return m.streams.onFilterKey(msg)
	case m.keyHelp.open:
		return m.route(m.keyHelp, msg)
	}
	// Quit, help and the banner mean the same on every screen, the detail
	// view included.
	if cmd, ok := dispatch(msg, []keyAction{{m.keys.Quit, m.quit}, {m.keys.Help, noCmd(func() { m.keyHelp.Open(m.screen == screenStreams) })},
		{m.keys.Warning, noCmd(func() {
			if m.chrome.toggle(m.showsGapBanner()) {
				m.resize(m.width, m.height)
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
	if m.screen == screenDoctor && key.Matches(msg, m.keys.Back) {
		m.showFromTop(m.doctor.from)
		return nil
	}
	if cmd, ok := dispatch(msg, m.screenKeys(msg)); ok {
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
func (m *Model) screenKeys(msg tea.KeyPressMsg) []keyAction {
	k := m.keys
	return []keyAction{
		{k.NextScreen, noCmd(func() { m.cycleScreens(1) })},
		{k.PrevScreen, noCmd(func() { m.cycleScreens(numScreens - 1) })},
		{k.Command, m.cmdLine.Open},
		// The filter is the Records screen's: go there, so what is typed
		// next is the filter and never a string of hotkeys (esc included).
		{onlyIf(k.Filter, m.screen != screenRecords), func() tea.Cmd {
			m.screen = screenRecords
			return m.onRecordsKey(msg)
		}},
		{k.Rescan, m.rescan},
		{k.Cancel, noCmd(m.onCancel)},
	}
}

func (m *Model) rescan() tea.Cmd {
	m.status = "rescanning…"
	return tea.Batch(m.scan.start(), m.streams.read()) // the Overview's line on the streams too
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
		m.status = "nothing to go back from (esc closes a group or a record, cancels a scan)"
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
