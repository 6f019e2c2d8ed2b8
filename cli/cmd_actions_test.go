package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/pgtest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

const cliKey = "atlasmart:ch23:idem:customer-7:POST:/orders:req-cli"

// Writes are refused unless enabled: nothing is read, written or audited.
func TestActionCLIReadOnly(t *testing.T) {
	srv := redistest.Shared(t)
	recordtest.Reserve(t, srv, cliKey, "body")
	before := recordtest.HGetAll(t, srv, cliKey)
	auditLog := recordtest.AuditPath(t)
	for _, args := range [][]string{
		{"fail", cliKey},
		{"reconcile", cliKey, "--ref", "ord-1"},
		{"expire", cliKey, "--ttl", "0"},
		{"fail", cliKey, "--yes"},
	} {
		r := clitest.Run(t, nil, append(args, "--reason", "x", "--url", srv.URL(0), "--preset", "atlasmart", "--audit-log", auditLog)...)
		r.MustCode(t, cli.ExitRefused)
		r.OneLineErr(t)
		if !strings.Contains(r.Stderr, "read-only") || !strings.Contains(r.Stderr, "--write") {
			t.Fatalf("%v: %q", args, r.Stderr)
		}
	}
	if after := recordtest.HGetAll(t, srv, cliKey); after["state"] != "PROCESSING" || len(after) != len(before) {
		t.Fatalf("record changed: %q", after)
	}
	if _, err := os.Stat(auditLog); !os.IsNotExist(err) {
		t.Fatalf("an audit log was written for refused writes: %v", err)
	}
	// A dry run with writes off shows the plan and exits 0.
	r := clitest.Run(t, nil, "fail", cliKey, "--reason", "x", "--url", srv.URL(0), "--preset", "atlasmart", "--dry-run")
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stderr, "FAILED") || !strings.Contains(r.Stderr, "nothing was written") {
		t.Fatalf("dry run: %q", r.Stderr)
	}
}

// pinnedLine checks a here-document of one --from-file line: the key, its
// state and fingerprint, and the version (20 hex characters).
func pinnedLine(doc, key, state, fp string) bool {
	cols := strings.Split(strings.TrimSuffix(doc, "\n"), "\t")
	return strings.Count(doc, "\n") == 1 && len(cols) == 4 && cols[0] == key && cols[1] == state && cols[2] == fp &&
		write.ValidVersion(cols[3])
}

// Without a terminal and without --yes, a write is refused with the exact
// command to run; that command applies once, and conflicts the second time.
func TestActionCLIConfirmAndExactCommand(t *testing.T) {
	srv := redistest.Shared(t)
	env := map[string]string{"XDG_STATE_HOME": t.TempDir()} // the printed command audits to the default log
	fp := recordtest.Reserve(t, srv, cliKey, "body")

	r := clitest.Run(t, env, "fail", cliKey, "--reason", "worker died; it's INC-7", "--url", srv.URL(0), "--preset", "atlasmart", "--write")
	r.MustCode(t, cli.ExitRefused)
	if !strings.Contains(r.Stderr, "--yes --from-file -") {
		t.Fatalf("no exact command: %q", r.Stderr)
	}
	args, stdin := clitest.PrintedCommand(t, r.Stderr)
	if !pinnedLine(stdin, cliKey, "PROCESSING", fp) {
		t.Fatalf("here-document %q", stdin)
	}
	if got := recordtest.HGetAll(t, srv, cliKey)["state"]; got != "PROCESSING" {
		t.Fatalf("an unconfirmed write changed the record: %s", got)
	}

	r = clitest.RunStdin(t, stdin, env, args...)
	r.MustCode(t, cli.ExitOK)
	if !strings.HasPrefix(r.Stdout, "applied") || !strings.Contains(r.Stdout, "summary: 1 applied") {
		t.Fatalf("stdout %q", r.Stdout)
	}
	got := recordtest.HGetAll(t, srv, cliKey)
	if got["state"] != "FAILED" || got["reason"] != "worker died; it's INC-7" || got["failed_by"] == "" {
		t.Fatalf("record %q", got)
	}
	es := recordtest.AuditLines(t, filepath.Join(env["XDG_STATE_HOME"], "idemctl", "audit.log"))
	if len(es) != 2 || es[0].Phase != "intent" || es[1].Outcome != write.Applied || es[0].ID != es[1].ID {
		t.Fatalf("audit %+v", es)
	}

	// The same command again is the same run: the record it applied is
	// reported already_applied, not a conflict, and nothing is written.
	r = clitest.RunStdin(t, stdin, env, args...)
	r.MustCode(t, cli.ExitOK)
	if !strings.HasPrefix(r.Stdout, "already_applied") || fmt.Sprint(got) != fmt.Sprint(recordtest.HGetAll(t, srv, cliKey)) {
		t.Fatalf("stdout %q", r.Stdout)
	}

	// An absent key.
	r = clitest.Run(t, env, "fail", cliKey+"-gone", "--reason", "x", "--url", srv.URL(0), "--preset", "atlasmart", "--write", "--yes")
	r.MustCode(t, cli.ExitNotFound)
}

