package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/cli/docgen"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/reaper"
	"github.com/idemctl/idemctl/verify"
)

// reapFlags are the reaper's write flags, shared by reap and exporter
// (there with the prefix reap-).
type reapFlags struct {
	policy, auditLog, confirmProfile string
	apply, write, verify             bool
	durabilityFlags
}

func (r *reapFlags) register(fs *pflag.FlagSet, prefix string) {
	fs.StringVar(&r.policy, prefix+"policy", "", "reaper policy file (YAML; see examples/reap-policy.yaml)")
	fs.BoolVar(&r.apply, prefix+"apply", false, "write (needs writes enabled: --write or writes: true in the profile); without it a dry run")
	fs.BoolVar(&r.verify, prefix+"verify", false, "in a dry run, run the keyspaces' verify hooks too (with --"+prefix+"apply they always run)")
	registerGroup(fs, docgen.GroupWrite, func(fs *pflag.FlagSet) {
		fs.BoolVar(&r.write, "write", false, "enable writes for this run (or writes: true in the profile)")
		fs.StringVar(&r.confirmProfile, "confirm-profile", "", "a protected profile's name: the reaper never prompts")
		fs.StringVar(&r.auditLog, "audit-log", "", "audit log file (default: the profile's, or $XDG_STATE_HOME/idemctl/audit.log)")
		r.durabilityFlags.register(fs)
	})
}

// reapCmd is `idemctl reap`.
type reapCmd struct {
	readFlags
	rf     reapFlags
	every  time.Duration
	output string
	// everyGiven (resolveFlags): --every given, even as 0, is checked.
	everyGiven bool
}

// resolveFlags records which of its flags were given.
func (o *reapCmd) resolveFlags(fs *pflag.FlagSet) {
	o.readFlags.resolveFlags(fs)
	o.everyGiven = fs.Changed("every")
}

func (o *reapCmd) flags(fs *pflag.FlagSet) {
	o.rf.register(fs, "")
	fs.Var(durationValue(&o.every), "every", "run a cycle every D until interrupted (default: one pass, for cron)")
	outputFlag(fs, &o.output, "text", "text or json (one object per cycle)", "text", "json")
	o.readFlags.register(fs)
}

func (o *reapCmd) run(ctx context.Context, a *app, _ []string) error {
	if o.output != "text" && o.output != "json" {
		return usageErr("--output %q: want text or json", o.output)
	}
	if o.everyGiven && o.every < time.Second {
		return usageErr("--every must be at least 1s")
	}
	s, err := a.openSession(ctx, sessionSpec{conn: &o.cf, scan: &o.sf}) // the policy names the keyspaces
	if err != nil {
		return err
	}
	defer s.Close()
	if s.scan.MaxKeys > 0 {
		return usageErr("--max-keys (or the profile's max_keys) would make every scan incomplete, and the reaper acts only on complete ones; pass --max-keys 0")
	}
	r, closeExec, err := a.newReaper(ctx, s, &o.kf, &o.rf, "")
	if err != nil {
		return err
	}
	defer closeExec()
	report := func(rep reaper.CycleReport) { printCycle(a.stdout, o.output, rep) }
	if o.every > 0 {
		if o.every > r.Policy.LeaseTTL {
			fmt.Fprintf(a.stderr, "idemctl reap: note: --every %s is longer than the lease (%s): between cycles another copy may take over\n",
				units.ConfigDuration(o.every), units.ConfigDuration(r.Policy.LeaseTTL))
		}
		r.Loop(ctx, o.every, nil, report)
		return nil
	}
	rep := r.Cycle(ctx)
	if err := r.Lease.Release(context.WithoutCancel(ctx), s.client); err != nil && rep.Err == "" {
		rep.Err = err.Error()
	}
	report(rep)
	return cycleCode(rep, r.Exec)
}

