package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/streams"
	"github.com/idemctl/idemctl/internal/units"
)

// The Streams screen's drawing: every line fitted to the width by whole
// words or cut in its middle (keys, names, IDs), never wrapped by the
// terminal; everything from Redis through the sanitizer.

func sanitizeText(t inspect.Text) string { return inspect.Sanitize(string(t)) }

// wrapHang is prefix then value wrapped at spaces to width, continuation
// lines under the value (hang also breaks after : and /, which may leave
// a line one cell too wide).
func wrapHang(prefix, value string, width int) string {
	pw := ansi.StringWidth(prefix)
	lines := strings.Split(ansi.Wrap(value, max(width-pw, 8), " "), "\n")
	pad := strings.Repeat(" ", pw)
	for i := 1; i < len(lines); i++ {
		lines[i] = pad + strings.TrimLeft(lines[i], " ")
	}
	return prefix + strings.Join(lines, "\n")
}

// dimLines renders each line dim on its own (lipgloss pads a block to its
// widest line).
func (c *common) dimLines(s string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = c.styles.Dim.Render(l)
	}
	return lines
}

// joinFit joins the parts that fit the width, whole: one that does not is
// left out, not cut; empty ones are skipped.
func joinFit(parts []string, sep string, w int) string {
	if len(parts) == 0 {
		return ""
	}
	line := parts[0]
	for _, p := range parts[1:] {
		if p != "" && ansi.StringWidth(line+sep+p) <= w {
			line += sep + p
		}
	}
	return fit(line, w)
}

func (st *streamsScreen) content() string {
	s := st.styles
	if why := st.streamsReadable(); why != "" {
		return s.Title.Render("STREAMS") + "\n\n" + strings.Join(st.dimLines(wrapHang("  ", why, st.width)), "\n")
	}
	if !st.current() {
		msg := "scanning " + count(len(st.opts.StreamSpaces)) + " stream keyspaces for their consumer groups…"
		if st.err != "" && !st.reading {
			msg = "could not read the streams: " + st.err + " · r reads again"
		}
		return s.Title.Render("STREAMS") + "\n\n" + wrapHang("  ", msg, st.width)
	}
	switch st.level {
	case levelGroup:
		if st.group() != nil {
			return groupPage{st}.View()
		}
	case levelEntry:
		return st.scrollBy(entryPage{st}.View(), &st.fieldScroll, st.h)
	}
	return groupsTable{st}.View()
}

// The Streams screens, one type a level, over the screen's state: the
// groups table, one group (its consumers and pending entries), one entry.
type (
	groupsTable struct{ *streamsScreen }
	groupPage   struct{ *streamsScreen }
	entryPage   struct{ *streamsScreen }
)

// The groups table's columns, right-aligned numbers; STREAM and GROUP share
// what is left, at least groupNamesMin: on a narrow terminal the columns
// from the right give way, LAG first, the counts never.
var groupCols = []struct {
	title string
	w     int
}{{"PENDING", 7}, {"STALE", 6}, {"POISON", 6}, {"OLDEST", 7}, {"CONS", 5}, {"LAG", 6}}

const groupNamesMin = 30

// layout is how many of groupCols show and the names' widths.
func (gt groupsTable) layout() (cols, stream, group int) {
	cols = len(groupCols)
	rest := gt.width - 3
	for _, c := range groupCols {
		rest -= c.w + 1
	}
	for cols > 3 && rest < groupNamesMin {
		cols--
		rest += groupCols[cols].w + 1
	}
	rest = max(rest, 10)
	stream = rest * 3 / 5
	return cols, stream, rest - stream
}

func (gt groupsTable) View() string {
	st := gt.streamsScreen
	s := st.styles
	t := st.totals()
	lines := []string{s.Title.Render(joinFit([]string{"STREAMS", count(t.streams) + " streams", count(t.groups) + " groups",
		count(t.pending) + " pending", count(t.stale) + " stale", count(t.poison) + " poison", "read at " + st.readAt.Format("15:04:05")}, " · ", st.width))}
	cols, sw, gw := gt.layout()
	head := "  " + fit("STREAM", sw) + " " + fit("GROUP", gw)
	for _, c := range groupCols[:cols] {
		head += " " + fitRight(c.title, c.w)
	}
	lines = append(lines, s.ColHead.Render(fit(head, st.width)))
	rows := st.groupRows()
	notes := gt.notes()
	room := max(st.h-len(lines)-len(notes), 1)
	from, to := selWindow(&st.groupSel, &st.groupOff, room, len(rows))
	if len(rows) == 0 {
		lines = append(lines, st.emptyLine(st.filtered(), "no stream matches these keyspaces' patterns", "no group has a pending entry the filter keeps"))
	}
	for i := from; i < to; i++ {
		lines = append(lines, gt.line(rows[i], cols, sw, gw, i == st.groupSel))
	}
	return strings.Join(append(lines, notes...), "\n")
}

