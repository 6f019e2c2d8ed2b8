package actions

import (
	"crypto/rand"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// image is what an undo must give back: the server's serialization and
// the absolute expiry (0: none, -1: no key).
type image struct {
	dump     string
	expireAt int64
}

func (r *rig) image(key string) image {
	r.t.Helper()
	ctx := r.t.Context()
	d, err := r.c.Dump(ctx, key).Result()
	if err != nil && err.Error() != "redis: nil" {
		r.t.Fatalf("DUMP %s: %v", key, err)
	}
	at, err := r.c.Do(ctx, "PEXPIRETIME", key).Int64()
	if err != nil {
		r.t.Fatalf("PEXPIRETIME %s: %v", key, err)
	}
	if at < 0 {
		at = -at // -1 none, -2 no key: told apart from a time
	}
	return image{dump: d, expireAt: at}
}

// undo undoes the writes with these audit ids through the executor, as
// the CLI does, and returns the plans and results.
func (r *rig) undo(kss []*inspect.Keyspace, ids ...string) ([]*Plan, []Result) {
	r.t.Helper()
	x := IndexUndo(r.entries())
	var ts []UndoTarget
	for _, id := range ids {
		tg, err := x.Lookup(id)
		if err != nil {
			r.t.Fatalf("lookup %s: %v", id, err)
		}
		ts = append(ts, tg)
	}
	x.NewestFirst(ts)
	return r.undoTargets(x, kss, ts)
}

func (r *rig) undoTargets(x *UndoIndex, kss []*inspect.Keyspace, ts []UndoTarget) ([]*Plan, []Result) {
	r.t.Helper()
	plans, err := r.ex.PlanUndo(r.t.Context(), x, ts, kss, "test: undo")
	if err != nil {
		r.t.Fatalf("plan undo: %v", err)
	}
	return plans, r.ex.ApplyAll(r.t.Context(), plans, 0, nil)
}

// Undos checked: DUMP byte-identical, and hashtable-encoded hashes whose
// DUMP differs only in field order.
var byteIdentical, sameContent atomic.Int64

// sameImage checks the record is byte-identical to want: the same DUMP
// and the same absolute expiry (within the clock's tolerance). One
// exception is Redis's own: a hash in hashtable encoding (a value over
// hash-max-listpack-value) comes back from RESTORE with its fields in
// another order, so its DUMP differs even when RESTORE of the very same
// DUMP is the source. For it, the check is that the DUMP is exactly what
// RESTORE of want gives (restored beside it), and every field, value and
// encoding is the same.
func (r *rig) sameImage(key string, want image) {
	r.t.Helper()
	got := r.image(key)
	if d := got.expireAt - want.expireAt; d < -2 || d > 2 {
		r.t.Fatalf("expiry after undo %d, before the write %d", got.expireAt, want.expireAt)
	}
	if got.dump == want.dump {
		byteIdentical.Add(1)
		return
	}
	ctx := r.t.Context()
	scratch := key + ":restored-by-test"
	if err := r.c.Restore(ctx, scratch, 0, want.dump).Err(); err != nil {
		r.t.Fatalf("RESTORE of the before-image: %v", err)
	}
	defer r.c.Del(ctx, scratch)
	enc := r.c.ObjectEncoding(ctx, key).Val()
	if enc != "hashtable" || enc != r.c.ObjectEncoding(ctx, scratch).Val() ||
		!sameMap(r.raw(key), r.raw(scratch)) || len(got.dump) != len(want.dump) {
		r.t.Fatalf("DUMP after undo differs from DUMP before the write (%s):\nbefore %q\nafter  %q", enc, want.dump, got.dump)
	}
	sameContent.Add(1)
}

// Every write kind is undone byte-identically: every field, also one no
// schema names and one that is not UTF-8, the encoding, and the expiry.
// An undo of an undo puts the write's result back, byte-identically too.
func TestUndoRestoresByteIdentical(t *testing.T) {
	atlas := func(t testing.TB) *inspect.Keyspace { return inspecttest.Keyspace(t, "atlasmart") }
	jsonKS := func(t testing.TB) *inspect.Keyspace { return inspecttest.Schema(t, "jsonidem", jsonSchemaYAML) }
	setnxKS := func(t testing.TB) *inspect.Keyspace { return inspecttest.Keyspace(t, "setnx") }
	lockKS := func(t testing.TB) *inspect.Keyspace { return inspecttest.Keyspace(t, "marker-lock") }
	const lockKey = "idempotency_keys:lock:req-9"
	hidden := func(r *rig) {
		r.reserveAtlas(atlasKey, fp("body-1"))
		if err := r.c.HSet(r.t.Context(), atlasKey, "x-internal", "\xff\x00\xfe binary", "trace", "t-1").Err(); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		key  string
		ks   func(testing.TB) *inspect.Keyspace
		seed func(r *rig)
		req  Request
	}{
		{"expire", atlasKey, atlas, hidden, Request{Kind: write.KindExpire, TTL: TTL{Mode: TTLSet, D: 10 * time.Minute}}},
		{"delete", atlasKey, atlas, hidden, Request{Kind: write.KindExpire, TTL: TTL{Mode: TTLSet}}},
		{"fail", atlasKey, atlas, hidden, Request{Kind: write.KindFail}},
		{"reconcile", atlasKey, atlas, hidden, Request{Kind: write.KindReconcile, Ref: "ord-1"}},
		{"json-fail", jsonKey, jsonKS, func(r *rig) { r.setMarker(jsonKey, jsonProcessing, 120*time.Second) }, Request{Kind: write.KindFail}},
		{"marker-fail-no-ttl", setnxKey, setnxKS, func(r *rig) { r.setMarker(setnxKey, "processing", 0) }, Request{Kind: write.KindFail}},
		{"lone-lock-fail", lockKey, lockKS, func(r *rig) { r.setMarker(lockKey, "1700000000.123", time.Hour) }, Request{Kind: write.KindFail}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := sharedRig(t)
			// A profile with audit_payloads: true. Without it, a record
			// holding a response body (a failed or reconciled one: the
			// undo's own before-image) is announced not undoable, so an
			// undo of an undo would be refused (TestUndoOverCap...).
			r.ex.Audit.Values = audit.Values{Payloads: true}
			tc.seed(r)
			before := r.image(tc.key)
			req := tc.req
			req.Keyspace, req.Key = tc.ks(t), tc.key
			p := r.plan(req)
			if p.Refused != "" || p.UndoNote != "" {
				t.Fatalf("plan: refused %q, undo note %q", p.Refused, p.UndoNote)
			}
			res := r.apply(p)
			if res.Outcome != write.Applied || res.AuditID == "" {
				t.Fatalf("write: %+v", res)
			}
			in, out := r.lastWrite(tc.key, write.Applied)
			if in.Image == nil || !*in.Undoable || out.AfterVersion == nil {
				t.Fatalf("intent without a before-image or outcome without the after-state: %+v / %+v", in, out)
			}
			written := r.image(tc.key)
			if written == before {
				t.Fatal("the write changed nothing: the test proves nothing")
			}
			kss := []*inspect.Keyspace{req.Keyspace}
			plans, rs := r.undo(kss, res.AuditID)
			if rs[0].Outcome != write.Applied {
				t.Fatalf("undo: %+v (plan refused %q)", rs[0], plans[0].Refused)
			}
			r.sameImage(tc.key, before)
			uin, _ := r.lastWrite(tc.key, write.Applied)
			if uin.Action != write.KindUndo || uin.Reverts != in.ID || uin.Image == nil {
				t.Fatalf("undo not audited as an undo of %s: %+v", in.ID, uin)
			}
			if by := IndexUndo(r.entries()).RevertedBy(in.ID); by != uin.ID {
				t.Fatalf("reverted by %q, want %q", by, uin.ID)
			}

			// The undo itself can be undone: the write's result is back.
			_, rs = r.undo(kss, uin.ID)
			if rs[0].Outcome != write.Applied {
				t.Fatalf("undo of the undo: %+v", rs[0])
			}
			r.sameImage(tc.key, written)
			if by := IndexUndo(r.entries()).RevertedBy(in.ID); by != "" {
				t.Fatalf("the write's undo was undone, yet it reads reverted by %q", by)
			}
		})
	}
	logImages(t)
}

