package actions

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
)

// schemaCase is one built-in or custom record format with a processing and
// a succeeded record to act on.
type schemaCase struct {
	name                    string
	key                     string
	ks                      func(t testing.TB) *inspect.Keyspace
	processing, succeeded   func(r *rig)
	processingState, doneSt string // stored state values
}

var schemaCases = []schemaCase{
	{
		name: "atlasmart", key: atlasKey,
		ks:         func(t testing.TB) *inspect.Keyspace { return inspecttest.Keyspace(t, "atlasmart") },
		processing: func(r *rig) { r.reserveAtlas(atlasKey, fp("body-1")) },
		succeeded: func(r *rig) {
			r.reserveAtlas(atlasKey, fp("body-1"))
			r.completeAtlas(atlasKey, fp("body-1"), 201, `{"order_id":"ord-1"}`)
		},
		processingState: "PROCESSING", doneSt: "SUCCEEDED",
	},
	{
		name: "setnx", key: setnxKey,
		ks:              func(t testing.TB) *inspect.Keyspace { return inspecttest.Keyspace(t, "setnx") },
		processing:      func(r *rig) { r.setMarker(setnxKey, "processing", time.Hour) },
		succeeded:       func(r *rig) { r.setMarker(setnxKey, `{"order_id":"ord-1","total_cents":1200}`, time.Hour) },
		processingState: "processing", doneSt: `{"order_id":"ord-1","total_cents":1200}`,
	},
	{
		name: "json", key: jsonKey,
		ks:              func(t testing.TB) *inspect.Keyspace { return inspecttest.Schema(t, "jsonidem", jsonSchemaYAML) },
		processing:      func(r *rig) { r.setMarker(jsonKey, jsonProcessing, 120*time.Second) },
		succeeded:       func(r *rig) { r.setMarker(jsonKey, jsonComplete, 120*time.Second) },
		processingState: "IN_PROGRESS", doneSt: "COMPLETE",
	},
}

// Expire changes the TTL and nothing else: the stored bytes are identical.
func TestExpireChangesOnlyTheTTL(t *testing.T) {
	for _, sc := range schemaCases {
		for _, which := range []string{"processing", "succeeded"} {
			t.Run(sc.name+"/"+which, func(t *testing.T) {
				r := sharedRig(t)
				seed, state := sc.processing, sc.processingState
				if which == "succeeded" {
					seed, state = sc.succeeded, sc.doneSt
				}
				seed(r)
				before := r.raw(sc.key)
				p := r.plan(Request{Kind: write.KindExpire, Keyspace: sc.ks(t), Key: sc.key, TTL: TTL{Mode: TTLSet, D: 10 * time.Minute}})
				if p.Refused != "" || p.Delete {
					t.Fatalf("plan: refused %q, delete %v", p.Refused, p.Delete)
				}
				if len(p.Changes) != 1 || p.Changes[0].Field != "(ttl)" {
					t.Fatalf("an expire must plan a TTL change only, got %+v", p.Changes)
				}
				res := r.apply(p)
				if res.Outcome != write.Applied || res.ServerMs == 0 {
					t.Fatalf("expire: %+v", res)
				}
				if after := r.raw(sc.key); !sameMap(before, after) {
					t.Fatalf("expire rewrote the record:\nbefore %q\nafter  %q", before, after)
				}
				if d := r.pttl(sc.key); d > 10*time.Minute || d < 10*time.Minute-10*time.Second {
					t.Fatalf("TTL %v, want 10m", d)
				}
				intent, _ := r.lastWrite(sc.key, write.Applied)
				if intent.Before.State != state || intent.After.TTLms != 600000 || intent.Action != write.KindExpire {
					t.Fatalf("intent before %+v after %+v", intent.Before, intent.After)
				}
			})
		}
	}
}

