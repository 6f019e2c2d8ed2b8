package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/cli/docgen"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/filter"
	"github.com/idemctl/idemctl/verify"
)

// triageCmd is `idemctl triage`: each selected stuck record's keyspace
// hook is asked whether its side effect happened, and the verdicts become
// one plan for the guarded executor.
type triageCmd struct {
	readFlags
	wf     writeFlags
	verify bool
	limit  int
}

func (o *triageCmd) flags(fs *pflag.FlagSet) {
	registerGroup(fs, docgen.GroupWrite, func(fs *pflag.FlagSet) {
		fs.StringVar(&o.wf.reason, "reason", verify.DefaultReason, "why, recorded in the audit log with each hook's verdict")
		fs.BoolVar(&o.verify, "verify", false, "run the hooks although writes are off: report the verdicts and the plan, write nothing")
		fs.IntVar(&o.limit, "limit", 1000, "with no keys given: triage at most this many stuck records")
		o.wf.registerFromFile(fs)
		o.wf.registerRun(fs)
	})
	o.readFlags.register(fs)
}

// resolveFlags records which of its flags were given.
func (o *triageCmd) resolveFlags(fs *pflag.FlagSet) {
	o.readFlags.resolveFlags(fs)
	o.wf.resolveFlags(fs)
}

func (o *triageCmd) run(ctx context.Context, a *app, args []string) error {
	wf := &o.wf
	if err := wf.check(); err != nil {
		return err
	}
	if o.limit <= 0 {
		return usageErr("--limit must be positive")
	}
	targets, err := readTargets(a, args, wf.fromFile)
	if err != nil {
		return err
	}
	spec := o.spec(keyspacesRequired)
	spec.dial = false // once writes are known allowed (or --verify)
	s, err := a.openSession(ctx, spec)
	if err != nil {
		return err
	}
	hooks := s.verifyHooks()
	hooked := hookedKeyspaces(s.keyspaces, hooks)
	if len(hooked) == 0 {
		return usageErr("no verify hook: none of the keyspaces in use has verify: in the config (keyspaces[].verify; see docs/writes.md, Triage)")
	}
	for _, ks := range hooked {
		warnHooks(a, s, ks.Name)
	}
	setup, err := o.writeSetup(a, s)
	if err != nil {
		return err
	}
	if err := s.connect(ctx, a); err != nil {
		return err
	}
	defer s.Close()
	setup.Client = s.client

	var items []*verify.Item
	if len(targets) > 0 {
		items, err = o.named(ctx, s, targets)
	} else {
		items, err = o.stuck(ctx, a, s, hooked)
	}
	if err != nil {
		return err
	}
	if len(items) == 0 {
		fmt.Fprintln(a.stderr, "idemctl: no stuck records: nothing to triage")
		return o.report(a, items, nil, wf.dryRun)
	}
	ex := actions.NewPlanner(setup)
	if err := o.judge(ctx, a, ex, items, hooks); err != nil {
		return err
	}
	return o.act(ctx, a, s, setup, ex, items)
}

// hookedKeyspaces are the keyspaces that have a verify hook: the only ones
// triage reads.
func hookedKeyspaces(kss []*inspect.Keyspace, hooks map[string]*verify.Hook) []*inspect.Keyspace {
	var hooked []*inspect.Keyspace
	for _, ks := range kss {
		if hooks[ks.Name] != nil {
			hooked = append(hooked, ks)
		}
	}
	return hooked
}

// writeSetup is the executor's setup; without writes enabled triage runs
// only with --verify, and then as a dry run.
func (o *triageCmd) writeSetup(a *app, s *session) (actions.Setup, error) {
	wf := &o.wf
	setup := s.writeSetup(a.getenv, wf.write, wf.auditLog)
	setup.Durability = wf.durability()
	if !setup.Policy.Writes && !o.verify {
		return setup, codeErr(ExitRefused, "triage runs verify hooks only where writes are enabled (--write, or writes: true in the profile) or with --verify (report only): nothing was run")
	}
	if !setup.Policy.Writes {
		wf.dryRun = true // --verify alone: report, never write
	}
	return setup, nil
}

// judge runs the hooks over the items; interrupted, nothing is written.
func (o *triageCmd) judge(ctx context.Context, a *app, ex *actions.Executor, items []*verify.Item, hooks map[string]*verify.Hook) error {
	wf := &o.wf
	err := verify.Triage(ctx, ex, items, hooks, wf.reason, func(done, total int) {
		if a.errTTY {
			fmt.Fprintf(a.stderr, "\rverified %d/%d", done, total)
			if done == total {
				fmt.Fprintln(a.stderr)
			}
		}
	})
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return codeErr(ExitInterrupt, "interrupted while the hooks ran: nothing was written")
	}
	return nil
}

// act prints the verdicts and carries out the plans they make, as any
// guarded write does.
func (o *triageCmd) act(ctx context.Context, a *app, s *session, setup actions.Setup, ex *actions.Executor, items []*verify.Item) error {
	wf := &o.wf
	plans := verify.Plans(items)
	if wf.output == "text" {
		printVerdicts(a, items)
	}
	if len(plans) == 0 {
		return o.finish(a, items, nil, wf.dryRun, nil)
	}
	var results []actions.Result
	if _, err := ex.MarkAlreadyApplied(plans); err != nil {
		return codeErr(ExitAudit, "%w: nothing was written", err)
	}
	// A report-only run (--verify with writes off, or --dry-run) asks no
	// confirmation and writes nothing: its plan is part of the report, so
	// it follows the verdicts on stdout (`triage --verify | less` holds
	// it all). A run that may write shows the plan on stderr, beside the
	// confirmation it is for, as every write does; -o json keeps stdout
	// one document.
	pa := a
	if wf.dryRun && wf.output == "text" {
		report := *a
		report.stderr = a.stdout
		pa = &report
	}
	err := runPlans(ctx, pa, wf, setup, s, "triage", ex, plans, func() string { return exactCommand("triage", wf.line, plans, s) }, func(rs []actions.Result) {
		results = rs
		if wf.output == "text" {
			printResults(a, wf.output, rs)
		}
	})
	return o.finish(a, items, results, wf.dryRun, err)
}

