package ui

import "strings"

// The Overview's and Stats' pages: a selection among the drillable lines
// and a scroll. j/k move the selection and the page follows it; past the
// first or last drillable line, or where the page holds none, they move
// the page a line, so every line of the page is reached. pgdn, pgup, G,
// g and the wheel move the page, and a selection the page left behind
// comes to the nearest drillable line on the new page. Nothing moves the
// page but a key: a refresh keeps it (and a page shown to its end stays
// at its end, see scrolled).

// drillPage is a drill screen as drawn now: its lines, and the line of
// each drillable one (-1: not on the page, cut away).
type drillPage struct {
	lines []string
	at    []int
}

// renderDrills draws the Overview or Stats, registering their drillable
// lines and keeping the selection among them.
func (m *Model) renderDrills() string {
	render := m.overviewView
	if m.screen == screenStats {
		render = m.statsView
	}
	m.drills = m.drills[:0]
	body := render()
	if n := len(m.drills); n > 0 && m.drillSel >= n {
		m.drillSel = n - 1
		m.drills = m.drills[:0]
		body = render()
	}
	return body
}

// drillPage draws the screen and finds each drillable line on it: the
// first place its text stands whole (not the head of a longer value, as
// customer-1 of customer-11) that no earlier one took.
func (m *Model) drillPage() drillPage {
	p := drillPage{lines: strings.Split(m.renderDrills(), "\n")}
	taken := map[[2]int]bool{}
	for _, d := range m.drills {
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
func (m *Model) pageRange(n int) (from, to int) {
	h := m.bodyHeight()
	from = min(max(m.page.scroll, 0), max(n-h, 0))
	to = min(from+h, n)
	if to < n && h > 1 {
		to--
	}
	return from, to
}

// onPage reports whether drillable line i shows on the page.
func (m *Model) onPage(p drillPage, i int) bool {
	from, to := m.pageRange(len(p.lines))
	return i >= 0 && i < len(p.at) && p.at[i] >= from && p.at[i] < to
}

// selectOnPage selects the drillable line on the page nearest where the
// page came from: the topmost when it moved down (d > 0), else the
// lowest. It reports whether the page holds one.
func (m *Model) selectOnPage(p drillPage, d int) bool {
	best := -1
	for i := range p.at {
		if !m.onPage(p, i) {
			continue
		}
		if best < 0 || d > 0 && p.at[i] < p.at[best] || d < 0 && p.at[i] > p.at[best] {
			best = i
		}
	}
	if best >= 0 {
		m.drillSel = best
	}
	return best >= 0
}

// drillStep is j (d = 1) or k (d = -1).
func (m *Model) drillStep(d int) {
	p := m.drillPage()
	m.page.scroll, _ = m.pageRange(len(p.lines))
	next := m.drillSel + d
	switch {
	case m.onPage(p, m.drillSel) && next >= 0 && next < len(p.at) && p.at[next] >= 0:
		m.drillSel = next
		m.showLine(p.at[next], len(p.lines))
	case m.onPage(p, m.drillSel) || !m.selectOnPage(p, d):
		m.scrollPage(p, d) // no drillable line that way: the page moves
	}
}

// drillPageMove moves the page by d lines (±far: to an end) and brings the
// selection onto it.
func (m *Model) drillPageMove(d int) {
	p := m.drillPage()
	m.page.scroll, _ = m.pageRange(len(p.lines))
	m.scrollPage(p, d)
	if dir := d; !m.onPage(p, m.drillSel) {
		if d == far {
			dir = -1 // G: the last line, nearest the end
		}
		m.selectOnPage(p, dir)
	}
}

// scrollPage moves the page by d lines, within the page.
func (m *Model) scrollPage(p drillPage, d int) {
	m.page.scroll = min(clampAdd(m.page.scroll, d), max(len(p.lines)-m.bodyHeight(), 0))
}

// showLine scrolls the page of n lines so line i shows, above the line
// that may say more follows.
func (m *Model) showLine(i, n int) {
	h := m.bodyHeight()
	if i < m.page.scroll {
		m.page.scroll = i
	}
	if i >= m.page.scroll+h-1 {
		m.page.scroll = i - h + 2
	}
	m.page.scroll = min(max(m.page.scroll, 0), max(n-h, 0))
}

// openDrill is enter: the selected line's records, when it shows.
func (m *Model) openDrill() {
	p := m.drillPage()
	if !m.onPage(p, m.drillSel) {
		m.status = "no line is selected on this page: j/k select one, enter opens it"
		return
	}
	m.drillTo(m.drills[m.drillSel])
}

// drillKeys are the Overview's and Stats' keys: move the selection among
// the drillable lines, open one, page the screen.
func (m *Model) drillKeys() []keyAction {
	k := m.keys
	page := max(m.bodyHeight()-1, 1) // the lines a page shows above its "more" line
	return []keyAction{
		{k.Open, noCmd(m.openDrill)},
		{k.Up, noCmd(func() { m.drillStep(-1) })},
		{k.Down, noCmd(func() { m.drillStep(1) })},
		{k.Top, noCmd(func() { m.drillSel, m.page.scroll = 0, 0 })},
		{k.Bottom, noCmd(func() { m.drillPageMove(far) })},
		{k.PageUp, noCmd(func() { m.drillPageMove(-page) })},
		{k.PageDown, noCmd(func() { m.drillPageMove(page) })},
	}
}
