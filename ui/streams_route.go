package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions/write"
)

// The root's part of the Streams screens: opening them, leaving them, and
// the write keys, which open the write dialog.

// onStreamsKey is a key on the Streams screen; ok is false when the
// screen does not take it (the shared screen keys do then).
func (m *Model) onStreamsKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	st, k := m.streams, m.keys
	st.SetSize(m.width, m.bodyHeight())
	openWrite := func(kind write.Kind) func() tea.Cmd { return func() tea.Cmd { return m.openEntryWrite(kind) } }
	if m.canWrite() {
		if cmd, ok := dispatch(msg, []keyAction{{k.Retry, openWrite(write.KindRetry)}, {k.Ack, openWrite(write.KindAck)},
			{k.DeadLetter, openWrite(write.KindDeadLetter)}}); ok {
			return cmd, true
		}
	}
	if st.level == levelGroups && key.Matches(msg, k.Back) {
		m.showFromTop(st.from)
		return nil, true
	}
	return st.onKey(msg)
}
