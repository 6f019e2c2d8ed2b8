package reaper

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/pgtest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
	"github.com/idemctl/idemctl/verify"
)

// reconcile-if-verified acts only on a done verdict, with the hook's ref,
// status and response; a rule wanting not_done fails only those; a hook
// that hangs or prints garbage leaves its record untouched.
func TestVerifiedActions(t *testing.T) {
	c := jobs(t)
	ctx := t.Context()
	for _, k := range []string{"done-0", "done-1", "gone-0", "gone-1", "junk-0", "hang-0"} {
		writeJobs(t, c, job{key: "job:" + k, age: time.Hour})
	}
	h := hook(t)
	withHook := func(r *Reaper) *Reaper {
		r.Verifier = func(*inspect.Keyspace) *verify.Hook { return h }
		return r
	}
	doc := strings.Replace(basePolicy, "action: fail", "action: reconcile-if-verified", 1)
	auditLog := recordtest.AuditPath(t)

	// A dry run does not run hooks unless asked: it says it would verify.
	rr := withHook(newReaper(t, c, policy(t, doc, true), false, "")).Cycle(ctx).Rules[0]
	if rr.Outcomes[WouldVerify] != 6 || len(rr.Skips) != 0 {
		t.Fatalf("dry run without --verify: %+v", rr)
	}
	dry := withHook(newReaper(t, c, policy(t, doc, true), false, ""))
	dry.RunHooks = true
	rr = dry.Cycle(ctx).Rules[0]
	if rr.Outcomes[WouldApply] != 2 || !maps.Equal(rr.Skips, map[string]int{SkipVerdict: 2, SkipVerdictUnknown: 2}) {
		t.Fatalf("dry run with --verify: %+v", rr)
	}

	r := withHook(newReaper(t, c, policy(t, doc, true), true, auditLog))
	start := time.Now()
	rr = r.Cycle(ctx).Rules[0]
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a hanging hook held the cycle %v (timeout 1s)", took)
	}
	if rr.Outcomes["applied"] != 2 || !maps.Equal(rr.Skips, map[string]int{SkipVerdict: 2, SkipVerdictUnknown: 2}) {
		t.Fatalf("reconcile-if-verified: %+v", rr)
	}
	for _, k := range []string{"job:done-0", "job:done-1"} {
		got := c.HGetAll(ctx, k).Val()
		if got["state"] != "SUCCEEDED" || got["ref"] != "ord-"+k || got["status"] != "201" || got["response"] != `{"order":"`+k+`"}` {
			t.Errorf("%s: %v", k, got)
		}
	}
	for _, k := range []string{"job:gone-0", "job:gone-1", "job:junk-0", "job:hang-0"} {
		if st := c.HGet(ctx, k, "state").Val(); st != "PROCESSING" {
			t.Errorf("%s written without a done verdict: %s", k, st)
		}
	}
	if err := r.Lease.Release(ctx, c); err != nil {
		t.Fatal(err)
	}

	// fail only what the source of truth says never happened
	doc = strings.Replace(basePolicy, "action: fail", "action: fail\n    select: {verdict: not_done}", 1)
	r = withHook(newReaper(t, c, policy(t, doc, true), true, auditLog))
	rr = r.Cycle(ctx).Rules[0]
	if rr.Outcomes["applied"] != 2 || rr.Skips[SkipVerdictUnknown] != 2 {
		t.Fatalf("fail on not_done: %+v", rr)
	}
	got := applied(t, auditLog)
	if len(got) != 4 || got["job:gone-0"] != "reaper/test" || got["job:gone-1"] != "reaper/test" {
		t.Errorf("audited %v", got)
	}
	// each write's audit entries carry the verdict behind it
	for _, e := range recordtest.AuditLines(t, auditLog) {
		if e.Phase != audit.PhaseIntent {
			continue
		}
		want := map[write.Kind]string{write.KindReconcile: string(verify.Done), write.KindFail: "not_done"}[e.Action]
		if e.Evidence == nil || e.Evidence.Verdict != want || e.Evidence.Hook != h.Command[0] ||
			e.Action == write.KindReconcile && e.Evidence.Ref != "ord-"+e.Key {
			t.Errorf("%s %s: evidence %+v", e.Action, e.Key, e.Evidence)
		}
	}
	for _, k := range []string{"job:junk-0", "job:hang-0"} {
		if st := c.HGet(ctx, k, "state").Val(); st != "PROCESSING" {
			t.Errorf("%s written on an unknown verdict: %s", k, st)
		}
	}
}

