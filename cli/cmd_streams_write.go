package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/cli/docgen"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/glob"
	"github.com/idemctl/idemctl/inspect/streams"
)

// newStreamsCmd is streams with its guarded writes on pending entries.
func newStreamsCmd(a *app) *cobra.Command {
	c := leaf(a, "streams", &streamsCmd{})
	for _, kind := range []write.Kind{write.KindRetry, write.KindAck, write.KindDeadLetter} {
		w := leaf(a, "streams-"+string(kind), &streamWriteCmd{kind: kind})
		w.Args = cobra.ArbitraryArgs
		c.AddCommand(w)
	}
	c.AddCommand(leaf(a, "streams-triage", &streamTriageCmd{}))
	return c
}

// entryTarget is one pending entry to write, and what the operator saw
// of it (nil: what the plan reads).
type entryTarget struct {
	stream, group, id string
	saw               *actions.EntrySeen
	space             *streams.Space // the keyspace it was found in (nil: none)
}

// streamWriteCmd is streams retry, ack or dead-letter.
type streamWriteCmd struct {
	kind       write.Kind
	sel        streamsCmd // the selection flags streams reads with
	wf         writeFlags
	mode, to   string
	deadLetter string
}

func (o *streamWriteCmd) flags(fs *pflag.FlagSet) {
	registerGroup(fs, docgen.GroupWrite, func(fs *pflag.FlagSet) {
		fs.StringVar(&o.wf.reason, "reason", "", "why (required; recorded in the audit log)")
		switch o.kind {
		case write.KindRetry:
			fs.StringVar(&o.mode, "mode", string(write.RetryClaim), "claim (to the recovery consumer; the delivery count goes up), claim-justid (it does not), or redeliver (same consumer, idle reset to 0)")
			fs.StringVar(&o.to, "to", "", "the recovery consumer to claim entries for (default: the keyspace's recovery_consumer, or idemctl-recovery)")
		case write.KindDeadLetter:
			fs.StringVar(&o.deadLetter, "dead-letter", "", "the dead-letter stream (default: the keyspace's dead_letter; {stream} is the entry's stream)")
		}
		fs.StringVar(&o.wf.fromFile, "from-file", "", "read entries from a file (- for stdin): STREAM<TAB>GROUP<TAB>ID[<TAB>CONSUMER<TAB>DELIVERIES] a line, as the confirmation prints them")
		o.wf.registerRun(fs)
	})
	o.sel.selectionFlags(fs)
	registerGroup(fs, docgen.GroupConnection, o.sel.cf.register)
}

// selectionFlags are how a write picks pending entries: by ID, or every
// stale (or poison) one of the keyspaces streams reads.
func (o *streamsCmd) selectionFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.stream, "stream", "", "the stream of the IDs given as arguments (or only this stream, with --stale/--poison)")
	fs.StringSliceVar(&o.groups, "group", nil, "the consumer group of the IDs given (or only these groups, with --stale/--poison)")
	fs.BoolVar(&o.stale, "stale", false, "every stale pending entry of the stream keyspaces (idle longer than their processing_timeout)")
	fs.BoolVar(&o.poison, "poison", false, "every poison pending entry (delivered more often than max_deliveries)")
	fs.StringVar(&o.consumer, "consumer", "", "with --stale/--poison: only this consumer's entries")
	fs.StringSliceVar(&o.keyspaces, "keyspace", nil, "stream keyspace(s) from the config file (default: the profile's kind: stream keyspaces)")
	fs.StringVar(&o.match, "match", "", "SCAN MATCH pattern of stream keys, instead of configured keyspaces")
	fs.Var(durationValue(&o.timeout), "timeout", "with --stale: idle longer than this is stale (default: the keyspace's, or 5m)")
	fs.IntVar(&o.maxDeliveries, "max-deliveries", 0, "with --poison: delivered more often than this is poison (default: the keyspace's, or 5)")
	fs.IntVar(&o.maxPending, "max-pending", streams.DefaultMaxPending, "pending entries read per group, with --stale/--poison")
	o.maxStreams = streams.DefaultMaxStreams
}

