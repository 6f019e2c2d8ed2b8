package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions"
)

// The root's part of the Streams screens: opening them, leaving them, and
// the write keys, which open the write dialog.

// onStreamsKey is a key on the Streams screen; ok is false when the
// screen does not take it (the shared screen keys do then).
func (m *Model) onStreamsKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	st, k := m.streams, m.keys
	st.SetSize(m.width, m.bodyHeight())
	write := func(kind actions.Kind) func() tea.Cmd { return func() tea.Cmd { return m.openEntryWrite(kind) } }
	if m.canWrite() {
		if cmd, ok := dispatch(msg, []keyAction{{k.Retry, write(actions.KindRetry)}, {k.Ack, write(actions.KindAck)},
			{k.DeadLetter, write(actions.KindDeadLetter)}}); ok {
			return cmd, true
		}
	}
	if st.level == levelGroups && key.Matches(msg, k.Back) {
		m.showFromTop(st.from)
		return nil, true
	}
	return st.onKey(msg)
}