// max_per_cycle counts writes: the oldest records the verifier turns down
// make room for the next, so they never starve the rule.
func TestCapCountsWritesNotVerdicts(t *testing.T) {
	c := jobs(t, job{key: "job:gone-old", age: 3 * time.Hour}, job{key: "job:junk-old", age: 2 * time.Hour},
		job{key: "job:done-new", age: time.Hour}, job{key: "job:done-newer", age: 30 * time.Minute})
	ctx := t.Context()
	doc := strings.NewReplacer("action: fail", "action: reconcile-if-verified", "max_per_cycle: 50", "max_per_cycle: 1").Replace(basePolicy)
	r := newReaper(t, c, policy(t, doc, true), true, recordtest.AuditPath(t))
	h := hook(t)
	r.Verifier = func(*inspect.Keyspace) *verify.Hook { return h }
	rr := r.Cycle(ctx).Rules[0]
	want := map[string]int{SkipVerdict: 1, SkipVerdictUnknown: 1, SkipMaxPerCycle: 1}
	if rr.Outcomes["applied"] != 1 || !maps.Equal(rr.Skips, want) || rr.Items[0].Key != "job:done-new" {
		t.Fatalf("cap 1: %+v", rr)
	}
}

// A record that changes between the scan and the write is left alone:
// the application completed it (changed), deleted it (gone), or a worker
// took its lock again (changed: re-judged on the plan's own read). The
// hook makes those changes itself, as the application would meanwhile.
func TestChangedBeforeTheWrite(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := t.Context()
	for _, k := range []string{"flip", "vanish", "locked", "plain"} {
		writeJobs(t, c, job{key: "job:" + k, age: time.Hour})
	}
	path := filepath.Join(t.TempDir(), "meddle.sh")
	script := `#!/bin/sh
case "$1" in
  *flip*) redis-cli -u "redis://$2" hset "$1" state SUCCEEDED >/dev/null ;;
  *vanish*) redis-cli -u "redis://$2" del "$1" >/dev/null ;;
  *locked*) redis-cli -u "redis://$2" set "$1:lock" 1 ex 60 >/dev/null ;;
esac
echo '{"verdict":"not_done"}'
`
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h := &verify.Hook{Command: []string{path, "{key}", srv.Addr}, Timeout: 5 * time.Second}
	auditLog := recordtest.AuditPath(t)
	r := newReaper(t, c, policy(t, strings.Replace(basePolicy, "action: fail", "action: fail\n    select: {verdict: not_done}", 1), true), true, auditLog)
	r.Verifier = func(*inspect.Keyspace) *verify.Hook { return h }
	rr := r.Cycle(ctx).Rules[0]
	if want := map[string]int{SkipChanged: 2, SkipGone: 1}; rr.Outcomes["applied"] != 1 || !maps.Equal(rr.Skips, want) {
		t.Fatalf("changed before the write: %+v", rr)
	}
	if got := applied(t, auditLog); len(got) != 1 || got["job:plain"] == "" {
		t.Errorf("applied %v", got)
	}
	if st := c.HGet(ctx, "job:flip", "state").Val(); st != "SUCCEEDED" {
		t.Errorf("the application's completion was overwritten: %s", st)
	}
}