// selWindow clamps *sel to n rows and moves *off so that it shows in a
// window of room rows: the rows to draw are [from, to).
func selWindow(sel, off *int, room, n int) (from, to int) {
	*sel = min(*sel, max(n-1, 0))
	o := min(*off, *sel)
	if *sel >= o+room {
		o = *sel - room + 1
	}
	*off = max(min(o, n-room), 0)
	return *off, min(*off+room, n)
}

// emptyLine says why a table has no row: there is none, or the filter
// keeps none.
func (c *common) emptyLine(filtered bool, none, noMatch string) string {
	if filtered {
		none = noMatch + " (c clears it)"
	}
	return c.styles.Dim.Render(fit("  "+none, c.width))
}

func (gt groupsTable) line(r groupRow, cols, sw, gw int, selected bool) string {
	st := gt.streamsScreen
	mark := "  "
	if selected {
		mark = "▸ "
	}
	line := mark + fitMiddle(sanitizeText(r.id.stream), sw) + " "
	if r.g == nil {
		line += st.styles.Dim.Render(fit("(no group)", gw))
	} else {
		g := r.g
		more := ""
		if g.Truncated {
			more = "+" // counted among the entries read only
		}
		cells := []string{count(g.Pending), count(g.Stale) + more, count(g.Poison) + more, oldestAge(g), count(g.Consumers), lagCell(g.Lag)}
		line += fitMiddle(sanitizeText(g.Name), gw)
		for i, c := range groupCols[:cols] {
			line += " " + fitRight(cells[i], c.w)
		}
	}
	if selected {
		return st.styles.Selected.Render(fit(line, st.width))
	}
	return fit(line, st.width)
}

func oldestAge(g *streams.GroupState) string {
	switch {
	case g.Oldest == nil:
		return "-"
	case g.OldestAge == nil:
		return "?"
	}
	return units.FormatMs(g.OldestAge.D().Milliseconds())
}

func lagCell(lag *int64) string {
	if lag == nil {
		return "?"
	}
	return count(*lag)
}

// notes say what the read left out, wrapped at words.
func (gt groupsTable) notes() []string {
	st := gt.streamsScreen
	var out []string
	add := func(s string) {
		out = append(out, st.dimLines(wrapHang("note: ", s, st.width))...)
	}
	for _, r := range st.reps {
		if r.Limited {
			add(fmt.Sprintf("keyspace %s: stopped at %s streams, more may match (idemctl streams --max-streams reads more)", inspect.Sanitize(r.Space), count(len(r.Streams))))
		}
		for _, n := range r.Notes {
			add(n) // sanitized by the engine
		}
	}
	return out
}

// View is one group: what XINFO says, its consumers, then its
// pending entries with the selection.
func (p groupPage) View() string {
	st := p.streamsScreen
	s := st.styles
	rep, g := st.find(st.open)
	lines := []string{s.Title.Render(joinFit([]string{"GROUP " + sanitizeText(g.Name), "of " + sanitizeText(g.Stream), "keyspace " + inspect.Sanitize(rep.Space)}, "  ", st.width))}
	lag := "lag unknown"
	if g.Lag != nil {
		lag = "lag " + count(*g.Lag)
	}
	oldest := "nothing pending"
	if g.Oldest != nil {
		oldest = "oldest " + oldestAge(g) + " old, idle " + units.FormatMs(g.Oldest.Idle.D().Milliseconds())
	}
	lines = append(lines, joinFit([]string{count(g.Pending) + " pending", count(g.Stale) + " stale", count(g.Poison) + " poison",
		lag, oldest}, " · ", st.width))
	if sp := st.streamSpace(rep.Space); sp != nil {
		lines = append(lines, s.Dim.Render(joinFit([]string{"stale after " + units.FormatMs(sp.ProcessingTimeout.Milliseconds()) + " idle",
			fmt.Sprintf("poison after %d deliveries", sp.MaxDeliveries)}, " · ", st.width)))
	}
	lines = append(lines, p.consumerLines(g)...)
	return strings.Join(append(lines, p.entryLines(g, st.h-len(lines))...), "\n")
}

func (c *common) streamSpace(name string) *streams.Space {
	for _, sp := range c.opts.StreamSpaces {
		if sp.Name == name {
			return sp
		}
	}
	return nil
}

