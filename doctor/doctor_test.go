package doctor

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Every rule runs against a real redis-server configured to trigger it.
func TestMain(m *testing.M) { os.Exit(redistest.RunMain(m)) }

func keyspace(t *testing.T, preset string, set func(*inspect.KeyspaceSpec)) *inspect.Keyspace {
	t.Helper()
	sp := inspect.KeyspaceSpec{Schema: inspecttest.Preset(t, preset)}
	if set != nil {
		set(&sp)
	}
	return inspecttest.Spec(t, sp)
}

func run(t *testing.T, c redis.UniversalClient, opt Options, kss ...*inspect.Keyspace) Report {
	t.Helper()
	return Run(t.Context(), c, kss, inspect.Options{Count: 1000}, opt)
}

// finding returns the one finding of rule (on keyspace ks, "" for the
// server), failing when there is none or more than one.
func finding(t *testing.T, rep Report, rule, ks string) Finding {
	t.Helper()
	var out []Finding
	for _, f := range rep.Findings {
		if f.Rule == rule && f.Keyspace == ks {
			out = append(out, f)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%d %s findings on %q, want 1: %+v\nchecks %+v", len(out), rule, ks, rep.Findings, rep.Checks)
	}
	return out[0]
}

// quiet asserts the rule found nothing and reports the wanted status.
func quiet(t *testing.T, rep Report, rule, ks, status string) {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Rule == rule && f.Keyspace == ks {
			t.Fatalf("%s should stay quiet on %q: %+v", rule, ks, f)
		}
	}
	for _, c := range rep.Checks {
		if c.Rule == rule && c.Keyspace == ks {
			if c.Status != status {
				t.Fatalf("%s on %q: status %s (%s), want %s", rule, ks, c.Status, c.Reason, status)
			}
			return
		}
	}
	t.Fatalf("%s on %q: no check recorded", rule, ks)
}

const atlasPrefix = "atlasmart:ch23:idem:customer-1:POST:/orders:"