// A cycle that runs out of time defers the rest to the next cycle.
func TestCycleDeadline(t *testing.T) {
	c := jobs(t, orphans("slow-gone", 4)...)
	path := filepath.Join(t.TempDir(), "slow.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nsleep 0.7\necho '{\"verdict\":\"not_done\"}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := &verify.Hook{Command: []string{path}, Timeout: 5 * time.Second, Concurrency: 1}
	doc := strings.NewReplacer("cycle_deadline: 10s", "cycle_deadline: 1s", "action: fail", "action: fail\n    select: {verdict: not_done}").Replace(basePolicy)
	r := newReaper(t, c, policy(t, doc, true), true, recordtest.AuditPath(t))
	r.Verifier = func(*inspect.Keyspace) *verify.Hook { return h }
	rr := r.Cycle(t.Context()).Rules[0]
	if rr.Skips[SkipCycleDeadline] == 0 || rr.Outcomes["applied"] != 0 {
		t.Fatalf("deadline: %+v", rr)
	}
}

// The reaper against a real source of truth: the orders application
// writes PostgreSQL and Redis and sometimes crashes between the two; the
// example hook (examples/verify-orders, psql) asks the orders table. Under
// live traffic, the reaper reconciles exactly the stuck records whose
// order exists, fails exactly those whose order does not, and loses no
// application write.
func TestReaperAgainstOrdersDatabase(t *testing.T) {
	c := jobs(t)
	pg := pgtest.Own(t)
	script, err := filepath.Abs("../examples/verify-orders")
	if err != nil {
		t.Fatal(err)
	}
	preset, err := inspect.Preset("atlasmart")
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 3 * time.Second // well above a live request's RESERVE → COMPLETE
	ks, err := inspect.NewKeyspace(inspect.KeyspaceSpec{Name: "orders", Schema: preset, ReserveTTL: 600 * time.Second, ProcessingTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	hook := &verify.Hook{Command: []string{script, "{principal}", "{idem_key}"}, Timeout: 10 * time.Second, Concurrency: 4, Env: pg.Env()}

	app := appsim.NewOrdersApp(c, pg.DB(), appsim.OrdersConfig{Workers: 2, Pause: 50 * time.Millisecond, CrashBeforeInsert: 0.15, CrashAfterInsert: 0.15, RandSeed: 19})
	app.Serve(120) // the stuck records the reaper is for
	seeded := app.Truth()
	time.Sleep(timeout + time.Second)

	p, err := Parse([]byte(`
name: orders
cycle_deadline: 60s
rules:
  - keyspace: orders
    action: reconcile-if-verified
    max_per_cycle: 30
    per_hour: 100000
    breaker: 1000
  - keyspace: orders
    action: fail
    select: {verdict: not_done}
    max_per_cycle: 30
    per_hour: 100000
    breaker: 1000
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Bind(func(string) (*inspect.Keyspace, error) { return ks, nil }, func(*inspect.Keyspace) bool { return true }); err != nil {
		t.Fatal(err)
	}
	auditLog := recordtest.AuditPath(t)
	r := newReaper(t, c, p, true, auditLog)
	r.Verifier = func(*inspect.Keyspace) *verify.Hook { return hook }

	ctx, stop := context.WithCancel(t.Context())
	live := make(chan struct{})
	go func() { defer close(live); app.Run(ctx) }() // live traffic throughout
	var reports []CycleReport
	for range 2 { // each rule writes at most 30 a cycle
		reports = append(reports, r.Cycle(t.Context()))
	}
	stop()
	<-live
	truth := app.Truth()

	if len(truth.Refused) != 0 {
		t.Errorf("%d application writes lost: COMPLETE refused after the reaper wrote the record", len(truth.Refused))
	}
	orders := map[string]int64{} // key → order id, from the database itself
	rows, err := pg.DB().Query(`SELECT principal, idem_key, id FROM orders`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var pr, k string
		var id int64
		if err := rows.Scan(&pr, &k, &id); err != nil {
			t.Fatal(err)
		}
		orders[appsim.OrderKey(pr, k)] = id
	}
	rows.Close()

	// Every record the reaper wrote agrees with the database.
	reconciled, failed := 0, 0
	entries, err := audit.ReadEntries(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Phase != audit.PhaseOutcome || e.Outcome != write.Applied {
			continue
		}
		id, exists := orders[e.Key]
		rec := c.HGetAll(t.Context(), e.Key).Val()
		switch e.Action {
		case write.KindReconcile:
			reconciled++
			if !exists || rec["state"] != "SUCCEEDED" || rec["reconciled_ref"] != strconv.FormatInt(id, 10) || rec["status"] != "201" {
				t.Errorf("%s reconciled without its order (%v): %v", e.Key, exists, rec)
			}
		case write.KindFail:
			failed++
			if exists || rec["state"] != "FAILED" {
				t.Errorf("%s failed although its order exists (%d): %v", e.Key, id, rec)
			}
		}
	}
	// The stuck records seeded before the reaper ran are all repaired.
	for _, w := range seeded.CrashedAfterInsert {
		if st := c.HGet(t.Context(), w.Key, "state").Val(); st != "SUCCEEDED" {
			t.Errorf("%s (order %d exists) is %s", w.Key, w.OrderID, st)
		}
	}
	for _, w := range seeded.CrashedBeforeInsert {
		if st := c.HGet(t.Context(), w.Key, "state").Val(); st != "FAILED" {
			t.Errorf("%s (no order) is %s", w.Key, st)
		}
	}
	if reconciled < len(seeded.CrashedAfterInsert) || failed < len(seeded.CrashedBeforeInsert) || reconciled+failed == 0 {
		t.Errorf("reconciled %d failed %d; seeded stuck: %d with order, %d without",
			reconciled, failed, len(seeded.CrashedAfterInsert), len(seeded.CrashedBeforeInsert))
	}
	t.Logf("requests %d (completed %d, crashed before insert %d, after %d); reaper: reconciled %d, failed %d; "+
		"application writes lost %d; cycles %+v", len(truth.Completed)+len(truth.CrashedBeforeInsert)+len(truth.CrashedAfterInsert)+len(truth.Refused),
		len(truth.Completed), len(truth.CrashedBeforeInsert), len(truth.CrashedAfterInsert), reconciled, failed, len(truth.Refused), summary(reports))
}

// summary is each cycle's outcomes and skips per rule, for the log.
func summary(reps []CycleReport) []map[string]map[string]int {
	var out []map[string]map[string]int
	for _, rep := range reps {
		m := map[string]map[string]int{}
		for _, rr := range rep.Rules {
			m[string(rr.Action)+" outcomes"] = rr.Outcomes
			m[string(rr.Action)+" skips"] = rr.Skips
		}
		out = append(out, m)
	}
	return out
}
