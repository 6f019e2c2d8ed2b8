package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/cli/docgen"
	"github.com/idemctl/idemctl/cli/report"
	"github.com/idemctl/idemctl/config"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/ledger"
)

// ledgersCmd holds ledgers' flags: the profile's ledger keyspaces, or one
// given ad hoc by --preset (and --match, --window …).
type ledgersCmd struct {
	cf          connFlags
	keyspaces   []string
	preset      string
	match       string
	window      time.Duration
	scoreUnit   string
	keyTemplate string
	period      string
	count       int
	maxKeys     int64
	top         int
	output      string
	// adHocFlag (resolveFlags): the first of the ad hoc ledger's flags
	// given, which needs --preset.
	adHocFlag string
}

// resolveFlags records which of its flags were given.
func (o *ledgersCmd) resolveFlags(fs *pflag.FlagSet) {
	o.cf.resolveFlags(fs)
	o.adHocFlag = ""
	for _, f := range []string{"match", "window", "score-unit", "key-template", "period"} {
		if fs.Changed(f) {
			o.adHocFlag = f
			break
		}
	}
}

func (o *ledgersCmd) flags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.keyspaces, "keyspace", nil, "ledger keyspace(s) from the config file (default: the profile's)")
	fs.Var(choiceValue(&o.preset, ledger.PresetNames()), "preset", "ad hoc ledger shape: zset-window or set-per-period (see 'idemctl presets')")
	fs.StringVar(&o.match, "match", "", "SCAN MATCH pattern of the ledger keys (default: the preset's)")
	fs.Var(durationValue(&o.window), "window", "how long an entry is meant to be kept (default: the preset's, 24h or 48h)")
	fs.Var(choiceValue(&o.scoreUnit, []string{ledger.ScoreMillis, ledger.ScoreSeconds}), "score-unit", "zset-window: what a score counts, ms or s since the epoch")
	fs.StringVar(&o.keyTemplate, "key-template", "", "set-per-period: key template capturing {period}")
	fs.StringVar(&o.period, "period", "", "set-per-period: the {period} capture's Go time layout, e.g. 2006-01-02 or 2006-01-02T15")
	fs.IntVar(&o.count, "count", ledger.ScanCount, "SCAN COUNT and keys per pipeline")
	fs.Int64Var(&o.maxKeys, "max-keys", 0, "stop after this many ledger keys per ledger (0: all)")
	fs.IntVar(&o.top, "top", 10, "table: list this many keys per ledger, oldest first")
	outputFlag(fs, &o.output, "table", "table (or text) or json", "table", "json")
	registerGroup(fs, docgen.GroupConnection, o.cf.register)
}

func (o *ledgersCmd) run(ctx context.Context, a *app, _ []string) error {
	format, err := outputFormat(o.output, a.isTTY, "table", "json")
	if err != nil {
		return err
	}
	o.output = format
	if o.count < 1 || o.count > inspect.MaxScanCount || o.maxKeys < 0 || o.top < 0 || o.top > ledger.DetailCap {
		return usageErr("--count must be 1 to %d, --max-keys at least 0, --top 0 to %d", inspect.MaxScanCount, ledger.DetailCap)
	}
	s, err := a.openSession(ctx, sessionSpec{conn: &o.cf, dial: true})
	if err != nil {
		return err
	}
	defer s.Close()
	ls, err := o.ledgers(s.cfg, s.profile)
	if err != nil {
		return err
	}
	reps, err := ledger.ReadAll(ctx, s.client, ls, ledger.Options{Count: o.count, MaxKeys: o.maxKeys})
	if ctx.Err() != nil {
		return context.Canceled
	}
	if err != nil {
		return fmt.Errorf("ledgers: %s", inspect.Line(err.Error()))
	}
	w := bufio.NewWriter(a.stdout)
	if o.output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		err = enc.Encode(reps)
	} else {
		report.Ledgers(w, reps, o.top)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	for _, r := range reps {
		if !r.Complete {
			return codeErr(ExitIncomplete, "ledger %s: read stopped at --max-keys %d: counts are lower bounds", inspect.Sanitize(r.Name), o.maxKeys)
		}
	}
	return nil
}

// ledgers is the ad hoc ledger (--preset) or the config's.
func (o *ledgersCmd) ledgers(cfg *config.Config, prof *config.Profile) ([]*ledger.Ledger, error) {
	if o.preset == "" && o.adHocFlag != "" {
		return nil, usageErr("--%s needs --preset zset-window or set-per-period", o.adHocFlag)
	}
	if o.preset != "" {
		if len(o.keyspaces) > 0 {
			return nil, usageErr("give --keyspace or --preset, not both")
		}
		l, err := ledger.New(ledger.Spec{Name: "ad-hoc", Preset: o.preset, Match: o.match, Window: o.window,
			ScoreUnit: o.scoreUnit, KeyTemplate: o.keyTemplate, Period: o.period})
		if err != nil {
			return nil, usageErr("%s", strings.TrimPrefix(err.Error(), "ledger ad-hoc: "))
		}
		return []*ledger.Ledger{l}, nil
	}
	ls, err := cfg.Ledgers(prof)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if len(o.keyspaces) > 0 {
		ls = slices.DeleteFunc(ls, func(l *ledger.Ledger) bool { return !slices.Contains(o.keyspaces, l.Name) })
		if len(ls) != len(o.keyspaces) {
			return nil, usageErr("--keyspace %s: not all are ledger keyspaces of this profile", strings.Join(o.keyspaces, ","))
		}
	}
	if len(ls) == 0 {
		return nil, usageErr("no ledger keyspace (kind: ledger) in the config for this profile: give --preset zset-window or set-per-period")
	}
	return ls, nil
}

// doctorLedgers reads the profile's ledger keyspaces for doctor's ledger
// rules: none on a snapshot or when the config has none. A read that
// failed is in its report, which the rules then call skipped.
func doctorLedgers(ctx context.Context, s *session) []ledger.Report {
	ls := configLedgers(s)
	if s.snap != nil || s.client == nil || len(ls) == 0 {
		return nil
	}
	reps, _ := ledger.ReadAll(ctx, s.client, ls, ledger.Options{})
	return reps
}

// configLedgers are the profile's ledger keyspaces (for doctor and the
// exporter). Loading the config already built each one, so none fails here.
func configLedgers(s *session) []*ledger.Ledger {
	if s.cfg == nil {
		return nil
	}
	ls, _ := s.cfg.Ledgers(s.profile)
	return ls
}
