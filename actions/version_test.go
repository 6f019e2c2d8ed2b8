package actions

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

const ptKey = "ordersFn#bm9jaGVja3N1bQ=="

// powertoolsInProgress is a Powertools record as the library writes it
// without payload validation: no fingerprint at all.
func powertoolsInProgress(now time.Time, inProgress time.Duration) string {
	b, _ := json.Marshal(map[string]any{"status": "INPROGRESS", "expiration": now.Add(time.Hour).Unix(),
		"in_progress_expiration": now.Add(inProgress).UnixMilli()})
	return string(b)
}

// Defect 1: state and fingerprint alone let a write through onto a record a
// new invocation had taken over. Every kind of change between plan and
// write is now a conflict, and the application's record is left intact.
func TestGuardWholeRecord(t *testing.T) {
	ctx := t.Context()
	cases := []struct {
		name   string
		kind   write.Kind
		change func(r *rig, now time.Time)
		what   string
	}{
		{"takeover: lock, new expirations", write.KindFail, func(r *rig, now time.Time) {
			r.c.SetNX(ctx, ptKey+":lock", "true", 10*time.Second)
			r.c.Set(ctx, ptKey, powertoolsInProgress(now.Add(2*time.Second), 30*time.Second), time.Hour)
		}, "fields"},
		{"takeover: lock only", write.KindFail, func(r *rig, now time.Time) {
			r.c.SetNX(ctx, ptKey+":lock", "true", 10*time.Second)
		}, "lock"},
		{"re-reservation: same bytes, new TTL", write.KindExpire, func(r *rig, now time.Time) {
			v := r.c.Get(ctx, ptKey).Val()
			r.c.Del(ctx, ptKey)
			time.Sleep(5 * time.Millisecond)
			r.c.SetNX(ctx, ptKey, v, time.Hour)
		}, "TTL was re-set"},
		{"TTL removed", write.KindFail, func(r *rig, now time.Time) { r.c.Persist(ctx, ptKey) }, "TTL was removed"},
		{"extra field", write.KindFail, func(r *rig, now time.Time) {
			v := r.c.Get(ctx, ptKey).Val()
			r.c.Set(ctx, ptKey, strings.Replace(v, `{`, `{"validation":"abc",`, 1), redis.KeepTTL)
		}, "fingerprint"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := sharedRig(t)
			now := time.UnixMilli(r.serverMs())
			r.c.SetNX(ctx, ptKey, powertoolsInProgress(now.Add(-time.Minute), -time.Second), time.Hour)
			r.c.PExpire(ctx, ptKey, time.Hour-time.Minute)
			req := Request{Kind: tc.kind, Keyspace: inspecttest.Keyspace(t, "powertools"), Key: ptKey}
			if tc.kind == write.KindExpire {
				req.TTL = TTL{Mode: TTLSet}
			}
			p := r.plan(req)
			if p.Refused != "" || !p.Delete {
				t.Fatalf("plan: %q delete=%v", p.Refused, p.Delete)
			}
			if !write.ValidVersion(p.Before.Version) {
				t.Fatalf("plan without a version: %q", p.Before.Version)
			}
			tc.change(r, now)
			changed, lock := r.raw(ptKey), r.raw(ptKey+":lock")
			res := r.apply(p)
			if res.Outcome != write.Conflict || !strings.Contains(res.Detail, tc.what) {
				t.Fatalf("apply after %s: %+v", tc.name, res)
			}
			if !sameMap(changed, r.raw(ptKey)) || !sameMap(lock, r.raw(ptKey+":lock")) {
				t.Fatal("the conflicting write changed the application's record")
			}
			r.lastWrite(ptKey, write.Conflict)
		})
	}
}

