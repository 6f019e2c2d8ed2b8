package actions

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// go-redis must not log into the test output (pool dial failures are expected
// in the fault tests).
func init() { redis.SetLogger(quietLogger{}) }

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// jsonSchemaYAML is a custom format: one JSON document per request, so the
// writes go through the cjson script.
const jsonSchemaYAML = `
description: "one JSON document per request"
container: string
codec: json
state:
  field: status
  map:
    IN_PROGRESS: processing
    COMPLETE: succeeded
    FAILED: failed
fingerprint: fp
status: response.status_code
response: response.body
defaults:
  match: "jsonidem:*"
  key_template: "jsonidem:{id}"
  reserve_ttl: 120s
  processing_timeout: 30s
  retention: 600s
actions:
  fail:
    state: FAILED
    status: 503
    response: '{"error":"interrupted","retryable":true}'
    at: failed_at
    by: failed_by
    reason: reason
  reconcile:
    state: COMPLETE
    ref: ref
`

const (
	atlasKey = "atlasmart:ch23:idem:customer-1:POST:/orders:req-1"
	setnxKey = "idempotency:order:12345"
	jsonKey  = "jsonidem:req-1"
	testUser = "oncall-tester"
)

// rig is one executor with writes enabled and its own audit log, plus a
// direct client to seed and inspect records behind the tool's back.
type rig struct {
	t      *testing.T
	srv    *redistest.Server
	c      *redis.Client // direct: seeding and checking
	ex     *Executor
	policy *Policy
	audit  string
}

