package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// The help overlay: every key by group, and how to turn writes on.

// helpView lays the key groups out as columns that fit the width: groups
// flow left to right and start a new band when the next would not fit, so
// 80 columns hold every key. A disabled key (the write keys of a session
// that cannot write) is listed dim, and a line under the keys says why and
// how to turn writes on. On a terminal too short for them all, j/k scroll
// the overlay (scrolled clamps).
func (m *Model) helpView() string {
	cols, off := m.helpColumns()
	hint := "(any key closes)"
	if !m.helpFits() {
		hint = "(j/k scroll · any other key closes)"
	}
	lines := []string{m.styles.Title.Render("Keys") + "  " + m.styles.Dim.Render(hint)}
	lines = append(lines, m.helpBands(cols)...)
	notes := []string{ansi.Wrap(m.styles.Dim.Render(m.helpFilterNote()), m.width, " ·")}
	if off {
		notes = append([]string{ansi.Wrap(m.readOnlyHint(), m.width, " ")}, notes...)
	}
	note := strings.Join(notes, "\n")
	// A blank line sets the notes apart, unless it is the line that would
	// push them off a terminal that holds them without it (80×24 read-only).
	if n, h := len(lines)+1+strings.Count(note, "\n")+1, m.bodyHeight(); !off || n <= h || n-1 > h {
		lines = append(lines, "")
	}
	lines = append(lines, note)
	return strings.Join(lines, "\n")
}

// helpColumns are the key groups as columns of lines, a title over the
// keys; off says some key is listed disabled.
func (m *Model) helpColumns() (cols [][]string, off bool) {
	for _, g := range m.helpGroups() {
		keyW := 0
		for _, b := range g.keys {
			if len(b.Keys()) > 0 {
				keyW = max(keyW, ansi.StringWidth(b.Help().Key))
			}
		}
		col := []string{m.styles.Title.Render(g.title)}
		for _, b := range g.keys {
			switch {
			case len(b.Keys()) == 0: // unbound: not a key at all
			case b.Enabled():
				col = append(col, fit(b.Help().Key, keyW)+" "+m.styles.Dim.Render(b.Help().Desc))
			default:
				col = append(col, m.styles.Dim.Render(fit(b.Help().Key, keyW)+" "+b.Help().Desc))
				off = true
			}
		}
		if len(col) > 1 {
			cols = append(cols, col)
		}
	}
	return cols, off
}

// helpBands lays the columns out side by side, as many as fit the width,
// in bands a blank line apart.
func (m *Model) helpBands(cols [][]string) []string {
	var lines []string
	const gap = 2
	for band := 0; len(cols) > 0; band++ {
		// One band: as many columns as fit side by side.
		n, used := 0, 0
		var widths []int
		for n < len(cols) {
			w := 0
			for _, l := range cols[n] {
				w = max(w, ansi.StringWidth(l))
			}
			if n > 0 && used+w > m.width {
				break
			}
			used += w + gap
			widths = append(widths, w)
			n++
		}
		rows := 0
		for _, c := range cols[:n] {
			rows = max(rows, len(c))
		}
		if band > 0 {
			lines = append(lines, "")
		}
		for r := range rows {
			var line strings.Builder
			for i, c := range cols[:n] {
				cell := ""
				if r < len(c) {
					cell = c[r]
				}
				if i < n-1 {
					cell = fit(cell, widths[i]+gap)
				}
				line.WriteString(cell)
			}
			lines = append(lines, strings.TrimRight(line.String(), " "))
		}
		cols = cols[n:]
	}
	return lines
}

// helpFits reports whether the help overlay fits the body: then any key
// closes it; else j and k scroll it first.
func (m *Model) helpFits() bool {
	if m.helpFitsAt != [2]int{m.width, m.height} {
		m.helpFitsAt = [2]int{m.width, m.height}
		m.helpFitsMemo = true // measured with the longer hint: the overlay's height does not depend on it
		m.helpFitsMemo = strings.Count(m.helpView(), "\n")+1 <= m.bodyHeight()
	}
	return m.helpFitsMemo
}
