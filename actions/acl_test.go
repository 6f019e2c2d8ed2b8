package actions

import (
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// readRights is the inspection role: every read idemctl issues, no scripts.
var readRights = []string{"-@all", "+@read", "+ping", "+time", "+memory|usage", "+object|encoding"}

// scriptRights are what running the CAS scripts takes.
var scriptRights = []string{"+evalsha", "+eval", "+script|load"}

// writeRights are the commands the CAS scripts call: Redis checks them
// against the user running the script.
var writeRights = []string{"+hset", "+set", "+del", "+pexpire", "+persist"}

// aclUser creates a user with these rights on the server and returns an
// executor logged in as that user.
func aclUser(t *testing.T, r *rig, name string, rights ...[]string) *Executor {
	t.Helper()
	ctx := t.Context()
	rules := []string{"reset", "on", ">pw-" + name, "~*", "resetchannels"}
	for _, rs := range rights {
		rules = append(rules, rs...)
	}
	redistest.ACLUser(t, r.c, name, rules...)
	c := testClient(r.srv.Addr, name, "pw-"+name, 5*time.Second, -1)
	t.Cleanup(func() { c.Close() })
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("%s cannot connect: %v", name, err)
	}
	id := r.ex.Identity
	id.RedisUser = name
	return &Executor{Client: c, Policy: &Policy{Writes: true}, Audit: r.ex.Audit, Identity: id}
}

func TestACLReadOnlyUserIsRefused(t *testing.T) {
	r := sharedRig(t)
	ex := aclUser(t, r, "idem-reader", readRights)
	ctx := t.Context()
	r.reserveAtlas(atlasKey, fp("body-1"))
	before, ttl := r.raw(atlasKey), r.pttl(atlasKey)
	ks := inspecttest.Keyspace(t, "atlasmart")
	for _, req := range []Request{
		{Kind: write.KindFail, Reason: "stuck"},
		{Kind: write.KindExpire, Reason: "stuck", TTL: TTL{Mode: TTLSet, D: time.Hour}},
	} {
		req.Keyspace, req.Key = ks, atlasKey
		p, err := ex.Plan(ctx, req) // a reader can plan (a dry run): it only reads
		if err != nil || p.Refused != "" || len(p.Changes) == 0 {
			t.Fatalf("plan as reader: %v %q %v", err, p.Refused, p.Changes)
		}
		res := ex.Apply(ctx, p)
		if res.Outcome != write.Refused || !strings.Contains(res.Detail, "NOPERM") || !strings.Contains(res.Detail, "+evalsha") ||
			!strings.Contains(res.Detail, `"idem-reader"`) {
			t.Fatalf("apply as reader: %+v", res)
		}
		r.lastRefusal(atlasKey, write.Refused)
	}
	if !sameMap(before, r.raw(atlasKey)) || r.pttl(atlasKey) > ttl {
		t.Fatal("the reader changed the record")
	}
}

// Scripts run with the caller's ACL: scripting rights alone cannot write.
// Redis stops the script at its first write, before anything changed, and
// the operator is told which rights are missing.
func TestACLScriptingWithoutWriteCommands(t *testing.T) {
	r := sharedRig(t)
	ex := aclUser(t, r, "idem-scripter", readRights, scriptRights)
	ctx := t.Context()
	r.reserveAtlas(atlasKey, fp("body-1"))
	before := r.raw(atlasKey)
	p, err := ex.Plan(ctx, Request{Kind: write.KindFail, Keyspace: inspecttest.Keyspace(t, "atlasmart"), Key: atlasKey, Reason: "stuck"})
	if err != nil {
		t.Fatal(err)
	}
	res := ex.Apply(ctx, p)
	if res.Outcome != write.Refused || !strings.Contains(res.Detail, "+hset") {
		t.Fatalf("apply as scripter: %+v", res)
	}
	r.unchangedAfter(before, atlasKey, write.Refused)
}

