package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/cli/docgen"
	"github.com/idemctl/idemctl/cli/report"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/glob"
	"github.com/idemctl/idemctl/internal/units"
)

// writeFlags are shared by expire, fail and reconcile.
type writeFlags struct {
	reason, ref, response, ttl       string
	expectState, expectFP, fromFile  string
	auditLog, confirmProfile, output string
	status, rate                     int
	dryRun, yes, write               bool
	durabilityFlags

	// given (resolveFlags): --ttl given (else the action's default, not
	// the flag's), --response given (even empty), and every flag given, as
	// the exact command line for a run without a terminal repeats them.
	given struct{ ttl, response bool }
	line  givenFlags
}

// resolveFlags records which write flags were given, and all of them.
func (w *writeFlags) resolveFlags(fs *pflag.FlagSet) {
	w.given.ttl, w.given.response = fs.Changed("ttl"), fs.Changed("response")
	w.line = flagsGiven(fs)
}

func (w *writeFlags) register(fs *pflag.FlagSet, kind write.Kind) {
	fs.StringVar(&w.reason, "reason", "", "why (required; recorded in the audit log and, where the schema allows, the record)")
	switch kind {
	case write.KindUndo: // the audit log says what to write
	case write.KindExpire:
		fs.StringVar(&w.ttl, "ttl", "", "new TTL (e.g. 10m); 0 deletes the record now (required)")
	default:
		fs.StringVar(&w.ttl, "ttl", "retention", "keep, retention (the keyspace's retention horizon), or a duration")
		fs.IntVar(&w.status, "status", 0, "replay HTTP status (default: the schema's)")
		fs.StringVar(&w.response, "response", "", "replay response body, e.g. JSON (default: the schema's)")
	}
	if kind == write.KindReconcile {
		fs.StringVar(&w.ref, "ref", "", "reference in the authoritative system you checked (e.g. the order id)")
	}
	if kind != write.KindUndo { // an undo's audit log says what and where
		fs.StringVar(&w.expectState, "expect-state", "", "refuse unless the record is in this state (stored or canonical)")
		fs.StringVar(&w.expectFP, "expect-fingerprint", "", "refuse unless the record has this fingerprint")
		w.registerFromFile(fs)
	}
	w.registerRun(fs)
}

// check refuses what no write can run with: no reason, an unknown
// output format, a rate that is not positive.
func (w *writeFlags) check() error {
	if strings.TrimSpace(w.reason) == "" {
		return usageErr("--reason is required: say why, for the audit log")
	}
	if w.output != "text" && w.output != "json" {
		return usageErr("--output %q: want text or json", w.output)
	}
	if w.rate <= 0 {
		return usageErr("--rate must be positive")
	}
	return w.durabilityFlags.check()
}

// registerFromFile adds --from-file: every write that takes keys.
func (w *writeFlags) registerFromFile(fs *pflag.FlagSet) {
	fs.StringVar(&w.fromFile, "from-file", "", "read keys from a file (- for stdin): one per line, optionally KEY<TAB>STATE<TAB>FINGERPRINT<TAB>VERSION; a line #b64<TAB>… holds the same columns in base64")
}

// registerRun adds the flags every guarded write shares (expire, fail,
// reconcile, triage, undo): confirmation, the audit log, the rate and the
// output.
func (w *writeFlags) registerRun(fs *pflag.FlagSet) {
	fs.BoolVar(&w.dryRun, "dry-run", false, "show what would change; write nothing")
	fs.BoolVar(&w.yes, "yes", false, "do not ask for confirmation")
	fs.BoolVar(&w.write, "write", false, "enable writes for this run (or writes: true in the profile)")
	fs.StringVar(&w.confirmProfile, "confirm-profile", "", "a protected profile's name, to write without a prompt")
	fs.StringVar(&w.auditLog, "audit-log", "", "audit log file (default: the profile's, or $XDG_STATE_HOME/idemctl/audit.log)")
	fs.IntVar(&w.rate, "rate", 50, "at most this many writes per second")
	w.durabilityFlags.register(fs)
	outputFlag(fs, &w.output, "text", "text or json", "text", "json")
}

// durabilityFlags are what every writer waits for once a batch is
// written: the guarded writes, the TUI, the reaper.
type durabilityFlags struct {
	minReplicas    replicasFlag
	replicaTimeout time.Duration
	requireFsync   bool
}