func newRig(t *testing.T, srv *redistest.Server) *rig {
	t.Helper()
	c := srv.Client(0)
	t.Cleanup(func() { c.Close() })
	path := auditPath(t)
	pol := &Policy{Writes: true}
	ex, err := NewExecutor(Setup{Client: c, Policy: pol, AuditPath: path,
		Identity: audit.Identity{OSUser: testUser, Profile: "test", Address: "redis://" + srv.Addr + "/0"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	return &rig{t: t, srv: srv, c: c, policy: pol, audit: path, ex: ex}
}

// sharedRig is a rig on the package's shared server, flushed for the test.
func sharedRig(t *testing.T) *rig { return newRig(t, redistest.Shared(t)) }

// testClient is a client for the executor: no retries, short timeouts.
func testClient(addr, user, password string, readTimeout time.Duration, retries int) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, Username: user, Password: password,
		DisableIdentity: true, MaxRetries: retries, PoolSize: 4, DialerRetries: 1,
		DialTimeout: time.Second, ReadTimeout: readTimeout, WriteTimeout: readTimeout,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
}

func (r *rig) plan(req Request) *Plan {
	r.t.Helper()
	if req.Reason == "" {
		req.Reason = "test: " + string(req.Kind)
	}
	p, err := r.ex.Plan(context.Background(), req)
	if err != nil {
		r.t.Fatalf("plan %s %s: %v", req.Kind, req.Key, err)
	}
	return p
}

func (r *rig) apply(p *Plan) Result {
	r.t.Helper()
	return r.ex.Apply(context.Background(), p)
}

// unchangedAfter checks a write that must have changed nothing: the record
// is still before, and the audit log ends with the write's outcome.
func (r *rig) unchangedAfter(before map[string]string, key string, want write.Outcome) {
	r.t.Helper()
	if !sameMap(before, r.raw(key)) {
		r.t.Fatal("the record changed")
	}
	r.lastWrite(key, want)
}

// applyTimed applies a plan that must apply, between two readings of the
// server's clock: a time the write stamps must lie in [t0, t1].
func (r *rig) applyTimed(p *Plan) (res Result, t0, t1 int64) {
	r.t.Helper()
	t0 = r.serverMs()
	res = r.apply(p)
	t1 = r.serverMs()
	if res.Outcome != write.Applied {
		r.t.Fatalf("%s: %+v", p.Kind, res)
	}
	return res, t0, t1
}

// readAudit parses an audit log.
func readAudit(t testing.TB, path string) []audit.Entry {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []audit.Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e audit.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line is not JSON: %v\n%s", err, sc.Text())
		}
		if e.Phase != audit.PhaseGenesis {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func (r *rig) entries() []audit.Entry { return readAudit(r.t, r.audit) }

// lastWrite checks the audit log ends with the intent and the outcome of one
// write to key (same id, before and planned after snapshots, the outcome)
// and returns them.
func (r *rig) lastWrite(key string, want write.Outcome) (intent, outcome audit.Entry) {
	r.t.Helper()
	es := r.entries()
	if len(es) < 2 {
		r.t.Fatalf("audit log has %d entries, want an intent and an outcome", len(es))
	}
	intent, outcome = es[len(es)-2], es[len(es)-1]
	if intent.Phase != "intent" || outcome.Phase != "outcome" || intent.ID == "" || intent.ID != outcome.ID {
		r.t.Fatalf("audit tail is not an intent/outcome pair with one id:\n%+v\n%+v", intent, outcome)
	}
	if intent.Key != key || outcome.Key != key || intent.Before == nil || intent.After == nil || outcome.Before != nil {
		r.t.Fatalf("audit pair lacks key or snapshots, or the outcome repeats them: %+v / %+v", intent, outcome)
	}
	if outcome.Outcome != want {
		r.t.Fatalf("audited outcome %q (%s), want %q", outcome.Outcome, outcome.Detail, want)
	}
	if intent.OSUser != testUser || intent.Reason == "" || intent.Time == "" || intent.Action == "" {
		r.t.Fatalf("audit intent lacks who/why/when: %+v", intent)
	}
	return intent, outcome
}

// lastRefusal checks the audit log ends with one outcome line for a write
// refused before anything was sent (a conflict found while planning, an
// ACL that cannot read the version): no intent, the snapshot read, who
// and why.
func (r *rig) lastRefusal(key string, want write.Outcome) audit.Entry {
	r.t.Helper()
	es := r.entries()
	if len(es) == 0 {
		r.t.Fatalf("audit log is empty, want the refusal of %s", key)
	}
	e := es[len(es)-1]
	if e.Phase != "outcome" || e.ID == "" || e.Key != key || e.Before == nil || e.Outcome != want {
		r.t.Fatalf("audit tail is not a %s refusal of %s: %+v", want, key, e)
	}
	if len(es) > 1 && es[len(es)-2].ID == e.ID {
		r.t.Fatalf("a refusal before sending has an intent line: %+v", es[len(es)-2])
	}
	if e.OSUser != testUser || e.Reason == "" || e.Time == "" || e.Action == "" || e.Detail == "" {
		r.t.Fatalf("audited refusal lacks who/why/when/what: %+v", e)
	}
	return e
}

// serverMs is the server's clock.
func (r *rig) serverMs() int64 {
	r.t.Helper()
	now, err := r.c.Time(context.Background()).Result()
	if err != nil {
		r.t.Fatal(err)
	}
	return now.UnixMilli()
}

func (r *rig) pttl(key string) time.Duration {
	r.t.Helper()
	d, err := r.c.PTTL(context.Background(), key).Result()
	if err != nil {
		r.t.Fatal(err)
	}
	return d
}

// raw is the record's exact bytes: the value of a string, every field of a hash.
func (r *rig) raw(key string) map[string]string {
	r.t.Helper()
	ctx := r.t.Context()
	switch typ := r.c.Type(ctx, key).Val(); typ {
	case "hash":
		return r.c.HGetAll(ctx, key).Val()
	case "string":
		return map[string]string{"": r.c.Get(ctx, key).Val()}
	case "none":
		return nil
	default:
		return map[string]string{"(type)": typ}
	}
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// jsonDoc decodes a JSON record, numbers kept as written.
func (r *rig) jsonDoc(key string) map[string]any {
	r.t.Helper()
	v, err := r.c.Get(context.Background(), key).Result()
	if err != nil {
		r.t.Fatalf("GET %s: %v", key, err)
	}
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		r.t.Fatalf("%s is not a JSON object: %v: %s", key, err, v)
	}
	return doc
}

// Seeding, the way applications write.

const reserveTTL = 60 // seconds, as the lesson's RESERVE

func (r *rig) reserveAtlas(key, fp string) {
	r.t.Helper()
	got, err := appsim.Reserve.Run(context.Background(), r.c, []string{key}, fp, reserveTTL).StringSlice()
	if err != nil || len(got) == 0 || got[0] != "STARTED" {
		r.t.Fatalf("RESERVE %s: %v %v", key, got, err)
	}
}

func (r *rig) completeAtlas(key, fp string, status int, resp string) {
	r.t.Helper()
	n, err := appsim.Complete.Run(context.Background(), r.c, []string{key}, fp, status, resp, 300).Int64()
	if err != nil || n != 1 {
		r.t.Fatalf("COMPLETE %s: %d %v", key, n, err)
	}
}

func (r *rig) setMarker(key, v string, ttl time.Duration) {
	r.t.Helper()
	if err := r.c.Set(context.Background(), key, v, ttl).Err(); err != nil {
		r.t.Fatal(err)
	}
}

// A JSON record reserved by its application: other fields, including a
// nested object and numbers, must survive every write.
const jsonProcessing = `{"status":"IN_PROGRESS","fp":"fp-json-1","created_at":1700000000123,"response":{"status_code":null,"body":null},"meta":{"tenant":"t-9","tags":["a","b"]}}`

const jsonComplete = `{"status":"COMPLETE","fp":"fp-json-1","created_at":1700000000123,"response":{"status_code":201,"body":{"order_id":"ord-7"}}}`

func fp(s string) string { return appsim.Fingerprint(s) }

// auditPath is a fresh audit log's path, in the test's own folder.
func auditPath(t testing.TB) string { return filepath.Join(t.TempDir(), "audit.log") }
