package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
	"github.com/idemctl/idemctl/internal/units"
)

// tableLayout holds column widths, computed on resize, not per frame. A
// width of 0 hides the column.
type tableLayout struct {
	state, age, ttl, mem, fp, flags, key int
}

// The layout rule for narrow terminals: STATE and KEY always show, and KEY
// keeps about half the width (at least 26 cells: enough for principal and
// endpoint, the captures a key starts with once the keyspace prefix is
// dropped). The optional columns join in priority order while KEY keeps
// its share: FLAGS (stale, stuck), AGE, TTL, MEM, FP. So as the terminal
// narrows they give way in the reverse order: FP first, then MEM, TTL, AGE,
// and FLAGS last. Width left over goes to FLAGS (up to 28) and KEY. At 80
// columns: STATE AGE TTL FLAGS KEY; at 60: STATE AGE FLAGS KEY; from 120
// every column.
const (
	stateW   = 11 // "reconciled" and the mark (*) before it
	flagsMin = 11 // "nottl,stuck"
)

func keyMin(width int) int { return max(26, width/2-2) }

func computeLayout(width int) tableLayout {
	l := tableLayout{state: stateW}
	used := stateW + 1 // each column but KEY is followed by a space
	for _, c := range []struct {
		w   *int
		min int
	}{{&l.flags, flagsMin}, {&l.age, 7}, {&l.ttl, 7}, {&l.mem, 7}, {&l.fp, 8}} {
		if width-used-c.min-1 < keyMin(width) {
			break // this column and every later one give way
		}
		*c.w = c.min
		used += c.min + 1
	}
	rest := width - used
	if grow := min(rest-keyMin(width), 28-l.flags); l.flags > 0 && grow > 0 {
		l.flags += grow
		rest -= grow
	}
	l.key = max(rest, 8)
	return l
}

// flagName is a flag's one name in the TUI: its short word, shown in the
// table, the detail and the stats, and accepted by the filter (flag=stuck).
func flagName(f inspect.Flags) string {
	for _, fi := range inspect.AllFlags() {
		if fi.Flag == f {
			return fi.Short
		}
	}
	return ""
}

// shortFlags lists a record's flags by their short names.
func shortFlags(f inspect.Flags) string {
	if f == 0 {
		return ""
	}
	var parts []string
	for _, fi := range inspect.AllFlags() {
		if f&fi.Flag != 0 {
			parts = append(parts, fi.Short)
		}
	}
	return strings.Join(parts, ",")
}

// filterText is the filter in the TUI's words (flags by their short names).
func filterText(f filter.Filter) string {
	flags := f.Flags
	f.Flags = 0
	parts := []string{}
	if flags != 0 {
		parts = append(parts, "flag="+shortFlags(flags))
	}
	if s := f.String(); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// fit pads or cuts s to exactly w cells (cutting on the right).
func fit(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-sw)
}

// fitLeft pads or cuts s to w cells, keeping its end: key tails tell records apart.
func fitLeft(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw > w {
		return ansi.TruncateLeft(s, sw-w+1, "…")
	}
	return s + strings.Repeat(" ", w-sw)
}

// fitMiddle pads or cuts s to w cells, keeping its head and its tail.
func fitMiddle(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw <= w {
		return s + strings.Repeat(" ", w-sw)
	}
	if w < 8 {
		return fitLeft(s, w)
	}
	head := (w - 1) * 2 / 5
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, sw-(w-1-head), "")
}

func fitRight(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw >= w {
		return ansi.Truncate(s, w, "")
	}
	return strings.Repeat(" ", w-sw) + s
}

func (rs *recordsScreen) tableHeader() string {
	l := rs.layout
	arrow := func(c column, name string) string {
		if rs.store.sortCol == c {
			if rs.store.sortDesc {
				return name + "↓"
			}
			return name + "↑"
		}
		return name
	}
	var b strings.Builder
	b.WriteString(fit(arrow(colState, "STATE"), l.state))
	cell(&b, fitRight, arrow(colAge, "AGE"), l.age)
	cell(&b, fitRight, arrow(colTTL, "TTL"), l.ttl)
	cell(&b, fitRight, arrow(colMemory, "MEM"), l.mem)
	cell(&b, fit, arrow(colFingerprint, "FP"), l.fp)
	cell(&b, fit, arrow(colFlags, "FLAGS"), l.flags)
	b.WriteString(" " + fit(arrow(colKey, rs.keyTitle()), l.key))
	return rs.styles.ColHead.Render(fit(b.String(), rs.width))
}

