package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/ui/common"
	"github.com/idemctl/idemctl/ui/streams"
)

// The root's part of the Streams screens: opening them, leaving them, and
// the write keys, which open the write dialog.

// onStreamsKey is a key on the Streams screen; ok is false when the
// screen does not take it (the shared screen keys do then).
func (m *Model) onStreamsKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	st, k := m.streams, m.Keys
	st.SetSize(m.Width, m.bodyHeight())
	openWrite := func(kind write.Kind) func() tea.Cmd { return func() tea.Cmd { return m.openEntryWrite(kind) } }
	if m.CanWrite() {
		if cmd, ok := common.Dispatch(msg, []common.KeyAction{{Binding: k.Retry, Do: openWrite(write.KindRetry)}, {Binding: k.Ack, Do: openWrite(write.KindAck)},
			{Binding: k.DeadLetter, Do: openWrite(write.KindDeadLetter)}}); ok {
			return cmd, true
		}
	}
	if st.Shown().Level == streams.LevelGroups && key.Matches(msg, k.Back) {
		m.showFromTop(m.streamsFrom)
		return nil, true
	}
	return st.OnKey(msg)
}