// Expire with TTL 0 deletes the record now.
func TestExpireZeroDeletes(t *testing.T) {
	for _, sc := range schemaCases {
		t.Run(sc.name, func(t *testing.T) {
			r := sharedRig(t)
			sc.processing(r)
			p := r.plan(Request{Kind: write.KindExpire, Keyspace: sc.ks(t), Key: sc.key, TTL: TTL{Mode: TTLSet, D: 0}})
			if !p.Delete || p.After.Exists {
				t.Fatalf("TTL 0 must plan a delete: %+v", p.After)
			}
			res := r.apply(p)
			if res.Outcome != write.Applied {
				t.Fatalf("expire 0: %+v", res)
			}
			if n := r.c.Exists(t.Context(), sc.key).Val(); n != 0 {
				t.Fatal("the record still exists")
			}
			intent, _ := r.lastWrite(sc.key, write.Applied)
			if !intent.Before.Exists || intent.After.Exists {
				t.Fatalf("intent snapshots: before %+v after %+v", intent.Before, intent.After)
			}
		})
	}
}

// Force-fail a processing hash: exactly the planned fields, the server's
// time, the operator, the reason, and the retention TTL.
func TestFailHash(t *testing.T) {
	ks := inspecttest.Keyspace(t, "atlasmart")
	spec := ks.Schema.Actions.Fail
	for _, tc := range []struct {
		name   string
		ttl    TTL
		status int
		resp   *string
	}{
		{name: "defaults"},
		{name: "keep-ttl", ttl: TTL{Mode: TTLKeep}},
		{name: "explicit", ttl: TTL{Mode: TTLSet, D: 90 * time.Second}, status: 500, resp: ptr("upstream exploded")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sharedRig(t)
			r.reserveAtlas(atlasKey, fp("body-1"))
			ttlBefore := r.pttl(atlasKey)
			p := r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey, Reason: "worker crashed (INC-7)", TTL: tc.ttl, Status: tc.status, Response: tc.resp})
			if p.Refused != "" {
				t.Fatalf("refused: %s", p.Refused)
			}
			res, t0, t1 := r.applyTimed(p)
			got := r.raw(atlasKey)
			wantStatus, wantResp := strconv.Itoa(spec.Status), spec.Response
			if tc.status != 0 {
				wantStatus = strconv.Itoa(tc.status)
			}
			if tc.resp != nil {
				wantResp = *tc.resp
			}
			want := map[string]string{"fingerprint": fp("body-1"), "state": "FAILED", "status": wantStatus,
				"response": wantResp, "failed_by": testUser, "reason": "worker crashed (INC-7)", "failed_at": got["failed_at"]}
			if !sameMap(got, want) {
				t.Fatalf("record after fail:\n got %q\nwant %q", got, want)
			}
			at, err := strconv.ParseInt(got["failed_at"], 10, 64)
			if err != nil || at < t0 || at > t1 || at != res.ServerMs {
				t.Fatalf("failed_at %q (server_ms %d) is not the server's time in [%d, %d]", got["failed_at"], res.ServerMs, t0, t1)
			}
			// The plan showed exactly what was written.
			for f, v := range p.After.Fields {
				if f != "failed_at" && got[f] != v {
					t.Errorf("planned %s=%q, written %q", f, v, got[f])
				}
			}
			if p.After.Fields["failed_at"] != "(server time, ms)" || p.After.State != "FAILED" || p.After.Canonical != "failed" {
				t.Errorf("planned after: %+v", p.After)
			}
			ttl := r.pttl(atlasKey)
			switch tc.ttl.Mode {
			case TTLKeep:
				if ttl > ttlBefore || ttl < ttlBefore-10*time.Second {
					t.Fatalf("TTL %v, want the kept %v", ttl, ttlBefore)
				}
			case TTLSet:
				if ttl > tc.ttl.D || ttl < tc.ttl.D-10*time.Second {
					t.Fatalf("TTL %v, want %v", ttl, tc.ttl.D)
				}
			default:
				if ttl > ks.Retention || ttl < ks.Retention-10*time.Second {
					t.Fatalf("TTL %v, want the retention %v", ttl, ks.Retention)
				}
			}
			intent, out := r.lastWrite(atlasKey, write.Applied)
			if intent.Before.State != "PROCESSING" || intent.Before.Fingerprint != fp("body-1") || intent.After.State != "FAILED" ||
				out.ServerMs != res.ServerMs || intent.Reason != "worker crashed (INC-7)" {
				t.Fatalf("audit: intent %+v / outcome %+v", intent, out)
			}
		})
	}
}