// undone seeds a processing record, force-fails it and returns the audit
// id, the keyspace, and the record as the write left it.
func failed(t *testing.T, r *rig) (string, []*inspect.Keyspace) {
	t.Helper()
	r.reserveAtlas(atlasKey, fp("body-1"))
	ks := inspecttest.Keyspace(t, "atlasmart")
	res := r.apply(r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey}))
	if res.Outcome != write.Applied {
		t.Fatalf("fail: %+v", res)
	}
	return res.AuditID, []*inspect.Keyspace{ks}
}

// An undo refuses, as a conflict that names what changed, once the
// application has touched the record since the write; nothing is written.
func TestUndoConflictsAfterApplicationChange(t *testing.T) {
	ctx := t.Context()
	cases := []struct {
		name   string
		change func(r *rig)
		want   string
	}{
		{"field", func(r *rig) { r.c.HSet(ctx, atlasKey, "response", "from the app") }, "fields changed: response"},
		{"completed", func(r *rig) {
			r.c.HSet(ctx, atlasKey, "state", "SUCCEEDED")
		}, `state "FAILED" → "SUCCEEDED"`},
		{"ttl", func(r *rig) { r.c.Expire(ctx, atlasKey, time.Hour) }, "its TTL changed"},
		{"deleted", func(r *rig) { r.c.Del(ctx, atlasKey) }, "the key is gone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := sharedRig(t)
			id, kss := failed(t, r)
			tc.change(r)
			now := r.image(atlasKey)
			plans, rs := r.undo(kss, id)
			if rs[0].Outcome != write.Conflict || !strings.Contains(rs[0].Detail, tc.want) {
				t.Fatalf("undo after %s: %+v (want a conflict naming %q; plan %q)", tc.name, rs[0], tc.want, plans[0].Refused)
			}
			if r.image(atlasKey) != now {
				t.Fatal("a refused undo changed the record")
			}
			if e := r.lastRefusal(atlasKey, write.Conflict); e.Reverts != id {
				t.Fatalf("the refused undo is not audited against %s: %+v", id, e)
			}
		})
	}

	// A deleted record re-created by the application is not overwritten.
	t.Run("re-created", func(t *testing.T) {
		r := sharedRig(t)
		ks := inspecttest.Keyspace(t, "atlasmart")
		r.reserveAtlas(atlasKey, fp("body-1"))
		res := r.apply(r.plan(Request{Kind: write.KindExpire, Keyspace: ks, Key: atlasKey, TTL: TTL{Mode: TTLSet}}))
		if res.Outcome != write.Applied {
			t.Fatalf("delete: %+v", res)
		}
		r.reserveAtlas(atlasKey, fp("body-2"))
		now := r.image(atlasKey)
		_, rs := r.undo([]*inspect.Keyspace{ks}, res.AuditID)
		if rs[0].Outcome != write.Conflict || !strings.Contains(rs[0].Detail, "re-created") {
			t.Fatalf("undo of a delete over a re-created record: %+v", rs[0])
		}
		if r.image(atlasKey) != now {
			t.Fatal("the re-created record was overwritten")
		}
	})

	// The script checks too: a change between the undo's plan and its
	// write is caught by the compare-and-set itself.
	t.Run("between-plan-and-write", func(t *testing.T) {
		r := sharedRig(t)
		id, kss := failed(t, r)
		x := IndexUndo(r.entries())
		tg, _ := x.Lookup(id)
		plans, err := r.ex.PlanUndo(ctx, x, []UndoTarget{tg}, kss, "test: undo")
		if err != nil || plans[0].Refused != "" {
			t.Fatalf("plan: %v %+v", err, plans)
		}
		r.c.HSet(ctx, atlasKey, "trace", "late")
		now := r.image(atlasKey)
		if res := r.apply(plans[0]); res.Outcome != write.Conflict {
			t.Fatalf("undo over a late change: %+v", res)
		}
		if r.image(atlasKey) != now {
			t.Fatal("the late change was overwritten")
		}
	})
}