// atlas writes n lesson records: state, fingerprint unless fp is "", and a
// TTL (0: none) the way RESERVE/COMPLETE set it.
func atlas(t *testing.T, c *redis.Client, tag, state, fp string, ttl time.Duration, n int, extra ...any) {
	t.Helper()
	ctx := t.Context()
	p := c.Pipeline()
	for i := range n {
		key := fmt.Sprintf("%s%s-%d", atlasPrefix, tag, i)
		args := append([]any{"state", state}, extra...)
		if fp != "" {
			args = append(args, "fingerprint", fp)
		}
		p.HSet(ctx, key, args...)
		if ttl > 0 {
			p.PExpire(ctx, key, ttl)
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// The reproduction: records reserved with EX 6h, read under the
// preset's 1m reserve TTL. doctor proposes 6h; with 6h it stays quiet.
func TestReserveTTLProposedFromObservedTTLs(t *testing.T) {
	_, c := redistest.SharedClient(t)
	atlas(t, c, "six", "PROCESSING", "fp", 6*time.Hour-3*time.Second, 30)
	atlas(t, c, "older", "PROCESSING", "fp", 5*time.Hour, 30)

	rep := run(t, c, Options{}, keyspace(t, "atlasmart", nil))
	f := finding(t, rep, "reserve-ttl", "atlasmart")
	if f.Severity != Critical || f.Figures["proposed_reserve_ttl_ms"] != (6*time.Hour).Milliseconds() || f.Figures["age_unknown"] != 60 ||
		!strings.Contains(f.Fix, "reserve_ttl: 6h") || len(f.Samples) != samplesPer || !strings.HasPrefix(f.Samples[0], atlasPrefix) {
		t.Fatalf("%+v", f)
	}

	quiet(t, run(t, c, Options{}, keyspace(t, "atlasmart", func(s *inspect.KeyspaceSpec) { s.ReserveTTL = 6 * time.Hour })), "reserve-ttl", "atlasmart", StatusOK)

	// Configured far above what the application sets: ages overstated.
	rep = run(t, c, Options{}, keyspace(t, "atlasmart", func(s *inspect.KeyspaceSpec) { s.ReserveTTL = 24 * time.Hour }))
	f = finding(t, rep, "reserve-ttl", "atlasmart")
	if f.Severity != Warning || !strings.Contains(f.Fix, "reserve_ttl: 6h") {
		t.Fatalf("%+v", f)
	}
}

func TestProcessingTimeoutAgainstAges(t *testing.T) {
	_, c := redistest.SharedClient(t)
	// reserve TTL 1h; ages 40–50 min against a 5 min timeout: most look stale
	atlas(t, c, "slow", "PROCESSING", "fp", 15*time.Minute, 12)
	atlas(t, c, "slower", "PROCESSING", "fp", 10*time.Minute, 12)
	ks := func(timeout time.Duration) *inspect.Keyspace {
		return keyspace(t, "atlasmart", func(s *inspect.KeyspaceSpec) { s.ReserveTTL, s.ProcessingTimeout = time.Hour, timeout })
	}
	f := finding(t, run(t, c, Options{}, ks(5*time.Minute)), "processing-timeout", "atlasmart")
	if f.Severity != Warning || !strings.Contains(f.Title, "false stale") {
		t.Fatalf("%+v", f)
	}
	quiet(t, run(t, c, Options{}, ks(time.Hour)), "processing-timeout", "atlasmart", StatusOK)
	f = finding(t, run(t, c, Options{}, ks(20*time.Hour)), "processing-timeout", "atlasmart")
	if f.Severity != Info || !strings.Contains(f.Fix, "processing_timeout: ") {
		t.Fatalf("%+v", f)
	}
	// Too few ages to judge: said, not passed.
	c.FlushAll(t.Context())
	atlas(t, c, "one", "PROCESSING", "fp", 15*time.Minute, 3)
	quiet(t, run(t, c, Options{}, ks(5*time.Minute)), "processing-timeout", "atlasmart", StatusNoData)
}

func TestRetentionAgainstRetryHorizon(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ks := keyspace(t, "atlasmart", nil)
	atlas(t, c, "done", "SUCCEEDED", "fp", 300*time.Second, 20, "status", "200", "response", strings.Repeat("x", 200))
	f := finding(t, run(t, c, Options{}, ks), "retention", "atlasmart")
	if f.Severity != Warning || !strings.Contains(f.Fix, "EXPIRE key 86400") || f.Figures["max_completed_ttl_ms"] > 300_000 {
		t.Fatalf("%+v", f)
	}
	quiet(t, run(t, c, Options{RetryHorizon: 5 * time.Minute}, ks), "retention", "atlasmart", StatusOK)

	c.FlushAll(t.Context())
	atlas(t, c, "week", "SUCCEEDED", "fp", 7*24*time.Hour, 20, "status", "200", "response", strings.Repeat("x", 200))
	f = finding(t, run(t, c, Options{}, ks), "retention", "atlasmart")
	if f.Severity != Info || f.Figures["memory_freed_bytes_estimate"] <= 0 || !strings.Contains(f.Fix, "retention: 24h") {
		t.Fatalf("%+v", f)
	}
	c.FlushAll(t.Context())
	atlas(t, c, "day", "SUCCEEDED", "fp", 24*time.Hour, 20, "status", "200")
	quiet(t, run(t, c, Options{}, ks), "retention", "atlasmart", StatusOK)
}

func TestRecordsWithoutTTL(t *testing.T) {
	_, c := redistest.SharedClient(t)
	atlas(t, c, "ok", "SUCCEEDED", "fp", time.Hour, 5, "status", "200")
	atlas(t, c, "inflight", "PROCESSING", "fp", 30*time.Second, 5)
	rep := run(t, c, Options{}, keyspace(t, "atlasmart", nil))
	quiet(t, rep, "no-ttl", "atlasmart", StatusOK)
	quiet(t, rep, "processing-no-ttl", "atlasmart", StatusOK)

	atlas(t, c, "forever", "SUCCEEDED", "fp", 0, 4, "status", "200")
	atlas(t, c, "stuck", "PROCESSING", "fp", 0, 2)
	ctx := t.Context()
	c.Set(ctx, "idempotency:order:1", "processing", 0) // SETNX without EX
	rep = run(t, c, Options{}, keyspace(t, "atlasmart", nil), keyspace(t, "setnx", nil))
	f := finding(t, rep, "no-ttl", "atlasmart")
	if f.Severity != Warning || f.Figures["records"] != 4 || !strings.Contains(f.Evidence[1], "COMPLETE step did not re-set EXPIRE") {
		t.Fatalf("%+v", f)
	}
	f = finding(t, rep, "processing-no-ttl", "atlasmart")
	if f.Severity != Critical || f.Figures["records"] != 2 || len(f.Samples) != 2 {
		t.Fatalf("%+v", f)
	}
	f = finding(t, rep, "processing-no-ttl", "setnx")
	if !strings.Contains(f.Evidence[1], "SETNX-forever") || !strings.Contains(f.Fix, "SET key processing NX EX") {
		t.Fatalf("%+v", f)
	}
}

// Powertools stores in_progress_expiration only when the Lambda context is
// registered; the finding explains what each library does without it.
func TestPowertoolsInProgressExpiration(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := t.Context()
	exp := time.Now().Add(time.Hour).Unix()
	c.Set(ctx, "orders.handler#aaaa", fmt.Sprintf(`{"status":"INPROGRESS","expiration":%d,"in_progress_expiration":%d}`, exp, time.Now().Add(time.Minute).UnixMilli()), time.Hour)
	ks := keyspace(t, "powertools", nil)
	quiet(t, run(t, c, Options{}, ks), "in-progress-expiration", "powertools", StatusOK)

	c.Set(ctx, "orders.handler#bbbb", fmt.Sprintf(`{"status":"INPROGRESS","expiration":%d}`, exp), time.Hour)
	f := finding(t, run(t, c, Options{}, ks), "in-progress-expiration", "powertools")
	if f.Severity != Warning || f.Figures["records"] != 1 || f.Samples[0] != "orders.handler#bbbb" ||
		!strings.Contains(f.Evidence[1], "TypeScript's takes such a record over at once") || !strings.Contains(f.Fix, "register_lambda_context") {
		t.Fatalf("%+v", f)
	}
}

// serverCase is a server started with args and what rule must say of it.
type serverCase struct {
	args []string
	sev  Severity
	ok   bool // quiet: status ok
}

// serverRule starts a server per case (with three records written) and
// checks the server-wide rule's finding and its fix.
func serverRule(t *testing.T, rule, fix string, cases []serverCase) {
	t.Helper()
	ks := keyspace(t, "atlasmart", nil)
	for _, c := range cases {
		srv := redistest.Own(t, c.args...)
		cl := srv.Client(0)
		atlas(t, cl, "r", "SUCCEEDED", "fp", time.Hour, 3, "status", "200")
		rep := run(t, cl, Options{}, ks)
		cl.Close()
		if c.ok {
			quiet(t, rep, rule, "", StatusOK)
			continue
		}
		if f := finding(t, rep, rule, ""); f.Severity != c.sev || !strings.Contains(f.Fix, fix) {
			t.Errorf("%v: %+v", c.args, f)
		}
	}
}

func TestEvictionPolicy(t *testing.T) {
	serverRule(t, "eviction", "maxmemory-policy noeviction", []serverCase{
		{[]string{"--maxmemory-policy", "allkeys-lru", "--maxmemory", "100mb"}, Critical, false},
		{[]string{"--maxmemory-policy", "allkeys-lru"}, Warning, false}, // no maxmemory yet
		{[]string{"--maxmemory-policy", "volatile-ttl", "--maxmemory", "100mb"}, Critical, false},
		{[]string{"--maxmemory-policy", "noeviction", "--maxmemory", "100mb"}, 0, true},
	})
	ks := keyspace(t, "atlasmart", nil)

	// Keys already evicted: critical, with the count.
	srv := redistest.Own(t, "--maxmemory-policy", "allkeys-random", "--maxmemory", "2mb")
	cl := srv.Client(0)
	defer cl.Close()
	for i := range 100 {
		cl.Set(t.Context(), fmt.Sprintf("cache:%d", i), strings.Repeat("x", 50_000), 0)
	}
	f := finding(t, run(t, cl, Options{}, ks), "eviction", "")
	if f.Severity != Critical || f.Figures["evicted_keys"] == 0 {
		t.Fatalf("%+v", f)
	}
}

func TestPersistence(t *testing.T) {
	serverRule(t, "persistence", "appendonly yes", []serverCase{
		{nil, Critical, false}, // redistest's default: save "", appendonly no
		{[]string{"--save", "900 1"}, Warning, false},
		{[]string{"--appendonly", "yes", "--appendfsync", "no"}, Warning, false},
		{[]string{"--appendonly", "yes", "--appendfsync", "everysec"}, 0, true},
	})
}

// A rule whose command the ACL refuses says so instead of guessing: CONFIG
// refused still leaves eviction readable from INFO; INFO refused skips the
// server rules, and none of them passes.
func TestACLRefusalsAreSkippedNotPassed(t *testing.T) {
	srv := redistest.Own(t, "--maxmemory-policy", "allkeys-lru", "--maxmemory", "100mb")
	admin := srv.Client(0)
	defer admin.Close()
	ctx := t.Context()
	for user, rights := range map[string]string{"noconfig": "-config", "noinfo": "-info"} {
		if err := admin.Do(ctx, "ACL", "SETUSER", user, "on", ">pw", "~*", "+@all", rights).Err(); err != nil {
			t.Fatal(err)
		}
	}
	ks := keyspace(t, "atlasmart", nil)
	cl := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "noconfig", Password: "pw"})
	defer cl.Close()
	rep := run(t, cl, Options{}, ks)
	if f := finding(t, rep, "eviction", ""); f.Severity != Critical { // maxmemory_policy is in INFO
		t.Errorf("%+v", f)
	}
	quiet(t, rep, "persistence", "", StatusSkipped)
	if s := ReadServer(ctx, cl, true); !s.ConfigRefused { // the exporter stops asking
		t.Errorf("CONFIG GET refused by the ACL, but not marked so: %v", s.ConfigErr)
	}
	if !strings.Contains(checkReason(rep, "persistence"), "CONFIG GET refused by the ACL") {
		t.Errorf("reason: %q", checkReason(rep, "persistence"))
	}

	cl2 := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "noinfo", Password: "pw"})
	defer cl2.Close()
	rep = run(t, cl2, Options{}, ks)
	for _, rule := range []string{"eviction", "persistence", "replica"} {
		quiet(t, rep, rule, "", StatusSkipped)
		if r := checkReason(rep, rule); !strings.Contains(r, "INFO refused by the ACL") || !strings.Contains(r, "+info") {
			t.Errorf("%s: %q", rule, r)
		}
	}
	if rep.Skipped() < 3 {
		t.Errorf("skipped %d", rep.Skipped())
	}

	// Accepted in the config: silenced with both reasons, no longer skipped.
	rep = run(t, cl2, Options{Silence: []Silence{{Rule: "persistence", Reason: "managed service: no INFO for us"}}}, ks)
	quiet(t, rep, "persistence", "", StatusSilenced)
	if r := checkReason(rep, "persistence"); !strings.HasPrefix(r, "managed service: no INFO for us (skipped: INFO refused") {
		t.Errorf("%q", r)
	}
}

