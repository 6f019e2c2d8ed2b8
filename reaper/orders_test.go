package reaper

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/appsim"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/pgtest"
	"github.com/idemctl/idemctl/internal/redistest"
	"github.com/idemctl/idemctl/verify"
)

// The reaper against a real source of truth: the orders application
// writes PostgreSQL and Redis and sometimes crashes between the two; the
// example hook (examples/verify-orders, psql) asks the orders table. Under
// live traffic, the reaper reconciles exactly the stuck records whose
// order exists, fails exactly those whose order does not, and loses no
// application write.
func TestReaperAgainstOrdersDatabase(t *testing.T) {
	_, c := redistest.SharedClient(t)
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
	audit := auditPath(t)
	r := newReaper(t, c, p, true, audit)
	r.Verifier = func(*inspect.Keyspace) *verify.Hook { return hook }

	ctx, stop := context.WithCancel(context.Background())
	live := make(chan struct{})
	go func() { defer close(live); app.Run(ctx) }() // live traffic throughout
	var reports []CycleReport
	for range 2 { // each rule writes at most 30 a cycle
		reports = append(reports, r.Cycle(context.Background()))
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
	entries, err := actions.ReadAuditLog(audit)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Phase != actions.PhaseOutcome || e.Outcome != actions.Applied {
			continue
		}
		id, exists := orders[e.Key]
		rec := c.HGetAll(context.Background(), e.Key).Val()
		switch e.Action {
		case actions.KindReconcile:
			reconciled++
			if !exists || rec["state"] != "SUCCEEDED" || rec["reconciled_ref"] != strconv.FormatInt(id, 10) || rec["status"] != "201" {
				t.Errorf("%s reconciled without its order (%v): %v", e.Key, exists, rec)
			}
		case actions.KindFail:
			failed++
			if exists || rec["state"] != "FAILED" {
				t.Errorf("%s failed although its order exists (%d): %v", e.Key, id, rec)
			}
		}
	}
	// The stuck records seeded before the reaper ran are all repaired.
	for _, w := range seeded.CrashedAfterInsert {
		if st := c.HGet(context.Background(), w.Key, "state").Val(); st != "SUCCEEDED" {
			t.Errorf("%s (order %d exists) is %s", w.Key, w.OrderID, st)
		}
	}
	for _, w := range seeded.CrashedBeforeInsert {
		if st := c.HGet(context.Background(), w.Key, "state").Val(); st != "FAILED" {
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