// The JSON format goes through the cjson script: dot paths, numbers stay
// numbers, a JSON response stays structured, and the rest of the document
// survives.
func TestFailJSON(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep=%v", keep), func(t *testing.T) {
			r := sharedRig(t)
			ks := inspecttest.Schema(t, "jsonidem", jsonSchemaYAML)
			r.setMarker(jsonKey, jsonProcessing, 120*time.Second)
			req := Request{Kind: write.KindFail, Keyspace: ks, Key: jsonKey, Reason: "stuck"}
			if keep {
				req.TTL = TTL{Mode: TTLKeep}
			}
			p := r.plan(req)
			res, t0, t1 := r.applyTimed(p)
			doc := r.jsonDoc(jsonKey)
			resp, _ := doc["response"].(map[string]any)
			meta, _ := doc["meta"].(map[string]any)
			if doc["status"] != "FAILED" || doc["fp"] != "fp-json-1" || doc["failed_by"] != testUser || doc["reason"] != "stuck" ||
				doc["created_at"] != json.Number("1700000000123") || resp == nil || resp["status_code"] != json.Number("503") ||
				meta == nil || meta["tenant"] != "t-9" || fmt.Sprint(meta["tags"]) != "[a b]" {
				t.Fatalf("document after fail: %v", doc)
			}
			body, _ := resp["body"].(map[string]any)
			if body == nil || body["error"] != "interrupted" || body["retryable"] != true {
				t.Fatalf("response.body should be the structured JSON response: %#v", resp["body"])
			}
			at, err := doc["failed_at"].(json.Number).Int64()
			if err != nil || at < t0 || at > t1 || at != res.ServerMs {
				t.Fatalf("failed_at %v not in [%d, %d]", doc["failed_at"], t0, t1)
			}
			ttl := r.pttl(jsonKey)
			if keep && (ttl > 120*time.Second || ttl < 100*time.Second) || !keep && (ttl > ks.Retention || ttl < ks.Retention-10*time.Second) {
				t.Fatalf("TTL %v (keep=%v)", ttl, keep)
			}
			r.lastWrite(jsonKey, write.Applied)
		})
	}
}

// Reconcile a processing (or failed) hash: succeeded with the reference,
// who, when, why, and the schema's default status and response.
func TestReconcileHash(t *testing.T) {
	ks := inspecttest.Keyspace(t, "atlasmart")
	for _, from := range []string{"processing", "failed"} {
		t.Run(from, func(t *testing.T) {
			r := sharedRig(t)
			r.reserveAtlas(atlasKey, fp("body-1"))
			if from == "failed" {
				if res := r.apply(r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey})); res.Outcome != write.Applied {
					t.Fatalf("fail first: %+v", res)
				}
			}
			p := r.plan(Request{Kind: write.KindReconcile, Keyspace: ks, Key: atlasKey, Ref: "ord-42", Reason: "order exists in OMS"})
			_, t0, t1 := r.applyTimed(p)
			got := r.raw(atlasKey)
			if got["state"] != "SUCCEEDED" || got["status"] != "200" || got["response"] != `{"reconciled":true,"ref":"ord-42"}` ||
				got["reconciled_ref"] != "ord-42" || got["reconciled_by"] != testUser || got["reason"] != "order exists in OMS" ||
				got["fingerprint"] != fp("body-1") {
				t.Fatalf("record after reconcile: %q", got)
			}
			at, _ := strconv.ParseInt(got["reconciled_at"], 10, 64)
			if at < t0 || at > t1 {
				t.Fatalf("reconciled_at %q not in [%d, %d]", got["reconciled_at"], t0, t1)
			}
			if d := r.pttl(atlasKey); d > ks.Retention || d < ks.Retention-10*time.Second {
				t.Fatalf("TTL %v", d)
			}
			intent, _ := r.lastWrite(atlasKey, write.Applied)
			if intent.After.State != "SUCCEEDED" || intent.After.Fields["reconciled_ref"] != "ord-42" {
				t.Fatalf("intent after: %+v", intent.After)
			}
		})
	}
}

