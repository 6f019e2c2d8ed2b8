package actions

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
)

// Compare-and-set: a record that changes between the plan and the write is
// left exactly as the application left it.
func TestCASConflictAfterPlan(t *testing.T) {
	ctx := t.Context()
	cases := []struct {
		name, key string
		sc        schemaCase
		req       Request
		change    func(r *rig)
		what      string // in the detail
	}{
		{"fail-vs-complete", atlasKey, schemaCases[0], Request{Kind: write.KindFail},
			func(r *rig) { r.completeAtlas(atlasKey, fp("body-1"), 201, `{"order_id":"ord-1"}`) }, "state"},
		{"reconcile-vs-complete", atlasKey, schemaCases[0], Request{Kind: write.KindReconcile, Ref: "ord-1"},
			func(r *rig) { r.completeAtlas(atlasKey, fp("body-1"), 201, `{"order_id":"ord-1"}`) }, "state"},
		{"expire-vs-complete", atlasKey, schemaCases[0], Request{Kind: write.KindExpire, TTL: TTL{Mode: TTLSet, D: 2 * time.Hour}},
			func(r *rig) { r.completeAtlas(atlasKey, fp("body-1"), 201, `{"order_id":"ord-1"}`) }, "state"},
		{"delete-vs-complete", atlasKey, schemaCases[0], Request{Kind: write.KindExpire, TTL: TTL{Mode: TTLSet}},
			func(r *rig) { r.completeAtlas(atlasKey, fp("body-1"), 201, `{"order_id":"ord-1"}`) }, "state"},
		{"fail-vs-new-fingerprint", atlasKey, schemaCases[0], Request{Kind: write.KindFail},
			func(r *rig) { r.c.HSet(ctx, atlasKey, "fingerprint", fp("another body")) }, "fingerprint"},
		{"fail-vs-recreated", atlasKey, schemaCases[0], Request{Kind: write.KindFail},
			func(r *rig) { r.c.Del(ctx, atlasKey); r.reserveAtlas(atlasKey, fp("body-2")) }, "fingerprint"},
		{"json-fail-vs-complete", jsonKey, schemaCases[2], Request{Kind: write.KindFail},
			func(r *rig) { r.c.Set(ctx, jsonKey, jsonComplete, redis.KeepTTL) }, "state"},
		{"json-fail-vs-new-fingerprint", jsonKey, schemaCases[2], Request{Kind: write.KindFail},
			func(r *rig) {
				r.c.Set(ctx, jsonKey, strings.Replace(jsonProcessing, "fp-json-1", "fp-json-2", 1), redis.KeepTTL)
			}, "fingerprint"},
		{"marker-reconcile-vs-response", setnxKey, schemaCases[1], Request{Kind: write.KindReconcile},
			func(r *rig) { r.c.Set(ctx, setnxKey, `{"order_id":"ord-1"}`, time.Hour) }, "state"},
		// Same first bytes, another length: the raw script compares both.
		{"marker-fail-vs-longer-value", setnxKey, schemaCases[1], Request{Kind: write.KindFail},
			func(r *rig) { r.c.Set(ctx, setnxKey, "processing:worker-2", time.Hour) }, "state"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := sharedRig(t)
			tc.sc.processing(r)
			req := tc.req
			req.Keyspace, req.Key = tc.sc.ks(t), tc.key
			p := r.plan(req)
			if p.Refused != "" {
				t.Fatalf("plan refused: %s", p.Refused)
			}
			tc.change(r)
			changed, ttl := r.raw(tc.key), r.pttl(tc.key)
			res := r.apply(p)
			if res.Outcome != write.Conflict || !strings.Contains(res.Detail, tc.what) || !strings.Contains(res.Detail, "nothing was written") {
				t.Fatalf("apply after a change: %+v", res)
			}
			if after := r.raw(tc.key); !sameMap(changed, after) {
				t.Fatalf("the conflicting write changed the record:\n%q\n%q", changed, after)
			}
			if d := r.pttl(tc.key); d > ttl || d < ttl-10*time.Second {
				t.Fatalf("the conflicting write changed the TTL: %v -> %v", ttl, d)
			}
			r.lastWrite(tc.key, write.Conflict)
		})
	}
}

