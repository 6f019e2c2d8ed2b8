package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
)

// A drill is a line of the Overview or Stats screen that enter opens as a
// filtered Records screen: a state, a flag, a capture's value.
type drill struct {
	f     filter.Filter
	shown string // the line as drawn, to find it on the page
}

// item registers a drillable line while a screen renders, marking the
// selected one.
func (ds *drillScreen) item(text string, f filter.Filter) string {
	shown := "  " + text
	if len(ds.drills) == ds.sel {
		shown = ds.Styles.Selected.Render("▸ " + text)
	}
	ds.drills = append(ds.drills, drill{f: f, shown: shown})
	return shown
}

// showFiltered shows the records f keeps, ungrouped, from the top; the
// sort stays.
func (rs *recordsScreen) showFiltered(f filter.Filter) {
	rs.store.f = f
	rs.store.group = nil
	rs.cursor, rs.offset = 0, 0
	rs.store.rebuild()
	rs.clampCursor()
}

func stateDrill(st inspect.State) filter.Filter { return filter.Filter{States: filter.StatesOf(st)} }

func flagDrill(f inspect.Flags) filter.Filter {
	if f == inspect.FlagStale {
		return filter.Filter{Stale: true}
	}
	return filter.Filter{Flags: f}
}

// captureDrill selects one value of a template capture.
func captureDrill(name, value string) filter.Filter {
	s, err := filter.ParseSearch(captureTerm(name, value))
	if err != nil || strings.ContainsAny(value, " \t") {
		return filter.Filter{} // a value the search cannot express: all records
	}
	return filter.Filter{Search: s}
}

// drillShown is the Overview or Stats, whichever is shown.
func (m *Model) drillShown() *drillScreen {
	if m.screen == screenStats {
		return &m.statsScreen.drillScreen
	}
	return &m.overview.drillScreen
}

// onDrillKey is a key on the Overview or Stats: enter opens the selected
// line's records; the screen takes the rest.
func (m *Model) onDrillKey(msg tea.KeyPressMsg) tea.Cmd {
	ds := m.drillShown()
	if !key.Matches(msg, m.Keys.Open) {
		return m.route(ds, msg)
	}
	ds.SetSize(m.Width, m.bodyHeight())
	if f, ok := ds.selected(); ok {
		m.screen = screenRecords
		m.recordsSized().showFiltered(f)
	}
	return nil
}