// A bulk run where some records changed since they were shown: the rest
// apply, the changed ones conflict, and the exit code says partial.
func TestActionCLIBulkPartial(t *testing.T) {
	srv := redistest.Shared(t)
	env := map[string]string{"XDG_STATE_HOME": t.TempDir()}
	keys := []string{cliKey + "-a", cliKey + "-b", cliKey + "-c"}
	fps := make([]string, len(keys))
	for i, k := range keys {
		fps[i] = recordtest.Reserve(t, srv, k, "body-"+k)
	}
	r := clitest.Run(t, env, append([]string{"expire", "--reason", "stuck batch", "--ttl", "0", "--url", srv.URL(0), "--preset", "atlasmart", "--write"}, keys...)...)
	r.MustCode(t, cli.ExitRefused)
	args, stdin := clitest.PrintedCommand(t, r.Stderr)
	if strings.Count(stdin, "\n") != 3 {
		t.Fatalf("here-document %q", stdin)
	}
	// The application completes one of them meanwhile.
	c := srv.Client(0)
	defer c.Close()
	if n, err := appsim.Complete.Run(t.Context(), c, []string{keys[1]}, fps[1], 201, `{"ok":true}`, 300).Int64(); err != nil || n != 1 {
		t.Fatalf("COMPLETE: %d %v", n, err)
	}
	r = clitest.RunStdin(t, stdin, env, append(args, "--output", "json")...)
	r.MustCode(t, cli.ExitPartial)
	var out struct {
		Results []actions.Result `json:"results"`
		Summary map[string]int   `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("json output: %v\n%s", err, r.Stdout)
	}
	if out.Summary["applied"] != 2 || out.Summary["conflict"] != 1 || out.Results[1].Key != keys[1] || out.Results[1].Outcome != write.Conflict {
		t.Fatalf("results %+v", out)
	}
	if n := c.Exists(t.Context(), keys...).Val(); n != 1 {
		t.Fatalf("%d keys left, want the completed one", n)
	}
	if got := c.HGet(t.Context(), keys[1], "state").Val(); got != "SUCCEEDED" {
		t.Fatalf("the completed record: %q", got)
	}
}

// The exact command keeps what the operator chose: the config and profile,
// the audit log, the credentials' source. Run as printed, it writes through
// the same profile and audits to the same file.
func TestActionCLIExactCommandKeepsTheSession(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	dir := t.TempDir()
	ctx := t.Context()
	c.Do(ctx, "ACL", "SETUSER", "idem-op", "reset", "on", ">op-pw", "~*", "+@all")
	defer c.Do(ctx, "ACL", "DELUSER", "idem-op")
	cfg := filepath.Join(dir, "config.yaml")
	auditLog := filepath.Join(dir, "ops-audit.log")
	os.WriteFile(cfg, []byte(`
profiles:
  prod:
    url: redis://`+srv.Addr+`/0
    user: idem-op
    password_env: IDEM_PW
    writes: true
    protected: true
keyspaces:
  - name: orders
    preset: atlasmart
`), 0o600)
	env := map[string]string{"IDEM_PW": "op-pw", "XDG_STATE_HOME": filepath.Join(dir, "default-state")}
	fp := recordtest.Reserve(t, srv, cliKey, "body")
	r := clitest.Run(t, env, "reconcile", cliKey, "--config", cfg, "--profile", "prod", "--ref", "ord-7", "--reason", "in OMS", "--audit-log", auditLog)
	r.MustCode(t, cli.ExitRefused)
	args, stdin := clitest.PrintedCommand(t, r.Stderr)
	if strings.Contains(r.Stderr, "op-pw") {
		t.Fatal("the password was printed")
	}
	if !pinnedLine(stdin, cliKey, "PROCESSING", fp) {
		t.Fatalf("here-document %q", stdin)
	}
	// A wrong profile name is refused.
	bad := append([]string{}, args...)
	for i := range bad {
		if bad[i] == "prod" && i > 0 && bad[i-1] == "--confirm-profile" {
			bad[i] = "production"
		}
	}
	clitest.RunStdin(t, stdin, env, bad...).MustCode(t, cli.ExitRefused)

	r = clitest.RunStdin(t, stdin, env, args...)
	r.MustCode(t, cli.ExitOK)
	if got := recordtest.HGetAll(t, srv, cliKey); got["state"] != "SUCCEEDED" || got["reconciled_ref"] != "ord-7" {
		t.Fatalf("record %q", got)
	}
	es := recordtest.AuditLines(t, auditLog)
	if len(es) != 2 || es[1].Outcome != write.Applied || es[0].RedisUser != "idem-op" || es[0].Profile != "prod" {
		t.Fatalf("audit %s: %+v", auditLog, es)
	}
	if _, err := os.Stat(filepath.Join(dir, "default-state")); !os.IsNotExist(err) {
		t.Fatal("the exact command audited somewhere else than the operator's --audit-log")
	}
}

// The write inputs are read by actions' rules, the TUI's: a TTL is
// required for expire and at least 1ms, a reference only where the schema
// records one. Each is a usage error (2), found before the policy and
// before anything is read.
func TestActionCLIWriteInputs(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	recordtest.Reserve(t, srv, cliKey, "body")
	const marker = "idempotency:order:cli-1"
	if err := c.Set(t.Context(), marker, "processing", 0).Err(); err != nil {
		t.Fatal(err)
	}
	base := []string{"--reason", "x", "--url", srv.URL(0)}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"reconcile", cliKey, "--preset", "atlasmart", "--write", "--yes"}, "--ref is required: schema atlasmart records"},
		{[]string{"reconcile", cliKey, "--preset", "atlasmart"}, "--ref is required"}, // usage before read-only
		{[]string{"expire", cliKey, "--preset", "atlasmart", "--write"}, "--ttl: required for expire (0 deletes the record)"},
		{[]string{"expire", cliKey, "--preset", "atlasmart", "--ttl", "keep", "--write"}, "--ttl: bad duration"},
		{[]string{"fail", cliKey, "--preset", "atlasmart", "--ttl", "500us", "--write"}, "--ttl: must be at least 1ms, or 0"},
	} {
		r := clitest.Run(t, nil, append(tc.args, base...)...)
		r.MustCode(t, cli.ExitUsage)
		r.OneLineErr(t)
		if !strings.Contains(r.Stderr, tc.want) {
			t.Fatalf("%v: %q, want %q", tc.args, r.Stderr, tc.want)
		}
	}
	if got := recordtest.HGetAll(t, srv, cliKey)["state"]; got != "PROCESSING" {
		t.Fatalf("a refused input changed the record: %s", got)
	}
	// A bare marker records no reference: reconcile needs none.
	r := clitest.Run(t, nil, append([]string{"reconcile", marker, "--preset", "setnx", "--dry-run"}, base...)...)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stderr, "1 of 1 would be written") {
		t.Fatalf("reconcile a marker without --ref: %q", r.Stderr)
	}
}

// Triage against the orders database: the records whose order exists are
// reconciled with the order as ref and response, the others failed; the
// application's completed records, and records still in flight, are not
// touched; every write is audited with the hook's verdict.
func TestTriageCLI(t *testing.T) {
	srv, rc := redistest.SharedClient(t)
	pg := pgtest.Own(t)
	app := appsim.NewOrdersApp(rc, pg.DB(), appsim.OrdersConfig{CrashBeforeInsert: 0.3, CrashAfterInsert: 0.3, RandSeed: 3})
	app.Serve(40)
	tr := app.Truth()
	cfg := clitest.TriageConfig(t, srv.URL(0), "1s", "20s", pg.Env(), clitest.VerifyOrders(t), "{principal}", "{idem_key}")
	auditLog := recordtest.AuditPath(t)
	base := []string{"triage", "--config", cfg, "--audit-log", auditLog}

	// No keyspace with a hook: a usage error, before anything runs.
	r := clitest.Run(t, nil, "triage", "--url", srv.URL(0), "--preset", "atlasmart", "--write", "--audit-log", auditLog)
	r.MustCode(t, cli.ExitUsage)
	r.OneLineErr(t)
	if !strings.Contains(r.Stderr, "no verify hook") {
		t.Fatalf("no hook: %q", r.Stderr)
	}
	// Off unless writes are on or --verify: no hook runs.
	r = clitest.Run(t, nil, base...)
	r.MustCode(t, cli.ExitRefused)
	r.OneLineErr(t)
	// Too fresh: every record is within its processing timeout.
	r = clitest.Run(t, nil, append(base, "--verify", "-o", "json")...)
	r.MustCode(t, cli.ExitOK)
	if rep := clitest.ParseTriage(t, r); len(rep.Records) != 0 {
		t.Fatalf("fresh records were selected: %+v", rep.Records)
	}
	time.Sleep(1600 * time.Millisecond)
	// A record reserved just now may be in flight: named, it is left
	// alone, its hook never asked.
	fresh := appsim.OrderKey("customer-1", "in-flight")
	if err := appsim.Reserve.Run(t.Context(), rc, []string{fresh}, "fp", 600).Err(); err != nil {
		t.Fatal(err)
	}
	r = clitest.Run(t, nil, append(base, "--verify", "-o", "json", fresh)...)
	r.MustCode(t, cli.ExitUnjudged)
	if rep := clitest.ParseTriage(t, r); len(rep.Records) != 1 || rep.Records[0].Verdict != "not_asked" || !strings.Contains(rep.Records[0].Why, "may still be in flight") {
		t.Fatalf("in-flight record: %+v", rep.Records)
	}
	rc.Del(t.Context(), fresh)

	// --verify alone: the verdicts and the plan, nothing written.
	r = clitest.Run(t, nil, append(base, "--verify", "-o", "json")...)
	r.MustCode(t, cli.ExitOK)
	rep := clitest.ParseTriage(t, r)
	stuck := len(tr.CrashedBeforeInsert) + len(tr.CrashedAfterInsert)
	if rep.Written || len(rep.Records) != stuck || rep.Verdicts["done"] != len(tr.CrashedAfterInsert) || rep.Verdicts["not_done"] != len(tr.CrashedBeforeInsert) {
		t.Fatalf("report only: %d records, verdicts %v, written %v; want %d done, %d not_done", len(rep.Records), rep.Verdicts, rep.Written,
			len(tr.CrashedAfterInsert), len(tr.CrashedBeforeInsert))
	}
	if _, err := os.Stat(auditLog); !os.IsNotExist(err) {
		t.Fatal("a report-only run wrote an audit log")
	}
	for _, w := range append(tr.CrashedBeforeInsert, tr.CrashedAfterInsert...) {
		if st := rc.HGet(t.Context(), w.Key, "state").Val(); st != "PROCESSING" {
			t.Fatalf("report only changed %s: %s", w.Key, st)
		}
	}

	// Without a terminal and --yes: refused, with the exact command.
	r = clitest.Run(t, nil, append(base, "--write")...)
	r.MustCode(t, cli.ExitRefused)
	if !strings.Contains(r.Stderr, "idemctl triage") || !strings.Contains(r.Stderr, "--yes --from-file -") {
		t.Fatalf("no exact command: %s", r.Stderr)
	}
	args, stdin := clitest.PrintedCommand(t, r.Stderr)
	if n := strings.Count(stdin, "\n"); n != stuck {
		t.Fatalf("the exact command pins %d records, want %d", n, stuck)
	}
	r = clitest.RunStdin(t, stdin, nil, append(args, "-o", "json")...)
	r.MustCode(t, cli.ExitOK)
	rep = clitest.ParseTriage(t, r)
	if !rep.Written || rep.Summary["applied"] != stuck {
		t.Fatalf("applied %v of %d: %s", rep.Summary, stuck, r.Stderr)
	}
	for _, w := range tr.CrashedAfterInsert {
		h := rc.HGetAll(t.Context(), w.Key).Val()
		var resp string
		if err := pg.DB().QueryRow(`SELECT response FROM orders WHERE id = $1`, w.OrderID).Scan(&resp); err != nil {
			t.Fatal(err)
		}
		if h["state"] != "SUCCEEDED" || h["reconciled_ref"] != strconv.FormatInt(w.OrderID, 10) || h["response"] != resp || h["status"] != "201" {
			t.Fatalf("order exists, record %s: %v", w.Key, h)
		}
	}
	for _, w := range tr.CrashedBeforeInsert {
		if h := rc.HGetAll(t.Context(), w.Key).Val(); h["state"] != "FAILED" {
			t.Fatalf("no order, record %s: %v", w.Key, h)
		}
	}
	for _, w := range tr.Completed {
		if h := rc.HGetAll(t.Context(), w.Key).Val(); h["state"] != "SUCCEEDED" || h["response"] != w.Response || h["reconciled_ref"] != "" {
			t.Fatalf("the application's record %s was touched: %v", w.Key, h)
		}
	}
	// Each write's audit entries carry the hook's verdict and detail.
	entries, err := audit.ReadEntries(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	intents := 0
	for _, e := range entries {
		if e.Phase != audit.PhaseIntent {
			continue
		}
		intents++
		ev := e.Evidence
		if ev == nil || ev.Hook != "verify-orders" || (e.Action == write.KindReconcile) != (ev.Verdict == "done") ||
			(ev.Verdict == "done" && !strings.HasPrefix(ev.Detail, "order ")) || (ev.Verdict == "not_done" && ev.Detail != "no order for this idempotency key") {
			t.Fatalf("intent without its evidence: %+v %+v", e, ev)
		}
	}
	if intents != stuck {
		t.Fatalf("%d intents for %d writes", intents, stuck)
	}
	// Nothing left: a second run finds no stuck record.
	r = clitest.Run(t, nil, append(base, "--write", "--yes")...)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stderr, "no stuck records") {
		t.Fatalf("second run: %s", r.Stderr)
	}
}

// idemctl undo, end to end: a force-fail made with the CLI is undone by
// its audit id, byte-identically (DUMP), after the same plan, confirmation
// and exit codes as every write; audit show lists what can be undone.
func TestUndoCLI(t *testing.T) {
	srv := redistest.Shared(t)
	ctx := t.Context()
	c := srv.Client(0)
	defer c.Close()
	auditLog := recordtest.AuditPath(t)
	common := []string{"--url", srv.URL(0), "--preset", "atlasmart", "--audit-log", auditLog}
	run := func(args ...string) clitest.Result { return clitest.Run(t, nil, append(args, common...)...) }
	recordtest.Reserve(t, srv, cliKey, "body")
	dump := func() string { return c.Dump(ctx, cliKey).Val() }
	before := dump()

	r := run("fail", cliKey, "--reason", "INC-9", "--write", "--yes", "-o", "json")
	r.MustCode(t, cli.ExitOK)
	var out struct{ Results []actions.Result }
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || len(out.Results) != 1 || out.Results[0].AuditID == "" {
		t.Fatalf("fail -o json has no audit id: %v %q", err, r.Stdout)
	}
	id := out.Results[0].AuditID
	written := dump()

	// Writes off: refused before anything is read.
	r = run("undo", id, "--reason", "wrong record")
	r.MustCode(t, cli.ExitRefused)
	// No such write.
	r = run("undo", "ffffffffffff", "--reason", "x", "--write", "--yes")
	r.MustCode(t, cli.ExitNotFound)
	r.OneLineErr(t)
	// Neither ids nor --since.
	run("undo", "--reason", "x").MustCode(t, cli.ExitUsage)

	// A dry run shows the restore and writes nothing.
	r = run("undo", id, "--reason", "wrong record", "--dry-run")
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stderr, "reverting write "+id) || !strings.Contains(r.Stderr, "FAILED → PROCESSING") || dump() != written {
		t.Fatalf("dry run: %q", r.Stderr)
	}

	// Without a terminal: refused, with the exact command, which applies.
	r = run("undo", id, "--reason", "wrong record", "--write")
	r.MustCode(t, cli.ExitRefused)
	_, line, ok := strings.Cut(r.Stderr, "\n  idemctl ")
	args := clitest.ShellWords(t, strings.SplitN(line, "\n", 2)[0])
	if !ok || args[0] != "undo" || args[len(args)-1] != id || !strings.Contains(line, "--yes") {
		t.Fatalf("no exact command printed: %q", r.Stderr)
	}
	if dump() != written {
		t.Fatal("an unconfirmed undo changed the record")
	}
	r = clitest.Run(t, nil, args...)
	r.MustCode(t, cli.ExitOK)
	if !strings.HasPrefix(r.Stdout, "applied") || dump() != before || !strings.Contains(r.Stderr, "this write will NOT be undoable") {
		t.Fatalf("undo: %q %q; DUMP restored %v", r.Stdout, r.Stderr, dump() == before)
	}

	// audit show: the fail reads reverted, the undo undoable.
	r = clitest.Run(t, nil, "audit", "-o", "json", "--audit-log", auditLog)
	r.MustCode(t, cli.ExitOK)
	var runs struct{ Runs []actions.RunSummary }
	if err := json.Unmarshal([]byte(r.Stdout), &runs); err != nil || len(runs.Runs) != 2 {
		t.Fatalf("audit: %v %q", err, r.Stdout)
	}
	r = clitest.Run(t, nil, "audit", "show", runs.Runs[0].ID, "--audit-log", auditLog)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stdout, id) || !strings.Contains(r.Stdout, "reverted by") {
		t.Fatalf("audit show of the fail: %q", r.Stdout)
	}
	r = clitest.Run(t, nil, "audit", "show", runs.Runs[1].ID, "--audit-log", auditLog, "-o", "json")
	var rep actions.RunReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || len(rep.Writes) != 1 || rep.Writes[0].Reverts != id ||
		// the failed record it replaced holds a response body, a payload the
		// log keeps only with audit_payloads: true
		!strings.Contains(rep.Writes[0].Undo, "not undoable: values left out of the log: response") {
		t.Fatalf("audit show of the undo: %v %q", err, r.Stdout)
	}

	// That undo kept no before-image: undoing it is refused, saying why.
	r = run("undo", rep.Writes[0].ID, "--reason", "redo", "--write", "--yes")
	r.MustCode(t, cli.ExitRefused)
	if !strings.Contains(r.Stdout+r.Stderr, "not undoable: values left out of the log: response") {
		t.Fatalf("undo of an undo without a before-image: %q %q", r.Stdout, r.Stderr)
	}

	// Undoing it again: already reverted, refused.
	r = run("undo", id, "--reason", "again", "--write", "--yes")
	r.MustCode(t, cli.ExitRefused)
	if !strings.Contains(r.Stdout+r.Stderr, "already reverted") {
		t.Fatalf("second undo: %q %q", r.Stdout, r.Stderr)
	}

	// An application change after a write: the undo is a conflict.
	r = run("fail", cliKey, "--reason", "INC-10", "--write", "--yes", "-o", "json")
	r.MustCode(t, cli.ExitOK)
	_ = json.Unmarshal([]byte(r.Stdout), &out)
	// A write on a record holding a payload announces before it runs
	// that it will not be undoable.
	r = run("expire", cliKey, "--ttl", "10m", "--reason", "x", "--dry-run")
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stderr, "(undo)           this write will NOT be undoable: values left out of the log: response") {
		t.Fatalf("dry run lacks the undo note: %q", r.Stderr)
	}
	c.HSet(ctx, cliKey, "state", "SUCCEEDED")
	changed := dump()
	r = run("undo", "--since", "1h", "--reason", "roll back", "--write", "--yes")
	r.MustCode(t, cli.ExitConflict)
	if !strings.Contains(r.Stdout, `state "FAILED" → "SUCCEEDED"`) || dump() != changed {
		t.Fatalf("undo over an application change: %q", r.Stdout)
	}
}
