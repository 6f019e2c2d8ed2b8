package common

import (
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// NewLine is a one-line input of the status line (:, ctrl+f, /).
func NewLine(prompt, placeholder string, limit int) textinput.Model {
	in := textinput.New()
	in.Prompt = prompt
	in.Placeholder = placeholder
	in.CharLimit = limit
	return in
}

// OpenLine empties in and puts the cursor in it, width cells wide.
func OpenLine(in *textinput.Model, width int) tea.Cmd {
	in.SetValue("")
	in.SetWidth(width)
	return in.Focus()
}
