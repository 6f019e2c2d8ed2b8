package acceptance

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// libRecord is what a fixture expects scan to report for one key.
type libRecord struct {
	state, fingerprint, ageSource string
	stale                         bool
	flags                         []string // must all be present
	status                        float64  // the replay status scan reports (0: not checked)
}

type presetCase struct {
	preset, match string
	write         func(ctx context.Context, c *redis.Client, now time.Time) map[string]libRecord
	companions    int // lock keys that must not be listed as records
}

func md5hex(s string) string { h := md5.Sum([]byte(s)); return hex.EncodeToString(h[:]) }

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// Each fixture writes records exactly as the library does: key shape, field
// names, units and TTL behaviour (see ../shared/reference/record-formats.md).
var presetCases = []presetCase{
	{preset: "powertools", match: "*#*", companions: 1, write: func(ctx context.Context, c *redis.Client, now time.Time) map[string]libRecord {
		py := "orders.app.handler#" + md5hex(`{"order":1}`)
		stale := "orders.app.handler#" + md5hex(`{"order":2}`)
		done := "orders.app.handler#" + md5hex(`{"order":3}`)
		ts := "ordersFn#" + base64.StdEncoding.EncodeToString([]byte{0xfb, 0xff, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xa0, 0xb0, 0xc0, 0xd0, 0xe0})
		exp := now.Add(time.Hour).Unix()
		c.SetNX(ctx, py, mustJSON(map[string]any{"status": "INPROGRESS", "expiration": exp, "in_progress_expiration": now.Add(20 * time.Second).UnixMilli(), "validation": md5hex("body1")}), time.Hour)
		c.SetNX(ctx, stale, mustJSON(map[string]any{"status": "INPROGRESS", "expiration": exp, "in_progress_expiration": now.Add(-5 * time.Second).UnixMilli()}), time.Hour)
		c.PExpire(ctx, stale, time.Hour-2*time.Minute) // reserved two minutes ago
		c.SetNX(ctx, done, mustJSON(map[string]any{"data": `{"order_id":"ord-3"}`, "status": "COMPLETED", "expiration": exp}), time.Hour)
		c.SetNX(ctx, ts, mustJSON(map[string]any{"data": map[string]any{"order_id": "ord-4"}, "status": "COMPLETED", "expiration": exp}), time.Hour)
		c.Set(ctx, stale+":lock", "True", 10*time.Second) // a new caller took over the orphan
		return map[string]libRecord{
			py:    {state: "processing", fingerprint: md5hex("body1"), ageSource: "ttl"},
			stale: {state: "processing", ageSource: "ttl", stale: true},
			done:  {state: "succeeded"},
			ts:    {state: "succeeded"},
		}
	}},
	{preset: "node-idempotency", match: "node-idempotency:*", write: func(ctx context.Context, c *redis.Client, now time.Time) map[string]libRecord {
		fresh, old, done := "node-idempotency:POST:/orders:k1", "node-idempotency:POST:/v1/pay:ments:k2", "node-idempotency:PUT:/carts:k3"
		c.SetNX(ctx, fresh, `{"status":"IN_PROGRESS","fingerPrint":"aa11"}`, 24*time.Hour)
		c.SetNX(ctx, old, `{"status":"IN_PROGRESS","fingerPrint":"bb22"}`, 24*time.Hour)
		c.PExpire(ctx, old, 24*time.Hour-10*time.Minute) // reserved ten minutes ago, timeout 5m
		c.SetNX(ctx, done, `{"status":"COMPLETE","fingerPrint":"cc33","response":{"body":{"id":3},"additional":{"statusCode":201}}}`, 24*time.Hour)
		// A handler that answered 402: the plugins store the payload as
		// response.error and replay it, with its status, to every retry.
		declined := "node-idempotency:POST:/payments:k4"
		c.SetNX(ctx, declined, `{"status":"COMPLETE","fingerPrint":"dd44","response":{"error":{"error":"card declined"},"additional":{"statusCode":402,"Content-Type":"application/json; charset=utf-8"}}}`, 24*time.Hour)
		return map[string]libRecord{
			fresh:    {state: "processing", fingerprint: "aa11", ageSource: "ttl"},
			old:      {state: "processing", fingerprint: "bb22", ageSource: "ttl", stale: true},
			done:     {state: "succeeded", fingerprint: "cc33", status: 201},
			declined: {state: "failed", fingerprint: "dd44", status: 402},
		}
	}},
	{preset: "fastapi-idempotency", match: "idem:*", write: func(ctx context.Context, c *redis.Client, now time.Time) map[string]libRecord {
		fresh, old, done := "idem:a1", "idem:b:2", "idem:c3"
		c.HSet(ctx, fresh, "fp", md5hex("f"), "state", "in_flight")
		c.PExpire(ctx, fresh, 60*time.Second)
		c.HSet(ctx, old, "fp", md5hex("o"), "state", "in_flight")
		c.PExpire(ctx, old, 15*time.Second)                                                             // 45 s into a 60 s reservation, timeout 30 s
		c.HSet(ctx, done, "fp", md5hex("d"), "state", "completed", "data", "\x81\xa1v\x01\xa4data\x80") // msgpack
		c.PExpire(ctx, done, 86400*time.Second)
		return map[string]libRecord{
			fresh: {state: "processing", fingerprint: md5hex("f"), ageSource: "ttl"},
			old:   {state: "processing", fingerprint: md5hex("o"), ageSource: "ttl", stale: true},
			done:  {state: "succeeded", fingerprint: md5hex("d")},
		}
	}},
	{preset: "gopotency", match: "*", companions: 1, write: func(ctx context.Context, c *redis.Client, now time.Time) map[string]libRecord {
		rec := func(key, status string, created time.Time) string {
			return mustJSON(map[string]any{"Key": key, "RequestHash": md5hex(key), "Status": status,
				"Response":  map[string]any{"StatusCode": 201, "Headers": map[string][]string{}, "Body": base64.StdEncoding.EncodeToString([]byte(`{"ok":true}`)), "ContentType": "application/json"},
				"CreatedAt": created.Format(time.RFC3339Nano), "ExpiresAt": created.Add(24 * time.Hour).Format(time.RFC3339Nano)})
		}
		held, orphan, done, failed := "order-1", "order-2", "order-3", "order-4"
		c.Set(ctx, held, rec(held, "pending", now.Add(-time.Minute)), 24*time.Hour)
		c.SetNX(ctx, "lock:"+held, "1", 5*time.Minute)
		c.Set(ctx, orphan, rec(orphan, "pending", now.Add(-2*time.Minute)), 24*time.Hour) // its lock expired
		c.Set(ctx, done, rec(done, "completed", now.Add(-time.Hour)), 24*time.Hour)
		c.Set(ctx, failed, rec(failed, "failed", now.Add(-time.Hour)), 24*time.Hour)
		return map[string]libRecord{
			held:   {state: "processing", fingerprint: md5hex(held), ageSource: "field"},
			orphan: {state: "processing", fingerprint: md5hex(orphan), ageSource: "field", stale: true, flags: []string{"lock_missing"}},
			done:   {state: "succeeded", fingerprint: md5hex(done), ageSource: "field"},
			failed: {state: "failed", fingerprint: md5hex(failed), ageSource: "field"},
		}
	}},
	{preset: "marker-lock", match: "idempotency_keys:*", companions: 1, write: func(ctx context.Context, c *redis.Client, now time.Time) map[string]libRecord {
		done, running, stuck := "idempotency_keys:abc", "idempotency_keys:def", "idempotency_keys:ghi"
		c.Set(ctx, done, `{"status":201,"headers":{"Content-Type":"application/json"},"response":"{\"id\":1}"}`, 24*time.Hour)
		c.Set(ctx, "idempotency_keys:lock:abc", fmt.Sprintf("%.6f", float64(now.Add(-time.Hour).UnixMicro())/1e6), 0) // leftover lock beside its response
		c.Set(ctx, "idempotency_keys:lock:def", fmt.Sprintf("%.6f", float64(now.Add(-10*time.Second).UnixMicro())/1e6), time.Minute)
		c.Set(ctx, "idempotency_keys:lock:ghi", fmt.Sprintf("%.6f", float64(now.Add(-time.Hour).UnixMicro())/1e6), 0) // no EX: blocked forever
		_ = running
		_ = stuck
		return map[string]libRecord{
			done:                        {state: "succeeded"},
			"idempotency_keys:lock:def": {state: "processing", ageSource: "field", flags: []string{"lock_only"}},
			"idempotency_keys:lock:ghi": {state: "processing", ageSource: "field", stale: true, flags: []string{"lock_only", "processing_no_ttl"}},
		}
	}},
	{preset: "express-idempotency", match: "*", write: func(ctx context.Context, c *redis.Client, now time.Time) map[string]libRecord {
		req := func(key, body string) map[string]any {
			return map[string]any{"body": map[string]any{"sku": body}, "method": "POST", "query": map[string]any{}, "url": "/orders",
				"headers": map[string]any{"content-type": "application/json", "idempotency-key": key}}
		}
		fresh, old, done := "3f1c9a7e-0b1d-4c55-9a43-0d2f6e1b7c01", "9b2e4d10-77aa-4e0f-8d1c-5c3b2a190e02", "c0ffee00-1234-4abc-9def-000000000003"
		c.Set(ctx, fresh, mustJSON(map[string]any{"request": req(fresh, "a")}), 24*time.Hour)
		c.Set(ctx, old, mustJSON(map[string]any{"request": req(old, "b")}), 24*time.Hour)
		c.PExpire(ctx, old, 24*time.Hour-10*time.Minute) // in flight for ten minutes, timeout 5m
		c.Set(ctx, done, mustJSON(map[string]any{"request": req(done, "c"), "response": map[string]any{"statusCode": 201,
			"headers": map[string]any{"content-type": "application/json; charset=utf-8"}, "body": `{"id":3}`}}), 24*time.Hour)
		return map[string]libRecord{
			fresh: {state: "processing", ageSource: "ttl"},
			old:   {state: "processing", ageSource: "ttl", stale: true},
			done:  {state: "succeeded"},
		}
	}},
}

