package ui

import (
	"strings"

	"github.com/idemctl/idemctl/inspect"
)

// A drill is a line of the Overview or Stats screen that enter opens as a
// filtered Records screen: a state, a flag, a capture's value.
type drill struct {
	f     inspect.Filter
	shown string // the line as drawn, to find it on the page
}

// drillItem registers a drillable line while a screen renders, marking the
// selected one.
func (m *Model) drillItem(text string, f inspect.Filter) string {
	shown := "  " + text
	if len(m.drills) == m.drillSel {
		shown = m.styles.Selected.Render("▸ " + text)
	}
	m.drills = append(m.drills, drill{f: f, shown: shown})
	return shown
}

// drillTo opens Records filtered to the drill, ungrouped; the sort stays.
func (m *Model) drillTo(d drill) {
	m.store.f = d.f
	m.store.group = nil
	m.screen = screenRecords
	m.cursor, m.offset = 0, 0
	m.store.rebuild()
	m.clampCursor()
}

func stateDrill(st inspect.State) inspect.Filter { return inspect.Filter{States: inspect.StatesOf(st)} }

func flagDrill(f inspect.Flags) inspect.Filter {
	if f == inspect.FlagStale {
		return inspect.Filter{Stale: true}
	}
	return inspect.Filter{Flags: f}
}

// captureDrill selects one value of a template capture.
func captureDrill(name, value string) inspect.Filter {
	s, err := inspect.ParseSearch(captureTerm(name, value))
	if err != nil || strings.ContainsAny(value, " \t") {
		return inspect.Filter{} // a value the search cannot express: all records
	}
	return inspect.Filter{Search: s}
}
