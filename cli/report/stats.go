package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// Stats renders stats' report as text, one section after another.
func Stats(w io.Writer, r inspect.Report) {
	for _, section := range []func(io.Writer, inspect.Report){
		writeStatsTotals, writeStatsKeyspaces, writeStatsStates, writeStatsFlags,
		writeStatsTTL, writeStatsProcessingAge, writeStatsTimeline, writeStatsGroups, writeStatsCoverage,
	} {
		section(w, r)
	}
}

// estimated formats a count, with its 95 % interval when r is sampled.
func estimated(r inspect.Report) func(path string, v int64) string {
	n := units.FormatCount
	return func(path string, v int64) string { return n(v) + sampleInterval(r.Sample, path, n) }
}

// writeStatsTotals is the sample note, the gaps, and the record and memory totals.
func writeStatsTotals(w io.Writer, r inspect.Report) {
	n := units.FormatCount
	est := estimated(r)
	if sm := r.Sample; sm != nil {
		fmt.Fprintf(w, "SAMPLE  %.1f%% of the keyspace read (%s records): every count is an estimate for the whole, its 95%% interval in [ ]\n\n",
			sm.Share*100, n(sm.RecordsRead))
	}
	Gaps(w, r.CannotJudge)
	fmt.Fprintf(w, "RECORDS %s   stale %s   memory %s", est("total", r.Total), est("stale", r.Stale),
		units.FormatBytes(r.MemoryBytes.Total)+sampleInterval(r.Sample, "memory_bytes.total", units.FormatBytes))
	if r.MemoryBytes.KnownRecords < r.Total {
		fmt.Fprintf(w, " (known for %s)", n(r.MemoryBytes.KnownRecords))
	}
	fmt.Fprintln(w)
}

// writeStatsKeyspaces is one row per keyspace, by state.
func writeStatsKeyspaces(w io.Writer, r inspect.Report) {
	n := units.FormatCount
	const row = "%-20s\t%10s\t%10s\t%7s\t%11s\t%8s\t%6s\t%11s\t %s\n"
	fmt.Fprintln(w)
	tw := NewTable(w)
	fmt.Fprintf(tw, row, "KEYSPACE", "PROCESSING", "SUCCEEDED", "FAILED", "RECONCILED", "UNKNOWN", "STALE", "MEMORY", "MATCH")
	for _, k := range r.Keyspaces {
		fmt.Fprintf(tw, row, inspect.Sanitize(k.Name),
			n(k.ByState["processing"]), n(k.ByState["succeeded"]), n(k.ByState["failed"]), n(k.ByState["reconciled"]),
			n(k.ByState["unknown"]+k.ByState["expired"]), n(k.Stale), units.FormatBytes(k.MemoryBytes), inspect.Sanitize(string(k.Match)))
	}
	tw.Flush()
}

// writeStatsStates is the records and memory in each state seen.
func writeStatsStates(w io.Writer, r inspect.Report) {
	est := estimated(r)
	const row = "%-12s\t%8s\t%11s\n"
	fmt.Fprintln(w)
	tw := NewTable(w)
	fmt.Fprintf(tw, "%-12s\t%s\n", "STATE", "RECORDS      MEMORY")
	for _, s := range inspect.AllStates() {
		c := r.ByState[s.String()]
		if c == 0 {
			continue
		}
		fmt.Fprintf(tw, row, s, est("by_state."+s.String(), c), units.FormatBytes(r.MemoryBytes.ByState[s.String()]))
	}
	tw.Flush()
}

// writeStatsFlags is the records under each flag raised.
func writeStatsFlags(w io.Writer, r inspect.Report) {
	est := estimated(r)
	fmt.Fprintln(w)
	tw := NewTable(w)
	fmt.Fprintf(tw, "%-20s\t%s\n", "FLAG", "RECORDS")
	any := false
	for _, fi := range inspect.AllFlags() {
		if c := r.Flags[fi.Name]; c > 0 {
			fmt.Fprintf(tw, "%-20s\t%8s\t %s\n", fi.Name, est("flags."+fi.Name, c), fi.ExplainFor(r.Source))
			any = true
		}
	}
	tw.Flush()
	if !any {
		fmt.Fprintln(w, "(none)")
	}
}

// writeStatsTTL is the histogram of TTL left.
func writeStatsTTL(w io.Writer, r inspect.Report) {
	fmt.Fprintln(w, "\nTTL LEFT   RECORDS")
	var maxN int64
	for _, b := range r.TTLHistogram {
		maxN = max(maxN, b.Count)
	}
	for _, b := range r.TTLHistogram {
		if b.Count == 0 && (b.Le == "unknown" || b.Le == "none") {
			continue
		}
		fmt.Fprintf(w, "%-10s %8s  %s\n", b.Label(), units.FormatCount(b.Count), bar(b.Count, maxN, 30))
	}
}

// writeStatsProcessingAge is the processing records' age quantiles.
func writeStatsProcessingAge(w io.Writer, r inspect.Report) {
	n := units.FormatCount
	a := r.ProcessingAge
	fmt.Fprintf(w, "\nPROCESSING AGE   n=%s  p50 %s  p90 %s  p99 %s  max %s", n(a.Count),
		units.FormatMs(a.P50), units.FormatMs(a.P90), units.FormatMs(a.P99), units.FormatMs(a.Max))
	if a.Unknown > 0 {
		fmt.Fprintf(w, "  (age unknown for %s)", n(a.Unknown))
	}
	fmt.Fprintln(w)
}