// cell writes a space and s fitted to w, or nothing for a hidden column.
func cell(b *strings.Builder, fitTo func(string, int) string, s string, w int) {
	if w > 0 {
		b.WriteString(" " + fitTo(s, w))
	}
}

// row renders one record; only visible rows are ever rendered.
func (rs *recordsScreen) row(r *inspect.Record, selected bool) string {
	l := rs.layout
	name := r.State.String()
	if rs.marks[r.Key] {
		name = "*" + name
	}
	st := fit(name, l.state)
	if !selected {
		st = rs.styles.State[r.State].Render(st)
	}
	var b strings.Builder
	b.WriteString(st)
	cell(&b, fitRight, units.FormatMs(r.AgeMs), l.age)
	cell(&b, fitRight, units.FormatTTL(r.TTLms), l.ttl)
	cell(&b, fitRight, units.FormatBytes(r.MemoryBytes), l.mem)
	if l.fp > 0 {
		fp := r.Fingerprint
		if len(fp) > l.fp {
			fp = fp[:l.fp]
		}
		cell(&b, fit, inspect.Sanitize(fp), l.fp)
	}
	if l.flags > 0 {
		text := shortFlags(r.Flags)
		if rs.isNewStale(r) {
			text = "+" + text // stale since the previous scan
		}
		flags := fit(text, l.flags)
		if r.Stale() && !selected {
			flags = rs.styles.Stale.Render(flags)
		}
		b.WriteString(" " + flags)
	}
	b.WriteString(" " + fitKey(r, l.key))
	if selected {
		return rs.styles.Selected.Render(fit(b.String(), rs.width))
	}
	return b.String()
}

// keyTailMin is how much of a key's last capture (the request id) a cut
// key keeps at least: its tail is what tells apart the records of one
// principal and endpoint.
const keyTailMin = 8

// fitKey fits a record's key to w cells. Cut, it keeps what tells the
// operator where to look — the captures before the last one (principal,
// endpoint) — and the tail of the last (the request id), never a blind
// middle: two records of one endpoint never read the same. When the head
// and keyTailMin cells of the id do not both fit, the head is cut instead
// (customer-11:POST:/v2/checkout…de0-0042).
func fitKey(r *inspect.Record, w int) string {
	k := inspect.Sanitize(displayKey(r))
	kw := ansi.StringWidth(k)
	if kw <= w || len(r.Groups) < 2 || w < 2*keyTailMin {
		return fitMiddle(k, w)
	}
	last := inspect.Sanitize(r.Groups[len(r.Groups)-1])
	head, ok := strings.CutSuffix(k, last)
	if !ok {
		return fitMiddle(k, w)
	}
	hw, lw := ansi.StringWidth(head), ansi.StringWidth(last)
	if hw+1+min(lw, keyTailMin) <= w {
		return head + "…" + ansi.TruncateLeft(last, lw-(w-hw-1), "")
	}
	tail := min(lw, keyTailMin)
	return fit(ansi.Truncate(head, w-1-tail, "")+"…"+ansi.TruncateLeft(last, lw-tail, ""), w)
}

// displayKey drops the keyspace's constant prefix: the header names it.
func displayKey(r *inspect.Record) string {
	if r.Keyspace != nil && r.Groups != nil {
		return strings.TrimPrefix(r.Key, r.Keyspace.Template.Prefix())
	}
	return r.Key
}

// keyTitle names the key column, with the prefix the rows leave out.
func (rs *recordsScreen) keyTitle() string {
	if len(rs.opts.Keyspaces) == 1 {
		if p := rs.opts.Keyspaces[0].Template.Prefix(); p != "" {
			return "KEY (" + inspect.Sanitize(p) + "…)"
		}
	}
	return "KEY"
}

// tableRows is how many records fit under the column header.
func (rs *recordsScreen) tableRows() int { return max(rs.h-1, 1) }

func (rs *recordsScreen) View() string {
	if rs.grouped() {
		return rs.groupsView()
	}
	var b strings.Builder
	b.WriteString(rs.tableHeader())
	rows := rs.tableRows()
	s := rs.store
	if len(s.view) == 0 {
		b.WriteString("\n")
		switch {
		case rs.scanning():
			b.WriteString(rs.styles.Dim.Render("  scanning…"))
		case s.recs.Len() == 0:
			b.WriteString(rs.styles.Dim.Render(ansi.Wrap(rs.emptyHint(), rs.width-2, " ")))
		default:
			b.WriteString(rs.styles.Dim.Render("  no record matches the filter (c clears it)"))
		}
		return b.String()
	}
	end := min(rs.offset+rows, len(s.view))
	for pos := rs.offset; pos < end; pos++ {
		b.WriteString("\n")
		b.WriteString(rs.row(s.at(pos), pos == rs.cursor))
	}
	return b.String()
}

