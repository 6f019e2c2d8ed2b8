package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
)

// statsScreen is the Stats screen: states, flags, ages, TTLs, the top
// values per capture (each line opens its records) and the incident
// timeline.
type statsScreen struct{ drillScreen }

func newStatsScreen(c *shared) *statsScreen {
	ss := &statsScreen{drillScreen{shared: c}}
	ss.render = ss.content
	return ss
}

// content is the cardinality audit: states, TTL histogram as bars,
// processing-age percentiles and the top groups per capture.
func (ss *statsScreen) content() string {
	s := ss.Styles
	rep := ss.stats.Report()
	var left []string
	left = append(left, s.Title.Render("STATES"))
	for _, st := range inspect.AllStates() {
		n := rep.ByState[st.String()]
		if n == 0 {
			continue
		}
		left = append(left, ss.item(fmt.Sprintf("%-11s %9s %9s", s.State[st].Render(common.Fit(st.String(), 11)), common.Count(n), units.FormatBytes(rep.MemoryBytes.ByState[st.String()])), stateDrill(st)))
	}
	left = append(left, "", s.Title.Render("FLAGS"))
	for _, fi := range inspect.AllFlags() {
		if n := rep.Flags[fi.Name]; n > 0 {
			left = append(left, ss.item(fmt.Sprintf("%-19s %9s", fi.Short, common.Count(n)), flagDrill(fi.Flag)))
		}
	}
	a := rep.ProcessingAge
	left = append(left, "", s.Title.Render("PROCESSING AGE"),
		fmt.Sprintf("n %s  p50 %s  p90 %s", units.FormatCount(a.Count), units.FormatMs(a.P50), units.FormatMs(a.P90)),
		fmt.Sprintf("p99 %s  max %s", units.FormatMs(a.P99), units.FormatMs(a.Max)))
	if a.Unknown > 0 {
		left = append(left, s.Dim.Render(fmt.Sprintf("age unknown for %s", units.FormatCount(a.Unknown))))
	}

	right := ss.rightColumn(&rep)
	return columns(left, right, ss.Width)
}

// rightColumn is the TTLs left, the top values per capture (each line
// opening its records) and the incident timeline.
func (ss *statsScreen) rightColumn(rep *inspect.Report) []string {
	s := ss.Styles
	var right []string
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
			right = append(right, ss.item(fmt.Sprintf("%9s %8s  %s", common.Count(t.Count), units.FormatBytes(t.MemoryBytes), inspect.Sanitize(string(t.Value))),
				captureDrill(name, string(t.Value))))
		}
	}
	if tl := ss.timelineView(); tl != nil {
		right = append(append(right, ""), tl...)
	}
	return right
}

// timelineView renders the incident timeline for the Stats screen.
func (ss *statsScreen) timelineView() []string {
	if len(ss.timeline) == 0 {
		return nil
	}
	capture := ss.timelineCapture()
	out := []string{ss.Styles.Title.Render("STALE BY MINUTE RESERVED") + ss.Styles.Dim.Render(" (server time; top "+inspect.Sanitize(capture)+")")}
	var maxN int64
	for _, r := range ss.timeline {
		maxN = max(maxN, r.n)
	}
	for _, r := range ss.timeline {
		var top []string
		for _, g := range r.top {
			top = append(top, inspect.Sanitize(orDash(g.value))+" "+common.Count(g.n))
		}
		at := time.UnixMilli(r.minute * 60_000).In(ss.Now().Location()).Format("15:04")
		out = append(out, fmt.Sprintf("%s %7s %-10s %s", at, common.Count(r.n), ss.Styles.Stale.Render(bar(r.n, maxN, 10)), strings.Join(top, " · ")))
	}
	return out
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
		b.WriteString(common.Fit(l, lw) + "  " + r)
	}
	return b.String()
}

func bar(n, maxN int64, width int) string {
	if maxN <= 0 || n <= 0 {
		return ""
	}
	return strings.Repeat("█", max(int(n*int64(width)/maxN), 1))
}
