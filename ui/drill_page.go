package ui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/inspect/filter"
	"github.com/idemctl/idemctl/ui/common"
)

// The Overview's and Stats' pages: a selection among the drillable lines
// and a scroll. j/k move the selection and the page follows it; past the
// first or last drillable line, or where the page holds none, they move
// the page a line, so every line of the page is reached. pgdn, pgup, G,
// g and the wheel move the page, and a selection the page left behind
// comes to the nearest drillable line on the new page. Nothing moves the
// page but a key: a refresh keeps it (and a page shown to its end stays
// at its end, see pager).

// drillScreen is what the Overview and Stats share: the drillable lines
// as last drawn, the selection among them and the page's scroll. render
// draws the screen, registering its drillable lines with item.
type drillScreen struct {
	*shared
	drills []drill
	sel    int
	page   pager
	w, h   int
	render func() string
}

func (ds *drillScreen) SetSize(width, height int) { ds.w, ds.h = width, height }

// Update takes the moves; enter is the root's (it opens Records).
func (ds *drillScreen) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		common.Dispatch(k, ds.moveKeys())
	}
	return nil
}

func (ds *drillScreen) View() string { return ds.page.show(ds.shared, ds.renderDrills(), ds.h) }

// fromTop shows the page from its top, the first line selected.
func (ds *drillScreen) fromTop() { ds.sel, ds.page.scroll = 0, 0 }

// drillPage is a drill screen as drawn now: its lines, and the line of
// each drillable one (-1: not on the page, cut away).
type drillPage struct {
	lines []string
	at    []int
}

// renderDrills draws the Overview or Stats, registering their drillable
// lines and keeping the selection among them.
func (ds *drillScreen) renderDrills() string {
	ds.drills = ds.drills[:0]
	body := ds.render()
	if n := len(ds.drills); n > 0 && ds.sel >= n {
		ds.sel = n - 1
		ds.drills = ds.drills[:0]
		body = ds.render()
	}
	return body
}

// drillPage draws the screen and finds each drillable line on it: the
// first place its text stands whole (not the head of a longer value, as
// customer-1 of customer-11) that no earlier one took.
func (ds *drillScreen) drillPage() drillPage {
	p := drillPage{lines: strings.Split(ds.renderDrills(), "\n")}
	taken := map[[2]int]bool{}
	for _, d := range ds.drills {
		at := -1
		for l, line := range p.lines {
			if j := wholeIndex(line, d.shown); j >= 0 && !taken[[2]int{l, j}] {
				at, taken[[2]int{l, j}] = l, true
				break
			}
		}
		p.at = append(p.at, at)
	}
	return p
}

// wholeIndex is where s stands in line followed by nothing or a space, or -1.
func wholeIndex(line, s string) int {
	for off := 0; ; {
		j := strings.Index(line[off:], s)
		if j < 0 {
			return -1
		}
		end := off + j + len(s)
		if end == len(line) || line[end] == ' ' {
			return off + j
		}
		off += j + 1
	}
}

// pageRange is the lines of an n-line page shown from the scroll, less
// the last when it says more follows.
func (ds *drillScreen) pageRange(n int) (from, to int) {
	h := ds.h
	from = min(max(ds.page.scroll, 0), max(n-h, 0))
	to = min(from+h, n)
	if to < n && h > 1 {
		to--
	}
	return from, to
}

// onPage reports whether drillable line i shows on the page.
func (ds *drillScreen) onPage(p drillPage, i int) bool {
	from, to := ds.pageRange(len(p.lines))
	return i >= 0 && i < len(p.at) && p.at[i] >= from && p.at[i] < to
}

// selectOnPage selects the drillable line on the page nearest where the
// page came from: the topmost when it moved down (d > 0), else the
// lowest. It reports whether the page holds one.
func (ds *drillScreen) selectOnPage(p drillPage, d int) bool {
	best := -1
	for i := range p.at {
		if !ds.onPage(p, i) {
			continue
		}
		if best < 0 || d > 0 && p.at[i] < p.at[best] || d < 0 && p.at[i] > p.at[best] {
			best = i
		}
	}
	if best >= 0 {
		ds.sel = best
	}
	return best >= 0
}

// step is j (d = 1) or k (d = -1).
func (ds *drillScreen) step(d int) {
	p := ds.drillPage()
	ds.page.scroll, _ = ds.pageRange(len(p.lines))
	next := ds.sel + d
	switch {
	case ds.onPage(p, ds.sel) && next >= 0 && next < len(p.at) && p.at[next] >= 0:
		ds.sel = next
		ds.showLine(p.at[next], len(p.lines))
	case ds.onPage(p, ds.sel) || !ds.selectOnPage(p, d):
		ds.scrollPage(p, d) // no drillable line that way: the page moves
	}
}

// pageMove moves the page by d lines (±far: to an end) and brings the
// selection onto it.
func (ds *drillScreen) pageMove(d int) {
	p := ds.drillPage()
	ds.page.scroll, _ = ds.pageRange(len(p.lines))
	ds.scrollPage(p, d)
	if dir := d; !ds.onPage(p, ds.sel) {
		if d == common.Far {
			dir = -1 // G: the last line, nearest the end
		}
		ds.selectOnPage(p, dir)
	}
}

// scrollPage moves the page by d lines, within the page.
func (ds *drillScreen) scrollPage(p drillPage, d int) {
	ds.page.scroll = min(common.ClampAdd(ds.page.scroll, d), max(len(p.lines)-ds.h, 0))
}

// showLine scrolls the page of n lines so line i shows, above the line
// that may say more follows.
func (ds *drillScreen) showLine(i, n int) {
	h := ds.h
	if i < ds.page.scroll {
		ds.page.scroll = i
	}
	if i >= ds.page.scroll+h-1 {
		ds.page.scroll = i - h + 2
	}
	ds.page.scroll = min(max(ds.page.scroll, 0), max(n-h, 0))
}

// selected is enter: the selected line's filter, when it shows.
func (ds *drillScreen) selected() (filter.Filter, bool) {
	p := ds.drillPage()
	if !ds.onPage(p, ds.sel) {
		ds.Status = "no line is selected on this page: j/k select one, enter opens it"
		return filter.Filter{}, false
	}
	return ds.drills[ds.sel].f, true
}

// moveKeys move the selection among the drillable lines and page the
// screen.
func (ds *drillScreen) moveKeys() []common.KeyAction {
	k := ds.Keys
	page := max(ds.h-1, 1) // the lines a page shows above its "more" line
	return []common.KeyAction{
		{Binding: k.Up, Do: common.NoCmd(func() { ds.step(-1) })},
		{Binding: k.Down, Do: common.NoCmd(func() { ds.step(1) })},
		{Binding: k.Top, Do: common.NoCmd(ds.fromTop)},
		{Binding: k.Bottom, Do: common.NoCmd(func() { ds.pageMove(common.Far) })},
		{Binding: k.PageUp, Do: common.NoCmd(func() { ds.pageMove(-page) })},
		{Binding: k.PageDown, Do: common.NoCmd(func() { ds.pageMove(page) })},
	}
}
