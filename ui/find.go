package ui

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/ui/common"
)

// findBar is the incremental search in the Records view (ctrl+f): the
// cursor moves to the next key containing the text as it is typed (case
// insensitive); n and N then step forward and back, wrapping. It moves the
// cursor only: the filter (/) is what hides records. The bar keeps the
// text; the Records screen owns the cursor it moves.
type findBar struct {
	*shared
	input  textinput.Model
	active bool   // the input is open
	text   string // lower-cased, what n and N look for
	w      int
}

func newFindBar(c *shared) *findBar {
	return &findBar{shared: c, input: common.NewLine("find: ", "text in the key (enter keeps it for n/N, esc closes)", 256)}
}

// Open shows an empty input with the cursor in it.
func (f *findBar) Open() tea.Cmd {
	f.active = true
	return common.OpenLine(&f.input, max(f.Width-8, 10))
}

func (f *findBar) SetSize(width, _ int) { f.w = width }

// Update edits the text; enter keeps it for n and N, esc as well.
func (f *findBar) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok && (k.String() == "enter" || k.String() == "esc") {
		f.active = false
		f.input.Blur()
		return nil
	}
	var cmd tea.Cmd
	f.input, cmd = f.input.Update(msg)
	f.text = strings.ToLower(strings.TrimSpace(f.input.Value()))
	return cmd
}

// View is the status line while the input is open.
func (f *findBar) View() string { return common.Fit(f.input.View(), f.w) }

// match is the first of n keys at or after pos going in dir (1 or -1)
// that holds the text, wrapping around.
func (f *findBar) match(pos, dir, n int, key func(int) string) (int, bool) {
	for i := range n {
		p := ((pos+dir*i)%n + n) % n
		if strings.Contains(strings.ToLower(key(p)), f.text) {
			return p, true
		}
	}
	return 0, false
}

// onFindKey edits the find text, moving the cursor as it changes.
func (rs *recordsScreen) onFindKey(msg tea.KeyPressMsg) tea.Cmd {
	rs.find.SetSize(rs.w, rs.h)
	cmd := rs.find.Update(msg)
	if rs.find.active {
		rs.findFrom(rs.cursor, 1)
	}
	return cmd
}

// findFrom moves the cursor to the first match at or after pos going in
// dir (1 or -1), wrapping around the view; it says when nothing matches.
func (rs *recordsScreen) findFrom(pos, dir int) {
	n := len(rs.store.view)
	if rs.find.text == "" || n == 0 {
		return
	}
	if p, ok := rs.find.match(pos, dir, n, func(p int) string { return rs.store.at(p).Key }); ok {
		rs.cursor = p
		rs.clampCursor()
		rs.Status = ""
		return
	}
	rs.Status = "find: no key in the view contains " + rs.find.text
}

// findNext steps to the next (dir 1) or previous (-1) match.
func (rs *recordsScreen) findNext(dir int) {
	if rs.find.text == "" {
		rs.Status = "nothing to find yet: ctrl+f"
		return
	}
	rs.findFrom(rs.cursor+dir, dir)
}