func (w *durabilityFlags) register(fs *pflag.FlagSet) {
	fs.Var(&w.minReplicas, "min-replicas", "replicas that must acknowledge each write (WAIT) before it counts as kept: auto (the primary's replicas in sync, at most 1), a number, or 0: do not wait")
	fs.DurationVar(&w.replicaTimeout, "replica-timeout", actions.DefaultReplicaTimeout, "how long each batch waits for the replicas")
	fs.BoolVar(&w.requireFsync, "require-fsync", false, "also wait for the write to be fsynced (WAITAOF: the primary's AOF when on, and the replicas'); Redis or Valkey 7.2 and later")
}

func (w *durabilityFlags) check() error {
	if w.replicaTimeout < 0 { // 0: the default
		return usageErr("--replica-timeout must be positive")
	}
	return nil
}

// durability is the run's wait for replicas, from the flags.
func (w *durabilityFlags) durability() actions.Durability {
	d := actions.Durability{Timeout: w.replicaTimeout, RequireFsync: w.requireFsync}
	switch f := w.minReplicas; {
	case f.set && f.n == 0:
		d.NoWait = true
	case f.set:
		d.MinReplicas = f.n
	}
	return d
}

// replicasFlag is --min-replicas: auto (the zero value) or a count.
type replicasFlag struct {
	n   int
	set bool // a count was given
}

func (f *replicasFlag) String() string {
	if !f.set {
		return "auto"
	}
	return strconv.Itoa(f.n)
}

func (f *replicasFlag) Set(s string) error {
	if s == "auto" {
		*f = replicasFlag{}
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want auto, 0 (do not wait) or a number of replicas")
	}
	*f = replicasFlag{n: n, set: true}
	return nil
}

func (f *replicasFlag) Type() string { return "N|auto" }

// target is a key and, from --from-file, what the operator saw.
type target struct {
	key string
	saw *actions.Seen
}

// actionCmd is expire, fail or reconcile, with its flags.
type actionCmd struct {
	kind write.Kind
	cf   connFlags
	kf   keyspaceFlags
	wf   writeFlags
}

// flags registers the write, keyspace and connection flags of o.kind.
func (o *actionCmd) flags(fs *pflag.FlagSet) {
	registerGroup(fs, docgen.GroupWrite, func(fs *pflag.FlagSet) { o.wf.register(fs, o.kind) })
	registerGroup(fs, docgen.GroupKeyspace, o.kf.register)
	registerGroup(fs, docgen.GroupConnection, o.cf.register)
}

// resolveFlags records which of its flags were given.
func (o *actionCmd) resolveFlags(fs *pflag.FlagSet) {
	o.cf.resolveFlags(fs)
	o.kf.resolveFlags(fs)
	o.wf.resolveFlags(fs)
}

func (o *actionCmd) run(ctx context.Context, a *app, args []string) error {
	kind := o.kind
	wf := &o.wf
	if err := wf.check(); err != nil {
		return err
	}
	ttlArg := wf.ttl
	if kind != write.KindExpire && !wf.given.ttl {
		ttlArg = "" // the action's default
	}
	ttl, err := actions.ParseTTL(kind, ttlArg)
	if err != nil {
		return usageErr("--ttl: %v", err)
	}
	targets, err := readTargets(a, args, wf.fromFile)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		return usageErr("no keys: pass KEY... or --from-file")
	}
	s, err := a.openSession(ctx, sessionSpec{conn: &o.cf, keyspace: &o.kf, need: keyspacesRequired})
	if err != nil {
		return err
	}
	if err := needRef(kind, wf.ref, s.keyspaces, targets); err != nil {
		return err
	}
	setup := s.writeSetup(a.getenv, wf.write, wf.auditLog)
	setup.Durability = wf.durability()
	if err := s.connectToWrite(ctx, a, &setup, wf.dryRun); err != nil {
		return err
	}
	defer s.Close()

	// Plan first, and open the audit log only once something is to be
	// written: a dry run or an unconfirmed write leaves no file behind.
	ex := actions.NewPlanner(setup)
	var plans []*actions.Plan
	for _, t := range targets {
		req := actions.Request{Kind: kind, Keyspace: keyspaceFor(s.keyspaces, t.key), Key: t.key, Reason: wf.reason,
			TTL: ttl, Ref: wf.ref, Status: wf.status, Saw: t.saw, ExpectState: wf.expectState, ExpectFingerprint: wf.expectFP}
		if wf.given.response {
			r := wf.response
			req.Response = &r
		}
		p, err := ex.Plan(ctx, req)
		if err != nil {
			return fmt.Errorf("reading %s: %w", inspect.Sanitize(t.key), err)
		}
		plans = append(plans, p)
	}
	if _, err := ex.MarkAlreadyApplied(plans); err != nil {
		return codeErr(ExitAudit, "%w: nothing was written", err)
	}
	return runPlans(ctx, a, wf, setup, s, string(kind), ex, plans,
		func() string { return exactCommand(string(kind), wf.line, plans, s) },
		func(rs []actions.Result) { printResults(a, wf.output, rs) })
}

