package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// statsCmd holds stats' flags.
type statsCmd struct {
	readFlags
	output string
	top    int
	sample sampleFlags
}

// flags registers stats's flags.
func (o *statsCmd) flags(fs *pflag.FlagSet) {
	outputFlag(fs, &o.output, "", "table or json (default: table on a terminal, json otherwise)", "table", "json")
	fs.IntVar(&o.top, "top", 10, "top N values per template capture")
	o.sample.register(fs, "read this share of the keyspace (e.g. 1% or 0.01) from a random start and report estimates with 95% intervals",
		"read for this long (e.g. 30s) and report estimates with 95% intervals")
	o.readFlags.registerSnapshot(fs)
}

func (o *statsCmd) run(ctx context.Context, a *app, fs *pflag.FlagSet, _ []string) error {
	format, err := outputFormat(o.output, a.isTTY, "table", "json")
	if err != nil {
		return err
	}
	if o.top < 1 {
		return usageErr("--top must be at least 1")
	}
	s, progress, err := a.openScan(ctx, fs, &o.readFlags, "stats")
	if err != nil {
		return err
	}
	defer s.Close()
	if err := o.sample.applyLive(&s.scan, s); err != nil {
		return err
	}
	a.noteSnapshot(s)
	st := inspect.NewStats(o.top)
	covs, _ := inspect.Scan(ctx, s.client, s.keyspaces, s.scan, func(b inspect.Batch) error {
		st.Add(b)
		return nil
	})
	progress.clear()
	st.AddCoverage(covs...)
	rep := st.Report() // cut short by Ctrl-C, it says so: complete false, covered < 1
	fillGaps(ctx, s, &rep)
	rep.Source = s.source()
	w := bufio.NewWriter(a.stdout)
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		writeStatsTable(w, rep)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if ctx.Err() != nil {
		return interrupted(rep.Covered)
	}
	return coverageResult(ctx, a, covs, s)
}

// interrupted is a scan command's answer to Ctrl-C once it has printed what
// it read: the incomplete exit code, with how much was covered.
func interrupted(covered float64) error {
	return codeErr(ExitIncomplete, "interrupted after %.0f%% of the keyspace: the counts above are partial", covered*100)
}

func writeStatsTable(w io.Writer, r inspect.Report) {
	n := units.FormatCount
	est := func(path string, v int64) string { return n(v) + sampleInterval(r.Sample, path, n) }
	if sm := r.Sample; sm != nil {
		fmt.Fprintf(w, "SAMPLE  %.1f%% of the keyspace read (%s records): every count is an estimate for the whole, its 95%% interval in [ ]\n\n",
			sm.Share*100, n(sm.RecordsRead))
	}
	writeGaps(w, r.CannotJudge)
	fmt.Fprintf(w, "RECORDS %s   stale %s   memory %s", est("total", r.Total), est("stale", r.Stale),
		units.FormatBytes(r.MemoryBytes.Total)+sampleInterval(r.Sample, "memory_bytes.total", units.FormatBytes))
	if r.MemoryBytes.KnownRecords < r.Total {
		fmt.Fprintf(w, " (known for %s)", n(r.MemoryBytes.KnownRecords))
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "\nKEYSPACE             PROCESSING  SUCCEEDED  FAILED  RECONCILED  UNKNOWN  STALE      MEMORY  MATCH")
	for _, k := range r.Keyspaces {
		fmt.Fprintf(w, "%-20s %10s %10s %7s %11s %8s %6s %11s  %s\n", inspect.Sanitize(k.Name),
			n(k.ByState["processing"]), n(k.ByState["succeeded"]), n(k.ByState["failed"]), n(k.ByState["reconciled"]),
			n(k.ByState["unknown"]+k.ByState["expired"]), n(k.Stale), units.FormatBytes(k.MemoryBytes), inspect.Sanitize(string(k.Match)))
	}

	fmt.Fprintln(w, "\nSTATE        RECORDS      MEMORY")
	for _, s := range inspect.AllStates() {
		c := r.ByState[s.String()]
		if c == 0 {
			continue
		}
		fmt.Fprintf(w, "%-12s %8s %11s\n", s, est("by_state."+s.String(), c), units.FormatBytes(r.MemoryBytes.ByState[s.String()]))
	}

	fmt.Fprintln(w, "\nFLAG                 RECORDS")
	any := false
	for _, fi := range inspect.AllFlags() {
		if c := r.Flags[fi.Name]; c > 0 {
			fmt.Fprintf(w, "%-20s %8s  %s\n", fi.Name, est("flags."+fi.Name, c), fi.Explain)
			any = true
		}
	}
	if !any {
		fmt.Fprintln(w, "(none)")
	}

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

	a := r.ProcessingAge
	fmt.Fprintf(w, "\nPROCESSING AGE   n=%s  p50 %s  p90 %s  p99 %s  max %s", n(a.Count),
		units.FormatMs(a.P50), units.FormatMs(a.P90), units.FormatMs(a.P99), units.FormatMs(a.Max))
	if a.Unknown > 0 {
		fmt.Fprintf(w, "  (age unknown for %s)", n(a.Unknown))
	}
	fmt.Fprintln(w)

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

	fmt.Fprintln(w, "\nCOVERAGE")
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
		fmt.Fprintf(w, "  %-20s%s: %s keys in %s (%s keys/s), %s vanished during the scan — %s\n",
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