// resolveFlags records which of its flags were given.
func (o *streamWriteCmd) resolveFlags(fs *pflag.FlagSet) {
	o.sel.resolveFlags(fs)
	o.wf.resolveFlags(fs)
}

func (o *streamWriteCmd) run(ctx context.Context, a *app, args []string) error {
	if err := o.check(args); err != nil {
		return err
	}
	s, err := a.openSession(ctx, sessionSpec{conn: &o.sel.cf}) // a write: connectToWrite dials
	if err != nil {
		return err
	}
	spaces, err := o.spaces(s)
	if err != nil {
		return err
	}
	setup := s.writeSetup(a.getenv, o.wf.write, o.wf.auditLog)
	setup.Durability = o.wf.durability()
	if err := s.connectToWrite(ctx, a, &setup, o.wf.dryRun); err != nil {
		return err
	}
	defer s.Close()
	targets, err := o.targets(ctx, a, s, spaces, args)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		fmt.Fprintln(a.stderr, "no pending entry matched: nothing to write")
		return nil
	}
	ex := actions.NewPlanner(setup)
	plans, err := planEntries(ctx, ex, targets, func(t entryTarget) actions.EntryRequest { return o.request(t) })
	if err != nil {
		return err
	}
	if _, err := ex.MarkAlreadyApplied(plans); err != nil {
		return codeErr(ExitAudit, "%w: nothing was written", err)
	}
	cmd := "streams " + string(o.kind)
	return runPlans(ctx, a, &o.wf, setup, s, cmd, ex, plans,
		func() string { return exactEntryCommand(cmd, o.wf.line, plans, s) },
		func(rs []actions.Result) { printEntryResults(a, o.wf.output, plans, rs) })
}

// check refuses flags that cannot go together, before connecting.
func (o *streamWriteCmd) check(args []string) error {
	if err := o.wf.check(); err != nil {
		return err
	}
	sel := &o.sel
	picks := 0
	for _, on := range []bool{len(args) > 0, o.wf.fromFile != "", sel.stale || sel.poison} {
		if on {
			picks++
		}
	}
	switch {
	case picks != 1:
		return usageErr("say which entries: IDs with --stream and --group, --from-file, or --stale / --poison")
	case len(args) > 0 && (sel.stream == "" || len(sel.groups) != 1):
		return usageErr("entry IDs need --stream KEY and one --group NAME")
	case sel.consumer != "" && !sel.stale && !sel.poison:
		return usageErr("--consumer filters --stale and --poison")
	case sel.match != "" && len(sel.keyspaces) > 0:
		return usageErr("use --match or --keyspace, not both")
	case sel.maxPending < 1 || sel.maxPending > streams.MaxStreamPending:
		return usageErr("--max-pending must be 1 to %d", streams.MaxStreamPending)
	}
	if o.kind == write.KindRetry {
		switch write.RetryMode(o.mode) {
		case write.RetryClaim, write.RetryClaimJustID:
		case write.RetryRedeliver:
			if o.to != "" {
				return usageErr("--to names the consumer a claiming retry hands entries to: drop it with --mode redeliver")
			}
		default:
			return usageErr("--mode %q: want claim, claim-justid or redeliver", o.mode)
		}
	}
	return nil
}

// spaces are the stream keyspaces entries are selected from or matched
// to; IDs and --from-file need none (then the flags say where to).
func (o *streamWriteCmd) spaces(s *session) ([]*streams.Space, error) {
	sp, err := o.sel.spaces(s)
	if err != nil && !o.sel.stale && !o.sel.poison && o.sel.match == "" && len(o.sel.keyspaces) == 0 {
		return nil, nil // no stream keyspace configured: the flags say where
	}
	return sp, err
}