// newReaper loads the policy, binds its keyspaces, checks the write
// policy and connects: the reaper of `reap` and of `exporter`. Flags are
// named with prefix ("reap-" in the exporter).
func (a *app) newReaper(ctx context.Context, s *session, kf *keyspaceFlags, rf *reapFlags, prefix string) (*reaper.Reaper, func(), error) {
	nothing := func() {}
	if rf.policy == "" {
		return nil, nothing, usageErr("--%spolicy FILE is required (see examples/reap-policy.yaml)", prefix)
	}
	p, err := reaper.Load(rf.policy)
	if err != nil {
		return nil, nothing, usageErr("%v", err)
	}
	var listed []*inspect.Keyspace
	if kf.adHoc() || len(kf.keyspaces) > 0 {
		if listed, err = resolveKeyspaces(s.cfg, s.profile, kf, keyspacesRequired); err != nil {
			return nil, nothing, err
		}
	}
	lookup := func(name string) (*inspect.Keyspace, error) {
		for _, ks := range listed {
			if ks.Name == name {
				return ks, nil
			}
		}
		ks, err := s.cfg.Keyspace(name)
		if err != nil {
			return nil, err
		}
		return ks, applyKeyspaceFlags(ks, kf)
	}
	warned := map[string]bool{}
	hasHook := func(ks *inspect.Keyspace) bool {
		if verifyHook(s.cfg, ks.Name) == nil {
			return false
		}
		if !warned[ks.Name] { // a rule that asks the hook: say now if it cannot run
			warned[ks.Name] = true
			warnHooks(a, s, ks.Name)
		}
		return true
	}
	if err := p.Bind(lookup, hasHook); err != nil {
		return nil, nothing, usageErr("policy %s: %v", rf.policy, err)
	}
	if err := rf.durabilityFlags.check(); err != nil {
		return nil, nothing, err
	}
	setup := s.writeSetup(a.getenv, rf.write, rf.auditLog)
	setup.Durability = rf.durability()
	setup.Identity.Actor = p.Actor()
	if err := rf.allowApply(setup.Policy, s.profileName, prefix); err != nil {
		return nil, nothing, err
	}
	if s.client == nil {
		if err := s.connect(ctx, a); err != nil {
			return nil, nothing, err
		}
	}
	setup.Client = s.client
	ex := actions.NewPlanner(setup)
	closeExec := nothing
	if rf.apply {
		if ex, err = actions.NewExecutor(setup); err != nil {
			return nil, nothing, codeErr(ExitRefused, "%w: nothing was written", err)
		}
		closeExec = func() { ex.Close() }
	}
	return &reaper.Reaper{Policy: p, Client: s.client, Exec: ex, Apply: rf.apply, Lease: reaper.NewLease(p.LeaseKey, p.LeaseTTL),
		Scan: s.scan, Metrics: reaper.NewMetrics(p), RunHooks: rf.verify,
		Verifier: func(ks *inspect.Keyspace) *verify.Hook { return verifyHook(s.cfg, ks.Name) }}, closeExec, nil
}

// allowApply refuses --apply where the policy allows no writes, and on a
// protected profile without --confirm-profile: the reaper never prompts.
func (r *reapFlags) allowApply(policy *actions.Policy, profile, prefix string) error {
	if !r.apply {
		return nil
	}
	switch err := policy.Check(); {
	case errors.Is(err, actions.ErrReadOnly):
		return codeErr(ExitRefused, "--%sapply: %w", prefix, err)
	case errors.Is(err, actions.ErrNeedsProfileName) && r.confirmProfile == "":
		return codeErr(ExitRefused, "--%sapply: profile %q is protected: pass --confirm-profile %s (the reaper never prompts)", prefix, profile, profile)
	case errors.Is(err, actions.ErrNeedsProfileName):
		if err := policy.ConfirmProfile(r.confirmProfile); err != nil {
			return codeErr(ExitRefused, "--confirm-profile: %w", err)
		}
	}
	return nil
}

