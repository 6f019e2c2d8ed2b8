package ui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
	"github.com/idemctl/idemctl/ui/streams"
)

// overviewScreen is the Overview: a row per keyspace, what needs
// attention (each line opens its records), the endpoints with the most
// stale records, and the counts over the last scans.
type overviewScreen struct {
	drillScreen
	doctor  *doctorScreen   // its line on the findings
	streams *streams.Screen // its line on the pending entries
	scanOf  func(keyspace string) string
}

func newOverviewScreen(c *shared, doctor *doctorScreen, st *streams.Screen, scanOf func(string) string) *overviewScreen {
	o := &overviewScreen{drillScreen: drillScreen{shared: c}, doctor: doctor, streams: st, scanOf: scanOf}
	o.render = o.content
	return o
}

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
		cell := common.FitRight(cells[i], c.w)
		if i == 0 || i == len(overviewCols)-1 {
			cell = common.Fit(cells[i], c.w)
		}
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(style(i, cell))
	}
	return b.String()
}

// content is a row per keyspace: counts by state, stale, no-TTL, memory
// and scan progress.
func (o *overviewScreen) content() string {
	s := o.Styles
	rep := o.stats.Report()
	shown := overviewShown(o.Width)
	titles := make([]string, len(overviewCols))
	for i, c := range overviewCols {
		titles[i] = c.title
	}
	plain := func(_ int, s string) string { return s }
	var b strings.Builder
	if line := o.doctor.summary(); line != "" {
		b.WriteString(s.Error.Render(common.Fit(line, o.Width)) + "\n")
	}
	if line := o.streamsLine(); line != "" {
		b.WriteString(o.streamsStyle().Render(line) + "\n") // streams.go
	}
	b.WriteString(s.ColHead.Render(common.Fit(overviewRow(shown, titles, plain), o.Width)))
	byName := map[string]inspect.KeyspaceReport{}
	for _, k := range rep.Keyspaces {
		byName[k.Name] = k
	}
	for _, ks := range o.Opts.Keyspaces {
		k := byName[ks.Name]
		other := k.Total - k.ByState["processing"] - k.ByState["succeeded"]
		cells := []string{inspect.Sanitize(ks.Name), common.Count(k.Total), common.Count(k.ByState["processing"]), common.Count(k.ByState["succeeded"]),
			common.Count(other), common.Count(k.Stale), common.Count(k.NoTTL), units.FormatBytes(k.MemoryBytes), o.scanOf(ks.Name)}
		b.WriteString("\n")
		b.WriteString(overviewRow(shown, cells, func(i int, c string) string {
			if overviewCols[i].title == "STALE" && k.Stale > 0 {
				return s.Stale.Render(c)
			}
			return c
		}))
	}
	b.WriteString("\n\n")
	b.WriteString(s.Title.Render(fmt.Sprintf("ALL KEYSPACES: %s records · %s", common.Count(rep.Total), units.FormatBytes(rep.MemoryBytes.Total))))
	o.attention(&b, &rep)
	if t := o.staleTopView(); t != "" {
		b.WriteString("\n\n" + t)
	}
	if h := o.historyView(); h != "" {
		b.WriteString("\n\n" + h)
	}
	b.WriteString("\n")
	for _, ks := range o.Opts.Keyspaces {
		b.WriteString(s.Dim.Render(fmt.Sprintf("\n%s: match %s · schema %s · timeout %s · reserve TTL %s · template %s",
			inspect.Sanitize(ks.Name), inspect.Sanitize(ks.Match), ks.Schema.Name, units.FormatMs(ks.ProcessingTimeout.Milliseconds()),
			units.FormatMs(ks.ReserveTTL.Milliseconds()), inspect.Sanitize(ks.Template.String()))))
	}
	b.WriteString("\n\n" + s.Dim.Render("j/k select · enter: the records · tab: next screen"))
	return ansi.Wrap(b.String(), o.Width, " ·") // never inside a number (1,200)
}

// attention lists what needs it across the keyspaces, each line opening
// its records.
func (o *overviewScreen) attention(b *strings.Builder, rep *inspect.Report) {
	s := o.Styles
	for _, it := range []struct {
		n    int64
		what string
		f    filter.Filter
	}{
		{rep.Stale, "stale: processing past the timeout, the worker probably crashed", flagDrill(inspect.FlagStale)},
		{rep.Flags["processing_no_ttl"], "stuck: processing with no TTL, retries blocked for ever", flagDrill(inspect.FlagProcessingNoTTL)},
		{rep.ByState["processing"], "processing", stateDrill(inspect.StateProcessing)},
		{rep.Flags["no_ttl"], "no TTL: never expire", flagDrill(inspect.FlagNoTTL)},
	} {
		line := fmt.Sprintf("%9s %s", common.Count(it.n), it.what)
		if it.n > 0 && it.f.Stale {
			line = s.Stale.Render(line)
		}
		b.WriteString("\n" + o.item(line, it.f))
	}
}

