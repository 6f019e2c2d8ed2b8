package actions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/internal/redistest"
)

// The one TTL reading both faces use: the CLI's rules.
func TestParseTTL(t *testing.T) {
	for _, c := range []struct {
		kind Kind
		in   string
		want TTL
		err  string
	}{
		{KindExpire, "", TTL{}, "required for expire"},
		{KindExpire, "0", TTL{Mode: TTLSet}, ""},
		{KindExpire, "10m", TTL{Mode: TTLSet, D: 10 * time.Minute}, ""},
		{KindExpire, "1ms", TTL{Mode: TTLSet, D: time.Millisecond}, ""},
		{KindExpire, "500us", TTL{}, "at least 1ms"},
		{KindExpire, "keep", TTL{}, "bad duration"},
		{KindExpire, "retention", TTL{}, "bad duration"},
		{KindExpire, "-5s", TTL{}, "negative"},
		{KindFail, "", TTL{}, ""}, // the action's default
		{KindFail, "retention", TTL{Mode: TTLRetention}, ""},
		{KindFail, "keep", TTL{Mode: TTLKeep}, ""},
		{KindFail, "1d", TTL{Mode: TTLSet, D: 24 * time.Hour}, ""},
		{KindReconcile, "", TTL{}, ""},
		{KindReconcile, "90", TTL{Mode: TTLSet, D: 90 * time.Second}, ""},
		{KindReconcile, "1ns", TTL{}, "at least 1ms"},
		{KindReconcile, "soon", TTL{}, "bad duration"},
	} {
		got, err := ParseTTL(c.kind, c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s %q: error %v, want one saying %q", c.kind, c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s %q: %v", c.kind, c.in, err)
		case c.err == "" && got != c.want:
			t.Errorf("%s %q: %+v, want %+v", c.kind, c.in, got, c.want)
		}
	}
}

// A reference is needed exactly where the schema records one, and a plan
// without it is refused for the same reason.
func TestNeedsRef(t *testing.T) {
	for _, c := range []struct {
		preset string
		kind   Kind
		want   bool
	}{
		{"atlasmart", KindReconcile, true},
		{"gopotency", KindReconcile, true},
		{"atlasmart", KindFail, false},
		{"atlasmart", KindExpire, false},
		{"setnx", KindReconcile, false},
		{"powertools", KindReconcile, false}, // refused by the schema, not for a ref
	} {
		if got := NeedsRef(c.kind, presetKeyspace(t, c.preset)); got != c.want {
			t.Errorf("%s %s: NeedsRef %v, want %v", c.preset, c.kind, got, c.want)
		}
	}
	if NeedsRef(KindReconcile, nil) {
		t.Error("no keyspace: nothing to ask a reference for")
	}
	if NeedsRef(KindReconcile, schemaKeyspace(t, "json", jsonSchemaYAML)) != true {
		t.Error("a custom schema with actions.reconcile.ref needs a reference")
	}
}

func TestTallyInOutcomeOrder(t *testing.T) {
	rs := []Result{{Outcome: Skipped}, {Outcome: Conflict}, {Outcome: Applied}, {Outcome: Applied}, {Outcome: Unknown}}
	if got := Summary(rs).String(); got != "2 applied, 1 conflict, 1 unknown, 1 skipped" {
		t.Fatalf("summary %q", got)
	}
	if got := Summary(nil).String(); got != "" {
		t.Fatalf("empty summary %q", got)
	}
	seen := map[Outcome]bool{}
	for _, o := range Outcomes {
		seen[o] = true
	}
	if len(seen) != 8 || len(Outcomes) != 8 {
		t.Fatalf("Outcomes lists %d distinct of %d: every outcome once", len(seen), len(Outcomes))
	}
}

// NewExecutor opens the audit log (a new directory, mode 0600) and its
// stream; the executor writes, audits both, and Close closes the file.
// A planner opens nothing and cannot write.
func TestNewExecutorAndPlanner(t *testing.T) {
	srv := redistest.Shared(t)
	c := srv.Client(0)
	defer c.Close()
	ctx := context.Background()
	ks := presetKeyspace(t, "atlasmart")
	r := &rig{t: t, srv: srv, c: c}
	r.reserveAtlas(atlasKey, fp("body-1"))
	dir := filepath.Join(t.TempDir(), "state", "idemctl")
	s := Setup{Client: c, Policy: &Policy{Writes: true}, AuditPath: filepath.Join(dir, "audit.log"),
		AuditStream: "idemctl:test-audit", Identity: Identity{OSUser: testUser, Profile: "test"}}
	c.Del(ctx, s.AuditStream)

	pl := NewPlanner(s)
	if pl.CanWrite() {
		t.Fatal("a planner says it can write")
	}
	p, err := pl.Plan(ctx, Request{Kind: KindFail, Keyspace: ks, Key: atlasKey, Reason: "stuck"})
	if err != nil || p.Refused != "" || p.By != testUser {
		t.Fatalf("plan: %v %q by %q", err, p.Refused, p.By)
	}
	if res := pl.Apply(ctx, p); res.Outcome != Refused || !strings.Contains(res.Detail, "no audit log") {
		t.Fatalf("a planner applied: %+v", res)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a planner created the audit directory: %v", err)
	}

	ex, err := NewExecutor(s)
	if err != nil {
		t.Fatal(err)
	}
	if !ex.CanWrite() {
		t.Fatal("an executor with writes on and its log open says it cannot write")
	}
	if res := ex.Apply(ctx, p); res.Outcome != Applied {
		t.Fatalf("apply a planner's plan: %+v", res)
	}
	if fi, err := os.Stat(s.AuditPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("audit log: %v %v", fi, err)
	}
	es := readAudit(t, s.AuditPath)
	if len(es) != 2 || es[0].RedisUser != "default" || es[0].OSUser != testUser || es[1].Outcome != Applied {
		t.Fatalf("audit entries: %+v", es)
	}
	xs, err := c.XRange(ctx, s.AuditStream, "-", "+").Result()
	if err != nil || len(xs) != 2 {
		t.Fatalf("audit stream: %d entries, %v", len(xs), err)
	}
	var streamed AuditEntry
	if err := json.Unmarshal([]byte(xs[1].Values["entry"].(string)), &streamed); err != nil || streamed.ID != es[1].ID {
		t.Fatalf("streamed entry %v: %v", xs[1].Values, err)
	}
	c.Del(ctx, s.AuditStream)
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ex.Audit.Write(ctx, AuditEntry{Phase: "outcome"}); err == nil {
		t.Fatal("the audit log is still open after Close")
	}

	s.Policy = &Policy{Writes: false}
	ro, err := NewExecutor(s)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if ro.CanWrite() {
		t.Fatal("writes off, yet the executor says it can write")
	}
	s.AuditPath = ""
	if _, err := NewExecutor(s); err == nil {
		t.Fatal("an executor without an audit log")
	}
	var none *Executor
	if none.CanWrite() || none.Close() != nil {
		t.Fatal("a nil executor is read-only and has nothing to close")
	}
}
