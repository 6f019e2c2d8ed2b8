package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/cli/docgen"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// undoCmd restores records to the before-images audited writes kept.
type undoCmd struct {
	cf    connFlags
	kf    keyspaceFlags
	wf    writeFlags
	since string
}

// resolveFlags records which of its flags were given.
func (o *undoCmd) resolveFlags(fs *pflag.FlagSet) {
	o.cf.resolveFlags(fs)
	o.kf.resolveFlags(fs)
	o.wf.resolveFlags(fs)
}

func (o *undoCmd) flags(fs *pflag.FlagSet) {
	registerGroup(fs, docgen.GroupWrite, func(fs *pflag.FlagSet) {
		fs.StringVar(&o.since, "since", "", "undo every applied write since TIME (RFC 3339, or a duration ago such as 30m), newest first")
		o.wf.register(fs, write.KindUndo)
	})
	registerGroup(fs, docgen.GroupKeyspace, o.kf.register)
	registerGroup(fs, docgen.GroupConnection, o.cf.register)
}

func (o *undoCmd) run(ctx context.Context, a *app, args []string) error {
	wf := &o.wf
	if err := wf.check(); err != nil {
		return err
	}
	if (len(args) == 0) == (o.since == "") {
		return usageErr("give the audit ids of the writes to undo (see 'idemctl audit show RUN'), or --since TIME; not both")
	}
	since, s, err := a.sinceSession(ctx, &o.cf, &o.kf, o.since)
	if err != nil {
		return err
	}
	setup := s.writeSetup(a.getenv, wf.write, wf.auditLog)
	setup.Durability = wf.durability()
	x, err := readUndoIndex(a, setup.AuditPath)
	if err != nil {
		return err
	}
	var targets []actions.UndoTarget
	for _, id := range args {
		t, err := x.Lookup(id)
		if errors.Is(err, actions.ErrNoWrite) {
			return codeErr(ExitNotFound, "undo %w (see 'idemctl audit show RUN' for the ids)", err)
		}
		if err != nil {
			return usageErr("undo %v", err)
		}
		targets = append(targets, t)
	}
	if o.since != "" {
		if targets = x.Since(since); len(targets) == 0 {
			fmt.Fprintf(a.stderr, "idemctl: no applied write since %s is left to undo\n", since.UTC().Format(time.RFC3339))
			return nil
		}
	}
	x.NewestFirst(targets)
	if err := s.connectToWrite(ctx, a, &setup, wf.dryRun); err != nil {
		return err
	}
	defer s.Close()
	pl := actions.NewPlanner(setup)
	plans, err := pl.PlanUndo(ctx, x, targets, s.keyspaces, wf.reason)
	if err != nil {
		return err
	}
	return runPlans(ctx, a, wf, setup, s, "undo", pl, plans, func() string { return undoCommand(wf.line, plans, s) },
		func(rs []actions.Result) { printEntryResults(a, wf.output, plans, rs) })
}

// sinceSession parses --since and resolves the session of a command that
// reads writes back from the audit log (keyspaces optional: the log names
// them).
func (a *app) sinceSession(ctx context.Context, cf *connFlags, kf *keyspaceFlags, since string) (time.Time, *session, error) {
	t, err := sinceFlag(since)
	if err != nil {
		return t, nil, err
	}
	s, err := a.openSession(ctx, sessionSpec{conn: cf, keyspace: kf, need: keyspacesOptional})
	return t, s, err
}

// sinceFlag is --since: the zero time when not given.
func sinceFlag(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := parseSince(v, time.Now())
	if err != nil {
		return t, usageErr("--since %q: %v", v, err)
	}
	return t, nil
}

// parseSince reads --since: an RFC 3339 time, or a duration before now.
func parseSince(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	d, err := units.ParseDuration(v)
	if err != nil || d <= 0 {
		return time.Time{}, errors.New("want an RFC 3339 time (2026-01-02T15:04:05Z) or a duration ago (30m)")
	}
	return now.Add(-d), nil
}

// readUndoIndex reads the audit log the undo works from.
func readUndoIndex(a *app, path string) (*actions.UndoIndex, error) {
	lg, err := audit.Read(path)
	if err != nil {
		return nil, codeErr(ExitNotFound, "audit log: %w: there are no audited writes to undo", err)
	}
	for _, b := range lg.Bad {
		fmt.Fprintf(a.stderr, "idemctl: warning: audit log %s line %d: not an entry (%s)\n", path, b.Line, inspect.Line(b.Err))
	}
	return actions.IndexUndo(lg.Entries), nil
}

// undoCommand is the non-interactive command for what is shown: the ids
// themselves pin it, since each undo compares-and-sets on the version its
// write left, recorded in the log.
func undoCommand(given givenFlags, plans []*actions.Plan, s *session) string {
	var b strings.Builder
	writeFlagsLine(&b, "undo", given, s, "since")
	b.WriteString(" --yes")
	for _, p := range plans {
		if p.Refused == "" {
			b.WriteString(" " + p.Reverts())
		}
	}
	return b.String()
}
