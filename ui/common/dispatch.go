package common

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// KeyAction is one key of a screen and what it does. A screen's keys are
// a table tried in order, the first match winning, as a switch would: the
// bindings are the KeyMap's, so the help and the footers, drawn from the
// same bindings, say what the keys do.
type KeyAction struct {
	Binding key.Binding
	Do      func() tea.Cmd
}

// Dispatch runs the first action whose binding matches msg; ok is false
// when none does.
func Dispatch(msg tea.KeyPressMsg, actions []KeyAction) (cmd tea.Cmd, ok bool) {
	for _, a := range actions {
		if key.Matches(msg, a.Binding) {
			return a.Do(), true
		}
	}
	return nil, false
}

// NoCmd is an action that changes the model and starts nothing.
func NoCmd(f func()) func() tea.Cmd {
	return func() tea.Cmd { f(); return nil }
}

// OnlyIf is b matching only while on holds (b itself is left alone).
func OnlyIf(b key.Binding, on bool) key.Binding {
	if !on {
		b.SetEnabled(false)
	}
	return b
}

// Far is a move to the first or last line, whatever the length.
const Far = 1 << 30

// Moves maps the movement keys to a line delta (page: a screenful).
func (k *KeyMap) Moves(msg tea.KeyPressMsg, page int) (int, bool) {
	switch {
	case key.Matches(msg, k.Up):
		return -1, true
	case key.Matches(msg, k.Down):
		return 1, true
	case key.Matches(msg, k.PageUp):
		return -page, true
	case key.Matches(msg, k.PageDown):
		return page, true
	case key.Matches(msg, k.Top):
		return -Far, true
	case key.Matches(msg, k.Bottom):
		return Far, true
	}
	return 0, false
}

// ClampAdd moves a position by d, never below 0 nor past Far.
func ClampAdd(pos, d int) int { return min(max(pos+d, 0), Far) }
