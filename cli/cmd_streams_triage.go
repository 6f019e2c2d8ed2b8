package cli

import (
	"context"
	"fmt"
	"sync"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/cli/docgen"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/streams"
	"github.com/idemctl/idemctl/verify"
)

// streamTriageCmd is streams triage: the reconcile of streams. Each stale
// pending entry goes to its keyspace's verify hook; an entry whose effect
// happened is acknowledged, one whose effect did not is retried, and one
// the hook cannot judge is left alone.
type streamTriageCmd struct {
	sel streamsCmd
	wf  writeFlags
	to  string
}

func (o *streamTriageCmd) flags(fs *pflag.FlagSet) {
	registerGroup(fs, docgen.GroupWrite, func(fs *pflag.FlagSet) {
		fs.StringVar(&o.wf.reason, "reason", "", "why (required; recorded in the audit log with each verdict)")
		fs.StringVar(&o.to, "to", "", "the recovery consumer not-done entries are claimed for (default: the keyspace's recovery_consumer)")
		fs.StringVar(&o.wf.fromFile, "from-file", "", "judge these entries instead of every stale one (- for stdin): STREAM<TAB>GROUP<TAB>ID<TAB>CONSUMER<TAB>DELIVERIES a line, as the confirmation prints them")
		o.wf.registerRun(fs)
	})
	o.sel.selectionFlags(fs)
	registerGroup(fs, docgen.GroupConnection, o.sel.cf.register)
}

// resolveFlags records which of its flags were given.
func (o *streamTriageCmd) resolveFlags(fs *pflag.FlagSet) {
	o.sel.resolveFlags(fs)
	o.wf.resolveFlags(fs)
}

// judged is one stale entry and its hook's verdict.
type judged struct {
	t      entryTarget
	result verify.Result
}

func (o *streamTriageCmd) run(ctx context.Context, a *app, _ []string) error {
	if err := o.wf.check(); err != nil {
		return err
	}
	o.sel.stale = true
	s, err := a.openSession(ctx, sessionSpec{conn: &o.sel.cf}) // a write: connectToWrite dials
	if err != nil {
		return err
	}
	spaces, err := o.sel.spaces(s)
	if err != nil {
		return err
	}
	hooks := map[string]*verify.Hook{}
	for _, sp := range spaces {
		if h := verifyHook(s.cfg, sp.Name); h != nil {
			hooks[sp.Name] = h
			warnHooks(a, s, sp.Name)
		}
	}
	if len(hooks) == 0 {
		return usageErr("no stream keyspace has a verify hook: add verify: {command: [...]} to a kind: stream keyspace (placeholders {stream}, {group}, {id}, {consumer}, {deliveries} and the entry's fields)")
	}
	setup := s.writeSetup(a.getenv, o.wf.write, o.wf.auditLog)
	setup.Durability = o.wf.durability()
	if err := s.connectToWrite(ctx, a, &setup, o.wf.dryRun); err != nil {
		return err
	}
	defer s.Close()
	targets, err := o.targets(ctx, a, s, spaces)
	if err != nil {
		return err
	}
	items := o.judge(ctx, s, targets, hooks)
	return o.act(ctx, a, s, setup, items)
}

// targets are the --from-file entries (each pinned as shown), or every
// stale entry of the keyspaces.
func (o *streamTriageCmd) targets(ctx context.Context, a *app, s *session, spaces []*streams.Space) ([]entryTarget, error) {
	if o.wf.fromFile == "" {
		return selectPending(ctx, a, s, spaces, &o.sel, func(e streams.PendingEntry) bool { return e.Stale })
	}
	ts, err := fromFileEntries(a, o.wf.fromFile, spaces)
	for _, t := range ts {
		switch {
		case t.saw == nil:
			return nil, usageErr("--from-file: triage needs each entry as it was shown: STREAM<TAB>GROUP<TAB>ID<TAB>CONSUMER<TAB>DELIVERIES")
		case t.space == nil:
			return nil, usageErr("--from-file: stream %s is in no stream keyspace of the config file: its verify hook is unknown", inspect.Sanitize(t.stream))
		}
	}
	return ts, err
}

// judge asks each entry's hook, at most its concurrency at a time, with
// the entry's fields read bounded (a field cut by the cap is left out: a
// hook naming it gets an unknown verdict, never a cut value).
func (o *streamTriageCmd) judge(ctx context.Context, s *session, targets []entryTarget, hooks map[string]*verify.Hook) []judged {
	out := make([]judged, len(targets))
	var wg sync.WaitGroup
	sem := make(chan struct{}, verify.DefaultConcurrency)
	for i, t := range targets {
		out[i].t = t
		h := hooks[t.space.Name]
		if h == nil {
			out[i].result = verify.Result{Verdict: verify.Unknown, Why: "keyspace " + t.space.Name + " has no verify hook"}
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i].result = verifyEntry(ctx, s, h, t)
		}()
	}
	wg.Wait()
	return out
}

