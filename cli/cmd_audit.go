package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// auditOptions are the flags of audit and audit show.
type auditOptions struct {
	configPath, profile, auditLog, output string
}

func (o *auditOptions) flags(fs *pflag.FlagSet) {
	fs.StringVar(&o.auditLog, "audit-log", "", "audit log file (default: the profile's, or $XDG_STATE_HOME/idemctl/audit.log)")
	fs.StringVar(&o.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/idemctl/config.yaml)")
	fs.StringVar(&o.profile, "profile", "", "profile from the config file (for its audit_log)")
	outputFlag(fs, &o.output, "text", "text or json", "text", "json")
}

// newAuditCmd is audit and audit show.
func newAuditCmd(a *app) *cobra.Command {
	c := leaf(a, "audit", &auditCmd{})
	show := leaf(a, "audit-show", &auditShowCmd{})
	show.Args = func(c *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageErr("want one run id (see 'idemctl audit' for the list)")
		}
		return nil
	}
	check := leaf(a, "audit-check-applied", &auditCheckCmd{})
	check.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 1 {
			return usageErr("want at most one run id (see 'idemctl audit' for the list)")
		}
		return nil
	}
	verify := leaf(a, "audit-verify", &auditVerifyCmd{})
	verify.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 1 {
			return usageErr("want at most one audit log file")
		}
		return nil
	}
	c.AddCommand(show, check, verify)
	return c
}

// auditCmd lists the runs.
type auditCmd struct{ auditOptions }

func (o *auditCmd) run(_ context.Context, a *app, _ []string) error {
	runs, err := readRuns(a, &o.auditOptions)
	if err != nil {
		return err
	}
	if o.output == "json" {
		sums := make([]actions.RunSummary, len(runs)) // [] when there are none
		for i, r := range runs {
			sums[i] = r.RunSummary
		}
		return writeJSON(a, map[string]any{"runs": sums})
	}
	tw := tabwriter.NewWriter(a.stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tOPERATOR\tPLANNED\tAPPLIED\tCONFLICTS\tFAILED\tUNAPPLIED\tREVERTED\tWHAT")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", r.ID, shortTime(r.Started), inspect.Sanitize(r.Operator),
			r.Planned, r.Applied, r.Conflict, r.Failed, r.Unapplied, r.Reverted, inspect.Sanitize(r.Label()))
	}
	return tw.Flush()
}

// auditShowCmd shows one run and what it left undone.
type auditShowCmd struct{ auditOptions }