// consumerLines are the group's consumers, at most a quarter of the body:
// the entries below are what the operator works on.
func (p groupPage) consumerLines(g *streams.GroupState) []string {
	st := p.streamsScreen
	nameW := max(st.width-2-10-10-2, 10)
	lines := []string{st.styles.ColHead.Render(fit("  "+fit("CONSUMERS ("+count(g.Consumers)+")", nameW)+" "+fitRight("PENDING", 10)+" "+fitRight("IDLE", 10), st.width))}
	room := max(st.h/4, 2)
	cs := g.ConsumerList
	if len(cs) == 0 {
		return append(lines, st.styles.Dim.Render(fit("  no consumer has joined this group", st.width)))
	}
	for i, c := range cs {
		if i == room && len(cs) > room+1 {
			return append(lines, st.styles.Dim.Render(fit(fmt.Sprintf("  and %s more consumers", count(len(cs)-room)), st.width)))
		}
		lines = append(lines, fit("  "+fitMiddle(sanitizeText(c.Name), nameW)+" "+fitRight(count(c.Pending), 10)+" "+
			fitRight(units.FormatMs(c.Idle.D().Milliseconds()), 10), st.width))
	}
	if g.ConsumersCut {
		lines = append(lines, st.styles.Dim.Render(fit(fmt.Sprintf("  only the first %s consumers were read", count(len(cs))), st.width)))
	}
	return lines
}

// entryLines are the pending entries the filters keep, in a window of
// room lines around the selection.
func (p groupPage) entryLines(g *streams.GroupState, room int) []string {
	st := p.streamsScreen
	s := st.styles
	idW, idleW, delW, flagW := 17, 8, 6, 12
	conW := max(st.width-2-idW-idleW-delW-flagW-4, 8)
	title := "PENDING ENTRIES"
	if g.Truncated {
		title += fmt.Sprintf(" (the oldest %s of %s read)", count(len(g.Entries)), count(g.Pending))
	}
	if f := st.filterText(); f != "" {
		title += " · filter: " + f
	}
	lines := []string{s.Title.Render(joinFit([]string{title}, "", st.width)),
		s.ColHead.Render(fit("  "+fit("ID", idW)+" "+fit("CONSUMER", conW)+" "+fitRight("IDLE", idleW)+" "+fitRight("DELIV", delW)+" "+fit("FLAGS", flagW), st.width))}
	es := st.entries()
	rows := max(room-len(lines), 1)
	from, to := selWindow(&st.entrySel, &st.entryOff, rows, len(es))
	if len(es) == 0 {
		lines = append(lines, st.emptyLine(st.filtered(), "no pending entry: every message delivered to this group was acknowledged", "no pending entry matches the filter"))
	}
	for i := from; i < to; i++ {
		e := es[i]
		mark := " "
		if i == st.entrySel {
			mark = "▸"
		}
		if _, ok := st.marks[keyOf(e)]; ok {
			mark += "*" // marked for a write, as the Records screen marks
		} else {
			mark += " "
		}
		line := fit(mark+fitMiddle(inspect.Sanitize(e.ID), idW)+" "+fitMiddle(sanitizeText(e.Consumer), conW)+" "+
			fitRight(units.FormatMs(e.Idle.D().Milliseconds()), idleW)+" "+fitRight(count(e.Deliveries), delW)+" "+fit(entryFlags(e), flagW), st.width)
		if i == st.entrySel {
			line = s.Selected.Render(line)
		} else if e.Stale || e.Poison {
			line = s.Stale.Render(line)
		}
		lines = append(lines, line)
	}
	return lines
}

func entryFlags(e streams.PendingEntry) string {
	var f []string
	if e.Stale {
		f = append(f, "STALE")
	}
	if e.Poison {
		f = append(f, "POISON")
	}
	return strings.Join(f, " ")
}

// filterText says the filter as the screens show it; "" without one.
func (ef entryFilter) filterText() string {
	var parts []string
	if ef.filter != "" {
		parts = append(parts, inspect.Sanitize(ef.filter))
	}
	if ef.staleOnly {
		parts = append(parts, "stale only")
	}
	return strings.Join(parts, " · ")
}

