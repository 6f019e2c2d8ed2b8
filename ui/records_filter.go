package ui

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
)

// filterLine is the Records screen's / filter: the search typed on the
// status line, and why the last one typed was refused.
type filterLine struct {
	input     textinput.Model
	filtering bool
	filterErr string // why the typed filter was not applied, shown under the input
}

// start opens the / filter on the search in force, to edit: one in force
// is followed by a space, so what is typed after it is a term of its own
// (in a group, principal=customer-1 then flag=stuck).
func (fl *filterLine) start(search string) tea.Cmd {
	fl.filtering = true
	if search != "" {
		search += " "
	}
	fl.input.SetValue(search)
	fl.input.CursorEnd()
	return fl.input.Focus()
}

// onKey edits the filter; enter applies (search is what to apply, nil
// when the text does not parse: filterErr says why), esc abandons.
func (fl *filterLine) onKey(msg tea.KeyPressMsg) (search *filter.Search, cmd tea.Cmd) {
	switch msg.String() {
	case "enter":
		s, err := filter.ParseSearch(strings.TrimSpace(fl.input.Value()))
		if err != nil {
			fl.filterErr = inspect.Sanitize(units.OneLine(err.Error()))
			return nil, nil
		}
		fl.filtering, fl.filterErr = false, ""
		fl.input.Blur()
		return &s, nil
	case "esc":
		fl.filtering, fl.filterErr = false, ""
		fl.input.Blur()
		return nil, nil
	}
	fl.input, cmd = fl.input.Update(msg)
	return nil, cmd
}

// typing reports whether the / filter or find is being typed: the screen
// takes every key then.
func (rs *recordsScreen) typing() bool { return rs.filtering || rs.find.active }

// typedLines are the status and help lines while the / filter or find is
// typed (ok is false otherwise): the input, then what the filter takes or
// why it was refused.
func (rs *recordsScreen) typedLines() (status, help string, ok bool) {
	s, w := rs.Styles, rs.Width
	switch {
	case rs.filtering && rs.filterErr != "":
		return common.Fit(rs.input.View(), w), s.Error.Render(common.Fit("✗ "+rs.filterErr, w)), true
	case rs.filtering:
		return common.Fit(rs.input.View(), w), s.HelpLine.Render(common.Fit("enter applies · esc closes · terms: text glob* principal=… state=… flag=… stale", w)), true
	case rs.find.active:
		rs.find.SetSize(rs.w, rs.h)
		return rs.find.View(), s.HelpLine.Render(common.Fit("", w)), true
	}
	return "", "", false
}
