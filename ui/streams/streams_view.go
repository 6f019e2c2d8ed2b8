package streams

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/inspect"
	istreams "github.com/idemctl/idemctl/inspect/streams"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
)

// The Streams screen's drawing: every line fitted to the width by whole
// words or cut in its middle (keys, names, IDs), never wrapped by the
// terminal; everything from Redis through the sanitizer.

func sanitizeText(t inspect.Text) string { return inspect.Sanitize(string(t)) }

// dimLines renders each line dim on its own (lipgloss pads a block to its
// widest line).
func dimLines(c *common.Common, s string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = c.Styles.Dim.Render(l)
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
	return common.Fit(line, w)
}

func (st *Screen) content() string {
	s := st.Styles
	if why := Readable(st.Common); why != "" {
		return s.Title.Render("STREAMS") + "\n\n" + strings.Join(dimLines(st.Common, common.WrapHang("  ", why, st.Width)), "\n")
	}
	if !st.Current() {
		msg := "scanning " + common.Count(len(st.Opts.StreamSpaces)) + " stream keyspaces for their consumer groups…"
		if st.err != "" && !st.reading {
			msg = "could not read the streams: " + st.err + " · r reads again"
		}
		return s.Title.Render("STREAMS") + "\n\n" + common.WrapHang("  ", msg, st.Width)
	}
	switch st.level {
	case LevelGroup:
		if st.group() != nil {
			return groupPage{st}.View()
		}
	case LevelEntry:
		return st.ScrollBy(entryPage{st}.View(), &st.fieldScroll, st.h)
	}
	return groupsTable{st}.View()
}