// A pinned version is checked when the plan is built: a record changed in
// a way state and fingerprint do not show (the TTL re-set) conflicts, and
// the conflict says what changed.
func TestPinnedVersion(t *testing.T) {
	r := sharedRig(t)
	ctx := t.Context()
	ks := inspecttest.Keyspace(t, "atlasmart")
	r.reserveAtlas(atlasKey, fp("body-1"))
	p := r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey})
	saw := Seen{State: p.Before.State, Fingerprint: p.Before.Fingerprint, Version: p.Before.Version}
	same := r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey, Saw: &saw})
	if same.Refused != "" || same.Before.Version != saw.Version {
		t.Fatalf("an unchanged record: %q %s → %s", same.Refused, saw.Version, same.Before.Version)
	}
	// The same bytes, a new TTL: set a few ms later, so the expiry moves
	// even when the test runs within the reservation's millisecond.
	time.Sleep(5 * time.Millisecond)
	r.c.Expire(ctx, atlasKey, reserveTTL*time.Second)
	p = r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey, Saw: &saw})
	if p.Outcome != write.Conflict || !strings.Contains(p.Refused, "TTL was re-set") || strings.Contains(p.Refused, "fields changed") {
		t.Fatalf("pinned plan after a TTL change: %q %q", p.Outcome, p.Refused)
	}
	r.c.HSet(ctx, atlasKey, "note", "x")
	p = r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey, Saw: &saw})
	if p.Outcome != write.Conflict || !strings.Contains(p.Refused, "fields changed") {
		t.Fatalf("pinned plan after a new field: %q %q", p.Outcome, p.Refused)
	}
	if res := r.apply(p); res.Outcome != write.Conflict {
		t.Fatalf("apply: %+v", res)
	}
	r.lastRefusal(atlasKey, write.Conflict)
}

// A record whose volatility changed after it was shown never matches its
// pinned version: a TTL given to a record that had none, and a TTL taken
// from one that had it, both conflict at plan and at apply.
func TestPinnedVersionVolatility(t *testing.T) {
	r := sharedRig(t)
	ctx := t.Context()
	ks := inspecttest.Keyspace(t, "atlasmart")
	for _, tc := range []struct {
		name          string
		before, after func()
		want          string
	}{
		{"TTL added", func() { r.c.Persist(ctx, atlasKey) }, func() { r.c.Expire(ctx, atlasKey, time.Hour) }, "TTL was re-set"},
		{"TTL removed", func() {}, func() { r.c.Persist(ctx, atlasKey) }, "TTL was re-set"},
	} {
		r.c.Del(ctx, atlasKey)
		r.reserveAtlas(atlasKey, fp("body-1"))
		tc.before()
		p := r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey})
		saw := Seen{State: p.Before.State, Fingerprint: p.Before.Fingerprint, Version: p.Before.Version}
		tc.after()
		pinned := r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey, Saw: &saw})
		if pinned.Outcome != write.Conflict || !strings.Contains(pinned.Refused, tc.want) {
			t.Fatalf("%s: pinned plan %q %q", tc.name, pinned.Outcome, pinned.Refused)
		}
		if res := r.apply(p); res.Outcome != write.Conflict {
			t.Fatalf("%s: apply of the plan read before: %+v", tc.name, res)
		}
	}
}

// The version is computed on the server: a huge value is hashed there,
// never fetched, and a hash with more fields than can be pinned is refused.
func TestVersionBounds(t *testing.T) {
	r := sharedRig(t)
	ctx := t.Context()
	r.reserveAtlas(atlasKey, fp("body-1"))
	r.c.HSet(ctx, atlasKey, "response", strings.Repeat("x", 5<<20))
	v1, err := fetchVersion(ctx, r.c, atlasKey, "")
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 5<<20-1) + "y" // same length, last byte differs
	r.c.HSet(ctx, atlasKey, "response", big)
	v2, err := fetchVersion(ctx, r.c, atlasKey, "")
	if err != nil || v1.Content == v2.Content || v1.Expiry != v2.Expiry {
		t.Fatalf("a change at the end of a 5 MB value: %v %+v %+v", err, v1, v2)
	}
	args := []any{}
	for i := range 5000 {
		args = append(args, "f"+strconv.Itoa(i), "v")
	}
	r.c.HSet(ctx, atlasKey, args...)
	p, err := r.ex.Plan(ctx, Request{Kind: write.KindFail, Keyspace: inspecttest.Keyspace(t, "atlasmart"), Key: atlasKey, Reason: "x"})
	if err == nil || !strings.Contains(err.Error(), "5003 fields") {
		t.Fatalf("plan of a 5,003-field hash: %v %+v", err, p)
	}
}

