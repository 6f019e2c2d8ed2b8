package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// overviewCols are the Overview table's columns. KEYSPACE, RECORDS,
// PROCESS, STALE and SCAN always show; on a narrow terminal the others give
// way in the order of their drop rank (1 first): OTHER, MEMORY, SUCCEED,
// NO-TTL.
var overviewCols = []struct {
	title string
	w     int
	drop  int // 0: never dropped
}{{"KEYSPACE", 14, 0}, {"RECORDS", 8, 0}, {"PROCESS", 8, 0}, {"SUCCEED", 8, 3}, {"OTHER", 6, 1}, {"STALE", 6, 0},
	{"NO-TTL", 6, 4}, {"MEMORY", 8, 2}, {"SCAN", 10, 0}}

// overviewShown says which Overview columns fit the width.
func overviewShown(width int) []bool {
	shown := make([]bool, len(overviewCols))
	total := 0
	for i, c := range overviewCols {
		shown[i] = true
		total += c.w + 1
	}
	for rank := 1; total > width && rank <= 4; rank++ {
		for i, c := range overviewCols {
			if c.drop == rank {
				shown[i] = false
				total -= c.w + 1
			}
		}
	}
	return shown
}

// overviewRow lays cells out in the shown columns: the first left-aligned,
// numbers right-aligned, the last (SCAN) left-aligned.
func overviewRow(shown []bool, cells []string, style func(i int, s string) string) string {
	var b strings.Builder
	for i, c := range overviewCols {
		if !shown[i] {
			continue
		}
		cell := fitRight(cells[i], c.w)
		if i == 0 || i == len(overviewCols)-1 {
			cell = fit(cells[i], c.w)
		}
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(style(i, cell))
	}
	return b.String()
}

// overviewView is a row per keyspace: counts by state, stale, no-TTL, memory
// and scan progress.
func (m *Model) overviewView() string {
	s := m.styles
	rep := m.stats.Report()
	shown := overviewShown(m.width)
	titles := make([]string, len(overviewCols))
	for i, c := range overviewCols {
		titles[i] = c.title
	}
	plain := func(_ int, s string) string { return s }
	var b strings.Builder
	if line := m.doctor.summary(); line != "" {
		b.WriteString(s.Error.Render(fit(line, m.width)) + "\n")
	}
	if line := m.streams.summary(); line != "" {
		b.WriteString(m.streams.summaryStyle().Render(line) + "\n") // streams.go
	}
	b.WriteString(s.ColHead.Render(fit(overviewRow(shown, titles, plain), m.width)))
	byName := map[string]inspect.KeyspaceReport{}
	for _, k := range rep.Keyspaces {
		byName[k.Name] = k
	}
	for _, ks := range m.opts.Keyspaces {
		k := byName[ks.Name]
		other := k.Total - k.ByState["processing"] - k.ByState["succeeded"]
		cells := []string{inspect.Sanitize(ks.Name), count(k.Total), count(k.ByState["processing"]), count(k.ByState["succeeded"]),
			count(other), count(k.Stale), count(k.NoTTL), units.FormatBytes(k.MemoryBytes), m.scanStatus(ks.Name)}
		b.WriteString("\n")
		b.WriteString(overviewRow(shown, cells, func(i int, c string) string {
			if overviewCols[i].title == "STALE" && k.Stale > 0 {
				return s.Stale.Render(c)
			}
			return c
		}))
	}
	b.WriteString("\n\n")
	b.WriteString(s.Title.Render(fmt.Sprintf("ALL KEYSPACES: %s records · %s", count(rep.Total), units.FormatBytes(rep.MemoryBytes.Total))))
	for _, it := range []struct {
		n    int64
		what string
		f    inspect.Filter
	}{
		{rep.Stale, "stale: processing past the timeout, the worker probably crashed", flagDrill(inspect.FlagStale)},
		{rep.Flags["processing_no_ttl"], "stuck: processing with no TTL, retries blocked for ever", flagDrill(inspect.FlagProcessingNoTTL)},
		{rep.ByState["processing"], "processing", stateDrill(inspect.StateProcessing)},
		{rep.Flags["no_ttl"], "no TTL: never expire", flagDrill(inspect.FlagNoTTL)},
	} {
		line := fmt.Sprintf("%9s %s", count(it.n), it.what)
		if it.n > 0 && it.f.Stale {
			line = s.Stale.Render(line)
		}
		b.WriteString("\n" + m.drillItem(line, it.f))
	}
	if t := m.staleTopView(); t != "" {
		b.WriteString("\n\n" + t)
	}
	if h := m.historyView(); h != "" {
		b.WriteString("\n\n" + h)
	}
	b.WriteString("\n")
	for _, ks := range m.opts.Keyspaces {
		b.WriteString(s.Dim.Render(fmt.Sprintf("\n%s: match %s · schema %s · timeout %s · reserve TTL %s · template %s",
			inspect.Sanitize(ks.Name), inspect.Sanitize(ks.Match), ks.Schema.Name, units.FormatMs(ks.ProcessingTimeout.Milliseconds()),
			units.FormatMs(ks.ReserveTTL.Milliseconds()), inspect.Sanitize(ks.Template.String()))))
	}
	b.WriteString("\n\n" + s.Dim.Render("j/k select · enter: the records · tab: next screen"))
	return ansi.Wrap(b.String(), m.width, " ·") // never inside a number (1,200)
}