// The Streams screens, one type a level, over the screen's state: the
// groups table, one group (its consumers and pending entries), one entry.
type (
	groupsTable struct{ *Screen }
	groupPage   struct{ *Screen }
	entryPage   struct{ *Screen }
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
	rest := gt.Width - 3
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
	st := gt.Screen
	s := st.Styles
	t := st.Totals()
	lines := []string{s.Title.Render(joinFit([]string{"STREAMS", common.Count(t.Streams) + " streams", common.Count(t.Groups) + " groups",
		common.Count(t.Pending) + " pending", common.Count(t.Stale) + " stale", common.Count(t.Poison) + " poison", "read at " + st.readAt.Format("15:04:05")}, " · ", st.Width))}
	cols, sw, gw := gt.layout()
	head := "  " + common.Fit("STREAM", sw) + " " + common.Fit("GROUP", gw)
	for _, c := range groupCols[:cols] {
		head += " " + common.FitRight(c.title, c.w)
	}
	lines = append(lines, s.ColHead.Render(common.Fit(head, st.Width)))
	rows := st.groupRows()
	notes := gt.notes()
	room := max(st.h-len(lines)-len(notes), 1)
	from, to := selWindow(&st.groupSel, &st.groupOff, room, len(rows))
	if len(rows) == 0 {
		lines = append(lines, emptyLine(st.Common, st.filtered(), "no stream matches these keyspaces' patterns", "no group has a pending entry the filter keeps"))
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
func emptyLine(c *common.Common, filtered bool, none, noMatch string) string {
	if filtered {
		none = noMatch + " (c clears it)"
	}
	return c.Styles.Dim.Render(common.Fit("  "+none, c.Width))
}

func (gt groupsTable) line(r groupRow, cols, sw, gw int, selected bool) string {
	st := gt.Screen
	mark := "  "
	if selected {
		mark = "▸ "
	}
	line := mark + common.FitMiddle(sanitizeText(r.id.stream), sw) + " "
	if r.g == nil {
		line += st.Styles.Dim.Render(common.Fit("(no group)", gw))
	} else {
		g := r.g
		more := ""
		if g.Truncated {
			more = "+" // counted among the entries read only
		}
		cells := []string{common.Count(g.Pending), common.Count(g.Stale) + more, common.Count(g.Poison) + more, oldestAge(g), common.Count(g.Consumers), lagCell(g.Lag)}
		line += common.FitMiddle(sanitizeText(g.Name), gw)
		for i, c := range groupCols[:cols] {
			line += " " + common.FitRight(cells[i], c.w)
		}
	}
	if selected {
		return st.Styles.Selected.Render(common.Fit(line, st.Width))
	}
	return common.Fit(line, st.Width)
}

func oldestAge(g *istreams.GroupState) string {
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
	return common.Count(*lag)
}

// notes say what the read left out, wrapped at words.
func (gt groupsTable) notes() []string {
	st := gt.Screen
	var out []string
	add := func(s string) {
		out = append(out, dimLines(st.Common, common.WrapHang("note: ", s, st.Width))...)
	}
	for _, r := range st.reps {
		if r.Limited {
			add(fmt.Sprintf("keyspace %s: stopped at %s streams, more may match (idemctl streams --max-streams reads more)", inspect.Sanitize(r.Space), common.Count(len(r.Streams))))
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
	st := p.Screen
	s := st.Styles
	rep, g := findGroup(st.reps, st.open)
	lines := []string{s.Title.Render(joinFit([]string{"GROUP " + sanitizeText(g.Name), "of " + sanitizeText(g.Stream), "keyspace " + inspect.Sanitize(rep.Space)}, "  ", st.Width))}
	lag := "lag unknown"
	if g.Lag != nil {
		lag = "lag " + common.Count(*g.Lag)
	}
	oldest := "nothing pending"
	if g.Oldest != nil {
		oldest = "oldest " + oldestAge(g) + " old, idle " + units.FormatMs(g.Oldest.Idle.D().Milliseconds())
	}
	lines = append(lines, joinFit([]string{common.Count(g.Pending) + " pending", common.Count(g.Stale) + " stale", common.Count(g.Poison) + " poison",
		lag, oldest}, " · ", st.Width))
	if sp := spaceNamed(st.Opts.StreamSpaces, rep.Space); sp != nil {
		lines = append(lines, s.Dim.Render(joinFit([]string{"stale after " + units.FormatMs(sp.ProcessingTimeout.Milliseconds()) + " idle",
			fmt.Sprintf("poison after %d deliveries", sp.MaxDeliveries)}, " · ", st.Width)))
	}
	lines = append(lines, p.consumerLines(g)...)
	return strings.Join(append(lines, p.entryLines(g, st.h-len(lines))...), "\n")
}

// spaceNamed is the stream keyspace of that name, nil when none is.
func spaceNamed(spaces []*istreams.Space, name string) *istreams.Space {
	for _, sp := range spaces {
		if sp.Name == name {
			return sp
		}
	}
	return nil
}

// consumerLines are the group's consumers, at most a quarter of the body:
// the entries below are what the operator works on.
func (p groupPage) consumerLines(g *istreams.GroupState) []string {
	st := p.Screen
	nameW := max(st.Width-2-10-10-2, 10)
	lines := []string{st.Styles.ColHead.Render(common.Fit("  "+common.Fit("CONSUMERS ("+common.Count(g.Consumers)+")", nameW)+" "+common.FitRight("PENDING", 10)+" "+common.FitRight("IDLE", 10), st.Width))}
	room := max(st.h/4, 2)
	cs := g.ConsumerList
	if len(cs) == 0 {
		return append(lines, st.Styles.Dim.Render(common.Fit("  no consumer has joined this group", st.Width)))
	}
	for i, c := range cs {
		if i == room && len(cs) > room+1 {
			return append(lines, st.Styles.Dim.Render(common.Fit(fmt.Sprintf("  and %s more consumers", common.Count(len(cs)-room)), st.Width)))
		}
		lines = append(lines, common.Fit("  "+common.FitMiddle(sanitizeText(c.Name), nameW)+" "+common.FitRight(common.Count(c.Pending), 10)+" "+
			common.FitRight(units.FormatMs(c.Idle.D().Milliseconds()), 10), st.Width))
	}
	if g.ConsumersCut {
		lines = append(lines, st.Styles.Dim.Render(common.Fit(fmt.Sprintf("  only the first %s consumers were read", common.Count(len(cs))), st.Width)))
	}
	return lines
}

// entryLines are the pending entries the filters keep, in a window of
// room lines around the selection.
func (p groupPage) entryLines(g *istreams.GroupState, room int) []string {
	st := p.Screen
	s := st.Styles
	idW, idleW, delW, flagW := 17, 8, 6, 12
	conW := max(st.Width-2-idW-idleW-delW-flagW-4, 8)
	title := "PENDING ENTRIES"
	if g.Truncated {
		title += fmt.Sprintf(" (the oldest %s of %s read)", common.Count(len(g.Entries)), common.Count(g.Pending))
	}
	if f := st.filterText(); f != "" {
		title += " · filter: " + f
	}
	lines := []string{s.Title.Render(joinFit([]string{title}, "", st.Width)),
		s.ColHead.Render(common.Fit("  "+common.Fit("ID", idW)+" "+common.Fit("CONSUMER", conW)+" "+common.FitRight("IDLE", idleW)+" "+common.FitRight("DELIV", delW)+" "+common.Fit("FLAGS", flagW), st.Width))}
	es := st.entries()
	rows := max(room-len(lines), 1)
	from, to := selWindow(&st.entrySel, &st.entryOff, rows, len(es))
	if len(es) == 0 {
		lines = append(lines, emptyLine(st.Common, st.filtered(), "no pending entry: every message delivered to this group was acknowledged", "no pending entry matches the filter"))
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
		line := common.Fit(mark+common.FitMiddle(inspect.Sanitize(e.ID), idW)+" "+common.FitMiddle(sanitizeText(e.Consumer), conW)+" "+
			common.FitRight(units.FormatMs(e.Idle.D().Milliseconds()), idleW)+" "+common.FitRight(common.Count(e.Deliveries), delW)+" "+common.Fit(entryFlags(e), flagW), st.Width)

		if i == st.entrySel {
			line = s.Selected.Render(line)
		} else if e.Stale || e.Poison {
			line = s.Stale.Render(line)
		}
		lines = append(lines, line)
	}
	return lines
}

func entryFlags(e istreams.PendingEntry) string {
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
	st := p.Screen
	s := st.Styles
	e := st.entryRow
	lines := []string{s.Title.Render(joinFit([]string{"ENTRY " + inspect.Sanitize(e.ID), "of " + sanitizeText(e.Stream), "group " + sanitizeText(e.Group)}, "  ", st.Width)),
		joinFit([]string{"consumer " + sanitizeText(e.Consumer), "idle " + units.FormatMs(e.Idle.D().Milliseconds()),
			"delivery count " + common.Count(e.Deliveries), entryFlags(e), st.marks.text(e)}, " · ", st.Width)}
	switch {
	case st.entryErr != "":
		return strings.Join(append(lines, "", common.WrapHang("  could not read the entry: ", st.entryErr, st.Width)), "\n")
	case st.entry == nil:
		return strings.Join(append(lines, "", s.Dim.Render("  fetching the entry…")), "\n")
	case !st.entry.Found:
		return strings.Join(append(lines, "", common.WrapHang("  ", "the entry is no longer in the stream (trimmed or deleted): only its pending record is left", st.Width)), "\n")
	}
	d := st.entry
	title := fmt.Sprintf("FIELDS (%s of %s)", common.Count(len(d.Fields)), common.Count(d.FieldCount))
	lines = append(lines, "", s.Title.Render(common.Fit(title, st.Width)))
	nameW := min(max(st.Width/4, 8), 24)
	for _, f := range d.Fields {
		name := common.FitMiddle(sanitizeText(f.Name), nameW)
		lines = append(lines, strings.Split(common.WrapHang("  "+name+" ", fieldValue(f), st.Width), "\n")...)
		if note := fieldNote(f); note != "" {
			lines = append(lines, dimLines(st.Common, common.WrapHang(strings.Repeat(" ", nameW+3), note, st.Width))...)
		}
	}
	if d.FieldsCut {
		lines = append(lines, s.Dim.Render(common.Fit(fmt.Sprintf("  only the first %s of %s fields were read", common.Count(len(d.Fields)), common.Count(d.FieldCount)), st.Width)))
	}
	return strings.Join(lines, "\n")
}

// fieldValue is a value as shown: sanitized, at most entryShownCells.
func fieldValue(f istreams.Field) string {
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
func fieldNote(f istreams.Field) string {
	var parts []string
	cut := f.ValueLen > int64(len(f.Value))
	shownCut := ansi.StringWidth(sanitizeText(f.Value)) > entryShownCells
	switch {
	case cut && shownCut:
		parts = append(parts, fmt.Sprintf("%s value: the first %s read, %s characters shown", units.FormatBytes(f.ValueLen), units.FormatBytes(int64(len(f.Value))), common.Count(entryShownCells)))
	case cut:
		parts = append(parts, fmt.Sprintf("%s value: the first %s read", units.FormatBytes(f.ValueLen), units.FormatBytes(int64(len(f.Value)))))
	case shownCut:
		parts = append(parts, fmt.Sprintf("%s value: the first %s characters shown", units.FormatBytes(f.ValueLen), common.Count(entryShownCells)))
	}
	if f.NameLen > int64(len(f.Name)) {
		parts = append(parts, "the name is "+units.FormatBytes(f.NameLen)+" long")
	}
	if len(parts) == 0 {
		return ""
	}
	return "‹" + strings.Join(parts, " · ") + "›"
}

// Footer is the screen's help line: the keys that work here, as wide as
// h draws them.
func (st *Screen) Footer(h help.Model) []common.KeyBinding {
	k := st.Keys
	reread := key.NewBinding(key.WithKeys(k.Rescan.Keys()...), key.WithHelp(k.Rescan.Help().Key, "re-read"))
	back := key.NewBinding(key.WithKeys(k.Back.Keys()...), key.WithHelp(k.Back.Help().Key, "back"))
	writes := st.writeHelp()
	bs := append(append([]common.KeyBinding{k.Open, back}, writes...), k.Filter, k.StaleOnly, reread, k.Help, k.Quit)
	if st.level == LevelEntry {
		bs = append(append([]common.KeyBinding{back}, writes...), k.Down, k.Up, reread, k.Help, k.Quit)
	}
	// Whole keys, the least needed given way: never a cut one.
	for len(bs) > 2 && ansi.StringWidth(h.ShortHelpView(bs)) > st.Width {
		bs = bs[:len(bs)-1]
	}
	return bs
}

// FilterLine is the status line while the filter is typed, and the help
// line under it.
func (st *Screen) FilterLine() (status, help string) {
	return common.Fit(st.input.View(), st.Width),
		st.Styles.HelpLine.Render(common.Fit("enter applies · esc closes · text of a consumer or an entry ID", st.Width))
}

// StatusParts is the status line's part on the Streams screen.
func (st *Screen) StatusParts() []string {
	if st == nil {
		return nil
	}
	var parts []string
	if st.reading {
		parts = append(parts, "scanning the streams…")
	}
	if n := len(st.marks); n > 0 { // what a write would take
		parts = append(parts, common.Count(n)+" marked")
	}
	if f := st.filterText(); f != "" {
		parts = append(parts, "filter: "+f)
	}
	return parts
}
