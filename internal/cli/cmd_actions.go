package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
)

// writeFlags are shared by expire, fail and reconcile.
type writeFlags struct {
	reason, ref, response, ttl       string
	expectState, expectFP, fromFile  string
	auditLog, confirmProfile, output string
	status, rate                     int
	dryRun, yes, write               bool
}

func (w *writeFlags) register(fs *pflag.FlagSet, kind actions.Kind) {
	fs.StringVar(&w.reason, "reason", "", "why (required; recorded in the audit log and, where the schema allows, the record)")
	switch kind {
	case actions.KindExpire:
		fs.StringVar(&w.ttl, "ttl", "", "new TTL (e.g. 10m); 0 deletes the record now (required)")
	default:
		fs.StringVar(&w.ttl, "ttl", "retention", "keep, retention (the keyspace's retention horizon), or a duration")
		fs.IntVar(&w.status, "status", 0, "replay HTTP status (default: the schema's)")
		fs.StringVar(&w.response, "response", "", "replay response body, e.g. JSON (default: the schema's)")
	}
	if kind == actions.KindReconcile {
		fs.StringVar(&w.ref, "ref", "", "reference in the authoritative system you checked (e.g. the order id)")
	}
	fs.StringVar(&w.expectState, "expect-state", "", "refuse unless the record is in this state (stored or canonical)")
	fs.StringVar(&w.expectFP, "expect-fingerprint", "", "refuse unless the record has this fingerprint")
	fs.StringVar(&w.fromFile, "from-file", "", "read keys from a file (- for stdin): one per line, optionally KEY<TAB>STATE<TAB>FINGERPRINT<TAB>VERSION")
	fs.BoolVar(&w.dryRun, "dry-run", false, "show what would change; write nothing")
	fs.BoolVar(&w.yes, "yes", false, "do not ask for confirmation")
	fs.BoolVar(&w.write, "write", false, "enable writes for this run (or writes: true in the profile)")
	fs.StringVar(&w.confirmProfile, "confirm-profile", "", "a protected profile's name, to write without a prompt")
	fs.StringVar(&w.auditLog, "audit-log", "", "audit log file (default: the profile's, or $XDG_STATE_HOME/idemctl/audit.log)")
	fs.IntVar(&w.rate, "rate", 50, "at most this many writes per second")
	fs.StringVarP(&w.output, "output", "o", "text", "text or json")
}

// target is a key and, from --from-file, what the operator saw.
type target struct {
	key string
	saw *actions.Seen
}

func runExpire(ctx context.Context, a *app, args []string) error {
	return runAction(ctx, a, actions.KindExpire, args)
}
func runFail(ctx context.Context, a *app, args []string) error {
	return runAction(ctx, a, actions.KindFail, args)
}
func runReconcile(ctx context.Context, a *app, args []string) error {
	return runAction(ctx, a, actions.KindReconcile, args)
}

var actionAbout = map[actions.Kind]string{
	actions.KindExpire: "Give records a new TTL, or delete them now (--ttl 0) so the client's next retry is\n" +
		"processed afresh.",
	actions.KindFail: "Force-fail processing records: a terminal failed state with a replay status and\n" +
		"response (default: the schema's retryable error), failed_at (server time), failed_by\n" +
		"and reason. For formats without a failed state the schema says what it means\n" +
		"(a bare SETNX marker is deleted); an action a schema cannot express is refused.",
	actions.KindReconcile: "Mark records reconciled after checking the authoritative system: succeeded (or the\n" +
		"schema's configured state) with reconciled_ref, reconciled_by, reconciled_at, reason,\n" +
		"and optionally a replay status and response.",
}

