package reaper

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/recordtest"
	"github.com/idemctl/idemctl/internal/redistest"
	"github.com/idemctl/idemctl/verify"
)

// reconcile-if-verified acts only on a done verdict, with the hook's ref,
// status and response; a rule wanting not_done fails only those; a hook
// that hangs or prints garbage leaves its record untouched.
func TestVerifiedActions(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := context.Background()
	for _, k := range []string{"done-0", "done-1", "gone-0", "gone-1", "junk-0", "hang-0"} {
		write(t, c, job{key: "job:" + k, age: time.Hour})
	}
	h := hook(t)
	withHook := func(r *Reaper) *Reaper {
		r.Verifier = func(*inspect.Keyspace) *verify.Hook { return h }
		return r
	}
	doc := strings.Replace(basePolicy, "action: fail", "action: reconcile-if-verified", 1)
	audit := auditPath(t)

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

	r := withHook(newReaper(t, c, policy(t, doc, true), true, audit))
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
	r = withHook(newReaper(t, c, policy(t, doc, true), true, audit))
	rr = r.Cycle(ctx).Rules[0]
	if rr.Outcomes["applied"] != 2 || rr.Skips[SkipVerdictUnknown] != 2 {
		t.Fatalf("fail on not_done: %+v", rr)
	}
	got := applied(t, audit)
	if len(got) != 4 || got["job:gone-0"] != "reaper/test" || got["job:gone-1"] != "reaper/test" {
		t.Errorf("audited %v", got)
	}
	// each write's audit entries carry the verdict behind it
	for _, e := range recordtest.AuditLines(t, audit) {
		if e.Phase != actions.PhaseIntent {
			continue
		}
		want := map[actions.Kind]string{actions.KindReconcile: string(verify.Done), actions.KindFail: "not_done"}[e.Action]
		if e.Evidence == nil || e.Evidence.Verdict != want || e.Evidence.Hook != h.Command[0] ||
			e.Action == actions.KindReconcile && e.Evidence.Ref != "ord-"+e.Key {
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
	_, c := redistest.SharedClient(t)
	ctx := context.Background()
	write(t, c, job{key: "job:gone-old", age: 3 * time.Hour}, job{key: "job:junk-old", age: 2 * time.Hour},
		job{key: "job:done-new", age: time.Hour}, job{key: "job:done-newer", age: 30 * time.Minute})
	doc := strings.NewReplacer("action: fail", "action: reconcile-if-verified", "max_per_cycle: 50", "max_per_cycle: 1").Replace(basePolicy)
	r := newReaper(t, c, policy(t, doc, true), true, auditPath(t))
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
	ctx := context.Background()
	for _, k := range []string{"flip", "vanish", "locked", "plain"} {
		write(t, c, job{key: "job:" + k, age: time.Hour})
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
	audit := auditPath(t)
	r := newReaper(t, c, policy(t, strings.Replace(basePolicy, "action: fail", "action: fail\n    select: {verdict: not_done}", 1), true), true, audit)
	r.Verifier = func(*inspect.Keyspace) *verify.Hook { return h }
	rr := r.Cycle(ctx).Rules[0]
	if want := map[string]int{SkipChanged: 2, SkipGone: 1}; rr.Outcomes["applied"] != 1 || !maps.Equal(rr.Skips, want) {
		t.Fatalf("changed before the write: %+v", rr)
	}
	if got := applied(t, audit); len(got) != 1 || got["job:plain"] == "" {
		t.Errorf("applied %v", got)
	}
	if st := c.HGet(ctx, "job:flip", "state").Val(); st != "SUCCEEDED" {
		t.Errorf("the application's completion was overwritten: %s", st)
	}
}

// A cycle that runs out of time defers the rest to the next cycle.
func TestCycleDeadline(t *testing.T) {
	_, c := redistest.SharedClient(t)
	write(t, c, orphans("slow-gone", 4)...)
	path := filepath.Join(t.TempDir(), "slow.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nsleep 0.7\necho '{\"verdict\":\"not_done\"}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := &verify.Hook{Command: []string{path}, Timeout: 5 * time.Second, Concurrency: 1}
	doc := strings.NewReplacer("cycle_deadline: 10s", "cycle_deadline: 1s", "action: fail", "action: fail\n    select: {verdict: not_done}").Replace(basePolicy)
	r := newReaper(t, c, policy(t, doc, true), true, auditPath(t))
	r.Verifier = func(*inspect.Keyspace) *verify.Hook { return h }
	rr := r.Cycle(context.Background()).Rules[0]
	if rr.Skips[SkipCycleDeadline] == 0 || rr.Outcomes["applied"] != 0 {
		t.Fatalf("deadline: %+v", rr)
	}
}
