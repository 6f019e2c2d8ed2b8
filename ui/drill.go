package ui

import (
	"strings"

	"github.com/idemctl/idemctl/inspect"
)

// A drill is a line of the Overview or Stats screen that enter opens as a
// filtered Records screen: a state, a flag, a capture's value.
type drill struct {
	f inspect.Filter
}

// drillItem registers a drillable line while a screen renders, marking the
// selected one.
func (m *Model) drillItem(text string, f inspect.Filter) string {
	i := len(m.drills)
	m.drills = append(m.drills, drill{f: f})
	if i == m.drillSel {
		return m.styles.Selected.Render("▸ " + text)
	}
	return "  " + text
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

// keepSelectedVisible scrolls a drill screen so its selected line shows.
func (m *Model) keepSelectedVisible(body string) {
	for i, l := range strings.Split(body, "\n") {
		if strings.Contains(l, "▸ ") {
			h := m.bodyHeight()
			if i < m.scroll {
				m.scroll = i
			}
			if i >= m.scroll+h-1 { // the page's last line may say more follows
				m.scroll = i - h + 2
			}
			return
		}
	}
}