func checkReason(rep Report, rule string) string {
	for _, c := range rep.Checks {
		if c.Rule == rule {
			return c.Reason
		}
	}
	return ""
}

// A replica that accepts writes loses what it is sent at the next resync.
func TestReplicaAcceptingWrites(t *testing.T) {
	primary := redistest.Own(t)
	ks := keyspace(t, "atlasmart", nil)
	for _, c := range []struct {
		ro   string
		want bool
	}{{"no", true}, {"yes", false}} {
		rep := redistest.Own(t, "--replicaof", "127.0.0.1", fmt.Sprint(primary.Port), "--replica-read-only", c.ro)
		cl := rep.Client(0)
		r := run(t, cl, Options{}, ks)
		cl.Close()
		if !c.want {
			quiet(t, r, "replica", "", StatusOK)
			// No word from the primary for a second (it pings every 10 s):
			// over a 500 ms lag budget, the replica is behind.
			cl = rep.Client(0)
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				s := ReadServer(t.Context(), cl, false)
				if n, ok := s.infoInt("master_last_io_seconds_ago"); ok && n >= 1 && s.Info["master_link_status"] == "up" {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			f := finding(t, run(t, cl, Options{MaxLag: 500 * time.Millisecond}, ks), "replica", "")
			cl.Close()
			if f.Severity != Warning || f.Figures["lag_seconds"] < 1 {
				t.Errorf("%+v", f)
			}
			continue
		}
		if f := finding(t, r, "replica", ""); f.Severity != Critical || !strings.Contains(f.Fix, "replica-read-only yes") {
			t.Errorf("%+v", f)
		}
	}
	cl := primary.Client(0)
	defer cl.Close()
	quiet(t, run(t, cl, Options{}, ks), "replica", "", StatusOK) // a primary with healthy replicas
}

func TestMixedFormatsFingerprintsLargeResponses(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := t.Context()
	ks := keyspace(t, "atlasmart", nil)
	atlas(t, c, "good", "SUCCEEDED", "fp", time.Hour, 10, "status", "200", "response", "{}")
	rep := run(t, c, Options{}, ks, keyspace(t, "setnx", nil))
	for _, r := range []string{"mixed-formats", "missing-fingerprint", "large-response"} {
		quiet(t, rep, r, "atlasmart", StatusOK)
	}

	c.Set(ctx, atlasPrefix+"other", `{"status":"COMPLETE"}`, time.Hour)                          // another format under the pattern
	atlas(t, c, "nofp", "SUCCEEDED", "", time.Hour, 2, "status", "200")                          // no fingerprint
	atlas(t, c, "big", "SUCCEEDED", "fp", time.Hour, 1, "response", strings.Repeat("y", 40_000)) // above 16 KiB
	c.Set(ctx, "idempotency:order:9", "done", time.Hour)
	rep = run(t, c, Options{}, ks, keyspace(t, "setnx", nil))
	if f := finding(t, rep, "mixed-formats", "atlasmart"); f.Severity != Warning || f.Samples[0] != atlasPrefix+"other" {
		t.Errorf("%+v", f)
	}
	if f := finding(t, rep, "missing-fingerprint", "atlasmart"); f.Severity != Warning || f.Figures["records"] != 2 {
		t.Errorf("%+v", f)
	}
	if f := finding(t, rep, "missing-fingerprint", "setnx"); f.Severity != Info {
		t.Errorf("%+v", f)
	}
	if f := finding(t, rep, "large-response", "atlasmart"); f.Figures["largest_bytes"] != 40_000 {
		t.Errorf("%+v", f)
	}

	// Mostly another format: critical, and every count is in doubt.
	for i := range 20 {
		c.Set(ctx, fmt.Sprintf("%sother-%d", atlasPrefix, i), `{"status":"COMPLETE"}`, time.Hour)
	}
	if f := finding(t, run(t, c, Options{}, ks), "mixed-formats", "atlasmart"); f.Severity != Critical {
		t.Errorf("%+v", f)
	}
}

// A pattern that matches nothing in a database that holds keys, and an
// incomplete scan, are findings: counts of zero prove nothing.
func TestScanCoverage(t *testing.T) {
	_, c := redistest.SharedClient(t)
	rep := run(t, c, Options{}, keyspace(t, "atlasmart", nil))
	quiet(t, rep, "scan-coverage", "", StatusOK) // an empty database: nothing to see
	c.Set(t.Context(), "orders:idem:1", "x", time.Hour)
	f := finding(t, run(t, c, Options{}, keyspace(t, "atlasmart", nil)), "scan-coverage", "atlasmart")
	if f.Severity != Critical || !strings.Contains(f.Evidence[0], "matched no key") {
		t.Fatalf("%+v", f)
	}
	atlas(t, c, "r", "SUCCEEDED", "fp", time.Hour, 50, "status", "200")
	rep = Run(t.Context(), c, []*inspect.Keyspace{keyspace(t, "atlasmart", nil)}, inspect.Options{Count: 10, MaxKeys: 10}, Options{})
	if f := finding(t, rep, "scan-coverage", "atlasmart"); !strings.Contains(f.Evidence[0], "incomplete") {
		t.Fatalf("%+v", f)
	}
	quiet(t, rep, "no-ttl", "atlasmart", StatusSkipped) // nothing found in part of the keyspace is not "ok"
}

func TestFieldTTL(t *testing.T) {
	_, c := redistest.SharedClient(t)
	redistest.RequireFieldTTL(t, c)
	ctx := t.Context()
	atlas(t, c, "k", "SUCCEEDED", "fp", time.Hour, 1, "status", "200") // a key TTL: nothing to say
	quiet(t, run(t, c, Options{}, keyspace(t, "atlasmart", nil)), "field-ttl", "", StatusOK)
	atlas(t, c, "f", "SUCCEEDED", "fp", 0, 1, "status", "200", "response", "{}")
	key := atlasPrefix + "f-0"
	if err := c.Do(ctx, "hpexpire", key, 60_000, "fields", 2, "state", "fingerprint").Err(); err != nil {
		t.Fatal(err)
	}
	c.Do(ctx, "hpexpire", key, 600_000, "fields", 2, "status", "response")
	f := finding(t, run(t, c, Options{}, keyspace(t, "atlasmart", nil)), "field-ttl", "")
	if f.Severity != Warning || f.Samples[0] != key {
		t.Fatalf("%+v", f)
	}
}

// Keys with a hash tag around the principal all land on one node: doctor
// says so; the same keys without the tag spread, and it stays quiet.
func TestClusterKeyspaceOnOneNode(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	c := cl.Client()
	defer c.Close()
	ctx := t.Context()
	write := func(format string) {
		p := c.Pipeline()
		for i := range 300 {
			key := fmt.Sprintf(format, i)
			p.HSet(ctx, key, "state", "SUCCEEDED", "fingerprint", "fp", "status", "200")
			p.Expire(ctx, key, 24*time.Hour)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ks := keyspace(t, "atlasmart", nil)
	write("atlasmart:ch23:idem:customer-%d:POST:/orders:req")
	quiet(t, run(t, c, Options{}, ks), "cluster-slots", "atlasmart", StatusOK)

	if err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return n.FlushAll(ctx).Err() }); err != nil {
		t.Fatal(err)
	}
	write("atlasmart:ch23:idem:{customer-1}:POST:/orders:req-%d")
	f := finding(t, run(t, c, Options{}, ks), "cluster-slots", "atlasmart")
	if f.Severity != Warning || f.Figures["keys_on_busiest_node"] < 300 || !strings.Contains(strings.Join(f.Evidence, " "), "top principal: {customer-1}") {
		t.Fatalf("%+v", f)
	}
	// The database's key count, summed over the primaries, tells an empty
	// pattern from an idle keyspace on a cluster too.
	if n, err := inspect.DBKeys(ctx, c); err != nil || n != 300 {
		t.Errorf("DBKeys on the cluster: %d, %v", n, err)
	}
	f = finding(t, run(t, c, Options{}, keyspace(t, "setnx", nil)), "scan-coverage", "setnx")
	if !strings.Contains(f.Evidence[0], "the database holds 300 keys no keyspace matched") {
		t.Errorf("%+v", f)
	}
	quiet(t, run(t, redistest.Shared(t).Client(0), Options{}, ks), "cluster-slots", "atlasmart", StatusNoData)
}
