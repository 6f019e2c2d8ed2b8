package ui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
)

// groupAgg counts one value of the grouping capture over the view.
type groupAgg struct {
	value                       string
	n, processing, stale, stuck int64
	mem                         int64
}

// grouping aggregates the view by one template capture. It is kept up to
// date as records arrive (O(batch)), rebuilt only when the filter changes,
// and its order is recomputed lazily: when the view has grown by an eighth
// since the last sort (or the scan ended), so a long scan sorts the groups
// a bounded number of times, never once per batch or per frame. Between
// sorts the counts shown are live; only the order and new groups wait.
type grouping struct {
	name      string
	byValue   map[string]*groupAgg
	order     []*groupAgg
	sortedAt  int // view length at the last sort
	dirty     bool
	expanding string // the value whose records the table shows, "" none
}

func newGrouping(name string) *grouping {
	return &grouping{name: name, byValue: map[string]*groupAgg{}, dirty: true}
}

func (g *grouping) add(r *inspect.Record) {
	v := r.Group(g.name)
	a := g.byValue[v]
	if a == nil {
		a = &groupAgg{value: strings.Clone(v)} // v may alias a Peeker's scratch
		g.byValue[a.value] = a
		g.dirty = true
	}
	a.n++
	if r.State == inspect.StateProcessing {
		a.processing++
	}
	if r.Stale() {
		a.stale++
	}
	if r.Flags.Has(inspect.FlagProcessingNoTTL) {
		a.stuck++
	}
	if r.MemoryBytes > 0 {
		a.mem += r.MemoryBytes
	}
}

// sorted returns the groups, most in need of attention first: stale, then
// stuck, then the largest.
func (g *grouping) sorted(viewLen int, force bool) []*groupAgg {
	if g.dirty && (force || viewLen-g.sortedAt >= max(g.sortedAt/8, 1) || len(g.order) == 0) {
		g.order = g.order[:0]
		for _, a := range g.byValue {
			g.order = append(g.order, a)
		}
		slices.SortFunc(g.order, func(a, b *groupAgg) int {
			if c := cmp.Compare(b.stale, a.stale); c != 0 {
				return c
			}
			if c := cmp.Compare(b.stuck, a.stuck); c != 0 {
				return c
			}
			if c := cmp.Compare(b.n, a.n); c != 0 {
				return c
			}
			return cmp.Compare(a.value, b.value)
		})
		g.sortedAt, g.dirty = viewLen, false
	}
	return g.order
}

// setGrouping groups the view by a capture ("" stops grouping).
func (s *store) setGrouping(name string) {
	s.group = nil
	if name == "" {
		return
	}
	s.group = newGrouping(name)
	for _, i := range s.view {
		s.group.add(s.recs.Peek(int(i), &s.peek))
	}
}