// A write whose before-image the log cannot hold says so before it runs
// (the plan's UndoNote, which both faces print), and its undo refuses with
// the reason.
func TestUndoOverCapAnnouncedAndRefused(t *testing.T) {
	ctx := t.Context()
	ks := inspecttest.Keyspace(t, "atlasmart")
	cases := []struct {
		name   string
		values audit.Values
		size   int
		want   string
	}{
		{"value-over-audit_max_value", audit.Values{}, 60_000, "note (60000 bytes)"},
		{"image-over-cap", audit.Values{MaxValue: 1 << 20}, MaxImage + 10, "over the 262144-byte before-image cap"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := sharedRig(t)
			r.ex.Audit.Values = tc.values
			r.reserveAtlas(atlasKey, fp("body-1"))
			noise := make([]byte, tc.size) // incompressible: DUMP compresses repeats
			_, _ = rand.Read(noise)
			r.c.HSet(ctx, atlasKey, "note", noise)
			p := r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey})
			if !strings.Contains(p.UndoNote, tc.want) {
				t.Fatalf("the plan does not announce it will not be undoable (%q): %q", tc.want, p.UndoNote)
			}
			res := r.apply(p)
			if !strings.Contains(res.UndoNote, tc.want) { // -o json says it too
				t.Fatalf("result without the undo note: %+v", res)
			}
			in, _ := r.lastWrite(atlasKey, write.Applied)
			if *in.Undoable || in.Image != nil || !strings.Contains(in.UndoNote, tc.want) {
				t.Fatalf("intent: undoable %v, image %v, note %q", *in.Undoable, in.Image != nil, in.UndoNote)
			}
			now := r.image(atlasKey)
			_, rs := r.undo([]*inspect.Keyspace{ks}, res.AuditID)
			if rs[0].Outcome != write.Refused || !strings.Contains(rs[0].Detail, tc.want) {
				t.Fatalf("undo of a write without a before-image: %+v", rs[0])
			}
			if r.image(atlasKey) != now {
				t.Fatal("a refused undo changed the record")
			}
		})
	}
}