func runAction(ctx context.Context, a *app, kind actions.Kind, args []string) error {
	fs := a.newFlagSet(string(kind), "KEY... --reason TEXT [flags]", actionAbout[kind]+"\n\n"+
		"Every write is a compare-and-set Lua script against the state and fingerprint shown\n"+
		"(or --expect-*), refused unless writes are enabled, confirmed (type yes, or the count\n"+
		"for several keys; without a terminal it refuses and prints the exact command with\n"+
		"--yes), and audited before and after. Exit codes: 4 refused, 5 conflict, 6 not found,\n"+
		"7 partial bulk run.")
	var cf connFlags
	var kf keyspaceFlags
	var wf writeFlags
	cf.register(fs)
	kf.register(fs)
	wf.register(fs, kind)
	if err := parse(fs, args); err != nil {
		return err
	}
	if strings.TrimSpace(wf.reason) == "" {
		return usageErr("--reason is required: say why, for the audit log")
	}
	ttl, err := parseTTLFlag(kind, wf.ttl)
	if err != nil {
		return err
	}
	if wf.output != "text" && wf.output != "json" {
		return usageErr("--output %q: want text or json", wf.output)
	}
	if wf.rate <= 0 {
		return usageErr("--rate must be positive")
	}
	targets, err := readTargets(a, fs.Args(), wf.fromFile)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		return usageErr("no keys: pass KEY... or --from-file")
	}
	s, err := a.resolveSession(fs, &cf, &kf, nil, true)
	if err != nil {
		return err
	}
	policy := &actions.Policy{Writes: wf.write || s.profile.Writes, Protected: s.profile.Protected, Profile: s.profileName}
	if !wf.dryRun {
		if err := policy.Check(); errors.Is(err, actions.ErrReadOnly) {
			return codeErr(exitRefused, "%v", err)
		}
	}
	if err := s.connect(ctx, a); err != nil {
		return err
	}
	defer s.Close()

	ex := &actions.Executor{Client: s.client, Policy: policy, Identity: identity(s)}
	var plans []*actions.Plan
	for _, t := range targets {
		req := actions.Request{Kind: kind, Keyspace: keyspaceFor(s.keyspaces, t.key), Key: t.key, Reason: wf.reason,
			TTL: ttl, Ref: wf.ref, Status: wf.status, Saw: t.saw, ExpectState: wf.expectState, ExpectFingerprint: wf.expectFP}
		if fs.Changed("response") {
			r := wf.response
			req.Response = &r
		}
		if kind != actions.KindExpire && !fs.Changed("ttl") {
			req.TTL = actions.TTL{} // the action's default
		}
		p, err := ex.Plan(ctx, req)
		if err != nil {
			return fmt.Errorf("reading %s: %w", inspect.Sanitize(t.key), err)
		}
		plans = append(plans, p)
	}
	runnable, conflicts := 0, 0
	for _, p := range plans {
		switch {
		case p.Refused == "":
			runnable++
		case p.Outcome == actions.Conflict:
			conflicts++
		}
	}
	printPlans(a.stderr, kind, plans)
	if wf.dryRun {
		fmt.Fprintf(a.stderr, "dry run: %d of %d would be written; nothing was written\n", runnable, len(plans))
		return resultCode(planResults(plans), len(plans))
	}
	if runnable > 0 {
		if err := confirm(a, kind, fs, &wf, policy, plans, runnable, s); err != nil {
			return err
		}
	}
	if runnable > 0 || conflicts > 0 {
		// conflicts found while planning are audited too
		auditPath := pick(wf.auditLog, s.profile.AuditLog)
		if auditPath == "" {
			auditPath = actions.DefaultAuditPath()
		}
		aud, err := actions.OpenAudit(auditPath)
		if err != nil {
			return codeErr(exitRefused, "%v: nothing was written", err)
		}
		defer aud.Close()
		if s.profile.AuditStream != "" {
			aud.WithStream(s.client, s.profile.AuditStream)
		}
		ex.Audit = aud
	}
	results := ex.ApplyAll(ctx, plans, wf.rate, func(i int, r actions.Result) {
		if len(plans) > 1 && a.isTTY {
			fmt.Fprintf(a.stderr, "\r%d/%d written", i+1, len(plans))
		}
	})
	if len(plans) > 1 && a.isTTY {
		fmt.Fprintln(a.stderr)
	}
	printResults(a, wf.output, results)
	if ex.Audit != nil {
		if err := ex.Audit.StreamError(); err != nil {
			fmt.Fprintf(a.stderr, "idemctl: warning: audit stream: %v (the audit file has every entry)\n", err)
		}
	}
	if ctx.Err() != nil {
		sum := actions.Summary(results)
		return codeErr(exitPartial, "interrupted: %d applied, %d skipped — see the report above", sum[actions.Applied], sum[actions.Skipped])
	}
	return resultCode(results, len(plans))
}

