package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/cli/docgen"
	"github.com/idemctl/idemctl/cli/report"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/detect"
	"github.com/idemctl/idemctl/inspect/snapshot"
)

// detectCmd holds detect's flags.
type detectCmd struct {
	cf     connFlags
	snap   snapFlags
	match  string
	sample int
	output string
	quiet  bool
}

// resolveFlags records which of its flags were given.
func (o *detectCmd) resolveFlags(fs *pflag.FlagSet) {
	o.cf.resolveFlags(fs)
	o.snap.resolveFlags(fs)
}

// detect samples the server, or the snapshot --rdb names.
func (o *detectCmd) detect(ctx context.Context, a *app, progress *progressLine) (detect.DetectResult, error) {
	if o.snap.path != "" {
		if err := a.checkNoServer(&o.cf); err != nil {
			return detect.DetectResult{}, err
		}
		src, err := a.openSnapshotFile(&o.snap)
		if err != nil {
			return detect.DetectResult{}, err
		}
		defer src.Close()
		a.noteSnapshot(&session{snap: src})
		return detect.DetectSnapshot(ctx, src, o.match, o.sample, progress.update)
	}
	s, err := a.openSession(ctx, sessionSpec{conn: &o.cf, dial: true})
	if err != nil {
		return detect.DetectResult{}, err
	}
	defer s.Close()
	return detect.DetectProgress(ctx, s.client, o.match, o.sample, progress.update)
}

// flags registers detect's flags.
func (o *detectCmd) flags(fs *pflag.FlagSet) {
	fs.StringVar(&o.match, "match", "", "SCAN MATCH pattern to sample (required)")
	fs.IntVar(&o.sample, "sample", 200, "keys to sample")
	outputFlag(fs, &o.output, "text", "text or json", "text", "json")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress line on stderr (there is none unless stderr is a terminal)")
	registerGroup(fs, docgen.GroupConnection, o.cf.register)
	registerGroup(fs, docgen.GroupSnapshot, o.snap.register)
}

func (o *detectCmd) run(ctx context.Context, a *app, _ []string) error {
	if o.match == "" {
		return usageErr("--match is required: the keys to look at")
	}
	if o.sample < 1 || o.sample > 10000 {
		return usageErr("--sample must be between 1 and 10000")
	}
	if o.output != "text" && o.output != "json" {
		return usageErr("--output %q: want text or json", o.output)
	}
	if err := o.snap.checkUnused(); err != nil {
		return err
	}
	progress := a.newProgress("detect", o.quiet)
	res, err := o.detect(ctx, a, progress)
	progress.clear()
	var se *snapshot.Error
	var ee *exitErr
	switch {
	case errors.As(err, &se):
		return snapshotErr(err)
	case errors.As(err, &ee):
		return err
	case err != nil:
		return fmt.Errorf("detect: %w", err)
	}
	if o.output == "json" {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	var types []string
	for t, n := range res.Types {
		types = append(types, fmt.Sprintf("%s×%d", t, n))
	}
	fmt.Fprintf(a.stdout, "sampled %d keys matching %q (%s)\n\n", res.Sampled, inspect.Sanitize(o.match), strings.Join(types, ", "))
	for _, c := range res.Candidates {
		if c.Matched == 0 && c.Companions == 0 {
			continue
		}
		mark := " "
		if res.Best != nil && c.Preset == res.Best.Preset {
			mark = "✓"
		}
		fmt.Fprintf(a.stdout, "%s %-20s %d records, %d companions\n", mark, c.Preset, c.Matched, c.Companions)
		for _, e := range c.Evidence {
			fmt.Fprintf(a.stdout, "      %s\n", inspect.Sanitize(e))
		}
	}
	report.LedgerProposal(a.stdout, res.Ledger) // cmd_ledgers.go
	if res.Best == nil && res.Ledger == nil {
		fmt.Fprintln(a.stdout, "\nno preset decodes most of these keys.")
	}
	report.Timing(a.stdout, res.Timing)
	for _, m := range res.Mixed {
		fmt.Fprintf(a.stdout, "\nmixed formats: %s — narrow --match or configure one keyspace per format\n", m)
	}
	fmt.Fprintln(a.stdout)
	for _, line := range strings.Split(strings.TrimRight(res.YAML, "\n"), "\n") {
		fmt.Fprintln(a.stdout, line) // Redis text in it is quoted with Sanitize's escapes
	}
	return nil
}