func TestReconcileJSON(t *testing.T) {
	r := sharedRig(t)
	ks := inspecttest.Schema(t, "jsonidem", jsonSchemaYAML)
	r.setMarker(jsonKey, jsonProcessing, 120*time.Second)
	res := r.apply(r.plan(Request{Kind: write.KindReconcile, Keyspace: ks, Key: jsonKey, Ref: "ord-42"}))
	if res.Outcome != write.Applied {
		t.Fatalf("reconcile: %+v", res)
	}
	doc := r.jsonDoc(jsonKey)
	resp, _ := doc["response"].(map[string]any)
	body, _ := resp["body"].(map[string]any)
	if doc["status"] != "COMPLETE" || doc["ref"] != "ord-42" || doc["fp"] != "fp-json-1" || body == nil ||
		body["reconciled"] != true || body["ref"] != "ord-42" || doc["created_at"] != json.Number("1700000000123") {
		t.Fatalf("document after reconcile: %v", doc)
	}
	r.lastWrite(jsonKey, write.Applied)
}

// A bare marker has no failed state: force-fail deletes it so the next retry
// runs; reconcile writes "done", or the response given.
func TestSetnxFailAndReconcile(t *testing.T) {
	ks := inspecttest.Keyspace(t, "setnx")
	t.Run("fail-deletes", func(t *testing.T) {
		r := sharedRig(t)
		r.setMarker(setnxKey, "processing", time.Hour)
		p := r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: setnxKey})
		if !p.Delete {
			t.Fatalf("force-fail of a marker must delete it: %+v", p.Changes)
		}
		if res := r.apply(p); res.Outcome != write.Applied {
			t.Fatalf("fail: %+v", res)
		}
		if r.c.Exists(t.Context(), setnxKey).Val() != 0 {
			t.Fatal("the marker still exists")
		}
		r.lastWrite(setnxKey, write.Applied)
	})
	for _, resp := range []*string{nil, ptr(`{"order_id":"ord-9","total_cents":1200}`)} {
		t.Run(fmt.Sprintf("reconcile-response=%v", resp != nil), func(t *testing.T) {
			r := sharedRig(t)
			r.setMarker(setnxKey, "1", 0) // a marker set without EX: blocked forever
			res := r.apply(r.plan(Request{Kind: write.KindReconcile, Keyspace: ks, Key: setnxKey, Response: resp}))
			if res.Outcome != write.Applied {
				t.Fatalf("reconcile: %+v", res)
			}
			want := "done"
			if resp != nil {
				want = *resp
			}
			if got := r.raw(setnxKey)[""]; got != want {
				t.Fatalf("marker %q, want %q", got, want)
			}
			if d := r.pttl(setnxKey); d > ks.Retention || d < ks.Retention-10*time.Second {
				t.Fatalf("TTL %v, want the retention %v", d, ks.Retention)
			}
			r.lastWrite(setnxKey, write.Applied)
		})
	}
}