func parseTTLFlag(kind actions.Kind, v string) (actions.TTL, error) {
	switch {
	case kind == actions.KindExpire && v == "":
		return actions.TTL{}, usageErr("--ttl is required for expire (0 deletes the record)")
	case v == "keep" && kind != actions.KindExpire:
		return actions.TTL{Mode: actions.TTLKeep}, nil
	case v == "retention" && kind != actions.KindExpire:
		return actions.TTL{Mode: actions.TTLRetention}, nil
	}
	d, err := units.ParseDuration(v)
	if err != nil {
		return actions.TTL{}, usageErr("--ttl: %v", err)
	}
	if d != 0 && d < time.Millisecond {
		return actions.TTL{}, usageErr("--ttl must be at least 1ms, or 0")
	}
	return actions.TTL{Mode: actions.TTLSet, D: d}, nil
}

// readTargets takes keys from the arguments and --from-file.
func readTargets(a *app, args []string, file string) ([]target, error) {
	var out []target
	for _, k := range args {
		out = append(out, target{key: k})
	}
	if file == "" {
		return out, nil
	}
	var r io.Reader
	if file == "-" {
		r = a.stdin
	} else {
		f, err := os.Open(file)
		if err != nil {
			return nil, usageErr("--from-file: %v", err)
		}
		defer f.Close()
		r = f
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "\t")
		t := target{key: parts[0]}
		if len(parts) > 4 {
			return nil, usageErr("--from-file line %d: %d tab-separated columns; want KEY[<TAB>STATE<TAB>FINGERPRINT[<TAB>VERSION]]", n, len(parts))
		}
		if len(parts) >= 2 {
			t.saw = &actions.Seen{State: parts[1]}
			if len(parts) >= 3 {
				t.saw.Fingerprint = parts[2]
			}
			if len(parts) == 4 {
				if !actions.ValidVersion(parts[3]) {
					return nil, usageErr("--from-file line %d: version %q is not one idemctl prints (20 hex characters)", n, inspect.Sanitize(parts[3]))
				}
				t.saw.Version = parts[3]
			}
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, usageErr("--from-file: %v", err)
	}
	return out, nil
}

// keyspaceFor picks the first keyspace whose pattern matches the key.
func keyspaceFor(kss []*inspect.Keyspace, key string) *inspect.Keyspace {
	for _, ks := range kss {
		if inspect.MatchPattern(ks.Match, key) {
			return ks
		}
	}
	return nil
}

func identity(s *session) actions.Identity {
	id := actions.Identity{RedisUser: s.ep.user, Profile: s.profileName, Address: s.ep.String()}
	if id.RedisUser == "" {
		id.RedisUser = "default"
	}
	id.OSUser = osUser()
	return id
}

func osUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

func printPlans(w io.Writer, kind actions.Kind, plans []*actions.Plan) {
	for i, p := range plans {
		if i == 10 && len(plans) > 12 {
			fmt.Fprintf(w, "… and %d more\n", len(plans)-10)
			break
		}
		if p.Refused != "" {
			fmt.Fprintf(w, "%s %s: %s: %s\n", kind, inspect.Sanitize(p.Key), p.Outcome, inspect.Sanitize(p.Refused))
			continue
		}
		fmt.Fprintf(w, "%s %s (keyspace %s, version %s):\n", kind, inspect.Sanitize(p.Key), p.Keyspace.Name, p.Before.Version)
		for _, c := range p.Changes {
			fmt.Fprintf(w, "  %-16s %s → %s\n", inspect.Sanitize(c.Field), units.Clip(inspect.Sanitize(c.Before), 80), units.Clip(inspect.Sanitize(c.After), 80))
		}
	}
}