// emptyHint says where else the records may be when a scan finds none.
func (rs *recordsScreen) emptyHint() string {
	var match []string
	for _, ks := range rs.opts.Keyspaces {
		match = append(match, inspect.Sanitize(ks.Match))
	}
	return fmt.Sprintf("  no records in these keyspaces. Check the match pattern (%s) and the database (%s): "+
		"records in another database need --db or a /N in the URL. 'idemctl detect' samples the server and suggests a pattern and schema.",
		strings.Join(match, ", "), inspect.Sanitize(strings.TrimPrefix(rs.opts.Address, "redis://")))
}

func (rs *recordsScreen) moveCursor(delta int) {
	rs.cursor += delta
	rs.clampCursor()
}

// clampCursor keeps the cursor in the view and the window around it.
func (rs *recordsScreen) clampCursor() {
	n := len(rs.store.view)
	rs.cursor = min(max(rs.cursor, 0), max(n-1, 0))
	rows := rs.tableRows()
	if rs.cursor < rs.offset {
		rs.offset = rs.cursor
	}
	if rs.cursor >= rs.offset+rows {
		rs.offset = rs.cursor - rows + 1
	}
	rs.offset = min(max(rs.offset, 0), max(n-rows, 0))
}

func (rs *recordsScreen) cursorKey() string {
	if r := rs.store.at(rs.cursor); r != nil {
		return r.Key
	}
	return ""
}

// restoreCursor puts the cursor back on key after the view changed.
func (rs *recordsScreen) restoreCursor(key string) {
	if key != "" {
		if pos := rs.store.find(key); pos >= 0 {
			rs.cursor = pos
		}
	}
	rs.clampCursor()
}

// withCursorKept runs a view change and keeps the cursor on its record. A
// cursor on the first row stays there: the top of the view is what needs
// attention first, and a scan filling it in must not carry the cursor away.
func (rs *recordsScreen) withCursorKept(change func()) {
	key := rs.cursorKey()
	if rs.cursor == 0 {
		key = ""
	}
	st, idx := rs.store, int32(-1)
	if key != "" {
		idx = st.view[rs.cursor]
	}
	change()
	if rs.store == st && idx >= 0 {
		// The same store: its record index is found in the view's ints,
		// not by reading keys (at 10M records that read was 0.4 s).
		if pos := slices.Index(st.view, idx); pos >= 0 {
			rs.cursor = pos
		}
		rs.clampCursor()
		return
	}
	rs.restoreCursor(key)
}

// statusParts are the status line's parts on the table (and the detail
// opened from it): the view's size, the marks, the filter, the grouping
// and the order.
func (rs *recordsScreen) statusParts() []string {
	parts := []string{fmt.Sprintf("%s of %s", units.FormatCount(int64(len(rs.store.view))), units.FormatCount(int64(rs.store.recs.Len())))}
	if len(rs.marks) > 0 { // what a write would take: never the part cut
		parts = append(parts, units.FormatCount(int64(len(rs.marks)))+" marked")
	}
	if d := filterText(rs.store.f); d != "" {
		parts = append(parts, "filter: "+d)
	}
	if g := rs.store.group; g != nil && g.expanding == "" {
		parts = append(parts, fmt.Sprintf("%s groups by %s (enter opens)", count(len(g.byValue)), inspect.Sanitize(g.name)))
	} else if g != nil {
		parts = append(parts, "esc: groups")
	}
	if rs.store.sortCol != colNone {
		dir := "↑"
		if rs.store.sortDesc {
			dir = "↓"
		}
		sortBy := "sort: " + columnNames[rs.store.sortCol] + dir
		parts = append(parts, sortBy) // the column's title has the arrow too: this part gives way first
	}
	return parts
}

// footer is the help line's keys on the table: the write keys, or where
// a session that writes has them, said off.
func (rs *recordsScreen) footer() []keyBinding {
	k := rs.keys
	if rs.canWrite() {
		return []keyBinding{k.Help, k.Filter, k.StaleOnly, k.Mark, k.Fail, k.Expire, k.Reconcile, k.Quit}
	}
	return k.ShortHelp(rs.offNote(false))
}