// The lesson's application completing between plan and write: the scripts
// the service runs, not a hand-made change.
func TestCASAgainstTheApplication(t *testing.T) {
	r := sharedRig(t)
	ctx := t.Context()
	ks := inspecttest.Keyspace(t, "atlasmart")
	r.reserveAtlas(atlasKey, fp("body-1"))
	p := r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey, Reason: "looks stuck"})
	n, err := appsim.Complete.Run(ctx, r.c, []string{atlasKey}, fp("body-1"), 201, `{"order_id":"ord-1"}`, 300).Int64()
	if err != nil || n != 1 {
		t.Fatalf("COMPLETE: %d %v", n, err)
	}
	if res := r.apply(p); res.Outcome != write.Conflict {
		t.Fatalf("apply: %+v", res)
	}
	got := r.raw(atlasKey)
	if got["state"] != "SUCCEEDED" || got["response"] != `{"order_id":"ord-1"}` || got["status"] != "201" || len(got) != 4 {
		t.Fatalf("the application's completion was not kept whole: %q", got)
	}
	// And the other way round: the tool's write wins the race, the
	// application's COMPLETE is refused by its own script (not lost silently).
	r.c.Del(ctx, atlasKey)
	r.reserveAtlas(atlasKey, fp("body-2"))
	p = r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey, Reason: "looks stuck"})
	if res := r.apply(p); res.Outcome != write.Applied {
		t.Fatalf("apply: %+v", res)
	}
	n, err = appsim.Complete.Run(ctx, r.c, []string{atlasKey}, fp("body-2"), 201, `{"order_id":"ord-2"}`, 300).Int64()
	if err != nil || n != 0 {
		t.Fatalf("COMPLETE after force-fail returned %d %v, want 0", n, err)
	}
}

// What the operator saw is checked when the plan is built: a difference is a
// conflict before anything is sent, audited like one the script finds.
func TestSeenDiffersAtPlan(t *testing.T) {
	for _, tc := range []struct {
		name string
		saw  Seen
		what string
	}{
		{"state", Seen{State: "SUCCEEDED", Fingerprint: fp("body-1")}, "state"},
		{"fingerprint", Seen{State: "PROCESSING", Fingerprint: fp("other")}, "fingerprint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sharedRig(t)
			r.reserveAtlas(atlasKey, fp("body-1"))
			before := r.raw(atlasKey)
			saw := tc.saw
			p := r.plan(Request{Kind: write.KindFail, Keyspace: inspecttest.Keyspace(t, "atlasmart"), Key: atlasKey, Saw: &saw})
			if p.Outcome != write.Conflict || !strings.Contains(p.Refused, tc.what) {
				t.Fatalf("plan: %q %q", p.Outcome, p.Refused)
			}
			if res := r.apply(p); res.Outcome != write.Conflict {
				t.Fatalf("apply: %+v", res)
			}
			if !sameMap(before, r.raw(atlasKey)) {
				t.Fatal("a conflict at plan time wrote something")
			}
			if e := r.lastRefusal(atlasKey, write.Conflict); !strings.Contains(e.Detail, tc.what) || len(r.entries()) != 1 {
				t.Fatalf("audited plan-time conflict: %+v (%d lines)", e, len(r.entries()))
			}
		})
	}
	t.Run("same", func(t *testing.T) {
		r := sharedRig(t)
		r.reserveAtlas(atlasKey, fp("body-1"))
		p := r.plan(Request{Kind: write.KindFail, Keyspace: inspecttest.Keyspace(t, "atlasmart"), Key: atlasKey,
			Saw: &Seen{State: "PROCESSING", Fingerprint: fp("body-1")}})
		if res := r.apply(p); res.Outcome != write.Applied {
			t.Fatalf("apply: %+v", res)
		}
	})
}

// A key deleted after planning: not found, audited, nothing recreated.
func TestDeletedAfterPlan(t *testing.T) {
	for _, sc := range schemaCases {
		t.Run(sc.name, func(t *testing.T) {
			r := sharedRig(t)
			sc.processing(r)
			p := r.plan(Request{Kind: write.KindReconcile, Keyspace: sc.ks(t), Key: sc.key, Ref: "ord-1"})
			if p.Refused != "" {
				t.Fatalf("plan: %s", p.Refused)
			}
			r.c.Del(t.Context(), sc.key)
			if res := r.apply(p); res.Outcome != write.NotFound {
				t.Fatalf("apply: %+v", res)
			}
			if r.c.Exists(t.Context(), sc.key).Val() != 0 {
				t.Fatal("the write recreated the key")
			}
			r.lastWrite(sc.key, write.NotFound)
		})
	}
}
