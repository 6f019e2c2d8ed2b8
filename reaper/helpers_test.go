package reaper

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/config"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
	"github.com/idemctl/idemctl/verify"
)

// The reaper is tested against a real redis-server: the lease, the
// budget and the guarded writes are the server's own behaviour.
func TestMain(m *testing.M) { os.Exit(redistest.RunMain(m)) }

// jobConfig is a hash format with everything a reaper judges by: a
// creation time, a library deadline, a lock companion.
const jobConfig = `
schemas:
  job:
    container: hash
    state:
      field: state
      map: {PROCESSING: processing, SUCCEEDED: succeeded, FAILED: failed}
    fingerprint: fp
    status: status
    response: response
    created: {field: created, unit: ms}
    deadline: {field: deadline, unit: ms}
    lock: {key: "{key}:lock"}
    defaults: {match: "job:*", processing_timeout: 1m, retention: 1h}
    actions:
      fail: {state: FAILED, status: 503, by: failed_by, reason: reason}
      reconcile: {state: SUCCEEDED, status: 200, ref: ref, by: reconciled_by, reason: reason}
keyspaces:
  - name: jobs
    schema: job
`

func jobKeyspace(t *testing.T) *inspect.Keyspace {
	t.Helper()
	cfg, err := config.Parse([]byte(jobConfig))
	if err != nil {
		t.Fatal(err)
	}
	ks, err := cfg.Keyspace("jobs")
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// job is one record as the application would leave it.
type job struct {
	key        string
	state      string
	age        time.Duration // created this long ago; <0: no created field
	deadlineIn time.Duration // deadline this far ahead (negative: passed); 0: none
	lock       bool          // its lock companion exists
}

// jobs is the shared server holding js, written as write does.
func jobs(t *testing.T, js ...job) redis.UniversalClient {
	t.Helper()
	_, c := redistest.SharedClient(t)
	writeJobs(t, c, js...)
	return c
}

// writeJobs stores jobs with times from the server's clock.
func writeJobs(t *testing.T, c redis.UniversalClient, jobs ...job) {
	t.Helper()
	ctx := t.Context()
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	ms := now.UnixMilli()
	pipe := c.Pipeline()
	for _, j := range jobs {
		st := j.state
		if st == "" {
			st = "PROCESSING"
		}
		vals := []any{"state", st, "fp", "fp-" + j.key}
		if j.age >= 0 {
			vals = append(vals, "created", strconv.FormatInt(ms-j.age.Milliseconds(), 10))
		}
		if j.deadlineIn != 0 {
			vals = append(vals, "deadline", strconv.FormatInt(ms+j.deadlineIn.Milliseconds(), 10))
		}
		pipe.HSet(ctx, j.key, vals...)
		pipe.Expire(ctx, j.key, 2*time.Hour)
		if j.lock {
			pipe.Set(ctx, j.key+":lock", "1", time.Hour)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// orphans are n processing records long past their timeout, lock gone.
func orphans(prefix string, n int) []job {
	out := make([]job, n)
	for i := range out {
		out[i] = job{key: "job:" + prefix + strconv.Itoa(i), age: time.Duration(10+i) * time.Minute}
	}
	return out
}

// policy parses a policy document for the jobs keyspace and binds it.
func policy(t *testing.T, doc string, verifier bool) *Policy {
	t.Helper()
	p, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	ks := jobKeyspace(t)
	err = p.Bind(func(name string) (*inspect.Keyspace, error) { return ks, nil },
		func(*inspect.Keyspace) bool { return verifier })
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newReaper makes a reaper; apply opens an audit log under dir.
func newReaper(t *testing.T, c redis.UniversalClient, p *Policy, apply bool, auditLog string) *Reaper {
	t.Helper()
	setup := actions.Setup{Client: c, Policy: &actions.Policy{Writes: apply},
		Identity: audit.Identity{OSUser: "tester", Actor: p.Actor()}, AuditPath: auditLog}
	ex := actions.NewPlanner(setup)
	if apply {
		var err error
		if ex, err = actions.NewExecutor(setup); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ex.Close() })
	}
	return &Reaper{Policy: p, Client: c, Exec: ex, Apply: apply, Lease: NewLease(p.LeaseKey, p.LeaseTTL),
		Scan: inspect.Options{Count: 500}.WithDefaults(), Metrics: NewMetrics(p)}
}

// applied lists the keys the audit log says were written, with the actor.
func applied(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := audit.ReadEntries(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Phase == audit.PhaseOutcome && e.Outcome == write.Applied {
			if _, twice := out[e.Key]; twice {
				t.Errorf("%s written twice", e.Key)
			}
			out[e.Key] = e.Actor
		}
	}
	return out
}

// dumpAll is every key's DUMP and PTTL: what "nothing was written" means.
func dumpAll(t *testing.T, c redis.UniversalClient) map[string]string {
	t.Helper()
	ctx := t.Context()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		out[k] = c.Dump(ctx, k).Val() + "|" + strconv.FormatBool(c.PTTL(ctx, k).Val() > 0)
	}
	return out
}

const basePolicy = `
name: test
cycle_deadline: 10s
rules:
  - keyspace: jobs
    action: fail
    max_per_cycle: 50
    per_hour: 1000
    breaker: 100
`

// counterValue sums a metric's series as the registry serves them.
func counterValue(t *testing.T, m *Metrics, name string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, mm := range f.GetMetric() {
			sum += mm.GetCounter().GetValue() + mm.GetGauge().GetValue()
		}
	}
	return sum
}

// hookScript is a verify hook answering by the key it is given: keys
// holding "done" have their order (ref ord-<key>), "gone" have none,
// "hang" never answer, anything else gets garbage.
const hookScript = `#!/bin/sh
case "$1" in
  *done*) printf '{"verdict":"done","ref":"ord-%s","status":201,"response":"{\\"order\\":\\"%s\\"}","detail":"order found"}\n' "$1" "$1" ;;
  *gone*) echo '{"verdict":"not_done","detail":"no such order"}' ;;
  *hang*) sleep 30 ;;
  *) echo 'Traceback: something broke' ;;
esac
`

// hook writes hookScript and returns its hook.
func hook(t *testing.T) *verify.Hook {
	t.Helper()
	path := filepath.Join(t.TempDir(), "verify.sh")
	if err := os.WriteFile(path, []byte(hookScript), 0o755); err != nil {
		t.Fatal(err)
	}
	return &verify.Hook{Command: []string{path, "{key}"}, Timeout: time.Second, Concurrency: 4}
}