// confirm asks on a terminal; without one (and without --yes) it refuses
// and prints the exact non-interactive command, pinned to what was shown.
func confirm(a *app, kind actions.Kind, fs *pflag.FlagSet, wf *writeFlags, policy *actions.Policy, plans []*actions.Plan, n int, s *session) error {
	if policy.NeedsProfileName() && wf.confirmProfile != "" {
		if err := policy.ConfirmProfile(wf.confirmProfile); err != nil {
			return codeErr(exitRefused, "--confirm-profile: %v", err)
		}
	}
	if wf.yes && !policy.NeedsProfileName() {
		return nil
	}
	if !a.inTTY {
		fmt.Fprintln(a.stderr, "idemctl: refusing to write without confirmation (no terminal). To apply exactly what is shown above, run:")
		fmt.Fprintln(a.stderr, exactCommand(kind, fs, plans, s))
		return codeErr(exitRefused, "not confirmed: nothing was written")
	}
	in := bufio.NewReader(a.stdin)
	if policy.NeedsProfileName() {
		fmt.Fprintf(a.stderr, "Profile %q is protected. Type its name to allow writes: ", s.profileName)
		line, _ := in.ReadString('\n')
		if err := policy.ConfirmProfile(strings.TrimSpace(line)); err != nil {
			return codeErr(exitRefused, "%v", err)
		}
	}
	if wf.yes {
		return nil
	}
	want := "yes"
	if n > 1 {
		want = strconv.Itoa(n)
		fmt.Fprintf(a.stderr, "%s %d records on %s. Type %d to confirm: ", kind, n, s.ep, n)
	} else {
		fmt.Fprintf(a.stderr, "%s 1 record on %s. Type yes to confirm: ", kind, s.ep)
	}
	line, _ := in.ReadString('\n')
	if strings.TrimSpace(line) != want {
		return codeErr(exitRefused, "not confirmed: nothing was written")
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
func exactCommand(kind actions.Kind, fs *pflag.FlagSet, plans []*actions.Plan, s *session) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  idemctl %s", kind)
	if fs.Changed("url") {
		fmt.Fprintf(&b, " --url %s", shellQuote(s.ep.String()))
	}
	fs.Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "url", "yes", "from-file", "expect-state", "expect-fingerprint", "confirm-profile", "dry-run", "help":
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				fmt.Fprintf(&b, " --%s %s", f.Name, shellQuote(v))
			}
			return
		}
		v := f.Value.String()
		switch {
		case f.Value.Type() == "bool" && v == "true":
			fmt.Fprintf(&b, " --%s", f.Name)
		case f.Value.Type() == "bool":
			fmt.Fprintf(&b, " --%s=%s", f.Name, v)
		case v == "" && f.Value.Type() != "string":
			fmt.Fprintf(&b, " --%s 0", f.Name) // durations and sizes print zero as ""
		default:
			fmt.Fprintf(&b, " --%s %s", f.Name, shellQuote(v))
		}
	})
	if s.profile.Protected {
		fmt.Fprintf(&b, " --confirm-profile %s", shellQuote(s.profileName))
	}
	b.WriteString(" --yes --from-file - <<'EOF'\n")
	for _, p := range plans {
		if p.Refused == "" {
			fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", p.Key, p.Before.State, p.Before.Fingerprint, p.Before.Version)
		}
	}
	b.WriteString("EOF")
	return b.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func planResults(plans []*actions.Plan) []actions.Result {
	out := make([]actions.Result, len(plans))
	for i, p := range plans {
		o := actions.Skipped // a dry run: what would have been written was not
		if p.Refused != "" {
			o = p.Outcome
		}
		out[i] = actions.Result{Key: p.Key, Outcome: o}
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
		if r.Detail != "" {
			line += "  — " + inspect.Sanitize(r.Detail)
		}
		fmt.Fprintln(a.stdout, line)
	}
	var parts []string
	for _, o := range []actions.Outcome{actions.Applied, actions.Conflict, actions.NotFound, actions.Refused,
		actions.Failed, actions.NotApplied, actions.Unknown, actions.Skipped} {
		if sum[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", sum[o], o))
		}
	}
	fmt.Fprintf(a.stdout, "summary: %s\n", strings.Join(parts, ", "))
}

// resultCode maps outcomes to the documented exit codes.
func resultCode(rs []actions.Result, n int) error {
	sum := actions.Summary(rs)
	if sum[actions.Applied] == len(rs) {
		return nil
	}
	if n > 1 && sum[actions.Applied] > 0 {
		return codeErr(exitPartial, "partial: %d of %d applied", sum[actions.Applied], n)
	}
	for _, r := range rs {
		switch r.Outcome {
		case actions.Applied, actions.Skipped:
			continue
		case actions.Conflict:
			return codeErr(exitConflict, "conflict: the record changed; nothing written for %s", inspect.Sanitize(r.Key))
		case actions.NotFound:
			return codeErr(exitNotFound, "not found: %s", inspect.Sanitize(r.Key))
		case actions.Refused:
			return codeErr(exitRefused, "refused: %s", inspect.Sanitize(r.Detail))
		default:
			return codeErr(exitError, "%s: %s", r.Outcome, inspect.Sanitize(r.Detail))
		}
	}
	return nil
}