// request is the write of one target: where retried entries go and
// dead letters land, from the flags or the entry's keyspace.
func (o *streamWriteCmd) request(t entryTarget) actions.EntryRequest {
	req := actions.EntryRequest{Kind: o.kind, Stream: t.stream, Group: t.group, ID: t.id, Saw: t.saw, Reason: o.wf.reason}
	switch o.kind {
	case write.KindRetry:
		req.Mode = write.RetryMode(o.mode)
		if req.Mode != write.RetryRedeliver {
			req.RecoveryConsumer = o.to
			if req.RecoveryConsumer == "" && t.space != nil {
				req.RecoveryConsumer = t.space.RecoveryConsumer
			}
			if req.RecoveryConsumer == "" {
				req.RecoveryConsumer = streams.DefaultRecoveryConsumer
			}
		}
	case write.KindDeadLetter:
		req.DeadLetter = strings.ReplaceAll(o.deadLetter, "{stream}", t.stream)
		if req.DeadLetter == "" && t.space != nil {
			req.DeadLetter = t.space.DeadLetterFor(t.stream)
		}
	}
	return req
}

// planEntries plans each target's write, reading each entry as it is now.
func planEntries(ctx context.Context, ex *actions.Executor, targets []entryTarget, req func(entryTarget) actions.EntryRequest) ([]*actions.Plan, error) {
	plans := make([]*actions.Plan, 0, len(targets))
	for _, t := range targets {
		r := req(t)
		if r.Kind == write.KindDeadLetter && r.DeadLetter == "" {
			return nil, usageErr("dead-letter needs a dead-letter stream for %s: --dead-letter KEY, or dead_letter in its stream keyspace", inspect.Sanitize(t.stream))
		}
		p, err := ex.PlanEntry(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("reading entry %s of %s: %s", inspect.Sanitize(t.id), inspect.Sanitize(t.stream), inspect.Line(err.Error()))
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// exactEntryCommand is the non-interactive command that applies exactly
// what was shown: each entry pinned to the consumer and delivery count it
// was shown with, so one that moved since is a conflict.
func exactEntryCommand(cmd string, given givenFlags, plans []*actions.Plan, s *session) string {
	var b strings.Builder
	writeFlagsLine(&b, cmd, given, s, "from-file", "stale", "poison", "consumer", "stream", "group", "max-pending", "timeout", "max-deliveries")
	b.WriteString(" --yes --from-file - <<'EOF'\n")
	for _, p := range plans {
		e := p.Entry()
		if p.Refused != "" || e == nil {
			continue
		}
		b.WriteString(actions.TargetLine(e.Stream, e.Group, e.ID, p.Before.Fields["consumer"], p.Before.Fields["deliveries"]) + "\n")
	}
	b.WriteString("EOF")
	return b.String()
}

// fromFileEntries reads --from-file lines into targets.
func fromFileEntries(a *app, file string, spaces []*streams.Space) ([]entryTarget, error) {
	var out []entryTarget
	err := eachTargetLine(a, file, func(n int, c []string) error {
		if len(c) != 3 && len(c) != 5 {
			return usageErr("--from-file line %d: %d tab-separated columns; want STREAM<TAB>GROUP<TAB>ID[<TAB>CONSUMER<TAB>DELIVERIES]", n, len(c))
		}
		t := entryTarget{stream: c[0], group: c[1], id: c[2], space: spaceOf(spaces, c[0])}
		if len(c) == 5 {
			d, err := strconv.ParseInt(c[4], 10, 64)
			if err != nil || d < 0 {
				return usageErr("--from-file line %d: deliveries %q is not a count", n, inspect.Sanitize(c[4]))
			}
			t.saw = &actions.EntrySeen{Consumer: c[3], Deliveries: d}
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// spaceOf is the first keyspace whose pattern takes stream (nil: none).
func spaceOf(spaces []*streams.Space, stream string) *streams.Space {
	for _, sp := range spaces {
		if glob.Match(sp.Match, stream) {
			return sp
		}
	}
	return nil
}