// cycleCode is a one-pass run's exit code: a tripped breaker is a
// threshold crossed (an incident for a human); writes that failed or were
// refused say so; a copy without the lease did its job by standing by.
func cycleCode(rep reaper.CycleReport, ex *actions.Executor) error {
	if rep.Err != "" {
		return codeErr(ExitError, "%s", rep.Err)
	}
	if err := ex.RunStopped(); err != nil {
		return codeErr(ExitAudit, "%w — the run stopped before its next write", err)
	}
	var tripped, partial []string
	failed, refused := 0, 0
	for _, rr := range rep.Rules {
		if rr.Err != "" {
			return codeErr(ExitError, "%s: %s", rr.Keyspace, rr.Err)
		}
		if rr.Breaker {
			tripped = append(tripped, rr.Keyspace)
		}
		if !rr.Complete {
			partial = append(partial, rr.Keyspace)
		}
		failed += rr.Outcomes[string(write.Failed)] + rr.Outcomes[string(write.Unknown)]
		refused += rr.Outcomes[string(write.Refused)]
	}
	switch {
	case len(tripped) > 0:
		return codeErr(ExitThreshold, "circuit breaker tripped on %s: acted on none there — see the report above", strings.Join(tripped, ", "))
	case len(partial) > 0:
		return codeErr(ExitIncomplete, "the scan of %s did not cover the keyspace: acted on nothing there — see the report above", strings.Join(partial, ", "))
	case refused > 0:
		return codeErr(ExitRefused, "%d writes refused — see the report above", refused)
	case failed > 0:
		return codeErr(ExitPartial, "%d writes failed or are uncertain — see the report above", failed)
	}
	return nil
}

// printCycle prints one cycle: a header line, a line per rule, and the
// records planned or written (at most maxItems a rule).
func printCycle(w io.Writer, output string, rep reaper.CycleReport) {
	if output == "json" {
		b, _ := json.Marshal(rep)
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	mode := "dry run"
	if rep.Apply {
		mode = "apply"
	}
	fmt.Fprintf(w, "reap %s (%s, %s): %s\n", rep.Started.UTC().Format(time.RFC3339), mode, units.FormatMs(rep.TookMs), rep.Lease)
	if rep.Err != "" {
		fmt.Fprintf(w, "  error: %s\n", inspect.Line(rep.Err))
	}
	const maxItems = 20
	for _, rr := range rep.Rules {
		fmt.Fprintf(w, "  %s %s: %s records, %d candidates, %d qualified; %s; skipped: %s\n", inspect.Sanitize(rr.Keyspace), rr.Action,
			units.FormatCount(rr.Records), rr.Candidates, rr.Qualified, counts(rr.Outcomes, "nothing done"), counts(rr.Skips, "none"))
		for _, n := range []string{rr.Note, rr.Err} {
			if n != "" {
				fmt.Fprintf(w, "    %s\n", inspect.Line(n))
			}
		}
		for i, it := range rr.Items {
			if i == maxItems {
				fmt.Fprintf(w, "    … and %d more\n", len(rr.Items)-maxItems)
				break
			}
			line := "    " + it.Result + " " + it.Key
			if it.Verdict != "" {
				line += " (verdict " + it.Verdict + ")"
			}
			if it.Detail != "" {
				line += ": " + inspect.Sanitize(it.Detail)
			}
			fmt.Fprintln(w, line)
		}
	}
}

// counts renders "a 2, b 1" sorted by name, or none.
func counts(m map[string]int, none string) string {
	var parts []string
	for k, n := range m {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	if len(parts) == 0 {
		return none
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// logCycle is the exporter's line about a reaper cycle, only when the cycle
// did or met something: writes, a tripped breaker, an error, a note.
func logCycle(w io.Writer, rep reaper.CycleReport) {
	if rep.Err != "" {
		fmt.Fprintf(w, "idemctl exporter: reap: %s\n", inspect.Line(rep.Err))
	}
	for _, rr := range rep.Rules {
		if len(rr.Outcomes) == 0 && rr.Note == "" && rr.Err == "" {
			continue
		}
		line := fmt.Sprintf("idemctl exporter: reap %s %s: %s; skipped: %s", inspect.Sanitize(rr.Keyspace), rr.Action,
			counts(rr.Outcomes, "nothing done"), counts(rr.Skips, "none"))
		if n := strings.TrimPrefix(rr.Note+"; "+rr.Err, "; "); rr.Note != "" || rr.Err != "" {
			line += " — " + inspect.Line(strings.TrimSuffix(n, "; "))
		}
		fmt.Fprintln(w, line)
	}
}