// View is one entry: how it is pending, then its fields, each
// name and value sanitized and cut on the server; a long value shows its
// length and how much is shown.
func (p entryPage) View() string {
	st := p.streamsScreen
	s := st.styles
	e := st.entryRow
	lines := []string{s.Title.Render(joinFit([]string{"ENTRY " + inspect.Sanitize(e.ID), "of " + sanitizeText(e.Stream), "group " + sanitizeText(e.Group)}, "  ", st.width)),
		joinFit([]string{"consumer " + sanitizeText(e.Consumer), "idle " + units.FormatMs(e.Idle.D().Milliseconds()),
			"delivery count " + count(e.Deliveries), entryFlags(e), st.marks.text(e)}, " · ", st.width)}
	switch {
	case st.entryErr != "":
		return strings.Join(append(lines, "", wrapHang("  could not read the entry: ", st.entryErr, st.width)), "\n")
	case st.entry == nil:
		return strings.Join(append(lines, "", s.Dim.Render("  fetching the entry…")), "\n")
	case !st.entry.Found:
		return strings.Join(append(lines, "", wrapHang("  ", "the entry is no longer in the stream (trimmed or deleted): only its pending record is left", st.width)), "\n")
	}
	d := st.entry
	title := fmt.Sprintf("FIELDS (%s of %s)", count(len(d.Fields)), count(d.FieldCount))
	lines = append(lines, "", s.Title.Render(fit(title, st.width)))
	nameW := min(max(st.width/4, 8), 24)
	for _, f := range d.Fields {
		name := fitMiddle(sanitizeText(f.Name), nameW)
		lines = append(lines, strings.Split(wrapHang("  "+name+" ", fieldValue(f), st.width), "\n")...)
		if note := fieldNote(f); note != "" {
			lines = append(lines, st.dimLines(wrapHang(strings.Repeat(" ", nameW+3), note, st.width))...)
		}
	}
	if d.FieldsCut {
		lines = append(lines, s.Dim.Render(fit(fmt.Sprintf("  only the first %s of %s fields were read", count(len(d.Fields)), count(d.FieldCount)), st.width)))
	}
	return strings.Join(lines, "\n")
}

// fieldValue is a value as shown: sanitized, at most entryShownCells.
func fieldValue(f streams.Field) string {
	v := sanitizeText(f.Value)
	if ansi.StringWidth(v) > entryShownCells {
		v = ansi.Truncate(v, entryShownCells, "")
	}
	if v == "" {
		return "(empty)"
	}
	return v
}

// fieldNote says a name or value is longer than shown, and its length.
func fieldNote(f streams.Field) string {
	var parts []string
	cut := f.ValueLen > int64(len(f.Value))
	shownCut := ansi.StringWidth(sanitizeText(f.Value)) > entryShownCells
	switch {
	case cut && shownCut:
		parts = append(parts, fmt.Sprintf("%s value: the first %s read, %s characters shown", units.FormatBytes(f.ValueLen), units.FormatBytes(int64(len(f.Value))), count(entryShownCells)))
	case cut:
		parts = append(parts, fmt.Sprintf("%s value: the first %s read", units.FormatBytes(f.ValueLen), units.FormatBytes(int64(len(f.Value)))))
	case shownCut:
		parts = append(parts, fmt.Sprintf("%s value: the first %s characters shown", units.FormatBytes(f.ValueLen), count(entryShownCells)))
	}
	if f.NameLen > int64(len(f.Name)) {
		parts = append(parts, "the name is "+units.FormatBytes(f.NameLen)+" long")
	}
	if len(parts) == 0 {
		return ""
	}
	return "‹" + strings.Join(parts, " · ") + "›"
}

// footer is the screen's help line: the keys that work here, as wide as
// h draws them.
func (st *streamsScreen) footer(h help.Model) []keyBinding {
	k := st.keys
	reread := key.NewBinding(key.WithKeys(k.Rescan.Keys()...), key.WithHelp(k.Rescan.Help().Key, "re-read"))
	back := key.NewBinding(key.WithKeys(k.Back.Keys()...), key.WithHelp(k.Back.Help().Key, "back"))
	writes := st.writeHelp()
	bs := append(append([]keyBinding{k.Open, back}, writes...), k.Filter, k.StaleOnly, reread, k.Help, k.Quit)
	if st.level == levelEntry {
		bs = append(append([]keyBinding{back}, writes...), k.Down, k.Up, reread, k.Help, k.Quit)
	}
	// Whole keys, the least needed given way: never a cut one.
	for len(bs) > 2 && ansi.StringWidth(h.ShortHelpView(bs)) > st.width {
		bs = bs[:len(bs)-1]
	}
	return bs
}

// statusParts is the status line's part on the Streams screen.
func (st *streamsScreen) statusParts() []string {
	if st == nil {
		return nil
	}
	var parts []string
	if st.reading {
		parts = append(parts, "scanning the streams…")
	}
	if n := len(st.marks); n > 0 { // what a write would take
		parts = append(parts, count(n)+" marked")
	}
	if f := st.filterText(); f != "" {
		parts = append(parts, "filter: "+f)
	}
	return parts
}
