package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/ui/common"
)

// helpScreen is the help overlay (?): every key by group, and how to turn
// writes on. It is drawn over the screen it was opened on and takes every
// key while open.
type helpScreen struct {
	*shared
	open    bool
	streams bool // opened over the Streams screen: its keys, not the records'
	scroll  int
	w, h    int
	// Whether the overlay fits, for the size it was measured at.
	fitsAt   [2]int
	fitsMemo bool
}

func newHelpScreen(c *shared) *helpScreen { return &helpScreen{shared: c} }

// Open shows the overlay from its top; streams: over the Streams screen.
func (h *helpScreen) Open(streams bool) { h.open, h.streams, h.scroll = true, streams, 0 }

func (h *helpScreen) SetSize(width, height int) { h.w, h.h = width, height }

// Update takes a key: j/k scroll an overlay taller than the body, any
// other key closes it.
func (h *helpScreen) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	switch {
	case !ok:
	case key.Matches(k, h.Keys.Down) && !h.fits():
		h.scroll++
	case key.Matches(k, h.Keys.Up) && !h.fits():
		h.scroll--
	default:
		h.open = false
	}
	return nil
}

func (h *helpScreen) View() string { return h.ScrollBy(h.content(), &h.scroll, h.h) }

// content lays the key groups out as columns that fit the width: groups
// flow left to right and start a new band when the next would not fit, so
// 80 columns hold every key. A disabled key (the write keys of a session
// that cannot write) is listed dim, and a line under the keys says why and
// how to turn writes on. On a terminal too short for them all, j/k scroll
// the overlay (scrolled clamps).
func (h *helpScreen) content() string {
	cols, off := h.columns()
	hint := "(any key closes)"
	if !h.fits() {
		hint = "(j/k scroll · any other key closes)"
	}
	lines := []string{h.Styles.Title.Render("Keys") + "  " + h.Styles.Dim.Render(hint)}
	lines = append(lines, h.bands(cols)...)
	notes := []string{ansi.Wrap(h.Styles.Dim.Render(h.filterNote()), h.w, " ·")}
	if off {
		notes = append([]string{ansi.Wrap(h.OffHint(h.streams), h.w, " ")}, notes...)
	}
	note := strings.Join(notes, "\n")
	// A blank line sets the notes apart, unless it is the line that would
	// push them off a terminal that holds them without it (80×24 read-only).
	if n, body := len(lines)+1+strings.Count(note, "\n")+1, h.h; !off || n <= body || n-1 > body {
		lines = append(lines, "")
	}
	lines = append(lines, note)
	return strings.Join(lines, "\n")
}

// columns are the key groups as columns of lines, a title over the
// keys; off says some key is listed disabled.
func (h *helpScreen) columns() (cols [][]string, off bool) {
	for _, g := range h.groups() {
		keyW := 0
		for _, b := range g.Keys {
			if len(b.Keys()) > 0 {
				keyW = max(keyW, ansi.StringWidth(b.Help().Key))
			}
		}
		col := []string{h.Styles.Title.Render(g.Title)}
		for _, b := range g.Keys {
			switch {
			case len(b.Keys()) == 0: // unbound: not a key at all
			case b.Enabled():
				col = append(col, common.Fit(b.Help().Key, keyW)+" "+h.Styles.Dim.Render(b.Help().Desc))
			default:
				col = append(col, h.Styles.Dim.Render(common.Fit(b.Help().Key, keyW)+" "+b.Help().Desc))
				off = true
			}
		}
		if len(col) > 1 {
			cols = append(cols, col)
		}
	}
	return cols, off
}

// bands lays the columns out side by side, as many as fit the width,
// in bands a blank line apart.
func (h *helpScreen) bands(cols [][]string) []string {
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
			if n > 0 && used+w > h.w {
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
					cell = common.Fit(cell, widths[i]+gap)
				}
				line.WriteString(cell)
			}
			lines = append(lines, strings.TrimRight(line.String(), " "))
		}
		cols = cols[n:]
	}
	return lines
}

// fits reports whether the overlay fits the body: then any key closes
// it; else j and k scroll it first.
func (h *helpScreen) fits() bool {
	if h.fitsAt != [2]int{h.w, h.h} {
		h.fitsAt = [2]int{h.w, h.h}
		h.fitsMemo = true // measured with the longer hint: the overlay's height does not depend on it
		h.fitsMemo = strings.Count(h.content(), "\n")+1 <= h.h
	}
	return h.fitsMemo
}

// streamsGroups is the overlay on the Streams screen: the keys
// that work there, the write keys dim when the session cannot write.
func (h *helpScreen) streamsGroups() []common.HelpGroup {
	k := h.Keys
	on := h.CanWrite()
	write := "write (guarded)"
	if !on {
		write = "write (off)"
	}
	return []common.HelpGroup{
		{Title: "move", Keys: []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}},
		{Title: "screens", Keys: []key.Binding{k.Open, common.Relabel(k.Back, "back", true), k.NextScreen, k.PrevScreen, k.Help, k.Quit}},
		{Title: "pending entries", Keys: []key.Binding{k.Filter, k.ClearFilter, k.StaleOnly, common.Relabel(k.Rescan, "re-read", true), k.Command}},
		{Title: write, Keys: []key.Binding{common.Relabel(k.Mark, "mark entry", on), common.Relabel(k.MarkAll, k.MarkAll.Help().Desc, on),
			common.Relabel(k.Unmark, k.Unmark.Help().Desc, on), k.Retry, k.Ack, k.DeadLetter}},
	}
}

// groups are the overlay's keys for the screen shown.
func (h *helpScreen) groups() []common.HelpGroup {
	if h.streams {
		return h.streamsGroups()
	}
	return h.Keys.HelpGroups()
}

// filterNote is the overlay's line on the screen's filter.
func (h *helpScreen) filterNote() string {
	if h.streams {
		return "Filter (/): text of a consumer or an entry ID · x: the stale entries only"
	}
	return "Filter (/), every term must match: text · glob* · principal=customer-42 · state=processing · flag=stuck · stale"
}
