package sandbox

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/verify"
)

// A write in the demo is undoable as on a real server: the plan announces
// no "not undoable", and the undo restores every field and the expiry.
func TestDemoWriteUndoes(t *testing.T) {
	ctx := t.Context()
	s, err := Start(ctx, Config{Count: 1, Rate: 0, CrashRate: 0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	key := "atlasmart:ch23:idem:customer-1:POST:/orders:req-undo"
	if err := appsim.Reserve.Run(ctx, s.Client, []string{key}, appsim.Fingerprint(`{"a":1}`), 600).Err(); err != nil {
		t.Fatal(err)
	}
	before := s.Client.HGetAll(ctx, key).Val()
	beforeAt := s.Client.PExpireTime(ctx, key).Val()

	auditLog := filepath.Join(t.TempDir(), "audit.log")
	ex, err := actions.NewExecutor(actions.Setup{Client: s.Client, Policy: &actions.Policy{Writes: true, Profile: "demo"},
		Identity: audit.Identity{OSUser: "test", Profile: "demo"}, AuditPath: auditLog})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	p, err := ex.Plan(ctx, actions.Request{Kind: write.KindFail, Keyspace: s.Keyspace, Key: key, Reason: "demo test"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Refused != "" || p.UndoNote != "" {
		t.Fatalf("the demo's fail plan: refused %q, undo note %q", p.Refused, p.UndoNote)
	}
	if res := ex.Apply(ctx, p); res.Outcome != write.Applied {
		t.Fatalf("fail: %+v", res)
	}
	if st := s.Client.HGet(ctx, key, "state").Val(); st != "FAILED" {
		t.Fatalf("after fail the record is %s", st)
	}

	undoLast(t, ex, auditLog, s.Keyspace)
	after := s.Client.HGetAll(ctx, key).Val()
	if !maps.Equal(before, after) {
		t.Fatalf("undo restored\n%v\nwant\n%v", after, before)
	}
	if at := s.Client.PExpireTime(ctx, key).Val(); at-beforeAt > time.Second || beforeAt-at > time.Second {
		t.Fatalf("undo restored the expiry at %v, want %v", at, beforeAt)
	}
}

// undoLast undoes the log's newest write and checks it applied.
func undoLast(t *testing.T, ex *actions.Executor, auditLog string, ks *inspect.Keyspace) {
	t.Helper()
	entries, err := audit.ReadEntries(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	x := actions.IndexUndo(entries)
	tg, err := x.Lookup(entries[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	plans, err := ex.PlanUndo(t.Context(), x, []actions.UndoTarget{tg}, []*inspect.Keyspace{ks}, "demo test: undo")
	if err != nil {
		t.Fatal(err)
	}
	if plans[0].Refused != "" {
		t.Fatalf("undo refused: %s", plans[0].Refused)
	}
	if res := ex.ApplyAll(t.Context(), plans, 0, nil); res[0].Outcome != write.Applied {
		t.Fatalf("undo: %+v", res[0])
	}
}

// A payload the sandbox did not write is refused, as a real server
// refuses a bad DUMP payload; strings keep miniredis' own round trip.
func TestDemoRestoreRefusesForeignPayloads(t *testing.T) {
	ctx := t.Context()
	s, err := Start(ctx, Config{Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	err = s.Client.RestoreReplace(ctx, "k", 0, dumpMagic+"\x05ab").Err()
	if err == nil || redis.HasErrorPrefix(err, "BUSYKEY") {
		t.Fatalf("a truncated payload: %v", err)
	}
	s.Client.Set(ctx, "s", "plain", 0)
	d := s.Client.Dump(ctx, "s").Val()
	if err := s.Client.RestoreReplace(ctx, "s2", 0, d).Err(); err != nil || s.Client.Get(ctx, "s2").Val() != "plain" {
		t.Fatalf("string round trip: %v", err)
	}
}

// The demo's verify hook answers from the application's orders: done with
// the order as ref and replay where the order exists, not_done elsewhere;
// the seeded history has both.
func TestDemoOrdersVerdicts(t *testing.T) {
	ctx := t.Context()
	s, err := Start(ctx, Config{Count: 300, Rate: 0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	h := s.Orders.Hook()
	s.Orders.Created("k-done", "ord-1")
	r := h.Verify(ctx, &inspect.Record{Key: "k-done", State: inspect.StateProcessing, Keyspace: s.Keyspace})
	if r.Verdict != verify.Done || r.Ref != "ord-1" || r.Status != 201 || r.Response == nil || !strings.Contains(*r.Response, `"ord-1"`) {
		t.Fatalf("an order's verdict: %+v", r)
	}
	if r := h.Verify(ctx, &inspect.Record{Key: "k-none", State: inspect.StateProcessing, Keyspace: s.Keyspace}); r.Verdict != verify.NotDone {
		t.Fatalf("no order's verdict: %+v", r)
	}
	var done, notDone int
	for _, k := range s.Client.Keys(ctx, "atlasmart:*:req-*").Val() {
		if s.Client.HGet(ctx, k, "state").Val() != "PROCESSING" {
			continue
		}
		if _, _, ok := s.Orders.Lookup(k); ok {
			done++
		} else {
			notDone++
		}
	}
	if done == 0 || notDone == 0 {
		t.Fatalf("seeded stuck requests: %d with an order, %d without; want both", done, notDone)
	}
}