func TestLibraryPresetsScanDetectAndAct(t *testing.T) {
	srv := redistest.Shared(t)
	ctx := t.Context()
	for i, pc := range presetCases {
		db := i + 1
		c := srv.Client(db)
		want := pc.write(ctx, c, time.Now())
		url := srv.URL(db)
		t.Run(pc.preset, func(t *testing.T) {
			r := clitest.Run(t, nil, "scan", "--url", url, "--preset", pc.preset, "--match", pc.match, "-o", "ndjson")
			r.MustCode(t, 0)
			got := recordtest.NDJSONByKey(t, r.Stdout)
			if len(got) != len(want) {
				t.Fatalf("listed %d records, want %d (lock companions are not records):\n%s", len(got), len(want), r.Stdout)
			}
			for key, w := range want {
				rec, ok := got[key]
				if !ok {
					t.Fatalf("%s not listed", key)
				}
				flags := fmt.Sprint(rec["flags"])
				if rec["state"] != w.state || rec["stale"] != w.stale || (w.ageSource != "" && rec["age_source"] != w.ageSource) {
					t.Errorf("%s: state %v stale %v age_source %v (age %v); want %s %v %s\n%v", key, rec["state"], rec["stale"],
						rec["age_source"], rec["age_ms"], w.state, w.stale, w.ageSource, rec)
				}
				if w.fingerprint != "" && rec["fingerprint"] != w.fingerprint {
					t.Errorf("%s: fingerprint %v, want %s", key, rec["fingerprint"], w.fingerprint)
				}
				if w.status != 0 && rec["status"] != w.status {
					t.Errorf("%s: status %v, want %v", key, rec["status"], w.status)
				}
				for _, f := range w.flags {
					if !strings.Contains(flags, f) {
						t.Errorf("%s: flags %s lack %s", key, flags, f)
					}
				}
				for _, f := range []string{"undecoded", "decode_error", "unknown_state", "missing_fingerprint"} {
					if strings.Contains(flags, f) {
						t.Errorf("%s: unexpected flag %s", key, f)
					}
				}
			}
			d := clitest.Run(t, nil, "detect", "--url", url, "--match", pc.match, "-o", "json")
			d.MustCode(t, 0)
			var det struct {
				Best *struct{ Preset string } `json:"best"`
				YAML string                   `json:"yaml"`
			}
			json.Unmarshal([]byte(d.Stdout), &det)
			if det.Best == nil || det.Best.Preset != pc.preset || !strings.Contains(det.YAML, "preset: "+pc.preset) {
				t.Errorf("detect picked %+v, want %s:\n%s", det.Best, pc.preset, d.Stdout)
			}
		})
	}
}

