package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
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

func (rt recordsTable) header() string {
	l := rt.layout
	arrow := func(c column, name string) string {
		if rt.store.sortCol == c {
			if rt.store.sortDesc {
				return name + "↓"
			}
			return name + "↑"
		}
		return name
	}
	var b strings.Builder
	b.WriteString(common.Fit(arrow(colState, "STATE"), l.state))
	cell(&b, common.FitRight, arrow(colAge, "AGE"), l.age)
	cell(&b, common.FitRight, arrow(colTTL, "TTL"), l.ttl)
	cell(&b, common.FitRight, arrow(colMemory, "MEM"), l.mem)
	cell(&b, common.Fit, arrow(colFingerprint, "FP"), l.fp)
	cell(&b, common.Fit, arrow(colFlags, "FLAGS"), l.flags)
	b.WriteString(" " + common.Fit(arrow(colKey, rt.keyTitle()), l.key))
	return rt.Styles.ColHead.Render(common.Fit(b.String(), rt.Width))
}

// cell writes a space and s fitted to w, or nothing for a hidden column.
func cell(b *strings.Builder, fitTo func(string, int) string, s string, w int) {
	if w > 0 {
		b.WriteString(" " + fitTo(s, w))
	}
}

// row renders one record; only visible rows are ever rendered.
func (rt recordsTable) row(r *inspect.Record, selected bool) string {
	l := rt.layout
	name := r.State.String()
	if rt.marks[r.Key] {
		name = "*" + name
	}
	st := common.Fit(name, l.state)
	if !selected {
		st = rt.Styles.State[r.State].Render(st)
	}
	var b strings.Builder
	b.WriteString(st)
	cell(&b, common.FitRight, units.FormatMs(r.AgeMs), l.age)
	cell(&b, common.FitRight, units.FormatTTL(r.TTLms), l.ttl)
	cell(&b, common.FitRight, units.FormatBytes(r.MemoryBytes), l.mem)
	if l.fp > 0 {
		fp := r.Fingerprint
		if len(fp) > l.fp {
			fp = fp[:l.fp]
		}
		cell(&b, common.Fit, inspect.Sanitize(fp), l.fp)
	}
	if l.flags > 0 {
		text := shortFlags(r.Flags)
		if rt.isNewStale(r) {
			text = "+" + text // stale since the previous scan
		}
		flags := common.Fit(text, l.flags)
		if r.Stale() && !selected {
			flags = rt.Styles.Stale.Render(flags)
		}
		b.WriteString(" " + flags)
	}
	b.WriteString(" " + fitKey(r, l.key))
	if selected {
		return rt.Styles.Selected.Render(common.Fit(b.String(), rt.Width))
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
		return common.FitMiddle(k, w)
	}
	last := inspect.Sanitize(r.Groups[len(r.Groups)-1])
	head, ok := strings.CutSuffix(k, last)
	if !ok {
		return common.FitMiddle(k, w)
	}
	hw, lw := ansi.StringWidth(head), ansi.StringWidth(last)
	if hw+1+min(lw, keyTailMin) <= w {
		return head + "…" + ansi.TruncateLeft(last, lw-(w-hw-1), "")
	}
	tail := min(lw, keyTailMin)
	return common.Fit(ansi.Truncate(head, w-1-tail, "")+"…"+ansi.TruncateLeft(last, lw-tail, ""), w)
}

// displayKey drops the keyspace's constant prefix: the header names it.
func displayKey(r *inspect.Record) string {
	if r.Keyspace != nil && r.Groups != nil {
		return strings.TrimPrefix(r.Key, r.Keyspace.Template.Prefix())
	}
	return r.Key
}

// keyTitle names the key column, with the prefix the rows leave out.
func (rt recordsTable) keyTitle() string {
	if len(rt.Opts.Keyspaces) == 1 {
		if p := rt.Opts.Keyspaces[0].Template.Prefix(); p != "" {
			return "KEY (" + inspect.Sanitize(p) + "…)"
		}
	}
	return "KEY"
}

// tableRows is how many records fit under the column header.
func (rs *recordsScreen) tableRows() int { return max(rs.h-1, 1) }

// View is the table, or the groups when the records are grouped.
func (rs *recordsScreen) View() string {
	if rs.grouped() {
		return recordGroups{rs}.View()
	}
	return recordsTable{rs}.View()
}

// recordsTable draws the Records screen's table: the column header, the
// rows in the window around the cursor, or why there is none.
type recordsTable struct{ *recordsScreen }

func (rt recordsTable) View() string {
	rs := rt.recordsScreen
	var b strings.Builder
	b.WriteString(rt.header())
	rows := rs.tableRows()
	s := rs.store
	if len(s.view) == 0 {
		b.WriteString("\n")
		switch {
		case rs.scanning():
			b.WriteString(rs.Styles.Dim.Render("  scanning…"))
		case s.recs.Len() == 0:
			b.WriteString(rs.Styles.Dim.Render(ansi.Wrap(rt.emptyHint(), rs.Width-2, " ")))
		default:
			b.WriteString(rs.Styles.Dim.Render("  no record matches the filter (c clears it)"))
		}
		return b.String()
	}
	end := min(rs.offset+rows, len(s.view))
	for pos := rs.offset; pos < end; pos++ {
		b.WriteString("\n")
		b.WriteString(rt.row(s.at(pos), pos == rs.cursor))
	}
	return b.String()
}

// emptyHint says where else the records may be when a scan finds none.
func (rt recordsTable) emptyHint() string {
	var match []string
	for _, ks := range rt.Opts.Keyspaces {
		match = append(match, inspect.Sanitize(ks.Match))
	}
	return fmt.Sprintf("  no records in these keyspaces. Check the match pattern (%s) and the database (%s): "+
		"records in another database need --db or a /N in the URL. 'idemctl detect' samples the server and suggests a pattern and schema.",
		strings.Join(match, ", "), inspect.Sanitize(strings.TrimPrefix(rt.Opts.Address, "redis://")))
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

// current is the record under the cursor, nil in an empty view.
func (rs *recordsScreen) current() *inspect.Record { return rs.store.at(rs.cursor) }

func (rs *recordsScreen) cursorKey() string {
	if r := rs.current(); r != nil {
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
		parts = append(parts, fmt.Sprintf("%s groups by %s (enter opens)", common.Count(len(g.byValue)), inspect.Sanitize(g.name)))
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
func (rs *recordsScreen) footer() []common.KeyBinding {
	k := rs.Keys
	if rs.CanWrite() {
		return []common.KeyBinding{k.Help, k.Filter, k.StaleOnly, k.Mark, k.Fail, k.Expire, k.Reconcile, k.Quit}
	}
	return k.ShortHelp(rs.OffNote(false))
}