// Defect 2: expire --ttl D on a record that stores its own expiry moves
// that expiry with the Redis TTL, in the same script, and the diff shows
// both. A processing deadline past the new end comes down to it.
func TestExpireMovesTheStoredExpiry(t *testing.T) {
	ctx := t.Context()
	t.Run("powertools", func(t *testing.T) {
		r := sharedRig(t)
		now := time.UnixMilli(r.serverMs())
		r.c.SetNX(ctx, ptKey, powertoolsInProgress(now, 2*time.Hour), time.Hour)
		p := r.plan(Request{Kind: write.KindExpire, Keyspace: inspecttest.Keyspace(t, "powertools"), Key: ptKey, TTL: TTL{Mode: TTLSet, D: 3 * time.Hour}})
		if p.Refused != "" {
			t.Fatal(p.Refused)
		}
		shown := map[string]write.Change{}
		for _, c := range p.Changes {
			shown[c.Field] = c
		}
		if shown["expiration"].After == "" || !strings.Contains(shown["expiration"].After, "server time + 3h") ||
			shown["(ttl)"].After != "3h00m" || shown["in_progress_expiration"].Field != "" {
			t.Fatalf("diff: %+v", p.Changes)
		}
		if res := r.apply(p); res.Outcome != write.Applied {
			t.Fatalf("apply: %+v", res)
		}
		doc := r.jsonDoc(ptKey)
		exp, _ := doc["expiration"].(json.Number).Int64()
		if want := res0(r) / 1000; exp < want+3*3600-5 || exp > want+3*3600 {
			t.Fatalf("expiration %d, want about now+3h (%d)", exp, want+3*3600)
		}
		if d := r.pttl(ptKey); d < 3*time.Hour-5*time.Second || d > 3*time.Hour {
			t.Fatalf("PTTL %v", d)
		}
		if ipe, _ := doc["in_progress_expiration"].(json.Number).Int64(); ipe != now.Add(2*time.Hour).UnixMilli() {
			t.Fatalf("an in-progress deadline before the new end moved: %d", ipe)
		}
		// A shorter life brings a later deadline down to the new end.
		p = r.plan(Request{Kind: write.KindExpire, Keyspace: inspecttest.Keyspace(t, "powertools"), Key: ptKey, TTL: TTL{Mode: TTLSet, D: 10 * time.Minute}})
		if res := r.apply(p); res.Outcome != write.Applied {
			t.Fatalf("apply: %+v", res)
		}
		doc = r.jsonDoc(ptKey)
		exp, _ = doc["expiration"].(json.Number).Int64()
		ipe, _ := doc["in_progress_expiration"].(json.Number).Int64()
		if ipe < exp*1000-1000 || ipe > exp*1000+1000 {
			t.Fatalf("deadline %d not brought to the new end %d", ipe, exp)
		}
	})
	t.Run("gopotency rfc3339", func(t *testing.T) {
		r := sharedRig(t)
		now := time.UnixMilli(r.serverMs()).UTC()
		key := "order-7"
		r.c.Set(ctx, key, fmt.Sprintf(`{"Key":"order-7","RequestHash":"h","Status":"completed","CreatedAt":%q,"ExpiresAt":%q}`,
			now.Format(time.RFC3339Nano), now.Add(24*time.Hour).Format(time.RFC3339Nano)), 24*time.Hour)
		p := r.plan(Request{Kind: write.KindExpire, Keyspace: inspecttest.Keyspace(t, "gopotency"), Key: key, TTL: TTL{Mode: TTLSet, D: 48 * time.Hour}})
		if res := r.apply(p); res.Outcome != write.Applied {
			t.Fatalf("apply: %+v %q", res, p.Refused)
		}
		got, err := time.Parse(time.RFC3339Nano, r.jsonDoc(key)["ExpiresAt"].(string))
		if want := now.Add(48 * time.Hour); err != nil || got.Before(want) || got.After(want.Add(5*time.Second)) {
			t.Fatalf("ExpiresAt %v (%v), want about %v", got, err, want)
		}
	})
}

func res0(r *rig) int64 { return r.serverMs() }

// The script's calendar arithmetic agrees with Go's for dates around leap
// days, year ends and the epoch.
func TestScriptRFC3339(t *testing.T) {
	r := sharedRig(t)
	ctx := t.Context()
	src := timeLua + `return rfc3339(tonumber(ARGV[1]))`
	for _, tm := range []string{"1970-01-01T00:00:00.000Z", "2000-02-29T23:59:59.999Z", "2024-12-31T12:00:00.001Z",
		"2026-03-01T00:00:00.000Z", "2100-02-28T06:30:15.500Z", "2399-12-31T23:59:59.000Z"} {
		want, _ := time.Parse(time.RFC3339Nano, tm)
		got, err := r.c.Eval(ctx, src, nil, want.UnixMilli()).Text()
		if err != nil || got != tm {
			t.Errorf("rfc3339(%d) = %q %v, want %q", want.UnixMilli(), got, err, tm)
		}
	}
}

