package actions

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
)

// Read-only is enforced where the write happens, whoever calls Apply.
func TestReadOnlyRefusesAtApply(t *testing.T) {
	r := sharedRig(t)
	r.reserveAtlas(atlasKey, fp("body-1"))
	before := r.raw(atlasKey)
	ks := inspecttest.Keyspace(t, "atlasmart")
	for _, pol := range []*Policy{{Writes: false}, nil} {
		r.ex.Policy = pol
		for _, req := range []Request{
			{Kind: write.KindFail},
			{Kind: write.KindReconcile, Ref: "ord-1"},
			{Kind: write.KindExpire, TTL: TTL{Mode: TTLSet}},
		} {
			req.Keyspace, req.Key = ks, atlasKey
			p := r.plan(req) // planning reads only: allowed
			if p.Refused != "" {
				t.Fatalf("plan: %s", p.Refused)
			}
			res := r.apply(p)
			if res.Outcome != write.Refused || res.Detail != ErrReadOnly.Error() {
				t.Fatalf("%s with writes off: %+v", req.Kind, res)
			}
		}
		rs := r.ex.ApplyAll(t.Context(), []*Plan{r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey})}, 0, nil)
		if Summary(rs)[write.Refused] != 1 {
			t.Fatalf("ApplyAll with writes off: %+v", rs)
		}
	}
	if !sameMap(before, r.raw(atlasKey)) {
		t.Fatal("a read-only session changed the record")
	}
	for _, e := range r.entries() {
		if e.Outcome == write.Applied {
			t.Fatalf("audited as applied while read-only: %+v", e)
		}
	}
	if n := len(r.entries()); n != 0 {
		t.Fatalf("%d audit entries for writes that were never attempted", n)
	}
}

// A protected profile refuses until its exact name is typed; a wrong name
// is an error and keeps it locked.
func TestProtectedProfile(t *testing.T) {
	r := sharedRig(t)
	r.reserveAtlas(atlasKey, fp("body-1"))
	pol := &Policy{Writes: true, Protected: true, Profile: "prod"}
	r.ex.Policy = pol
	ks := inspecttest.Keyspace(t, "atlasmart")
	req := Request{Kind: write.KindExpire, Keyspace: ks, Key: atlasKey, TTL: TTL{Mode: TTLSet, D: 2 * time.Hour}}

	if !pol.NeedsProfileName() {
		t.Fatal("a protected profile must ask for its name")
	}
	if res := r.apply(r.plan(req)); res.Outcome != write.Refused || res.Detail != ErrNeedsProfileName.Error() {
		t.Fatalf("before confirming: %+v", res)
	}
	for _, wrong := range []string{"", "production", "PROD", "prod "} {
		if err := pol.ConfirmProfile(wrong); err == nil {
			t.Fatalf("ConfirmProfile(%q) accepted", wrong)
		}
		if res := r.apply(r.plan(req)); res.Outcome != write.Refused {
			t.Fatalf("after a wrong name %q: %+v", wrong, res)
		}
	}
	if d := r.pttl(atlasKey); d > time.Minute {
		t.Fatalf("refused writes changed the TTL: %v", d)
	}
	if len(r.entries()) != 0 {
		t.Fatal("refused writes were audited")
	}
	if err := pol.ConfirmProfile("prod"); err != nil {
		t.Fatal(err)
	}
	if pol.NeedsProfileName() || pol.Check() != nil {
		t.Fatal("confirmed profile still locked")
	}
	if res := r.apply(r.plan(req)); res.Outcome != write.Applied {
		t.Fatalf("after confirming: %+v", res)
	}
	r.lastWrite(atlasKey, write.Applied)

	// A protected profile without a name can never be unlocked.
	anon := &Policy{Writes: true, Protected: true}
	if err := anon.ConfirmProfile(""); err == nil || !errors.Is(anon.Check(), ErrNeedsProfileName) {
		t.Fatalf("nameless protected profile: %v / %v", err, anon.Check())
	}
}

// Without an audit log nothing is written.
func TestNoAuditNoWrite(t *testing.T) {
	r := sharedRig(t)
	r.reserveAtlas(atlasKey, fp("body-1"))
	r.ex.Audit = nil
	res := r.apply(r.plan(Request{Kind: write.KindFail, Keyspace: inspecttest.Keyspace(t, "atlasmart"), Key: atlasKey}))
	if res.Outcome != write.Refused || !strings.Contains(res.Detail, "audit") {
		t.Fatalf("apply without audit: %+v", res)
	}
	if got := r.raw(atlasKey)["state"]; got != "PROCESSING" {
		t.Fatalf("state %q", got)
	}
	// An intent that cannot be recorded stops the write too.
	aud, err := audit.Open(r.audit)
	if err != nil {
		t.Fatal(err)
	}
	aud.Close()
	r.ex.Audit = aud
	res = r.apply(r.plan(Request{Kind: write.KindFail, Keyspace: inspecttest.Keyspace(t, "atlasmart"), Key: atlasKey}))
	if res.Outcome != write.Refused || !strings.Contains(res.Detail, "not written") {
		t.Fatalf("apply with a broken audit log: %+v", res)
	}
	if got := r.raw(atlasKey)["state"]; got != "PROCESSING" {
		t.Fatalf("state %q", got)
	}
}

// NewExecutor opens the audit log (a new directory, mode 0600) and its
// stream; the executor writes, audits both, and Close closes the file.
// A planner opens nothing and cannot write.
func TestNewExecutorAndPlanner(t *testing.T) {
	r := sharedRig(t)
	r.reserveAtlas(atlasKey, fp("body-1"))
	c, ctx, ks := r.c, t.Context(), inspecttest.Keyspace(t, "atlasmart")
	dir := filepath.Join(t.TempDir(), "state", "idemctl")
	s := Setup{Client: c, Policy: &Policy{Writes: true}, AuditPath: filepath.Join(dir, "audit.log"),
		AuditStream: "idemctl:test-audit", Identity: audit.Identity{OSUser: testUser, Profile: "test"}}
	c.Del(ctx, s.AuditStream)

	pl := NewPlanner(s)
	if pl.CanWrite() {
		t.Fatal("a planner says it can write")
	}
	p, err := pl.Plan(ctx, Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey, Reason: "stuck"})
	if err != nil || p.Refused != "" || p.By != testUser {
		t.Fatalf("plan: %v %q by %q", err, p.Refused, p.By)
	}
	if res := pl.Apply(ctx, p); res.Outcome != write.Refused || !strings.Contains(res.Detail, "no audit log") {
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
	if res := ex.Apply(ctx, p); res.Outcome != write.Applied {
		t.Fatalf("apply a planner's plan: %+v", res)
	}
	if fi, err := os.Stat(s.AuditPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("audit log: %v %v", fi, err)
	}
	es := readAudit(t, s.AuditPath)
	if len(es) != 2 || es[0].RedisUser != "default" || es[0].OSUser != testUser || es[1].Outcome != write.Applied {
		t.Fatalf("audit entries: %+v", es)
	}
	xs, err := c.XRange(ctx, s.AuditStream, "-", "+").Result()
	if err != nil || len(xs) != 3 { // the chain's genesis, then the two
		t.Fatalf("audit stream: %d entries, %v", len(xs), err)
	}
	if line, _ := xs[2].Values["entry"].(string); !strings.Contains(line, `"id":"`+es[1].ID+`"`) {
		t.Fatalf("streamed entry %v, want the file's %s", xs[2].Values, es[1].ID)
	}
	c.Del(ctx, s.AuditStream)
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ex.Audit.Write(ctx, audit.Entry{Phase: "outcome"}); err == nil {
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
