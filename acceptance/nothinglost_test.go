package acceptance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/pgtest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Nothing lost: a bulk force-fail over a filtered selection while the
// application keeps writing. Afterwards, by the audit log and a final read,
// nothing outside the selection changed, every applied write was made
// against exactly what the operator saw, and no application write was lost.
func TestBulkWriteUnderTrafficLosesNothing(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := t.Context()
	if _, err := appsim.Seed(ctx, c, seedPlan(2000)); err != nil {
		t.Fatal(err)
	}
	before := map[string]map[string]string{}
	keys, _ := c.Keys(ctx, "atlasmart:ch23:idem:*").Result()
	for _, k := range keys {
		before[k], _ = c.HGetAll(ctx, k).Result()
	}
	scan := clitest.Run(t, nil, append([]string{"scan", "--url", srv.URL(0), "--preset", "atlasmart", "--stale", "-o", "ndjson"}, longTiming...)...)
	scan.MustCode(t, 0)
	var plan strings.Builder
	selected := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(scan.Stdout), "\n") {
		var rec struct{ Key, RawState, Fingerprint string }
		json.Unmarshal([]byte(line), &rec)
		var raw map[string]any
		json.Unmarshal([]byte(line), &raw)
		fmt.Fprintf(&plan, "%s\t%s\t%s\n", rec.Key, raw["raw_state"], rec.Fingerprint)
		selected[rec.Key] = true
	}
	if len(selected) != 160 {
		t.Fatalf("%d stale records selected, want 160", len(selected))
	}

	// The application: new traffic on its own keys, and late completions of
	// some selected records racing the operator.
	appCtx, stop := context.WithCancel(ctx)
	sim := appsim.NewSimulator(c, appsim.SimConfig{Rate: 200, CrashRate: 0.2, WorkTime: 50 * time.Millisecond, RandSeed: 3})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); sim.Run(appCtx) }()
	completed := map[string]bool{}
	var mu sync.Mutex
	go func() {
		defer wg.Done()
		i := 0
		for k := range selected {
			if i++; i%4 != 0 {
				continue
			}
			fp := before[k]["fingerprint"]
			if n, _ := appsim.Complete.Run(appCtx, c, []string{k}, fp, 201, `{"order_id":"late"}`, 3600).Int(); n == 1 {
				mu.Lock()
				completed[k] = true
				mu.Unlock()
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	auditLog := recordtest.AuditPath(t)
	r := clitest.RunStdin(t, plan.String(), nil, append([]string{"fail", "--url", srv.URL(0), "--preset", "atlasmart", "--from-file", "-",
		"--reason", "bulk repair drill", "--write", "--yes", "--rate", "400", "--audit-log", auditLog}, longTiming...)...)
	stop()
	wg.Wait()
	if r.Code != 0 && r.Code != cli.ExitPartial && r.Code != cli.ExitConflict {
		t.Fatalf("bulk fail: exit %d\n%s", r.Code, r.Stderr)
	}

	// The audit log: every applied write was made against what was shown.
	fh, err := os.Open(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	intents := map[string]audit.Entry{}
	outcomes := map[string]write.Outcome{}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e audit.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Phase == audit.PhasePlan || e.Phase == audit.PhaseGenesis {
			continue
		}
		if e.Phase == "intent" {
			intents[e.ID] = e
		} else {
			outcomes[e.Key] = e.Outcome
			in := intents[e.ID]
			if in.ID == "" && e.Outcome == write.Conflict && e.Before != nil && e.Key != "" {
				continue // a conflict found while planning: audited alone, nothing sent
			}
			if in.Key != e.Key || in.Before == nil {
				t.Fatalf("outcome without its intent: %+v", e)
			}
			if e.Outcome == write.Applied && (in.Before.State != "PROCESSING" || in.Before.Fingerprint != before[e.Key]["fingerprint"]) {
				t.Fatalf("%s applied against %+v, not what was shown", e.Key, in.Before)
			}
		}
	}
	applied := 0
	for k := range selected {
		now, _ := c.HGetAll(ctx, k).Result()
		switch {
		case completed[k]:
			if now["state"] != "SUCCEEDED" || now["response"] != `{"order_id":"late"}` {
				t.Fatalf("%s: the application's completion was lost: %v (tool outcome %s)", k, now, outcomes[k])
			}
		case now["state"] == "FAILED":
			applied++
			if outcomes[k] != write.Applied {
				t.Fatalf("%s is FAILED but the audit says %s", k, outcomes[k])
			}
		default:
			t.Fatalf("%s: neither failed by the tool nor completed by the application: %v (%s)", k, now, outcomes[k])
		}
	}
	for k, fields := range before {
		if selected[k] {
			continue
		}
		now, _ := c.HGetAll(ctx, k).Result()
		if fmt.Sprint(now) != fmt.Sprint(fields) {
			t.Fatalf("%s outside the selection changed: %v → %v", k, fields, now)
		}
	}
	if applied == 0 || len(completed) == 0 {
		t.Fatalf("the race did not happen: %d applied, %d completed by the application", applied, len(completed))
	}
	t.Logf("%d failed by the tool, %d completed by the application first, 0 lost", applied, len(completed))
}

// Triage under live traffic, against a real PostgreSQL: while the orders
// application keeps serving (and crashing), triage reconciles exactly the
// stuck records whose order exists, fails exactly those whose order does
// not, and no application write is lost: every record the application
// completed, before or during triage, is still SUCCEEDED with its response.
func TestTriageUnderTrafficLosesNothing(t *testing.T) {
	srv, rc := redistest.SharedClient(t)
	pg := pgtest.Own(t)
	// Longer than any request of the application takes, even under -race
	// on a busy machine: a request still in flight is never stale.
	const timeout = 3 * time.Second
	app := appsim.NewOrdersApp(rc, pg.DB(), appsim.OrdersConfig{Workers: 4, Pause: 50 * time.Millisecond,
		CrashBeforeInsert: 0.1, CrashAfterInsert: 0.1, RandSeed: 11})
	app.Serve(120) // stuck records to triage; then live traffic around the run
	traffic, stop := context.WithCancel(t.Context())
	running := make(chan struct{})
	go func() { app.Run(traffic); close(running) }()
	defer func() { stop(); <-running }()
	time.Sleep(timeout + 1500*time.Millisecond) // they pass their timeout, and more pile up

	cfg := clitest.TriageConfig(t, srv.URL(0), timeout.String(), "20s", pg.Env(), clitest.VerifyOrders(t), "{principal}", "{idem_key}")
	auditLog := recordtest.AuditPath(t)
	started := time.Now()
	r := clitest.Run(t, nil, "triage", "--config", cfg, "--audit-log", auditLog, "--write", "--yes", "-o", "json")
	took := time.Since(started)
	stop()
	<-running
	r.MustCode(t, cli.ExitOK)
	rep := clitest.ParseTriage(t, r)
	tr := app.Truth()

	after, before := map[string]appsim.OrderWrite{}, map[string]appsim.OrderWrite{}
	for _, w := range tr.CrashedAfterInsert {
		after[w.Key] = w
	}
	for _, w := range tr.CrashedBeforeInsert {
		before[w.Key] = w
	}
	selected := map[string]bool{}
	for _, rec := range rep.Records {
		selected[rec.Key] = true
		w, hasOrder := after[rec.Key]
		_, noOrder := before[rec.Key]
		h, _ := rc.HGetAll(t.Context(), rec.Key).Result()
		switch {
		case hasOrder:
			if rec.Verdict != "done" || rec.Action != "reconcile" || h["state"] != "SUCCEEDED" || h["reconciled_ref"] != fmt.Sprint(w.OrderID) || !strings.Contains(h["response"], fmt.Sprintf(`"order_id" : %d`, w.OrderID)) {
				t.Fatalf("order %d exists for %s: verdict %s, action %s, record %v", w.OrderID, rec.Key, rec.Verdict, rec.Action, h)
			}
		case noOrder:
			if rec.Verdict != "not_done" || rec.Action != "fail" || h["state"] != "FAILED" {
				t.Fatalf("no order for %s: verdict %s, action %s, record %v", rec.Key, rec.Verdict, rec.Action, h)
			}
		default:
			t.Fatalf("triage selected %s, which the application did not leave stuck (%s %s)", rec.Key, rec.Verdict, rec.Action)
		}
	}
	// Every record stuck well before triage began was triaged.
	missed := 0
	for _, w := range append(append([]appsim.OrderWrite{}, tr.CrashedAfterInsert...), tr.CrashedBeforeInsert...) {
		if w.Reserved.Before(started.Add(-timeout-time.Second)) && !selected[w.Key] {
			missed++
			t.Errorf("stuck since %s, not triaged: %s", started.Sub(w.Reserved), w.Key)
		}
	}
	// Zero lost application writes.
	lost := len(tr.Refused)
	for _, w := range tr.Completed {
		h, _ := rc.HGetAll(t.Context(), w.Key).Result()
		if h["state"] != "SUCCEEDED" || h["response"] != w.Response || h["reconciled_ref"] != "" || h["failed_by"] != "" {
			lost++
			t.Errorf("the application's write %s was lost: %v", w.Key, h)
		}
	}
	if len(rep.Records) == 0 || rep.Verdicts["done"] == 0 || rep.Verdicts["not_done"] == 0 || rep.Summary["applied"] != len(rep.Records) {
		t.Fatalf("verdicts %v, summary %v: the run proves nothing", rep.Verdicts, rep.Summary)
	}
	t.Logf("triage under traffic: %d records triaged in %s (done %d → reconciled, not_done %d → failed, unknown %d); "+
		"application: %d completed (%d during triage's run), %d crashed before the insert, %d after; writes lost: %d; missed: %d",
		len(rep.Records), took.Round(time.Millisecond), rep.Verdicts["done"], rep.Verdicts["not_done"], rep.Verdicts["unknown"],
		len(tr.Completed), completedSince(tr.Completed, started), len(tr.CrashedBeforeInsert), len(tr.CrashedAfterInsert), lost, missed)
	if lost > 0 {
		t.Fatalf("%d application writes lost", lost)
	}
}

func completedSince(ws []appsim.OrderWrite, t time.Time) int {
	n := 0
	for _, w := range ws {
		if w.Reserved.After(t) {
			n++
		}
	}
	return n
}

// Hooks that hang, crash, print garbage, print two objects or exit
// non-zero are unknown: their records are left byte for byte as they were,
// and the run ends within the hooks' timeout, not the hang's.
func TestTriageMisbehavingHooksLeaveRecordsUntouched(t *testing.T) {
	srv, rc := redistest.SharedClient(t)
	script := `case "$1" in
hang-*) sleep 60 ;;
crash-*) kill -SEGV $$ ;;
garbage-*) echo 'Order found!' ;;
twice-*) echo '{"verdict":"done","ref":"1"}{"verdict":"not_done"}' ;;
*) echo 'psql: could not connect' >&2; exit 3 ;;
esac`
	cfg := clitest.TriageConfig(t, srv.URL(0), "1s", "3s", nil, "/bin/sh", "-c", script, "hook", "{idem_key}")
	keys := map[string]string{}
	for _, k := range []string{"hang-1", "crash-1", "garbage-1", "twice-1", "exit-1"} {
		key := appsim.OrderKey("customer-1", k)
		if err := appsim.Reserve.Run(t.Context(), rc, []string{key}, "fp-"+k, 600).Err(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1500 * time.Millisecond)
	dumps := map[string]string{}
	for _, k := range []string{"hang-1", "crash-1", "garbage-1", "twice-1", "exit-1"} {
		key := appsim.OrderKey("customer-1", k)
		keys[key] = k
		dumps[key] = rc.Dump(t.Context(), key).Val()
	}
	auditLog := recordtest.AuditPath(t)
	started := time.Now()
	r := clitest.Run(t, nil, "triage", "--config", cfg, "--audit-log", auditLog, "--write", "--yes", "-o", "json")
	took := time.Since(started)
	r.MustCode(t, cli.ExitUnjudged)
	rep := clitest.ParseTriage(t, r)
	want := map[string]string{"hang-1": "timed out after 3s", "crash-1": "killed by signal 11", "garbage-1": "did not print JSON",
		"twice-1": "more than one JSON object", "exit-1": "exited with status 3: psql: could not connect"}
	if len(rep.Records) != len(want) || rep.Verdicts["unknown"] != len(want) {
		t.Fatalf("records %+v", rep.Records)
	}
	for _, rec := range rep.Records {
		if rec.Action != "left alone" || !strings.Contains(rec.Why, want[keys[rec.Key]]) {
			t.Errorf("%s: %s, %q; want left alone: %q", keys[rec.Key], rec.Action, rec.Why, want[keys[rec.Key]])
		}
	}
	for key, d := range dumps {
		if got := rc.Dump(t.Context(), key).Val(); got != d {
			t.Errorf("%s changed", keys[key])
		}
	}
	if _, err := os.Stat(auditLog); !os.IsNotExist(err) {
		t.Errorf("nothing was written, yet an audit log exists: %v", err)
	}
	if took > 8*time.Second {
		t.Fatalf("triage took %s: a hanging hook held it past its 3s timeout", took)
	}
	t.Logf("misbehaving hooks: %d records, all unknown and untouched (DUMP identical), run took %s", len(rep.Records), took.Round(time.Millisecond))
}
