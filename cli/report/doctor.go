package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/idemctl/idemctl/doctor"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

func Doctor(w io.Writer, rep *doctor.Report, ep string) {
	for _, f := range rep.Findings {
		if f.Silenced != "" {
			continue // listed after the skipped checks
		}
		fmt.Fprintf(w, "%-8s %s%s: %s\n", strings.ToUpper(f.Severity.String()), f.Rule, onKeyspace(f.Keyspace), inspect.Line(f.Title))
		for _, e := range f.Evidence {
			fmt.Fprintf(w, "  evidence: %s\n", inspect.Line(e))
		}
		if len(f.Samples) > 0 {
			fmt.Fprintf(w, "  samples:  %s\n", inspect.Line(strings.Join(f.Samples, "  ")))
		}
		fmt.Fprintf(w, "  fix:      %s\n\n", inspect.Line(f.Fix))
	}
	ok, nodata := 0, 0
	for _, c := range rep.Checks {
		switch c.Status {
		case doctor.StatusSkipped:
			fmt.Fprintf(w, "SKIPPED  %s%s: %s\n", c.Rule, onKeyspace(c.Keyspace), inspect.Line(c.Reason))
		case doctor.StatusOK:
			ok++
		case doctor.StatusNoData:
			nodata++
		}
	}
	silenced := 0
	for _, f := range rep.Findings {
		if f.Silenced != "" {
			silenced++
			fmt.Fprintf(w, "SILENCED %s%s (%s): %s — %s\n", f.Rule, onKeyspace(f.Keyspace), f.Severity, inspect.Line(f.Title), inspect.Line(f.Silenced))
		}
	}
	counts := []string{}
	for _, s := range []string{"critical", "warning", "info"} {
		counts = append(counts, fmt.Sprintf("%d %s", rep.Counts[s], s))
	}
	version := rep.Version
	if version == "" {
		version = "version unknown"
	}
	fmt.Fprintf(w, "%s; %d checks clean, %d with nothing to judge, %d skipped, %d silenced — %s records on %s (%s), in %s\n",
		strings.Join(counts, ", "), ok, nodata, rep.Skipped(), silenced, units.FormatCount(rep.Records), ep, inspect.Sanitize(version),
		units.FormatMs(max(rep.Duration, time.Millisecond).Milliseconds()))
}

// onKeyspace is " [name]" for a keyspace's finding, "" for the server's.
func onKeyspace(ks string) string {
	if ks == "" {
		return ""
	}
	return " [" + inspect.Sanitize(ks) + "]"
}