func (o *auditShowCmd) run(_ context.Context, a *app, args []string) error {
	runs, err := readRuns(a, &o.auditOptions)
	if err != nil {
		return err
	}
	r, hits := actions.FindRun(runs, args[0])
	if r == nil {
		if len(hits) > 1 {
			return usageErr("run %q is ambiguous: %d runs start with it", inspect.Sanitize(args[0]), len(hits))
		}
		return codeErr(ExitNotFound, "no run %q in the audit log", inspect.Sanitize(args[0]))
	}
	if o.output == "json" {
		return writeJSON(a, r)
	}
	fmt.Fprintf(a.stdout, "run %s: %s by %s, %s (last %s), %s\nreason: %s\n",
		r.ID, inspect.Sanitize(r.Label()), inspect.Sanitize(r.Operator), shortTime(r.Started), shortTime(r.Last),
		plural(r.Executions, "execution"), inspect.Sanitize(r.Reason))
	fmt.Fprintf(a.stdout, "planned %d, applied %d, conflicts %d, failed %d, in doubt %d, unapplied %d, reverted since %d\n",
		r.Planned, r.Applied, r.Conflict, r.Failed, r.InDoubt, r.Unapplied, r.Reverted)
	if path, err := auditPathOf(a, &o.auditOptions); err == nil {
		if head, err := audit.ReadHead(path); err == nil && head != "" {
			fmt.Fprintf(a.stdout, "audit log head: %s (idemctl audit verify --head %s proves it and all before it unchanged)\n", head, head)
		}
	}
	if r.Unapplied == 0 {
		fmt.Fprintln(a.stdout, "every planned key was applied")
	} else {
		fmt.Fprintln(a.stdout, "\nunapplied keys (the last the log says of each):")
		tw := tabwriter.NewWriter(a.stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY\tLAST\tDETAIL")
		for _, k := range r.UndoneKeys {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", inspect.Sanitize(k.Key), k.Last, a.clipForTerminal(inspect.Sanitize(k.Detail), 100))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return writeRunWrites(a, r.Writes)
}

// clipForTerminal cuts s to n characters on a terminal, where a line must
// fit; a pipe or a file gets it whole, for the script or the grep after.
func (a *app) clipForTerminal(s string, n int) string {
	if !a.isTTY {
		return s
	}
	return units.Clip(s, n)
}

// clipKeyForTerminal is clipForTerminal for a key: cut in its middle, so
// its end (the request id) stays.
func (a *app) clipKeyForTerminal(key string, n int) string {
	if !a.isTTY {
		return key
	}
	return units.ClipMiddle(key, n)
}

// writeRunWrites lists a run's writes with the id 'idemctl undo' takes
// and what an undo of each would do (undoable, reverted by, or why not).
func writeRunWrites(a *app, ws []actions.RunWrite) error {
	if len(ws) == 0 {
		return nil
	}
	fmt.Fprintln(a.stdout, "\nwrites (idemctl undo ID):")
	tw := tabwriter.NewWriter(a.stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tACTION\tOUTCOME\tKEY\tUNDO")
	for _, w := range ws {
		out, undo := string(w.Outcome), w.Undo
		if out == "" {
			out = actions.LastInDoubt
		}
		if w.Reverts != "" {
			undo = strings.TrimPrefix(undo+"; ", "; ") + "reverts " + w.Reverts
		}
		if undo == "" {
			undo = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", w.ID, w.Action, out, a.clipKeyForTerminal(inspect.Sanitize(w.Key), 60), a.clipForTerminal(inspect.Sanitize(undo), 100))
	}
	return tw.Flush()
}

// readRuns reads the runs from the audit log the flags or profile name.
func readRuns(a *app, o *auditOptions) ([]actions.RunReport, error) {
	if o.output != "text" && o.output != "json" {
		return nil, usageErr("--output %q: want text or json", o.output)
	}
	path, err := auditPathOf(a, o)
	if err != nil {
		return nil, err
	}
	runs, lg, err := actions.AuditRuns(path)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(a.stderr, "idemctl: note: no audit log at %s: nothing was written through it yet\n", path)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("audit log: %v", err)
	}
	if n := len(lg.Torn); n > 0 {
		fmt.Fprintf(a.stderr, "idemctl: note: audit log %s: %s (a crash or a full disk) passed over\n", path, units.Nouns(int64(n), "torn line", "torn lines"))
	}
	for _, b := range lg.Bad {
		fmt.Fprintf(a.stderr, "idemctl: warning: audit log %s line %d: not an entry (%s)\n", path, b.Line, inspect.Line(b.Err))
	}
	return runs, nil
}

// reportAudit says on stderr what a write run's audit log needed: torn
// lines it repaired, and a stream it could not mirror into.
func reportAudit(a *app, aud *audit.Auditor) {
	for _, t := range aud.Repaired() {
		fmt.Fprintf(a.stderr, "idemctl: warning: audit log %s: the line at byte %d (%d bytes) was left unfinished by an earlier run (a crash or a full disk); it was kept, terminated and marked\n",
			aud.Path(), t.Offset, t.Len)
	}
	if head := aud.Head(); head != "" {
		fmt.Fprintf(a.stderr, "audit log head: %s (keep it: idemctl audit verify --head %s proves this run's entries and all before them unchanged)\n", head, head)
	}
	if err := aud.StreamError(); err != nil {
		fmt.Fprintf(a.stderr, "idemctl: warning: audit stream: %s (the audit file has every entry)\n", inspect.Line(err.Error()))
	}
}

// auditPathOf is the audit log the options name: --audit-log, the
// profile's, or the default.
func auditPathOf(a *app, o *auditOptions) (string, error) {
	path := o.auditLog
	if path == "" {
		_, _, prof, err := a.loadProfile(o.configPath, o.profile)
		if err != nil {
			return "", err
		}
		path = prof.AuditLog
	}
	if path == "" {
		path = audit.DefaultPath(a.getenv)
	}
	return path, nil
}

// shortTime is an entry's RFC 3339 time to the second.
func shortTime(t string) string {
	if len(t) >= 19 {
		return t[:10] + " " + t[11:19]
	}
	return t
}