func verifyEntry(ctx context.Context, s *session, h *verify.Hook, t entryTarget) verify.Result {
	e, err := streams.ReadEntry(ctx, s.client, t.stream, t.id, streams.DefaultEntryValueCap, streams.DefaultEntryFields)
	switch {
	case err != nil:
		return verify.Result{Verdict: verify.Unknown, Why: "reading the entry: " + inspect.Line(err.Error())}
	case !e.Found:
		return verify.Result{Verdict: verify.Unknown, Why: "the entry was trimmed from the stream: its fields are gone"}
	}
	fields := map[string]string{}
	for _, f := range e.Fields {
		if !f.Truncated {
			fields[string(f.Name)] = string(f.Value)
		}
	}
	return h.VerifyEntry(ctx, &verify.Entry{Stream: t.stream, Group: t.group, ID: t.id,
		Consumer: t.saw.Consumer, Deliveries: t.saw.Deliveries, Fields: fields})
}

// act plans an ack for each done entry (with the hook's evidence) and a
// retry for each not-done one, and runs them as one guarded write.
func (o *streamTriageCmd) act(ctx context.Context, a *app, s *session, setup actions.Setup, items []judged) error {
	ex := actions.NewPlanner(setup)
	var plans []*actions.Plan
	left := 0
	for _, it := range items {
		fmt.Fprintf(a.stderr, "%-8s %s group %s entry %s — %s\n", it.result.Verdict, inspect.Sanitize(it.t.stream), inspect.Sanitize(it.t.group),
			inspect.Sanitize(it.t.id), inspect.Sanitize(verdictWords(it.result)))
		if it.result.Verdict != verify.Done && it.result.Verdict != verify.NotDone {
			left++
			continue
		}
		req := actions.EntryRequest{Stream: it.t.stream, Group: it.t.group, ID: it.t.id, Saw: it.t.saw, Reason: o.wf.reason,
			Evidence: &write.Evidence{Verdict: string(it.result.Verdict), Ref: it.result.Ref, Detail: inspect.Sanitize(it.result.Detail),
				Hook: hookName(s, it.t.space), TookMs: it.result.Took.Milliseconds()}}
		switch it.result.Verdict {
		case verify.Done:
			req.Kind = write.KindAck
		default:
			req.Kind, req.Mode, req.RecoveryConsumer = write.KindRetry, write.RetryClaim, pick(o.to, it.t.space.RecoveryConsumer)
		}
		p, err := ex.PlanEntry(ctx, req)
		if err != nil {
			return fmt.Errorf("reading entry %s of %s: %s", inspect.Sanitize(it.t.id), inspect.Sanitize(it.t.stream), inspect.Line(err.Error()))
		}
		plans = append(plans, p)
	}
	fmt.Fprintf(a.stderr, "triage: %d stale entries judged: %d to acknowledge or retry, %d left alone (unknown)\n", len(items), len(plans), left)
	if len(plans) == 0 {
		if left > 0 {
			return codeErr(ExitUnjudged, "no stale entry had a verdict to act on")
		}
		return nil
	}
	if _, err := ex.MarkAlreadyApplied(plans); err != nil {
		return codeErr(ExitAudit, "%w: nothing was written", err)
	}
	err := runPlans(ctx, a, &o.wf, setup, s, "streams triage", ex, plans,
		func() string { return exactEntryCommand("streams triage", o.wf.line, plans, s) },
		func(rs []actions.Result) { printEntryResults(a, o.wf.output, plans, rs) })
	if err == nil && left > 0 {
		return codeErr(ExitPartial, "triage: %d entries left alone (unknown verdict): see the lines above", left)
	}
	return err
}

// hookName is the executable that judged an entry of sp, for the audit.
func hookName(s *session, sp *streams.Space) string {
	if h := verifyHook(s.cfg, sp.Name); h != nil && len(h.Command) > 0 {
		return h.Command[0]
	}
	return ""
}

// verdictWords is a verdict's reason in one line.
func verdictWords(r verify.Result) string {
	if r.Why != "" {
		return r.Why
	}
	if r.Ref != "" {
		return r.Detail + " (ref " + r.Ref + ")"
	}
	return r.Detail
}