// Defect 3: an option the library would not read is refused with the
// reason, never accepted and dropped.
func TestOptionsLandOrAreRefused(t *testing.T) {
	r := sharedRig(t)
	ctx := t.Context()
	body := `{"id":1}`
	for _, tc := range []struct {
		name  string
		ks    string
		setup func()
		req   Request
		why   string
	}{
		{"fail-as-delete with a status", "setnx", func() { r.setMarker(setnxKey, "processing", time.Hour) },
			Request{Kind: write.KindFail, Key: setnxKey, Status: 503}, "replay status (--status) would not be stored"},
		{"fail-as-delete with a TTL", "setnx", func() { r.setMarker(setnxKey, "processing", time.Hour) },
			Request{Kind: write.KindFail, Key: setnxKey, TTL: TTL{Mode: TTLSet, D: time.Hour}}, "TTL (--ttl) would not be stored"},
		{"reconcile a marker with a status", "setnx", func() { r.setMarker(setnxKey, "processing", time.Hour) },
			Request{Kind: write.KindReconcile, Key: setnxKey, Status: 201}, "stores no replay status"},
		{"powertools fail with a response", "powertools", func() {
			r.c.Set(ctx, ptKey, powertoolsInProgress(time.Now(), time.Minute), time.Hour)
		}, Request{Kind: write.KindFail, Key: ptKey, Response: &body}, "replay response (--response) would not be stored"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.setup()
			req := tc.req
			req.Keyspace = inspecttest.Keyspace(t, tc.ks)
			p := r.plan(req)
			if p.Outcome != write.Refused || !strings.Contains(p.Refused, tc.why) {
				t.Fatalf("plan: %q %q", p.Outcome, p.Refused)
			}
		})
	}
}

// Hash-field TTLs (Redis 7.4+): a guarded write keeps the TTLs of the
// fields it rewrites (HSET would drop them), a new TTL goes on the fields
// where the record lives by them, and the compare-and-set covers them: an
// application that re-sets a field's TTL between plan and write wins.
func TestGuardedWritesKeepFieldTTLs(t *testing.T) {
	r := sharedRig(t)
	redistest.RequireFieldTTL(t, r.c)
	ctx := t.Context()
	ks := inspecttest.Keyspace(t, "atlasmart")
	fieldTTL := func(f string) int64 {
		v, err := r.c.Do(ctx, "hpttl", atlasKey, "fields", 1, f).Int64Slice()
		if err != nil || len(v) != 1 {
			t.Fatalf("HPTTL %s: %v %v", f, v, err)
		}
		return v[0]
	}
	reserve := func() {
		r.c.Del(ctx, atlasKey)
		r.c.HSet(ctx, atlasKey, "fingerprint", fp("body-1"), "state", "PROCESSING")
		r.c.Do(ctx, "hpexpire", atlasKey, 60000, "fields", 2, "fingerprint", "state")
	}
	reserve()
	p := r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey, TTL: TTL{Mode: TTLKeep}})
	if res := r.apply(p); res.Outcome != write.Applied {
		t.Fatalf("fail: %+v", res)
	}
	if r.raw(atlasKey)["state"] != "FAILED" || fieldTTL("state") <= 0 || fieldTTL("fingerprint") <= 0 || r.pttl(atlasKey) != -1 {
		t.Fatalf("after fail: state TTL %d, fingerprint TTL %d, key TTL %v", fieldTTL("state"), fieldTTL("fingerprint"), r.pttl(atlasKey))
	}
	reserve()
	p = r.plan(Request{Kind: write.KindExpire, Keyspace: ks, Key: atlasKey, TTL: TTL{Mode: TTLSet, D: time.Hour}})
	if res := r.apply(p); res.Outcome != write.Applied {
		t.Fatalf("expire: %+v", res)
	}
	if st := fieldTTL("state"); st < 3590000 || r.pttl(atlasKey) != -1 {
		t.Fatalf("expire --ttl 1h on a record living by its fields: state TTL %d, key TTL %v", st, r.pttl(atlasKey))
	}
	reserve()
	p = r.plan(Request{Kind: write.KindFail, Keyspace: ks, Key: atlasKey})
	r.c.Do(ctx, "hpexpire", atlasKey, 120000, "fields", 1, "state") // the application extends it
	if res := r.apply(p); res.Outcome != write.Conflict {
		t.Fatalf("a field TTL re-set between plan and write: %+v", res)
	}
}
