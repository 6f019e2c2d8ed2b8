package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/cli/docgen"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// auditCheckCmd is audit check-applied: the applied writes against the
// records as they are now.
type auditCheckCmd struct {
	cf       connFlags
	kf       keyspaceFlags
	since    string
	auditLog string
	output   string
	// line (resolveFlags): the flags given, which the re-apply commands
	// repeat: the same server, config and keyspaces.
	line givenFlags
}

// resolveFlags records which of its flags were given, and all of them.
func (o *auditCheckCmd) resolveFlags(fs *pflag.FlagSet) {
	o.cf.resolveFlags(fs)
	o.kf.resolveFlags(fs)
	o.line = flagsGiven(fs)
}

func (o *auditCheckCmd) flags(fs *pflag.FlagSet) {
	fs.StringVar(&o.since, "since", "", "check the writes since TIME (RFC 3339, or a duration ago such as 30m)")
	fs.StringVar(&o.auditLog, "audit-log", "", "audit log file (default: the profile's, or $XDG_STATE_HOME/idemctl/audit.log)")
	outputFlag(fs, &o.output, "text", "text or json", "text", "json")
	registerGroup(fs, docgen.GroupKeyspace, o.kf.register)
	registerGroup(fs, docgen.GroupConnection, o.cf.register)
}

func (o *auditCheckCmd) run(ctx context.Context, a *app, args []string) error {
	if len(args) > 1 || len(args) == 1 && o.since != "" {
		return usageErr("give one run id (see 'idemctl audit'), or --since TIME, or neither for every write")
	}
	since, s, err := a.sinceSession(ctx, &o.cf, &o.kf, o.since)
	if err != nil {
		return err
	}
	path := s.writeSetup(a.getenv, false, o.auditLog).AuditPath
	x, err := readUndoIndex(a, path)
	if err != nil {
		return err
	}
	keep := actions.SinceFilter(since)
	if len(args) == 1 {
		run := args[0]
		keep = func(in audit.Entry) bool { return in.Run != "" && strings.HasPrefix(in.Run, run) }
	}
	targets := x.LatestApplied(keep)
	if len(targets) == 0 {
		fmt.Fprintln(a.stderr, "idemctl: the audit log holds no applied write to check there")
		return nil
	}
	if err := s.connect(ctx, a); err != nil {
		return err
	}
	defer s.Close()
	checks := actions.CheckApplied(ctx, s.client, targets, s.keyspaces)
	counts := map[string]int{}
	for _, c := range checks {
		counts[c.Status]++
	}
	if o.output == "json" {
		if err := writeJSON(a, map[string]any{"checks": checks, "summary": counts}); err != nil {
			return err
		}
	} else {
		printChecks(a, checks, counts, o.line, s)
	}
	if n := counts[actions.CheckLost]; n > 0 {
		them := "them"
		if n == 1 {
			them = "it"
		}
		return codeErr(ExitNotReplicated, "%s taken back: re-apply %s with the command above", units.Nouns(int64(n), "applied write was", "applied writes were"), them)
	}
	return nil
}

func printChecks(a *app, checks []actions.AppliedCheck, counts map[string]int, given givenFlags, s *session) {
	tw := tabwriter.NewWriter(a.stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tWRITTEN\tACTION\tKEY\tDETAIL")
	for _, c := range checks {
		status := c.Status
		if c.NotReplicated {
			status += " (not replicated)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", status, shortTime(c.Time), c.Action, inspect.Sanitize(c.Target()), units.Clip(inspect.Sanitize(c.Detail), 120))
	}
	_ = tw.Flush()
	var parts []string
	for _, st := range []string{actions.CheckKept, actions.CheckLost, actions.CheckChanged, actions.CheckGone, actions.CheckUnknown} {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	fmt.Fprintf(a.stdout, "summary: %s\n", strings.Join(parts, ", "))
	if cmds := reapplyCommands(checks, given, s); len(cmds) > 0 {
		fmt.Fprintln(a.stdout, "re-apply the lost writes (each is planned, confirmed and compare-and-set again):")
		for _, c := range cmds {
			fmt.Fprintln(a.stdout, c)
		}
	}
}

// reapplyCommands are the guarded writes that redo the lost ones: one
// command per action, reason and argument, on the server and keyspaces
// this check was given, the keys on stdin.
func reapplyCommands(checks []actions.AppliedCheck, given givenFlags, s *session) []string {
	groups, entries := map[string][]string{}, map[string][]string{}
	for _, c := range checks {
		if c.Status != actions.CheckLost {
			continue
		}
		if head, ok := entryReapplyHead(c, given, s); ok {
			entries[head] = append(entries[head], shellQuote(c.Entry.ID))
			continue
		}
		name, extra, ok := reapplyArgs(c, s)
		if !ok {
			continue
		}
		var b strings.Builder
		writeFlagsLine(&b, name, given, s, "since", "output")
		b.WriteString(extra)
		groups[b.String()] = append(groups[b.String()], c.Key)
	}
	var out []string
	for head, keys := range groups {
		var b strings.Builder
		b.WriteString(head)
		b.WriteString(" --write --from-file - <<'EOF'\n")
		for _, k := range keys {
			b.WriteString(actions.TargetLine(k) + "\n") // the key alone: planned afresh, shown, confirmed
		}
		b.WriteString("EOF")
		out = append(out, b.String())
	}
	for head, ids := range entries {
		out = append(out, head+" --write "+strings.Join(ids, " "))
	}
	sort.Strings(out)
	return out
}

// entryReapplyHead is the streams command that redoes a lost
// pending-entry write, but its ids: the entry is planned afresh.
func entryReapplyHead(c actions.AppliedCheck, given givenFlags, s *session) (string, bool) {
	name, flags, ok := c.EntryReapply()
	if !ok {
		return "", false
	}
	var b strings.Builder
	writeFlagsLine(&b, name, given, s, "since", "output", "match", "preset", "schema", "keyspace", "key-template",
		"processing-timeout", "reserve-ttl", "retention", "large-response", "max-value")
	for i := 0; i+1 < len(flags); i += 2 {
		fmt.Fprintf(&b, " --%s %s", flags[i], shellQuote(flags[i+1]))
	}
	return b.String(), true
}

// reapplyArgs is the command and the flags that redo one lost write: its
// action and reason, and what the action needs (the TTL an expire set,
// the reference a reconcile recorded); an undo is the same undo again.
func reapplyArgs(c actions.AppliedCheck, s *session) (name, extra string, ok bool) {
	reason := " --reason " + shellQuote("re-applied: "+c.Reason)
	switch c.Action {
	case write.KindUndo:
		return "", "", false // the log says the write was reverted: undo it again by hand, from 'idemctl audit show'
	case write.KindExpire:
		ttl := "0"
		if a := c.Intent.After; a != nil && a.TTLms > 0 {
			ttl = (time.Duration(a.TTLms) * time.Millisecond).Round(time.Second).String()
		}
		return "expire", " --ttl " + ttl + reason, true
	case write.KindReconcile:
		ks := keyspaceFor(s.keyspaces, c.Key)
		if ks == nil || c.Intent.After == nil || c.Intent.After.Fields[ks.Schema.Actions.Reconcile.Ref] == "" {
			return "", "", false
		}
		return "reconcile", " --ref " + shellQuote(c.Intent.After.Fields[ks.Schema.Actions.Reconcile.Ref]) + reason, true
	}
	return string(c.Action), reason, true
}