// staleTopView lists, on the Overview, the values of the timeline's
// capture (the endpoint) with the most stale records: enter opens their
// stale records, where = then says for whom.
func (o *overviewScreen) staleTopView() string {
	if len(o.staleTop) == 0 {
		return ""
	}
	capture := o.timelineCapture()
	lines := []string{o.Styles.Title.Render("MOST STALE BY " + strings.ToUpper(inspect.Sanitize(capture)))}
	for _, g := range o.staleTop {
		f := captureDrill(capture, g.value)
		f.Stale = true
		lines = append(lines, o.item(fmt.Sprintf("%9s %s", common.Count(g.n), inspect.Sanitize(orDash(g.value))), f))
	}
	return strings.Join(lines, "\n")
}

// historyView is the Overview's history block: a sparkline per count over
// the last scans, the count now and its change since the previous scan.
func (o *overviewScreen) historyView() string {
	h := o.history
	if len(h) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(o.Styles.Title.Render(fmt.Sprintf("SINCE %s (%s)", h[0].at.Format("15:04:05"), units.Nouns(int64(len(h)), "scan", "scans"))))
	for _, it := range []struct {
		name string
		get  func(snapshot) int64
	}{
		{"stale", func(s snapshot) int64 { return s.stale }},
		{"processing", func(s snapshot) int64 { return s.processing }},
		{"no TTL", func(s snapshot) int64 { return s.noTTL }},
		{"total", func(s snapshot) int64 { return s.total }},
	} {
		vals := make([]int64, len(h))
		for i, s := range h {
			vals[i] = it.get(s)
		}
		now := vals[len(vals)-1]
		change := ""
		if len(vals) > 1 {
			change = signedCount(now-vals[len(vals)-2]) + " since " + h[len(h)-2].at.Format("15:04:05")
		}
		fmt.Fprintf(&b, "\n  %-10s %s %9s  %s", it.name, sparkline(vals), common.Count(now), o.Styles.Dim.Render(change))
	}
	if n := len(o.newStale); n > 0 {
		b.WriteString("\n  " + o.Styles.Stale.Render(common.Count(n)+" records became stale since the previous scan (+stale in Records)"))
	}
	return b.String()
}

// streamsLine is the Overview's line on the stream keyspaces: stale and
// poison pending entries, in the longest wording that fits; "" without any.
func (o *overviewScreen) streamsLine() string {
	st := o.streams
	if len(o.Opts.StreamSpaces) == 0 || o.Opts.Scan.Snapshot != nil {
		return ""
	}
	var variants []string
	switch {
	case st != nil && st.ReadErr() != "":
		variants = []string{"streams: not read: " + st.ReadErr() + " — :streams", "streams: not read — :streams says why"}
	case !st.Current():
		variants = []string{"streams: scanning for consumer groups — :streams shows them", "streams: scanning — :streams"}
	default:
		t := st.Totals()
		more := ""
		if t.Cut {
			more = "+"
		}
		variants = []string{
			fmt.Sprintf("streams: %s%s stale and %s%s poison pending entries in %s groups — :streams shows them",
				common.Count(t.Stale), more, common.Count(t.Poison), more, common.Count(t.Groups)),
			fmt.Sprintf("streams: %s%s stale · %s%s poison pending — :streams", common.Count(t.Stale), more, common.Count(t.Poison), more),
			fmt.Sprintf("streams: %s%s stale · %s%s poison", common.Count(t.Stale), more, common.Count(t.Poison), more),
		}
	}
	for _, v := range variants {
		if ansi.StringWidth(v) <= o.Width {
			return v
		}
	}
	return variants[len(variants)-1]
}

// streamsStyle stands the Overview's streams line out when some
// entry is stale or poison.
func (o *overviewScreen) streamsStyle() lipgloss.Style {
	st := o.streams
	if st.Current() && st.ReadErr() == "" {
		if t := st.Totals(); t.Stale+t.Poison > 0 {
			return o.Styles.Error
		}
	}
	return o.Styles.Dim
}
