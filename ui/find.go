package ui

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// find is the incremental search in the Records view (ctrl+f): the cursor
// moves to the next key containing the text as it is typed (case
// insensitive); n and N then step forward and back, wrapping. It moves the
// cursor only: the filter (/) is what hides records.
type find struct {
	input  textinput.Model
	active bool   // the input is open
	text   string // lower-cased, what n and N look for
}

func newFind() find {
	in := textinput.New()
	in.Prompt = "find: "
	in.Placeholder = "text in the key (enter keeps it for n/N, esc closes)"
	in.CharLimit = 256
	return find{input: in}
}

func (m *Model) openFind() tea.Cmd {
	m.find.active = true
	m.find.input.SetValue("")
	m.find.input.SetWidth(max(m.width-8, 10))
	return m.find.input.Focus()
}

// onFindKey edits the find text, moving the cursor as it changes.
func (m *Model) onFindKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "enter", "esc":
		m.find.active = false
		m.find.input.Blur()
		return nil
	}
	var cmd tea.Cmd
	m.find.input, cmd = m.find.input.Update(msg)
	m.find.text = strings.ToLower(strings.TrimSpace(m.find.input.Value()))
	m.findFrom(m.cursor, 1)
	return cmd
}

// findFrom moves the cursor to the first match at or after pos going in
// dir (1 or -1), wrapping around the view; it says when nothing matches.
func (m *Model) findFrom(pos, dir int) {
	n := len(m.store.view)
	if m.find.text == "" || n == 0 {
		return
	}
	for i := range n {
		p := ((pos+dir*i)%n + n) % n
		if strings.Contains(strings.ToLower(m.store.at(p).Key), m.find.text) {
			m.cursor = p
			m.clampCursor()
			m.status = ""
			return
		}
	}
	m.status = "find: no key in the view contains " + m.find.text
}

// findNext steps to the next (dir 1) or previous (-1) match.
func (m *Model) findNext(dir int) {
	if m.find.text == "" {
		m.status = "nothing to find yet: ctrl+f"
		return
	}
	m.findFrom(m.cursor+dir, dir)
}
