package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/verify"
)

// defaultTriageReason is the audit reason when --reason is not given: the
// evidence (each hook's verdict and detail) says the rest.
const defaultTriageReason = "triage: verified against the source of truth"

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
	addGroup(fs, groupWrite, func(fs *pflag.FlagSet) {
		fs.StringVar(&o.wf.reason, "reason", defaultTriageReason, "why, recorded in the audit log with each hook's verdict")
		fs.BoolVar(&o.verify, "verify", false, "run the hooks although writes are off: report the verdicts and the plan, write nothing")
		fs.IntVar(&o.limit, "limit", 1000, "with no keys given: triage at most this many stuck records")
		o.wf.registerRun(fs)
	})
	o.readFlags.register(fs)
}

// triaged is one selected record and what became of it.
type triaged struct {
	rec    inspect.Record
	saw    *actions.Seen // the record as the hook was asked about it
	hook   *verify.Hook
	res    verify.Result
	asked  bool   // the hook ran
	left   string // why it is left alone ("" when planned)
	action actions.Kind
}

func (o *triageCmd) run(ctx context.Context, a *app, fs *pflag.FlagSet, args []string) error {
	wf := &o.wf
	if strings.TrimSpace(wf.reason) == "" {
		return usageErr("--reason is empty: say why, for the audit log")
	}
	if wf.output != "text" && wf.output != "json" {
		return usageErr("--output %q: want text or json", wf.output)
	}
	if wf.rate <= 0 || o.limit <= 0 {
		return usageErr("--rate and --limit must be positive")
	}
	targets, err := readTargets(a, args, wf.fromFile)
	if err != nil {
		return err
	}
	s, err := a.resolveSession(fs, &o.cf, &o.kf, &o.sf, true)
	if err != nil {
		return err
	}
	hooks := map[string]*verify.Hook{}
	var hooked []*inspect.Keyspace
	for _, ks := range s.keyspaces {
		if h := s.cfg.VerifyHook(ks.Name); h != nil {
			hooks[ks.Name] = h
			hooked = append(hooked, ks)
		}
	}
	if len(hooked) == 0 {
		return usageErr("no verify hook: none of the keyspaces in use has verify: in the config (keyspaces[].verify; see the README's Triage)")
	}
	setup := s.writeSetup(a.getenv, wf.write, wf.auditLog)
	if !setup.Policy.Writes && !o.verify {
		return codeErr(ExitRefused, "triage runs verify hooks only where writes are enabled (--write, or writes: true in the profile) or with --verify (report only): nothing was run")
	}
	if !setup.Policy.Writes {
		wf.dryRun = true // --verify alone: report, never write
	}
	if err := s.connect(ctx, a); err != nil {
		return err
	}
	defer s.Close()
	setup.Client = s.client

	var items []*triaged
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
	if err := pinAll(ctx, ex, items, hooks, wf.reason); err != nil {
		return err
	}
	askHooks(ctx, a, items)
	if ctx.Err() != nil {
		return codeErr(ExitInterrupt, "interrupted while the hooks ran: nothing was written")
	}
	var plans []*actions.Plan
	for _, it := range items {
		if it.left != "" {
			continue
		}
		act := verify.ActionFor(&it.rec, it.res, it.saw, wf.reason, filepath.Base(it.hook.Command[0]))
		if act.Left != "" {
			it.left = act.Left
			continue
		}
		p, err := ex.Plan(ctx, act.Request)
		if err != nil {
			return fmt.Errorf("reading %s: %w", inspect.Sanitize(it.rec.Key), err)
		}
		it.action = p.Kind
		plans = append(plans, p)
	}
	if wf.output == "text" {
		printVerdicts(a, items)
	}
	if len(plans) == 0 {
		return o.finish(a, items, nil, wf.dryRun, nil)
	}
	var results []actions.Result
	err = runPlans(ctx, a, fs, wf, setup, s, "triage", ex, plans, func(rs []actions.Result) {
		results = rs
		if wf.output == "text" {
			printResults(a, wf.output, rs)
		}
	})
	return o.finish(a, items, results, wf.dryRun, err)
}