// A user allowed some of the script's commands but not all: the script
// fails half-way and Redis does not roll back. The result must say so, never
// "nothing written".
func TestACLScriptFailsHalfway(t *testing.T) {
	r := sharedRig(t)
	ex := aclUser(t, r, "idem-halfway", readRights, scriptRights, []string{"+hset"}) // no +pexpire
	ctx := t.Context()
	r.reserveAtlas(atlasKey, fp("body-1"))
	p, err := ex.Plan(ctx, Request{Kind: write.KindFail, Keyspace: inspecttest.Keyspace(t, "atlasmart"), Key: atlasKey, Reason: "stuck"})
	if err != nil {
		t.Fatal(err)
	}
	res := ex.Apply(ctx, p)
	if got := r.raw(atlasKey)["state"]; got != "FAILED" {
		t.Fatalf("expected Redis to keep the HSET of the failed script, state %q", got)
	}
	if res.Outcome == write.Failed || res.Outcome == write.Refused || res.Outcome == write.NotApplied || !strings.Contains(res.Detail, "re-read") {
		t.Fatalf("a half-applied script reported as %+v", res)
	}
	_, out := r.lastWrite(atlasKey, res.Outcome)
	if out.Detail != res.Detail {
		t.Fatalf("audited detail %q, result %q", out.Detail, res.Detail)
	}
}

// The operator role: the read rights, the scripting commands, and the
// commands the scripts run. Every action applies on every format.
func TestACLOperatorWrites(t *testing.T) {
	r := sharedRig(t)
	ex := aclUser(t, r, "idem-operator", readRights, scriptRights, writeRights)
	ctx := t.Context()
	// A fresh script cache: the operator's first EVALSHA meets NOSCRIPT and
	// falls back to EVAL, which the role allows too.
	r.c.ScriptFlush(ctx)
	for _, sc := range schemaCases {
		for _, req := range []Request{
			{Kind: write.KindExpire, TTL: TTL{Mode: TTLSet, D: time.Hour}},
			{Kind: write.KindFail},
			{Kind: write.KindReconcile, Ref: "ord-1"},
			{Kind: write.KindExpire, TTL: TTL{Mode: TTLSet}},
		} {
			r.c.Del(ctx, sc.key)
			sc.processing(r)
			req.Keyspace, req.Key, req.Reason = sc.ks(t), sc.key, "operator role"
			p, err := ex.Plan(ctx, req)
			if err != nil || p.Refused != "" {
				t.Fatalf("%s %s: plan %v %q", sc.name, req.Kind, err, p.Refused)
			}
			if res := ex.Apply(ctx, p); res.Outcome != write.Applied {
				t.Fatalf("%s %s as operator: %+v", sc.name, req.Kind, res)
			}
			r.lastWrite(sc.key, write.Applied)
		}
	}
}

// An operator the ACL does not let DUMP still writes, and is told before
// the write runs that it will not be undoable, and why.
func TestACLWithoutDumpWritesAnnouncedNotUndoable(t *testing.T) {
	r := sharedRig(t)
	ex := aclUser(t, r, "idem-nodump", readRights, scriptRights, writeRights, []string{"-dump"})
	ctx := t.Context()
	r.reserveAtlas(atlasKey, fp("body-1"))
	p, err := ex.Plan(ctx, Request{Kind: write.KindFail, Reason: "stuck", Keyspace: inspecttest.Keyspace(t, "atlasmart"), Key: atlasKey})
	if err != nil || p.Refused != "" || !strings.Contains(p.UndoNote, "DUMP") {
		t.Fatalf("plan without +dump: %v %q, undo note %q", err, p.Refused, p.UndoNote)
	}
	if res := ex.Apply(ctx, p); res.Outcome != write.Applied {
		t.Fatalf("apply without +dump: %+v", res)
	}
	in, _ := r.lastWrite(atlasKey, write.Applied)
	t.Logf("undo note: %s", in.UndoNote)
	if *in.Undoable || in.Image != nil || !strings.Contains(in.UndoNote, "DUMP") {
		t.Fatalf("intent: undoable %v, note %q", *in.Undoable, in.UndoNote)
	}
}