// captureNames are the template captures records can be grouped by, in
// template order, across the keyspaces.
func (c *shared) captureNames() []string {
	var out []string
	for _, ks := range c.Opts.Keyspaces {
		for _, n := range ks.Template.Names() {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// groupBy groups the records by capture name ("": not grouped), the
// cursor on the first group (:group NAME).
func (rs *recordsScreen) groupBy(name string) {
	rs.store.setGrouping(name)
	rs.groupCursor, rs.groupOffset = 0, 0
}

// cycleGrouping steps the grouping through the captures, then off.
func (rs *recordsScreen) cycleGrouping() {
	names := rs.captureNames()
	if len(names) == 0 {
		rs.Status = "these keyspaces have no key template captures to group by"
		return
	}
	next := names[0]
	if g := rs.store.group; g != nil {
		i := slices.Index(names, g.name)
		next = ""
		if i+1 < len(names) {
			next = names[i+1]
		}
	}
	rs.store.setGrouping(next)
	rs.groupCursor, rs.groupOffset = 0, 0
}

// grouped reports whether the Records screen shows groups, not records.
func (rs *recordsScreen) grouped() bool {
	return rs.store.group != nil && rs.store.group.expanding == ""
}

// recordGroups is the grouped Records screen: one row per value of the
// capture grouped by, its counts, and a cursor of its own.
type recordGroups struct{ *recordsScreen }

// View renders the grouped Records screen: one row per value.
func (rg recordGroups) View() string {
	g := rg.store.group
	groups := g.sorted(len(rg.store.view), !rg.scanning())
	var b strings.Builder
	b.WriteString(rg.Styles.ColHead.Render(common.Fit(fmt.Sprintf("%8s %8s %7s %7s %8s  %s", "RECORDS", "PROCESS", "STALE", "STUCK", "MEMORY",
		strings.ToUpper(inspect.Sanitize(g.name))), rg.Width)))
	if len(groups) == 0 {
		b.WriteString("\n" + rg.Styles.Dim.Render("  no record in the view"))
		return b.String()
	}
	rg.clampGroupCursor(len(groups))
	end := min(rg.groupOffset+rg.tableRows(), len(groups))
	for i := rg.groupOffset; i < end; i++ {
		a := groups[i]
		v := a.value
		if v == "" {
			v = "(key does not fit the template)"
		}
		line := fmt.Sprintf("%8s %8s %7s %7s %8s  %s", common.Count(a.n), common.Count(a.processing), common.Count(a.stale), common.Count(a.stuck),
			units.FormatBytes(a.mem), inspect.Sanitize(v))
		switch {
		case i == rg.groupCursor:
			line = rg.Styles.Selected.Render(common.Fit(line, rg.Width))
		case a.stale > 0:
			line = rg.Styles.Stale.Render(line)
		}
		b.WriteString("\n" + line)
	}
	return b.String()
}

func (rg recordGroups) clampGroupCursor(n int) {
	rows := rg.tableRows()
	rg.groupCursor = min(max(rg.groupCursor, 0), max(n-1, 0))
	if rg.groupCursor < rg.groupOffset {
		rg.groupOffset = rg.groupCursor
	}
	if rg.groupCursor >= rg.groupOffset+rows {
		rg.groupOffset = rg.groupCursor - rows + 1
	}
	rg.groupOffset = min(max(rg.groupOffset, 0), max(n-rows, 0))
}

// onGroupsKey handles the grouped screen's own keys: moving, and enter to
// open a group (its records, filtered to the value; esc comes back).
// Other keys fall through to the records keys (filters apply to groups).
func (rg recordGroups) onGroupsKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := rg.Keys
	g := rg.store.group
	n := len(g.sorted(len(rg.store.view), !rg.scanning()))
	if d, ok := k.Moves(msg, rg.tableRows()); ok {
		rg.groupCursor = common.ClampAdd(rg.groupCursor, d) // then to the groups
		rg.clampGroupCursor(n)
		return nil, true
	}
	switch {
	case key.Matches(msg, k.Open):
		if n == 0 {
			return nil, true
		}
		rg.clampGroupCursor(n)
		rg.openGroup(g.order[rg.groupCursor].value)
	case k.IsWriteKey(msg):
		rg.Status = "open a group (enter) to mark and write its records"
	default:
		return nil, false
	}
	rg.clampGroupCursor(n)
	return nil, true
}

// openGroup shows a group's records: the view filtered to its value, the
// grouping kept so esc returns to the groups where the cursor was.
func (rg recordGroups) openGroup(value string) {
	g := rg.store.group
	g.expanding = value
	rg.groupSearch = rg.store.f.Search
	rg.applySearch(strings.TrimSpace(rg.store.f.Search.String() + " " + captureTerm(g.name, value)))
	rg.cursor, rg.offset = 0, 0
	rg.clampCursor()
}

// closeGroup goes back from a group's records to the groups.
func (rs *recordsScreen) closeGroup() {
	g := rs.store.group
	g.expanding = ""
	rs.store.f.Search = rs.groupSearch
	rs.withCursorKept(rs.store.rebuild)
}

// captureTerm is the search term that selects one capture value.
func captureTerm(name, value string) string { return name + "=" + value }

// applySearch sets the search text (already checked) and rebuilds the view.
func (rs *recordsScreen) applySearch(text string) {
	s, err := filter.ParseSearch(text)
	if err != nil {
		rs.Status = "filter: " + inspect.Sanitize(err.Error())
		return
	}
	rs.store.f.Search = s
	rs.withCursorKept(rs.store.rebuild)
}
