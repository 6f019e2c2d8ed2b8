package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/cli/report"
	"github.com/idemctl/idemctl/inspect"
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
	outputFlag(fs, &o.output, "", "table (or text) or json (default: table on a terminal, json otherwise)", "table", "json")
	fs.IntVar(&o.top, "top", 10, "top N values per template capture")
	o.sample.register(fs, "read this share of the keyspace (e.g. 1% or 0.01) from a random start and report estimates with 95% intervals",
		"read for this long (e.g. 30s) and report estimates with 95% intervals")
	o.readFlags.registerSnapshot(fs)
}

func (o *statsCmd) run(ctx context.Context, a *app, _ []string) error {
	format, err := outputFormat(o.output, a.isTTY, "table", "json")
	if err != nil {
		return err
	}
	if o.top < 1 {
		return usageErr("--top must be at least 1")
	}
	spec := o.spec(keyspacesRequired)
	spec.sample = &o.sample
	s, err := a.openSession(ctx, spec)
	if err != nil {
		return err
	}
	defer s.Close()
	progress := s.progress(a, "stats", o.sf.quiet)
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
	spaces, streams := statsStreams(ctx, a, s) // stats_streams.go
	w := bufio.NewWriter(a.stdout)
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(statsWithStreams{Report: rep, Streams: streams}); err != nil {
			return err
		}
	} else {
		report.Stats(w, rep)
		report.StatsStreams(w, spaces, streams)
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
