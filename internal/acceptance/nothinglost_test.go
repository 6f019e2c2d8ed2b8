package acceptance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/appsim"
	"github.com/idemctl/idemctl/internal/cli"
	"github.com/idemctl/idemctl/internal/clitest"
	"github.com/idemctl/idemctl/internal/redistest"
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
	audit := filepath.Join(t.TempDir(), "audit.log")
	r := clitest.RunStdin(t, plan.String(), nil, append([]string{"fail", "--url", srv.URL(0), "--preset", "atlasmart", "--from-file", "-",
		"--reason", "bulk repair drill", "--write", "--yes", "--rate", "400", "--audit-log", audit}, longTiming...)...)
	stop()
	wg.Wait()
	if r.Code != 0 && r.Code != cli.ExitPartial && r.Code != cli.ExitConflict {
		t.Fatalf("bulk fail: exit %d\n%s", r.Code, r.Stderr)
	}

	// The audit log: every applied write was made against what was shown.
	fh, err := os.Open(audit)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	intents := map[string]actions.AuditEntry{}
	outcomes := map[string]actions.Outcome{}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e actions.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Phase == actions.PhasePlan {
			continue
		}
		if e.Phase == "intent" {
			intents[e.ID] = e
		} else {
			outcomes[e.Key] = e.Outcome
			in := intents[e.ID]
			if in.ID == "" && e.Outcome == actions.Conflict && e.Before != nil && e.Key != "" {
				continue // a conflict found while planning: audited alone, nothing sent
			}
			if in.Key != e.Key || in.Before == nil {
				t.Fatalf("outcome without its intent: %+v", e)
			}
			if e.Outcome == actions.Applied && (in.Before.State != "PROCESSING" || in.Before.Fingerprint != before[e.Key]["fingerprint"]) {
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
			if outcomes[k] != actions.Applied {
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