// runPlans is every guarded write's second half, one path for expire,
// fail, reconcile, triage and undo: show the plans, stop at a dry run,
// confirm once with the count, apply through the executor at --rate (the
// audit log opened only now: a dry run or an unconfirmed write leaves no
// file; conflicts found while planning are audited too), report (not
// called on a dry run), and map the outcome to an exit code. cmd names the
// command in prompts; exact is the command printed without a terminal.
func runPlans(ctx context.Context, a *app, wf *writeFlags, setup actions.Setup, s *session, cmd string,
	ex *actions.Executor, plans []*actions.Plan, exact func() string, report func([]actions.Result)) error {
	runnable, conflicts := 0, 0
	for _, p := range plans {
		switch {
		case p.Refused == "":
			runnable++
		case p.Outcome == write.Conflict:
			conflicts++
		}
	}
	printPlans(a.stderr, plans)
	if runnable > 0 && !wf.dryRun && setup.Durability.Applies(ctx, s.client) {
		fmt.Fprintf(a.stderr, "replication: %s\n", setup.Durability)
	}
	if wf.dryRun {
		fmt.Fprintf(a.stderr, "dry run: %d of %d would be written; nothing was written\n", runnable, len(plans))
		return resultCode(planResults(plans), len(plans))
	}
	if runnable > 0 {
		if err := confirm(a, cmd, wf, setup.Policy, runnable, s, exact); err != nil {
			return err
		}
	}
	if runnable > 0 || conflicts > 0 {
		// conflicts found while planning are audited too
		var err error
		if ex, err = actions.NewExecutor(setup); err != nil {
			return codeErr(ExitRefused, "%w: nothing was written", err)
		}
		defer ex.Close()
	}
	results := ex.ApplyAll(ctx, plans, wf.rate, func(i int, r actions.Result) {
		if len(plans) > 1 && a.isTTY {
			fmt.Fprintf(a.stderr, "\r%d/%d written", i+1, len(plans))
		}
	})
	if len(plans) > 1 && a.isTTY {
		fmt.Fprintln(a.stderr)
	}
	report(results)
	if ex.Audit != nil {
		reportAudit(a, ex.Audit)
	}
	if err := ex.RunStopped(); err != nil {
		sum := actions.Summary(results)
		return codeErr(ExitAudit, "%w — the run stopped: %d applied, %d not written; free space and run the same command again",
			err, sum[write.Applied], len(results)-sum[write.Applied]-sum[write.AlreadyApplied])
	}
	if ctx.Err() != nil {
		sum := actions.Summary(results)
		return codeErr(ExitPartial, "interrupted: %d applied, %d skipped — see the report above", sum[write.Applied], sum[write.Skipped])
	}
	return resultCode(results, len(plans))
}

// connectToWrite refuses a read-only session before connecting (a dry run
// only reads), then connects and gives setup the client. The caller
// closes s.
func (s *session) connectToWrite(ctx context.Context, a *app, setup *actions.Setup, dryRun bool) error {
	if !dryRun {
		if err := setup.Policy.Check(); errors.Is(err, actions.ErrReadOnly) {
			return codeErr(ExitRefused, "%w", err)
		}
	}
	if err := s.connect(ctx, a); err != nil {
		return err
	}
	setup.Client = s.client
	return nil
}