// Refusals write nothing, send nothing, and audit nothing.
func TestRefusals(t *testing.T) {
	refuseYAML := `
container: hash
state: {field: state, map: {PROCESSING: processing, SUCCEEDED: succeeded}}
fingerprint: fingerprint
defaults: {match: "atlasmart:*", retention: 300s}
actions:
  fail: {mode: refuse, why: "the application never reads a failed state"}
`
	ctx := t.Context()
	cases := []struct {
		name, key string
		ks        func(t testing.TB) *inspect.Keyspace
		seed      func(r *rig)
		req       Request
		outcome   write.Outcome
		detail    string
	}{
		{"fail-succeeded-hash", atlasKey, schemaCases[0].ks, schemaCases[0].succeeded, Request{Kind: write.KindFail}, write.Refused, "processing records"},
		{"fail-succeeded-marker", setnxKey, schemaCases[1].ks, schemaCases[1].succeeded, Request{Kind: write.KindFail}, write.Refused, "processing records"},
		{"fail-succeeded-json", jsonKey, schemaCases[2].ks, schemaCases[2].succeeded, Request{Kind: write.KindFail}, write.Refused, "processing records"},
		{"reconcile-succeeded", atlasKey, schemaCases[0].ks, schemaCases[0].succeeded, Request{Kind: write.KindReconcile, Ref: "x"}, write.Refused, "already succeeded"},
		{"reconcile-no-ref-hash", atlasKey, schemaCases[0].ks, schemaCases[0].processing, Request{Kind: write.KindReconcile}, write.Refused, "--ref"},
		{"reconcile-no-ref-json", jsonKey, schemaCases[2].ks, schemaCases[2].processing, Request{Kind: write.KindReconcile}, write.Refused, "--ref"},
		{"schema-refuses", atlasKey, func(t testing.TB) *inspect.Keyspace { return inspecttest.Schema(t, "refusing", refuseYAML) },
			schemaCases[0].processing, Request{Kind: write.KindFail}, write.Refused, "never reads a failed state"},
		{"wrong-type-list", atlasKey, schemaCases[0].ks, func(r *rig) { r.c.RPush(ctx, atlasKey, "PROCESSING") }, Request{Kind: write.KindFail}, write.Refused, "type (list)"},
		{"wrong-type-hash-for-marker", setnxKey, schemaCases[1].ks, func(r *rig) { r.c.HSet(ctx, setnxKey, "state", "processing") }, Request{Kind: write.KindReconcile}, write.Refused, "type (hash)"},
		{"wrong-type-hash-for-json", jsonKey, schemaCases[2].ks, func(r *rig) { r.c.HSet(ctx, jsonKey, "status", "IN_PROGRESS") }, Request{Kind: write.KindExpire, TTL: TTL{Mode: TTLSet, D: time.Minute}}, write.Refused, "type (hash)"},
		{"expire-without-ttl", atlasKey, schemaCases[0].ks, schemaCases[0].processing, Request{Kind: write.KindExpire}, write.Refused, "needs a TTL"},
		{"absent", atlasKey, schemaCases[0].ks, func(*rig) {}, Request{Kind: write.KindFail}, write.NotFound, "does not exist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := sharedRig(t)
			tc.seed(r)
			before, ttl := r.raw(tc.key), r.pttl(tc.key)
			req := tc.req
			req.Keyspace, req.Key = tc.ks(t), tc.key
			p := r.plan(req)
			if p.Refused == "" || p.Outcome != tc.outcome || !strings.Contains(p.Refused, tc.detail) {
				t.Fatalf("plan: outcome %q refused %q, want %q containing %q", p.Outcome, p.Refused, tc.outcome, tc.detail)
			}
			res := r.apply(p)
			if res.Outcome != tc.outcome || res.Detail != p.Refused {
				t.Fatalf("apply: %+v", res)
			}
			if after := r.raw(tc.key); !sameMap(before, after) || r.pttl(tc.key) > ttl {
				t.Fatalf("a refused write changed the record: %q -> %q", before, after)
			}
			if es := r.entries(); len(es) != 0 {
				t.Fatalf("a refused write was audited as attempted: %+v", es)
			}
		})
	}
	t.Run("no-reason", func(t *testing.T) {
		r := sharedRig(t)
		r.reserveAtlas(atlasKey, fp("b"))
		for _, reason := range []string{"", "  \t"} {
			_, err := BuildPlan(ctx, r.c, Request{Kind: write.KindFail, Keyspace: inspecttest.Keyspace(t, "atlasmart"), Key: atlasKey, Reason: reason})
			if err == nil || !strings.Contains(err.Error(), "reason") {
				t.Fatalf("reason %q: err %v", reason, err)
			}
		}
	})
}