// What each preset promises its repair actions do.
func TestLibraryPresetActions(t *testing.T) {
	srv := redistest.Shared(t)
	ctx := t.Context()
	audit := t.TempDir() + "/audit.log"
	act := func(db int, preset, match string, args ...string) clitest.Result {
		base := []string{"--url", srv.URL(db), "--preset", preset, "--match", match, "--write", "--yes", "--audit-log", audit}
		return clitest.Run(t, nil, append(args, base...)...)
	}
	for i, pc := range presetCases {
		pc.write(ctx, srv.Client(i+1), time.Now())
	}
	pt := srv.Client(1)
	stale := "orders.app.handler#" + md5hex(`{"order":2}`)
	act(1, "powertools", "*#*", "fail", stale, "--reason", "lambda timed out").MustCode(t, 0)
	if n, _ := pt.Exists(ctx, stale).Result(); n != 0 {
		t.Fatal("powertools force-fail must delete the record")
	}
	r := act(1, "powertools", "*#*", "reconcile", "orders.app.handler#"+md5hex(`{"order":1}`), "--reason", "x", "--ref", "ord-1")
	r.MustCode(t, cli.ExitRefused)
	if !strings.Contains(r.Stdout+r.Stderr, "cannot express") {
		t.Fatalf("refusal must say why: %s %s", r.Stdout, r.Stderr)
	}

	gp := srv.Client(4)
	act(4, "gopotency", "*", "fail", "order-2", "--reason", "worker died").MustCode(t, 0)
	var doc map[string]any
	v, _ := gp.Get(ctx, "order-2").Result()
	json.Unmarshal([]byte(v), &doc)
	if doc["Status"] != "failed" || doc["Response"].(map[string]any)["StatusCode"] != float64(503) || doc["RequestHash"] != md5hex("order-2") {
		t.Fatalf("gopotency after fail: %s", v)
	}
	act(4, "gopotency", "*", "reconcile", "order-1", "--reason", "found in DB", "--ref", "ord-1").MustCode(t, 0)
	v, _ = gp.Get(ctx, "order-1").Result()
	json.Unmarshal([]byte(v), &doc)
	if doc["Status"] != "completed" || doc["idemctl"].(map[string]any)["reconciled_ref"] != "ord-1" {
		t.Fatalf("gopotency after reconcile: %s", v)
	}

	nd := srv.Client(2)
	r = act(2, "node-idempotency", "node-idempotency:*", "reconcile", "node-idempotency:POST:/orders:k1", "--reason", "ok in DB",
		"--ref", "ord-9", "--response", `{"id":9}`, "--status", "201")
	r.MustCode(t, 0)
	if !strings.Contains(r.Stderr, "response.additional.statusCode (none) → 201") {
		t.Fatalf("the diff does not show the replay status: %s", r.Stderr)
	}
	v, _ = nd.Get(ctx, "node-idempotency:POST:/orders:k1").Result()
	json.Unmarshal([]byte(v), &doc)
	resp, _ := doc["response"].(map[string]any)
	add, _ := resp["additional"].(map[string]any)
	if doc["status"] != "COMPLETE" || doc["fingerPrint"] != "aa11" || fmt.Sprint(resp["body"]) != "map[id:9]" || add["statusCode"] != float64(201) {
		t.Fatalf("node-idempotency after reconcile --status 201: %s", v)
	}
	// A stored error reconciled: the body replaces the error the plugins replay.
	act(2, "node-idempotency", "node-idempotency:*", "reconcile", "node-idempotency:POST:/payments:k4", "--reason", "charged after all",
		"--ref", "ord-4").MustCode(t, 0)
	v, _ = nd.Get(ctx, "node-idempotency:POST:/payments:k4").Result()
	if strings.Contains(v, `"error"`) || !strings.Contains(v, `"statusCode":200`) || !strings.Contains(v, `"reconciled":true`) {
		t.Fatalf("node-idempotency error record after reconcile: %s", v)
	}

	act(2, "node-idempotency", "node-idempotency:*", "fail", "node-idempotency:POST:/v1/pay:ments:k2", "--reason", "worker died").MustCode(t, 0)
	if n, _ := nd.Exists(ctx, "node-idempotency:POST:/v1/pay:ments:k2").Result(); n != 0 {
		t.Fatal("node-idempotency force-fail must delete the record (it has no failed state)")
	}
	fa := srv.Client(3)
	act(3, "fastapi-idempotency", "idem:*", "fail", "idem:b:2", "--reason", "worker died").MustCode(t, 0)
	if n, _ := fa.Exists(ctx, "idem:b:2").Result(); n != 0 {
		t.Fatal("fastapi-idempotency force-fail must delete the record")
	}
	act(3, "fastapi-idempotency", "idem:*", "reconcile", "idem:a1", "--reason", "x", "--ref", "y").MustCode(t, cli.ExitRefused)

	ml := srv.Client(5)
	act(5, "marker-lock", "idempotency_keys:*", "fail", "idempotency_keys:lock:ghi", "--reason", "request abandoned").MustCode(t, 0)
	if n, _ := ml.Exists(ctx, "idempotency_keys:lock:ghi").Result(); n != 0 {
		t.Fatal("marker-lock force-fail must delete the abandoned lock")
	}
	act(5, "marker-lock", "idempotency_keys:*", "reconcile", "idempotency_keys:lock:def", "--reason", "x", "--ref", "y").MustCode(t, cli.ExitRefused)
}

