package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/cli/report"
	"github.com/idemctl/idemctl/doctor"
)

// doctorCmd holds doctor's flags.
type doctorCmd struct {
	readFlags
	output       string
	retryHorizon time.Duration
	requireFsync string
	maxLag       time.Duration
	// given (resolveFlags): a flag given wins over the config's doctor:
	// section; a default only fills what it leaves out.
	retryHorizonGiven, requireFsyncGiven bool
}

// resolveFlags records which of its flags were given.
func (o *doctorCmd) resolveFlags(fs *pflag.FlagSet) {
	o.readFlags.resolveFlags(fs)
	o.retryHorizonGiven, o.requireFsyncGiven = fs.Changed("retry-horizon"), fs.Changed("require-fsync")
}

func (o *doctorCmd) flags(fs *pflag.FlagSet) {
	o.retryHorizon, o.maxLag = 24*time.Hour, 10*time.Second
	outputFlag(fs, &o.output, "", "table (or text) or json (default: table on a terminal, json otherwise)", "table", "json")
	fs.Var(durationValue(&o.retryHorizon), "retry-horizon", "how long clients may retry a request: retention must cover it")
	fs.StringVar(&o.requireFsync, "require-fsync", "everysec", "weakest appendfsync accepted: always, everysec or no")
	fs.Var(durationValue(&o.maxLag), "max-lag", "replication lag above which a failover loses records")
	o.readFlags.registerSnapshot(fs)
}

func (o *doctorCmd) run(ctx context.Context, a *app, _ []string) error {
	format, err := outputFormat(o.output, a.isTTY, "table", "json")
	if err != nil {
		return err
	}
	switch o.requireFsync {
	case "always", "everysec", "no":
	default:
		return usageErr("--require-fsync %q: want always, everysec or no", o.requireFsync)
	}
	if o.retryHorizon <= 0 {
		return usageErr("--retry-horizon must be above 0")
	}
	s, err := a.openSession(ctx, o.spec(keyspacesOrMessages))
	if err != nil {
		return err
	}
	defer s.Close()
	opt := doctorOptions(s.cfg) // the config's doctor: section; flags given win
	if o.retryHorizonGiven || opt.RetryHorizon == 0 {
		opt.RetryHorizon = o.retryHorizon
	}
	if o.requireFsyncGiven || opt.RequireFsync == "" {
		opt.RequireFsync = o.requireFsync
	}
	opt.MaxLag = o.maxLag
	opt.Ledgers = doctorLedgers(ctx, s) // cmd_ledgers.go
	a.noteSnapshot(s)
	rep := doctor.Run(ctx, s.client, s.keyspaces, s.scan, opt)
	rep.Source = s.source()
	if ctx.Err() != nil {
		return context.Canceled
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool { return rep.Findings[i].Severity > rep.Findings[j].Severity })
	w := bufio.NewWriter(a.stdout)
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		err = enc.Encode(rep)
	} else {
		report.Doctor(w, &rep, s.where())
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return &exitErr{code: doctorExit(&rep)} // the report on stdout says it all
}

// doctorExit is the exit code for the worst finding: 11 critical, 10
// warning, else 9 when a rule could not run, else 0.
func doctorExit(rep *doctor.Report) int {
	if worst, ok := rep.Worst(); ok && worst > doctor.Info {
		if worst == doctor.Critical {
			return ExitDoctorCritical
		}
		return ExitDoctorWarning
	}
	if rep.Skipped() > 0 {
		return ExitUnjudged
	}
	return ExitOK
}