// scanStatus is how far the scan of one keyspace got, for its Overview row.
func (m *Model) scanStatus(keyspace string) string {
	if m.run == nil {
		return "…"
	}
	scan := count(m.run.perKS[keyspace]) + " read"
	if m.run.stopped {
		scan = "cancelled"
	}
	for _, c := range m.run.covs {
		if c.Keyspace == keyspace {
			scan = "complete"
			if !c.Complete {
				scan = "INCOMPLETE"
			}
		}
	}
	return scan
}

// statsView is the cardinality audit: states, TTL histogram as bars,
// processing-age percentiles and the top groups per capture.
func (m *Model) statsView() string {
	s := m.styles
	rep := m.stats.Report()
	var left, right []string
	left = append(left, s.Title.Render("STATES"))
	for _, st := range inspect.AllStates() {
		n := rep.ByState[st.String()]
		if n == 0 {
			continue
		}
		left = append(left, m.drillItem(fmt.Sprintf("%-11s %9s %9s", s.State[st].Render(fit(st.String(), 11)), count(n), units.FormatBytes(rep.MemoryBytes.ByState[st.String()])), stateDrill(st)))
	}
	left = append(left, "", s.Title.Render("FLAGS"))
	for _, fi := range inspect.AllFlags() {
		if n := rep.Flags[fi.Name]; n > 0 {
			left = append(left, m.drillItem(fmt.Sprintf("%-19s %9s", fi.Short, count(n)), flagDrill(fi.Flag)))
		}
	}
	a := rep.ProcessingAge
	left = append(left, "", s.Title.Render("PROCESSING AGE"),
		fmt.Sprintf("n %s  p50 %s  p90 %s", units.FormatCount(a.Count), units.FormatMs(a.P50), units.FormatMs(a.P90)),
		fmt.Sprintf("p99 %s  max %s", units.FormatMs(a.P99), units.FormatMs(a.Max)))
	if a.Unknown > 0 {
		left = append(left, s.Dim.Render(fmt.Sprintf("age unknown for %s", units.FormatCount(a.Unknown))))
	}

	right = append(right, s.Title.Render("TTL LEFT"))
	var maxN int64
	for _, bk := range rep.TTLHistogram {
		maxN = max(maxN, bk.Count)
	}
	for _, bk := range rep.TTLHistogram {
		if bk.Count == 0 {
			continue
		}
		right = append(right, fmt.Sprintf("%-7s %9s %s", bk.Label(), units.FormatCount(bk.Count), s.Bar.Render(bar(bk.Count, maxN, 18))))
	}
	for _, name := range rep.GroupOrder {
		g := rep.Groups[name]
		approx := ""
		if !g.DistinctExact {
			approx = "≈"
		}
		right = append(right, "", s.Title.Render(fmt.Sprintf("TOP %s", strings.ToUpper(inspect.Sanitize(name))))+s.Dim.Render(fmt.Sprintf(" distinct %s%s", approx, units.FormatCount(g.Distinct))))
		if len(g.Top) > 0 && g.Top[0].Count-g.Top[0].MaxError <= 1 {
			right = append(right, s.Dim.Render("every value appears about once"))
			continue
		}
		for i, t := range g.Top {
			if i == 5 {
				break
			}
			right = append(right, m.drillItem(fmt.Sprintf("%9s %8s  %s", count(t.Count), units.FormatBytes(t.MemoryBytes), inspect.Sanitize(string(t.Value))),
				captureDrill(name, string(t.Value))))
		}
	}
	if tl := m.timelineView(); tl != nil {
		right = append(append(right, ""), tl...)
	}
	return columns(left, right, m.width)
}

// columns lays two text columns side by side, or stacks them when narrow.
func columns(left, right []string, width int) string {
	if width < 90 {
		return strings.Join(append(append(left, ""), right...), "\n")
	}
	lw := 44
	n := max(len(left), len(right))
	var b strings.Builder
	for i := 0; i < n; i++ {
		l, r := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(fit(l, lw) + "  " + r)
	}
	return b.String()
}

func bar(n, maxN int64, width int) string {
	if maxN <= 0 || n <= 0 {
		return ""
	}
	return strings.Repeat("█", max(int(n*int64(width)/maxN), 1))
}