// verifyHooks are the session's keyspaces' verify hooks, by keyspace name.
func (s *session) verifyHooks() map[string]*verify.Hook {
	out := map[string]*verify.Hook{}
	for _, ks := range s.keyspaces {
		if h := verifyHook(s.cfg, ks.Name); h != nil {
			out[ks.Name] = h
		}
	}
	return out
}

// named reads the records given as KEY… or --from-file.
func (o *triageCmd) named(ctx context.Context, s *session, targets []target) ([]*verify.Item, error) {
	var items []*verify.Item
	for _, t := range targets {
		it := &verify.Item{Rec: inspect.Record{Key: t.key}, Saw: t.saw}
		items = append(items, it)
		ks := keyspaceFor(s.keyspaces, t.key)
		if ks == nil {
			it.Left = "no keyspace matches this key (check --match/--preset or the config)"
			continue
		}
		d, err := inspect.FetchDetail(ctx, s.client, ks, t.key)
		if errors.Is(err, inspect.ErrNotFound) {
			it.Left = "the key does not exist"
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", inspect.Sanitize(t.key), err)
		}
		it.Rec = d.Record
	}
	return items, nil
}

// stuck scans the keyspaces that have a hook for stale processing records,
// at most --limit of them.
func (o *triageCmd) stuck(ctx context.Context, a *app, s *session, kss []*inspect.Keyspace) ([]*verify.Item, error) {
	progress := s.progress(a, "triage", o.sf.quiet)
	defer progress.clear()
	filter := filter.Filter{States: filter.StatesOf(inspect.StateProcessing), Stale: true}
	var items []*verify.Item
	covs, err := inspect.Scan(ctx, s.client, kss, s.scan, func(b inspect.Batch) error {
		for i := range b.Records {
			if filter.Match(&b.Records[i]) {
				items = append(items, &verify.Item{Rec: b.Records[i]})
				if len(items) >= o.limit {
					fmt.Fprintf(a.stderr, "idemctl: note: --limit %d reached: triaging the first %d stuck records found\n", o.limit, o.limit)
					return inspect.Stop
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, c := range covs {
		if c.Err != nil {
			fmt.Fprintf(a.stderr, "idemctl: warning: keyspace %s was not scanned whole (%s): records there are not triaged this run\n",
				c.Keyspace, inspect.Line(c.Err.Error()))
		}
	}
	return items, nil
}

func printVerdicts(a *app, items []*verify.Item) {
	for _, it := range items {
		fmt.Fprintf(a.stdout, "%-9s %-10s %s  — %s\n", it.Verdict(), it.Action(), inspect.Sanitize(it.Rec.Key), inspect.Sanitize(it.Note()))
	}
	fmt.Fprintf(a.stdout, "verdicts: %d records: %s\n", len(items), verify.CountsText(items))
}

// triageLine is one record of triage's JSON report.
type triageLine struct {
	Key      string `json:"key"`
	Keyspace string `json:"keyspace,omitempty"`
	Verdict  string `json:"verdict"`
	Action   string `json:"action"`
	Ref      string `json:"ref,omitempty"`
	Status   int    `json:"status,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Why      string `json:"why,omitempty"` // left alone: why
	TookMs   int64  `json:"took_ms,omitempty"`
}

// report prints the JSON report (text was printed as it went).
func (o *triageCmd) report(a *app, items []*verify.Item, results []actions.Result, dryRun bool) error {
	if o.wf.output != "json" {
		return nil
	}
	lines := make([]triageLine, 0, len(items))
	for _, it := range items {
		l := triageLine{Key: it.Rec.Key, Verdict: it.Verdict(), Action: it.Action(), Ref: it.Result.Ref,
			Status: it.Result.Status, Detail: it.Result.Detail, Why: it.Left, TookMs: it.Result.Took.Milliseconds()}
		if it.Rec.Keyspace != nil {
			l.Keyspace = it.Rec.Keyspace.Name
		}
		lines = append(lines, l)
	}
	sum := map[string]int{}
	for o, n := range actions.Summary(results) {
		sum[string(o)] = n
	}
	if results == nil {
		results = []actions.Result{}
	}
	return writeJSON(a, map[string]any{"records": lines, "verdicts": verify.Counts(items), "written": !dryRun && len(results) > 0,
		"results": results, "summary": sum})
}

// finish reports and maps the run to an exit code: the writes' own code
// first; then records left alone make a run that wrote some partial (7)
// and one that wrote none unjudged (9).
func (o *triageCmd) finish(a *app, items []*verify.Item, results []actions.Result, dryRun bool, err error) error {
	if rerr := o.report(a, items, results, dryRun); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return err
	}
	left := 0
	for _, it := range items {
		if it.Left != "" {
			left++
		}
	}
	if left == 0 {
		return nil
	}
	sum := actions.Summary(results)
	if done := sum[write.Applied] + sum[write.AlreadyApplied]; done > 0 {
		return codeErr(ExitPartial, "partial: %d written, %d left alone (see the list above)", done, left)
	}
	return codeErr(ExitUnjudged, "%d of %d records left alone: no verdict to act on (see the list above)", left, len(items))
}