// readTargets takes keys from the arguments and --from-file.
func readTargets(a *app, args []string, file string) ([]target, error) {
	var out []target
	for _, k := range args {
		out = append(out, target{key: k})
	}
	err := eachTargetLine(a, file, func(n int, parts []string) error {
		t := target{key: parts[0]}
		if len(parts) > 4 {
			return usageErr("--from-file line %d: %d tab-separated columns; want KEY[<TAB>STATE<TAB>FINGERPRINT[<TAB>VERSION]]", n, len(parts))
		}
		if len(parts) >= 2 {
			t.saw = &actions.Seen{State: parts[1]}
			if len(parts) >= 3 {
				t.saw.Fingerprint = parts[2]
			}
			if len(parts) == 4 {
				if !write.ValidVersion(parts[3]) {
					return usageErr("--from-file line %d: version %q is not one idemctl prints (20 hex characters)", n, inspect.Sanitize(parts[3]))
				}
				t.saw.Version = parts[3]
			}
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// eachTargetLine hands fn the columns of each line of --from-file (- for
// stdin; "" reads nothing), skipping blank and comment lines.
func eachTargetLine(a *app, file string, fn func(n int, cols []string) error) error {
	if file == "" {
		return nil
	}
	var r io.Reader
	if file == "-" {
		r = a.stdin
	} else {
		f, err := os.Open(file)
		if err != nil {
			return usageErr("--from-file: %v", err)
		}
		defer f.Close()
		r = f
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		parts, err := actions.TargetColumns(sc.Text())
		if err != nil {
			return usageErr("--from-file line %d: %v", n, err)
		}
		if parts == nil {
			continue
		}
		if err := fn(n, parts); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return usageErr("--from-file: %v", err)
	}
	return nil
}

// needRef makes a reconcile without --ref a usage error before connecting,
// where the keyspace a key falls in has a schema that records the reference.
// A key in no known keyspace is left to actions, which refuses it.
func needRef(kind write.Kind, ref string, kss []*inspect.Keyspace, targets []target) error {
	if kind != write.KindReconcile || ref != "" {
		return nil
	}
	for _, t := range targets {
		if ks := keyspaceFor(kss, t.key); actions.NeedsRef(kind, ks) {
			return usageErr("--ref is required: schema %s records the reference you checked in the authoritative system (e.g. the order id)", ks.Schema.Name)
		}
	}
	return nil
}

// keyspaceFor picks the first keyspace whose pattern matches the key.
func keyspaceFor(kss []*inspect.Keyspace, key string) *inspect.Keyspace {
	for _, ks := range kss {
		if glob.Match(ks.Match, key) {
			return ks
		}
	}
	return nil
}

// writeSetup is the session's write set-up, for the CLI's writes and the
// TUI alike: the policy (--write or the profile's writes, its protection),
// who writes, and the audit log (--audit-log, the profile's, or the
// default) with the profile's stream. The client is the session's once
// connected.
func (s *session) writeSetup(getenv func(string) string, writeFlag bool, auditLog string) actions.Setup {
	path := pick(auditLog, s.profile.AuditLog)
	if path == "" {
		path = audit.DefaultPath(getenv)
	}
	return actions.Setup{
		Client:      s.client,
		Policy:      &actions.Policy{Writes: writeFlag || s.profile.Writes, Protected: s.profile.Protected, Profile: s.profileName},
		Identity:    audit.Identity{OSUser: s.osUser, RedisUser: s.ep.User, Profile: s.profileName, Address: s.ep.String()},
		AuditPath:   path,
		AuditStream: s.profile.AuditStream,
		AuditValues: audit.Values{MaxValue: int(s.profile.AuditMaxValue), Payloads: s.profile.AuditPayloads},
		Origin:      s.origin,
	}
}

func printPlans(w io.Writer, plans []*actions.Plan) {
	for i, p := range plans {
		if i == 10 && len(plans) > 12 {
			fmt.Fprintf(w, "… and %d more\n", len(plans)-10)
			break
		}
		if p.Refused != "" {
			fmt.Fprintf(w, "%s %s: %s: %s\n", p.Kind, planTargetText(p), p.Outcome, inspect.Sanitize(p.Refused))
			continue
		}
		if e := p.Entry(); e != nil {
			fmt.Fprintf(w, "%s %s:\n", p.Kind, planTargetText(p))
			printChanges(w, p)
			continue
		}
		what := ""
		if id := p.Reverts(); id != "" {
			what = ", reverting write " + id
		}
		ver := p.Before.Version
		if ver == "" {
			ver = "none: the key is absent"
		}
		fmt.Fprintf(w, "%s %s (keyspace %s, version %s%s):\n", p.Kind, inspect.Sanitize(p.Key), p.Keyspace.Name, ver, what)
		printChanges(w, p)
	}
}

// printChanges lists a plan's diff and, before it runs, that it will not
// be undoable.
func printChanges(w io.Writer, p *actions.Plan) {
	tw := report.NewTable(w) // a schema's field names are the config's: any length
	for _, c := range p.Changes {
		fmt.Fprintf(tw, "  %-16s\t%s → %s\n", inspect.Sanitize(c.Field), units.Clip(inspect.Sanitize(c.Before), 80), units.Clip(inspect.Sanitize(c.After), 80))
	}
	if p.UndoNote != "" {
		// said before it runs: the log will not hold its before-image
		fmt.Fprintf(tw, "  %-16s\tthis write will NOT be undoable: %s\n", "(undo)", inspect.Sanitize(p.UndoNote))
	}
	tw.Flush()
}

// planTargetText is what a plan writes: a record's key, or a pending
// entry as stream, group and id.
func planTargetText(p *actions.Plan) string {
	if e := p.Entry(); e != nil {
		return fmt.Sprintf("%s group %s entry %s", inspect.Sanitize(e.Stream), inspect.Sanitize(e.Group), inspect.Sanitize(e.ID))
	}
	return inspect.Sanitize(p.Key)
}

// confirm asks on a terminal; without one (and without --yes) it refuses
// and prints the exact non-interactive command, pinned to what was shown:
// exact (see exactCommand).
func confirm(a *app, cmd string, wf *writeFlags, policy *actions.Policy, n int, s *session, exact func() string) error {
	if policy.NeedsProfileName() && wf.confirmProfile != "" {
		if err := policy.ConfirmProfile(wf.confirmProfile); err != nil {
			return codeErr(ExitRefused, "--confirm-profile: %w", err)
		}
	}
	if wf.yes && !policy.NeedsProfileName() {
		return nil
	}
	if !a.inTTY {
		fmt.Fprintln(a.stderr, "idemctl: refusing to write without confirmation (no terminal). To apply exactly what is shown above, run:")
		fmt.Fprintln(a.stderr, exact())
		return codeErr(ExitRefused, "not confirmed: nothing was written")
	}
	in := bufio.NewReader(a.stdin)
	if policy.NeedsProfileName() {
		fmt.Fprintf(a.stderr, "Profile %q is protected. Type its name to allow writes: ", s.profileName)
		line, _ := in.ReadString('\n')
		if err := policy.ConfirmProfile(strings.TrimSpace(line)); err != nil {
			return codeErr(ExitRefused, "%w", err)
		}
	}
	if wf.yes {
		return nil
	}
	want := "yes"
	if n > 1 {
		want = strconv.Itoa(n)
		fmt.Fprintf(a.stderr, "%s %d records on %s. Type %d to confirm: ", cmd, n, s.ep, n)
	} else {
		fmt.Fprintf(a.stderr, "%s 1 record on %s. Type yes to confirm: ", cmd, s.ep)
	}
	line, _ := in.ReadString('\n')
	if strings.TrimSpace(line) != want {
		return codeErr(ExitRefused, "not confirmed: nothing was written")
	}
	return nil
}

// exactCommand rebuilds the command line with --yes and the state,
// fingerprint and version each record was shown with, so the
// non-interactive run compares-and-sets against the same record: one that
// changed in any field, TTL or lock since it was printed is a conflict. It keeps every flag the
// operator gave (config, profile, where the password comes from, keyspace,
// audit log, …): a --url is printed without its password, and the keys
// move into the here-document.
func exactCommand(cmd string, given givenFlags, plans []*actions.Plan, s *session) string {
	var b strings.Builder
	writeFlagsLine(&b, cmd, given, s, "from-file", "expect-state", "expect-fingerprint")
	b.WriteString(" --yes --from-file - <<'EOF'\n")
	for _, p := range plans {
		if p.Refused == "" {
			b.WriteString(actions.TargetLine(p.Key, p.Before.State, p.Before.Fingerprint, p.Before.Version) + "\n")
		}
	}
	b.WriteString("EOF")
	return b.String()
}

// writeFlagsLine writes "idemctl NAME" and every flag the operator gave,
// but --yes, --dry-run, --confirm-profile (added back for a protected
// profile) and skip, with a --url printed without its password.
func writeFlagsLine(b *strings.Builder, name string, given givenFlags, s *session, skip ...string) {
	fmt.Fprintf(b, "  idemctl %s", name)
	if given.has("url") {
		fmt.Fprintf(b, " --url %s", shellQuote(s.ep.String()))
	}
	for _, f := range given {
		switch f.name {
		case "url", "yes", "confirm-profile", "dry-run", "help":
			continue
		}
		if slices.Contains(skip, f.name) {
			continue
		}
		if f.list {
			for _, v := range f.values {
				fmt.Fprintf(b, " --%s %s", f.name, shellQuote(v))
			}
			continue
		}
		switch v := f.values[0]; {
		case f.kind == "bool" && v == "true":
			fmt.Fprintf(b, " --%s", f.name)
		case f.kind == "bool":
			fmt.Fprintf(b, " --%s=%s", f.name, v)
		case v == "" && f.kind != "string":
			fmt.Fprintf(b, " --%s 0", f.name) // durations and sizes print zero as ""
		default:
			fmt.Fprintf(b, " --%s %s", f.name, shellQuote(v))
		}
	}
	if s.profile.Protected {
		fmt.Fprintf(b, " --confirm-profile %s", shellQuote(s.profileName))
	}
}

func planResults(plans []*actions.Plan) []actions.Result {
	out := make([]actions.Result, len(plans))
	for i, p := range plans {
		o := write.Skipped // a dry run: what would have been written was not
		if p.Refused != "" {
			o = p.Outcome
		}
		out[i] = actions.Result{Key: p.Key, Outcome: o, UndoNote: p.UndoNote}
	}
	return out
}

func printResults(a *app, format string, rs []actions.Result) {
	sum := actions.Summary(rs)
	if format == "json" {
		counts := map[string]int{}
		for o, n := range sum {
			counts[string(o)] = n
		}
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"results": rs, "summary": counts})
		return
	}
	for _, r := range rs {
		line := fmt.Sprintf("%-11s %s", r.Outcome, inspect.Sanitize(r.Key))
		if r.Unreplicated() {
			line = "applied, NOT REPLICATED " + inspect.Sanitize(r.Key)
		}
		if r.Detail != "" {
			line += "  — " + inspect.Sanitize(r.Detail)
		}
		if r.Replication != nil && r.Note != "" && r.NotReplicated {
			line += "  — " + inspect.Sanitize(r.Note)
		}
		fmt.Fprintln(a.stdout, line)
	}
	if n := len(rs); n > 0 && rs[0].Replication != nil && rs[0].Note == actions.NoReplicaNote {
		fmt.Fprintln(a.stdout, "replication: "+actions.NoReplicaNote)
	}
	fmt.Fprintf(a.stdout, "summary: %s\n", sum)
}

// resultCode maps outcomes to the documented exit codes. A key an earlier
// execution of the same run applied counts as done.
func resultCode(rs []actions.Result, n int) error {
	sum := actions.Summary(rs)
	done := sum[write.Applied] + sum[write.AlreadyApplied]
	if done == len(rs) {
		if n := sum[actions.NotReplicated]; n > 0 {
			return codeErr(ExitNotReplicated, "applied, not replicated: %d of %d writes were not acknowledged by the replicas in time — a failover now could take them back (see the report)", n, len(rs))
		}
		return nil
	}
	if n > 1 && done > 0 {
		return codeErr(ExitPartial, "partial: %d of %d applied", done, n)
	}
	for _, r := range rs {
		switch r.Outcome {
		case write.Applied, write.AlreadyApplied, write.Skipped:
			continue
		case write.Conflict:
			return codeErr(ExitConflict, "conflict: the record changed; nothing written for %s", inspect.Sanitize(r.Key))
		case write.NotFound:
			return codeErr(ExitNotFound, "not found: %s", inspect.Sanitize(r.Key))
		case write.Refused:
			return codeErr(ExitRefused, "refused: %s", inspect.Sanitize(r.Detail))
		default:
			return codeErr(ExitError, "%s: %s", r.Outcome, inspect.Sanitize(r.Detail))
		}
	}
	return nil
}