// Undo --since: every write since a time, newest first, so two writes of
// one record chain back to the record as it was.
func TestUndoSinceChains(t *testing.T) {
	r := sharedRig(t)
	ks := inspecttest.Keyspace(t, "atlasmart")
	r.reserveAtlas(atlasKey, fp("body-1"))
	r.setMarker(setnxKey, "processing", time.Hour)
	before, beforeMarker := r.image(atlasKey), r.image(setnxKey)
	since := time.Now().Add(-time.Second)
	for _, req := range []Request{
		{Kind: write.KindExpire, Keyspace: ks, Key: atlasKey, TTL: TTL{Mode: TTLSet, D: time.Hour}},
		{Kind: write.KindFail, Keyspace: ks, Key: atlasKey},
		{Kind: write.KindExpire, Keyspace: inspecttest.Keyspace(t, "setnx"), Key: setnxKey, TTL: TTL{Mode: TTLSet}},
	} {
		if res := r.apply(r.plan(req)); res.Outcome != write.Applied {
			t.Fatalf("%s: %+v", req.Kind, res)
		}
	}
	x := IndexUndo(r.entries())
	ts := x.Since(since)
	if len(ts) != 3 || ts[0].Intent.Key != setnxKey || ts[2].Intent.Action != write.KindExpire {
		t.Fatalf("since: %d writes, newest first expected", len(ts))
	}
	_, rs := r.undoTargets(x, []*inspect.Keyspace{ks, inspecttest.Keyspace(t, "setnx")}, ts)
	for _, res := range rs {
		if res.Outcome != write.Applied {
			t.Fatalf("undo --since: %+v", rs)
		}
	}
	r.sameImage(atlasKey, before)
	r.sameImage(setnxKey, beforeMarker)
	if left := IndexUndo(r.entries()).Since(since); len(left) != 0 {
		t.Fatalf("after undoing everything since, %d writes still stand", len(left))
	}
	logImages(t)
}

// Hash-field TTLs (Redis 7.4+) are part of the record: a write that moves
// them is undone with each field's own expiry back, byte-identically.
func TestUndoRestoresFieldTTLs(t *testing.T) {
	r := sharedRig(t)
	redistest.RequireFieldTTL(t, r.c)
	ctx := t.Context()
	ks := inspecttest.Keyspace(t, "atlasmart")
	r.reserveAtlas(atlasKey, fp("body-1"))
	r.c.Persist(ctx, atlasKey)
	r.c.Do(ctx, "hpexpire", atlasKey, 600000, "fields", 2, "fingerprint", "state")
	before := r.image(atlasKey)
	fieldAt := func() []int64 {
		v, err := r.c.Do(ctx, "hpexpiretime", atlasKey, "fields", 2, "fingerprint", "state").Int64Slice()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	at := fieldAt()
	res := r.apply(r.plan(Request{Kind: write.KindExpire, Keyspace: ks, Key: atlasKey, TTL: TTL{Mode: TTLSet, D: time.Hour}}))
	if res.Outcome != write.Applied {
		t.Fatalf("expire: %+v", res)
	}
	if moved := fieldAt(); moved[0] == at[0] {
		t.Fatal("the expire did not move the field TTLs: the test proves nothing")
	}
	if _, rs := r.undo([]*inspect.Keyspace{ks}, res.AuditID); rs[0].Outcome != write.Applied {
		t.Fatalf("undo: %+v", rs[0])
	}
	r.sameImage(atlasKey, before)
	if got := fieldAt(); got[0] != at[0] || got[1] != at[1] {
		t.Fatalf("field expiries after undo %v, before the write %v", got, at)
	}
	logImages(t)
}

// logImages reports the undos checked so far in this package.
func logImages(t *testing.T) {
	t.Logf("undos checked: %d byte-identical (DUMP and expiry), %d hashtable-encoded (same fields, values, encoding and expiry; DUMP field order is the server's)",
		byteIdentical.Load(), sameContent.Load())
}