// detect proposes a preset only on positive evidence: records that decode
// under a preset whose key template fits none of them get a drafted
// mapping instead, with the evidence. (marker-lock was proposed, with a
// tick, for records its template did not fit.)
func TestDetectNeverProposesContradictedPreset(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := t.Context()
	for i := range 7 {
		c.Set(ctx, fmt.Sprintf("replay:%d", i), mustJSON(map[string]any{"status": 201, "headers": map[string]any{}, "response": `{"id":1}`}), time.Hour)
	}
	d := clitest.Run(t, nil, "detect", "--url", srv.URL(0), "--match", "replay:*", "-o", "json")
	d.MustCode(t, 0)
	var det struct {
		Best       *struct{ Preset string } `json:"best"`
		Candidates []struct {
			Preset, Rejected string
			Matched          int
		} `json:"candidates"`
		YAML string `json:"yaml"`
	}
	if err := json.Unmarshal([]byte(d.Stdout), &det); err != nil {
		t.Fatal(err)
	}
	if det.Best != nil {
		t.Fatalf("proposed %s for keys its template does not fit:\n%s", det.Best.Preset, d.Stdout)
	}
	rejected := false
	for _, cand := range det.Candidates {
		if cand.Preset == "marker-lock" && cand.Matched == 7 && strings.Contains(cand.Rejected, "fits none of the 7") {
			rejected = true
		}
	}
	if !rejected || !strings.Contains(det.YAML, "No preset fits") || !strings.Contains(det.YAML, "status: status") {
		t.Fatalf("want marker-lock rejected with the evidence and a draft:\n%s", d.Stdout)
	}
	text := clitest.Run(t, nil, "detect", "--url", srv.URL(0), "--match", "replay:*")
	if strings.Contains(text.Stdout, "✓") || !strings.Contains(text.Stdout, "not proposed: its key template") {
		t.Fatalf("text output:\n%s", text.Stdout)
	}
}