func ptr[T any](v T) *T { return &v }

// The JSON script re-encodes the whole document with the server's cjson:
// a record holding values cjson would rewrite (rounded numbers, [] → {}) is
// refused rather than silently damaged. An expire does not re-encode.
func TestJSONWriteNeverCorruptsTheDocument(t *testing.T) {
	ks := inspecttest.Schema(t, "jsonidem", jsonSchemaYAML)
	for _, tc := range []struct{ name, doc, where string }{
		{"microseconds", `{"status":"IN_PROGRESS","fp":"a","created_us":1700000000123456}`, "created_us = 1700000000123456"},
		{"int64-id", `{"status":"IN_PROGRESS","fp":"a","meta":{"order_id":1234567890123456789}}`, "meta.order_id"},
		{"empty-array", `{"status":"IN_PROGRESS","fp":"a","items":[]}`, "items = []"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sharedRig(t)
			r.setMarker(jsonKey, tc.doc, time.Minute)
			for _, kind := range []write.Kind{write.KindFail, write.KindReconcile} {
				p := r.plan(Request{Kind: kind, Keyspace: ks, Key: jsonKey, Ref: "ord-1"})
				if p.Outcome != write.Refused || !strings.Contains(p.Refused, tc.where) {
					t.Fatalf("%s: refused %q", kind, p.Refused)
				}
				r.apply(p)
				if got := r.raw(jsonKey)[""]; got != tc.doc {
					t.Fatalf("%s rewrote the document: %s", kind, got)
				}
			}
			p := r.plan(Request{Kind: write.KindExpire, Keyspace: ks, Key: jsonKey, TTL: TTL{Mode: TTLSet, D: time.Hour}})
			if res := r.apply(p); res.Outcome != write.Applied || r.raw(jsonKey)[""] != tc.doc {
				t.Fatalf("expire: %+v, %s", res, r.raw(jsonKey)[""])
			}
		})
	}
	t.Run("response", func(t *testing.T) {
		r := sharedRig(t)
		r.setMarker(jsonKey, jsonProcessing, time.Minute)
		p := r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: jsonKey, Response: ptr(`{"charge_id":98765432109876543}`)})
		if p.Outcome != write.Refused || !strings.Contains(p.Refused, "charge_id") {
			t.Fatalf("refused %q", p.Refused)
		}
	})
}

// The diff shown before a JSON write names the decoded fields with their
// current values, and the planned record is what the server then holds.
func TestJSONPlanShowsTheRealDiff(t *testing.T) {
	r := sharedRig(t)
	ks := inspecttest.Schema(t, "jsonidem", jsonSchemaYAML)
	r.setMarker(jsonKey, jsonProcessing, 120*time.Second)
	p := r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: jsonKey, Reason: "stuck"})
	changes := map[string][2]string{}
	for _, c := range p.Changes {
		changes[c.Field] = [2]string{c.Before, c.After}
	}
	for f, want := range map[string][2]string{
		"status":                  {"IN_PROGRESS", "FAILED"},
		"response.status_code":    {"null", "503"},
		"response.body.error":     {"(none)", "interrupted"},
		"response.body.retryable": {"(none)", "true"},
		"failed_by":               {"(none)", testUser},
		"reason":                  {"(none)", "stuck"},
		"failed_at":               {"(none)", "(server time, ms)"},
	} {
		if changes[f] != want {
			t.Errorf("change %s: %q, want %q", f, changes[f], want)
		}
	}
	if _, ok := changes["created_at"]; ok {
		t.Error("an untouched field is listed as changed")
	}
	if res := r.apply(p); res.Outcome != write.Applied {
		t.Fatalf("%+v", res)
	}
	now, _, err := readSnapshot(t.Context(), r.c, ks, jsonKey)
	if err != nil {
		t.Fatal(err)
	}
	if !sameOutcome(now, p.After, false, time.Minute) {
		t.Fatalf("the planned record differs from the written one:\nplanned %v\nwritten %v", p.After.Fields, now.Fields)
	}
}