// writeStatsTimeline is the incident timeline: the stale records by the
// minute they were reserved (UTC, on the clock of the read), with the
// endpoints holding the most — when the crash began, and where.
func writeStatsTimeline(w io.Writer, r inspect.Report) {
	n := units.FormatCount
	tl := r.IncidentTimeline
	clock := "server clock"
	if r.Source != nil && r.Source.Kind == "snapshot" {
		clock = "snapshot clock"
	}
	capture := ""
	for _, m := range tl.Minutes {
		for _, v := range m.Top {
			if capture == "" {
				capture = v.Capture
			} else if capture != v.Capture && !strings.Contains(capture, "/") {
				capture += "/" + v.Capture
			}
		}
	}
	if capture != "" {
		capture = "; top " + inspect.Sanitize(capture)
	}
	if r.Sample != nil {
		capture += "; the sample's records, not estimates"
	}
	fmt.Fprintf(w, "\nSTALE BY MINUTE RESERVED (%s, UTC%s)\n", clock, capture)
	if len(tl.Minutes) == 0 && tl.AgeUnknown == 0 {
		fmt.Fprintln(w, "(no stale records)")
		return
	}
	layout := "15:04"
	if len(tl.Minutes) > 0 && tl.Minutes[0].Minute.YearDay() != tl.Minutes[len(tl.Minutes)-1].Minute.YearDay() {
		layout = "01-02 15:04"
	}
	col := max(len(layout), len("earlier"))
	if tl.Earlier > 0 {
		fmt.Fprintf(w, "%-*s %7s  reserved before %s\n", col, "earlier", n(tl.Earlier), tl.Minutes[0].Minute.Format(layout))
	}
	var maxN int64
	for _, m := range tl.Minutes {
		maxN = max(maxN, m.Stale)
	}
	for _, m := range tl.Minutes {
		var top []string
		for _, v := range m.Top {
			val := inspect.Sanitize(string(v.Value))
			if val == "" {
				val = "-"
			}
			top = append(top, val+" "+n(v.Count))
		}
		fmt.Fprintf(w, "%-*s %7s  %-10s %s\n", col, m.Minute.Format(layout), n(m.Stale), bar(m.Stale, maxN, 10), strings.Join(top, " · "))
	}
	if tl.AgeUnknown > 0 {
		noun := "stale records"
		if tl.AgeUnknown == 1 {
			noun = "stale record"
		}
		fmt.Fprintf(w, "(and %d %s whose age is unknown: no minute to place them in)\n", tl.AgeUnknown, noun)
	}
}

// writeStatsGroups is each template capture's top values.
func writeStatsGroups(w io.Writer, r inspect.Report) {
	n := units.FormatCount
	for _, name := range r.GroupOrder {
		g := r.Groups[name]
		exact := ""
		if !g.DistinctExact {
			exact = "≈"
		}
		fmt.Fprintf(w, "\nTOP %s (distinct %s%s)\n", strings.ToUpper(inspect.Sanitize(name)), exact, n(g.Distinct))
		if len(g.Top) > 0 && g.Top[0].Count-g.Top[0].MaxError <= 1 {
			fmt.Fprintln(w, "  (every value appears about once: no hot spot)")
			continue
		}
		for _, t := range g.Top {
			errs := ""
			if t.MaxError > 0 {
				errs = fmt.Sprintf(" (±%s)", n(t.MaxError))
			}
			fmt.Fprintf(w, "  %8s%s %10s  %s\n", n(t.Count), errs, units.FormatBytes(t.MemoryBytes), inspect.Sanitize(string(t.Value)))
		}
	}
}

// writeStatsCoverage is how each keyspace was read, and whether whole.
func writeStatsCoverage(w io.Writer, r inspect.Report) {
	n := units.FormatCount
	fmt.Fprintln(w, "\nCOVERAGE")
	tw := tabwriter.NewWriter(w, 0, 0, 0, ' ', 0) // the name's cell carries its own space
	defer tw.Flush()
	for _, c := range r.Coverage {
		state := "complete"
		switch {
		case c.Error != "":
			state = "INCOMPLETE: " + c.Error
		case c.Limited:
			state = "stopped at --max-keys"
		case c.Sampled:
			state = fmt.Sprintf("sampled %.1f%%", c.Share*100)
		}
		where := ""
		if c.Node != "" {
			where = " on " + c.Node
			if c.Role == "replica" {
				where += " (replica, " + c.Lag + ")"
			}
			if c.Slots != "" {
				where += " slots " + c.Slots
			}
		}
		if c.ReadPath != "" {
			where += ", read by " + c.ReadPath
		}
		fmt.Fprintf(tw, "  %-20s\t%s: %s keys in %s (%s keys/s), %s vanished during the scan — %s\n",
			inspect.Sanitize(c.Keyspace), where, n(c.Keys), units.FormatMs(c.DurationMs), n(int64(math.Round(c.KeysPerSec))), n(c.Vanished), state)
	}
}

// sampleInterval is " [low–high]" for a sampled count, "" otherwise.
func sampleInterval(s *inspect.SampleReport, path string, format func(int64) string) string {
	if s == nil {
		return ""
	}
	iv, ok := s.Intervals95[path]
	if !ok {
		return ""
	}
	return " [" + format(iv.Low) + "–" + format(iv.High) + "]"
}

func bar(n, maxN int64, width int) string {
	if maxN <= 0 || n <= 0 {
		return ""
	}
	w := int(n * int64(width) / maxN)
	if w == 0 {
		w = 1
	}
	return strings.Repeat("█", w)
}

// Gaps heads the stats table with what its figures cannot back.
func Gaps(w io.Writer, gaps []inspect.Gap) {
	if len(gaps) == 0 {
		return
	}
	fmt.Fprintln(w, "CANNOT JUDGE")
	for _, g := range gaps {
		fmt.Fprintf(w, "  %s\n    fix: %s\n", g.Message, g.Fix)
	}
	fmt.Fprintln(w)
}