// named reads the records given as KEY… or --from-file.
func (o *triageCmd) named(ctx context.Context, s *session, targets []target) ([]*triaged, error) {
	var items []*triaged
	for _, t := range targets {
		it := &triaged{rec: inspect.Record{Key: t.key}, saw: t.saw}
		items = append(items, it)
		ks := keyspaceFor(s.keyspaces, t.key)
		if ks == nil {
			it.left = "no keyspace matches this key (check --match/--preset or the config)"
			continue
		}
		d, err := inspect.FetchDetail(ctx, s.client, ks, t.key)
		if errors.Is(err, inspect.ErrNotFound) {
			it.left = "the key does not exist"
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", inspect.Sanitize(t.key), err)
		}
		it.rec = d.Record
	}
	return items, nil
}

// stuck scans the keyspaces that have a hook for stale processing records,
// at most --limit of them.
func (o *triageCmd) stuck(ctx context.Context, a *app, s *session, kss []*inspect.Keyspace) ([]*triaged, error) {
	progress := a.newProgress("triage", o.sf.quiet)
	s.scan.Progress = progress.update
	defer progress.clear()
	filter := inspect.Filter{States: inspect.StatesOf(inspect.StateProcessing), Stale: true}
	var items []*triaged
	covs, err := inspect.Scan(ctx, s.client, kss, s.scan, func(b inspect.Batch) error {
		for i := range b.Records {
			if filter.Match(&b.Records[i]) {
				items = append(items, &triaged{rec: b.Records[i]})
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
				c.Keyspace, units.OneLine(c.Err.Error()))
		}
	}
	return items, nil
}

// pinAll checks each record may be verified (processing, past its
// processing timeout, a hook for its keyspace) and pins what the hook will
// be asked about: the record's state, fingerprint and whole version, read
// through the planner, so the write it leads to is a compare-and-set
// against exactly that record.
func pinAll(ctx context.Context, ex *actions.Executor, items []*triaged, hooks map[string]*verify.Hook, reason string) error {
	for _, it := range items {
		if it.left != "" {
			continue
		}
		r := &it.rec
		if it.left = notStuck(r); it.left != "" {
			continue
		}
		if it.hook = hooks[r.Keyspace.Name]; it.hook == nil {
			it.left = fmt.Sprintf("keyspace %s has no verify hook (keyspaces[].verify in the config)", r.Keyspace.Name)
			continue
		}
		probe, err := ex.Plan(ctx, actions.Request{Kind: actions.KindFail, Keyspace: r.Keyspace, Key: r.Key, Reason: reason, Saw: it.saw})
		if err != nil {
			return fmt.Errorf("reading %s: %w", inspect.Sanitize(r.Key), err)
		}
		b := probe.Before
		switch {
		case probe.Outcome == actions.Conflict || probe.Outcome == actions.NotFound:
			it.left = probe.Refused
		case b.State != r.RawState || b.Fingerprint != r.Fingerprint:
			it.left = "the record changed since it was read (the application is writing it): not verified"
		default:
			it.saw = &actions.Seen{State: b.State, Fingerprint: b.Fingerprint, Version: b.Version}
		}
	}
	return nil
}

// notStuck says why a record is not one to verify: not processing, or not
// known to be past its processing timeout (a request still in flight must
// never be judged by what it has not written yet).
func notStuck(r *inspect.Record) string {
	switch {
	case r.State != inspect.StateProcessing:
		return fmt.Sprintf("the record is %s, not processing: nothing to triage", r.State)
	case r.Stale():
		return ""
	case r.AgeMs < 0:
		return "its age is unknown, so it may still be in flight: not verified"
	}
	return fmt.Sprintf("processing for %s, within the keyspace's processing timeout (%s): it may still be in flight; not verified",
		units.FormatMs(r.AgeMs), r.Keyspace.ProcessingTimeout)
}

// askHooks runs each keyspace's hook over its pinned records, at the
// hook's concurrency, with a progress line on a terminal.
func askHooks(ctx context.Context, a *app, items []*triaged) {
	byHook := map[*verify.Hook][]*triaged{}
	var order []*verify.Hook
	total := 0
	for _, it := range items {
		if it.left == "" {
			if byHook[it.hook] == nil {
				order = append(order, it.hook)
			}
			byHook[it.hook] = append(byHook[it.hook], it)
			total++
		}
	}
	done := 0
	for _, h := range order {
		group := byHook[h]
		recs := make([]*inspect.Record, len(group))
		for i, it := range group {
			recs[i] = &it.rec
		}
		h.VerifyAll(ctx, recs, func(i int, r verify.Result) {
			group[i].res, group[i].asked = r, true
			done++
			if a.errTTY {
				fmt.Fprintf(a.stderr, "\rverified %d/%d", done, total)
			}
		})
	}
	if a.errTTY && total > 0 {
		fmt.Fprintln(a.stderr)
	}
}

// verdictOf is what the item's line shows: the hook's verdict, or why it
// was not asked.
func (it *triaged) verdictOf() string {
	if it.asked {
		return string(it.res.Verdict)
	}
	return "not_asked"
}

// actionOf is what happens to the record.
func (it *triaged) actionOf() string {
	if it.left != "" {
		return "left alone"
	}
	return string(it.action)
}

// noteOf is the line's explanation: why it is left, or the evidence.
func (it *triaged) noteOf() string {
	if it.left != "" {
		return it.left
	}
	note := it.res.Detail
	if it.res.Ref != "" {
		note = strings.TrimSpace("ref " + it.res.Ref + "; " + note)
	}
	return strings.TrimSuffix(note, "; ")
}

// verdictCounts counts the items by verdict (and not_asked).
func verdictCounts(items []*triaged) map[string]int {
	out := map[string]int{}
	for _, it := range items {
		out[it.verdictOf()]++
	}
	return out
}

func printVerdicts(a *app, items []*triaged) {
	for _, it := range items {
		fmt.Fprintf(a.stdout, "%-9s %-10s %s  — %s\n", it.verdictOf(), it.actionOf(), inspect.Sanitize(it.rec.Key), inspect.Sanitize(it.noteOf()))
	}
	c := verdictCounts(items)
	var parts []string
	for _, v := range []string{string(verify.Done), string(verify.NotDone), string(verify.Unknown), "not_asked"} {
		if c[v] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", v, c[v]))
		}
	}
	fmt.Fprintf(a.stdout, "verdicts: %d records: %s\n", len(items), strings.Join(parts, ", "))
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
func (o *triageCmd) report(a *app, items []*triaged, results []actions.Result, dryRun bool) error {
	if o.wf.output != "json" {
		return nil
	}
	lines := make([]triageLine, 0, len(items))
	for _, it := range items {
		l := triageLine{Key: it.rec.Key, Verdict: it.verdictOf(), Action: it.actionOf(), Ref: it.res.Ref,
			Status: it.res.Status, Detail: it.res.Detail, Why: it.left, TookMs: it.res.Took.Milliseconds()}
		if it.rec.Keyspace != nil {
			l.Keyspace = it.rec.Keyspace.Name
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
	return writeJSON(a, map[string]any{"records": lines, "verdicts": verdictCounts(items), "written": !dryRun && len(results) > 0,
		"results": results, "summary": sum})
}

// finish reports and maps the run to an exit code: the writes' own code
// first; then records left alone make a run that wrote some partial (7)
// and one that wrote none unjudged (9).
func (o *triageCmd) finish(a *app, items []*triaged, results []actions.Result, dryRun bool, err error) error {
	if rerr := o.report(a, items, results, dryRun); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return err
	}
	left := 0
	for _, it := range items {
		if it.left != "" {
			left++
		}
	}
	if left == 0 {
		return nil
	}
	sum := actions.Summary(results)
	if done := sum[actions.Applied] + sum[actions.AlreadyApplied]; done > 0 {
		return codeErr(ExitPartial, "partial: %d written, %d left alone (see the list above)", done, left)
	}
	return codeErr(ExitUnjudged, "%d of %d records left alone: no verdict to act on (see the list above)", left, len(items))
}
