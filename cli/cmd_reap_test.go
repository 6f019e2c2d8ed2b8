package cli_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/promtest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// reapPolicyFile writes a policy failing stale records of keyspace.
func reapPolicyFile(t *testing.T, keyspace string, extra ...string) string {
	t.Helper()
	doc := fmt.Sprintf("name: cli\ncycle_deadline: 5s\nrules:\n  - keyspace: %s\n    action: fail\n    max_per_cycle: 10\n    per_hour: 100\n    breaker: 20\n", keyspace)
	for _, e := range extra {
		k, v, _ := strings.Cut(e, "=")
		doc = strings.Replace(doc, "    "+k+": ", "    "+k+": "+v+" #", 1)
	}
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// staleOrphans reserves n records the way the application does and ages
// them past the processing timeout (30s of a 60s reserve TTL).
func staleOrphans(t *testing.T, srv *redistest.Server, c *redis.Client, n int) []string {
	t.Helper()
	var keys []string
	for i := range n {
		k := fmt.Sprintf("atlasmart:ch23:idem:customer-1:POST:/orders:reap-%d", i)
		recordtest.Reserve(t, srv, k, "body")
		c.Expire(t.Context(), k, 5*time.Second)
		keys = append(keys, k)
	}
	return keys
}

func reapArgs(srv *redistest.Server, policy, audit string, more ...string) []string {
	return append([]string{"reap", "--policy", policy, "--url", srv.URL(0), "--preset", "atlasmart", "--audit-log", audit}, more...)
}

// --apply with writes off is refused before anything is read or written;
// a dry run writes nothing and says what it would do; --apply --write
// fails the orphans, audited as reaper/<policy>, and releases the lease.
func TestReapCLI(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	keys := staleOrphans(t, srv, c, 3)
	audit := recordtest.AuditPath(t)
	policy := reapPolicyFile(t, "atlasmart")

	r := clitest.Run(t, nil, reapArgs(srv, policy, audit, "--apply")...)
	r.MustCode(t, cli.ExitRefused)
	r.OneLineErr(t)
	if !strings.Contains(r.Stderr, "read-only") {
		t.Errorf("refusal: %q", r.Stderr)
	}
	if _, err := os.Stat(audit); !os.IsNotExist(err) {
		t.Errorf("refused run left an audit log: %v", err)
	}

	before := map[string]string{}
	for _, k := range keys {
		before[k] = c.Dump(t.Context(), k).Val()
	}
	r = clitest.Run(t, nil, reapArgs(srv, policy, audit)...)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stdout, "(dry run") || strings.Count(r.Stdout, "would_apply atlasmart:") != 3 {
		t.Errorf("dry run output: %s", r.Stdout)
	}
	for _, k := range keys {
		if c.Dump(t.Context(), k).Val() != before[k] {
			t.Errorf("dry run changed %s", k)
		}
	}
	if n := c.Exists(t.Context(), "idemctl:reap:lease:cli", "idemctl:reap:budget:cli:atlasmart:fail").Val(); n != 0 {
		t.Errorf("dry run wrote %d lease/budget keys", n)
	}

	r = clitest.Run(t, nil, reapArgs(srv, policy, audit, "--apply", "--write")...)
	r.MustCode(t, cli.ExitOK)
	if strings.Count(r.Stdout, "applied atlasmart:") != 3 || !strings.Contains(r.Stdout, "lease held by this copy") {
		t.Errorf("apply output: %s", r.Stdout)
	}
	for _, k := range keys {
		if st := c.HGet(t.Context(), k, "state").Val(); st != "FAILED" {
			t.Errorf("%s is %s", k, st)
		}
	}
	n := 0
	for _, e := range recordtest.AuditLines(t, audit) {
		if e.Phase == "outcome" && e.Outcome == "applied" {
			n++
			if e.Actor != "reaper/cli" || !strings.HasPrefix(e.Reason, "reaper/cli: ") {
				t.Errorf("audit entry actor %q reason %q", e.Actor, e.Reason)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d applied audit entries, want 3", n)
	}
	if c.Exists(t.Context(), "idemctl:reap:lease:cli").Val() != 0 {
		t.Error("the lease was not released on exit")
	}
}

// A copy without the lease acts on nothing and names the holder; a tripped
// breaker exits 8 having written nothing; a bad policy is one line naming
// its line.
func TestReapCLIStandbyBreakerAndBadPolicy(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	keys := staleOrphans(t, srv, c, 3)
	audit := recordtest.AuditPath(t)
	c.Set(t.Context(), "idemctl:reap:lease:cli", "other-host/4242/abc", time.Minute)
	r := clitest.Run(t, nil, reapArgs(srv, reapPolicyFile(t, "atlasmart"), audit, "--apply", "--write")...)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stdout, "lease held by other-host/4242/abc") || !strings.Contains(r.Stdout, "acting on nothing") {
		t.Errorf("standby output: %s", r.Stdout)
	}
	c.Del(t.Context(), "idemctl:reap:lease:cli")

	r = clitest.Run(t, nil, reapArgs(srv, reapPolicyFile(t, "atlasmart", "max_per_cycle=2", "breaker=2"), audit, "--apply", "--write")...)
	r.MustCode(t, cli.ExitThreshold)
	if !strings.Contains(r.Stdout, "circuit breaker: 3 records qualify") {
		t.Errorf("breaker output: %s", r.Stdout)
	}
	for _, k := range keys {
		if st := c.HGet(t.Context(), k, "state").Val(); st != "PROCESSING" {
			t.Errorf("breaker tripped but %s is %s", k, st)
		}
	}

	bad := reapPolicyFile(t, "atlasmart", "action=nuke")
	r = clitest.Run(t, nil, reapArgs(srv, bad, audit)...)
	r.MustCode(t, cli.ExitUsage)
	r.OneLineErr(t)
	if !strings.Contains(r.Stderr, "line 5: rules[atlasmart]: action \"nuke\"") {
		t.Errorf("bad policy: %q", r.Stderr)
	}
	r = clitest.Run(t, nil, reapArgs(srv, reapPolicyFile(t, "atlasmart"), audit, "--max-keys", "10")...)
	r.MustCode(t, cli.ExitUsage)
	r.OneLineErr(t)
	r = clitest.Run(t, nil, reapArgs(srv, reapPolicyFile(t, "orders"), audit)...)
	r.MustCode(t, cli.ExitUsage)
	if !strings.Contains(r.Stderr, `unknown keyspace "orders"`) {
		t.Errorf("unknown keyspace: %q", r.Stderr)
	}
}

// The reaper inside the exporter: it applies, its metrics are in the
// exporter's registry, and it releases the lease when the exporter stops.
func TestExporterReaps(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	keys := staleOrphans(t, srv, c, 2)
	audit := recordtest.AuditPath(t)
	b, addr := startExporter(t, srv.URL(0), "--reap-policy", reapPolicyFile(t, "atlasmart"), "--reap-every", "1s",
		"--reap-apply", "--write", "--audit-log", audit)
	deadline := time.Now().Add(20 * time.Second)
	var m map[string]float64
	for time.Now().Before(deadline) {
		m = promtest.Scrape(t, "http://"+addr+"/metrics")
		if m["idemctl_reap_actions_total{action=fail,keyspace=atlasmart,outcome=applied}"] == 2 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if m["idemctl_reap_actions_total{action=fail,keyspace=atlasmart,outcome=applied}"] != 2 || m["idemctl_reap_lease_held{}"] != 1 ||
		m["idemctl_reap_apply{}"] != 1 || m["idemctl_reap_breaker_trips_total{action=fail,keyspace=atlasmart}"] != 0 {
		t.Fatalf("reaper metrics: %v\n%s", m, b.Stderr.String())
	}
	for _, k := range keys {
		if st := c.HGet(t.Context(), k, "state").Val(); st != "FAILED" {
			t.Errorf("%s is %s", k, st)
		}
	}
	b.Stop(t).MustCode(t, cli.ExitOK)
	if c.Exists(t.Context(), "idemctl:reap:lease:cli").Val() != 0 {
		t.Error("the exporter's reaper kept the lease after stopping")
	}
}

// Two reaper processes (`reap --every`) against one Redis while the
// application keeps orphaning records: one holds the lease and acts, the
// other stands by naming it; when the holder exits it releases the lease
// and the other takes over. Their acting windows, from their audit logs,
// never overlap, and no record is written twice.
func TestTwoReaperProcesses(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	bin := clitest.BuildBinary(t)
	dir := t.TempDir()
	policy := reapPolicyFile(t, "atlasmart")
	start := func(name string) (*exec.Cmd, *clitest.Buffer, string) {
		audit := filepath.Join(dir, name+".log")
		cmd := exec.Command(bin, reapArgs(srv, policy, audit, "--apply", "--write", "--every", "1s", "-o", "json")...)
		cmd.Env = clitest.Environ(t, "HOME="+dir)
		var out clitest.Buffer // read while the process still writes
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, &out, audit
	}
	ctx, stop := context.WithCancel(t.Context())
	orphaning := make(chan struct{})
	go func() { // the application, crashing now and then
		defer close(orphaning)
		for i := 0; ctx.Err() == nil; i++ {
			k := fmt.Sprintf("atlasmart:ch23:idem:customer-2:POST:/orders:proc-%d", i)
			recordtest.Reserve(t, srv, k, "body")
			c.Expire(t.Context(), k, 5*time.Second)
			time.Sleep(100 * time.Millisecond)
		}
	}()
	a, aOut, aAudit := start("a")
	time.Sleep(500 * time.Millisecond)
	_, bOut, bAudit := start("b")
	time.Sleep(3 * time.Second)
	if err := a.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(); err != nil {
		t.Fatalf("a: %v\n%s", err, aOut)
	}
	time.Sleep(3 * time.Second)
	stop()
	<-orphaning

	runs, written := recordtest.ActedApart(t, aAudit, bAudit)
	if runs[0] == 0 || runs[1] == 0 {
		t.Fatalf("acting cycles: a %d, b %d\na: %s\nb: %s", runs[0], runs[1], aOut, bOut)
	}
	if !strings.Contains(bOut.String(), `"holder":"`) || !strings.Contains(bOut.String(), fmt.Sprintf("/%d/", a.Process.Pid)) {
		t.Errorf("b never named a as the holder:\n%s", bOut)
	}
	t.Logf("a acted in %d cycles, b in %d; %d records written", runs[0], runs[1], len(written))
}

// A protected profile: the reaper never prompts, it needs the profile's
// name in --confirm-profile.
func TestReapProtectedProfile(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	keys := staleOrphans(t, srv, c, 1)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte("profiles:\n  prod:\n    url: "+srv.URL(0)+"\n    writes: true\n    protected: true\n    audit_log: "+
		filepath.Join(dir, "audit.log")+"\nkeyspaces:\n  - name: orders\n    preset: atlasmart\n"), 0o600)
	args := []string{"reap", "--config", cfg, "--profile", "prod", "--policy", reapPolicyFile(t, "orders"), "--apply"}
	r := clitest.Run(t, nil, args...)
	r.MustCode(t, cli.ExitRefused)
	r.OneLineErr(t)
	if !strings.Contains(r.Stderr, "--confirm-profile prod") {
		t.Errorf("protected: %q", r.Stderr)
	}
	clitest.Run(t, nil, append(args, "--confirm-profile", "staging")...).MustCode(t, cli.ExitRefused)
	if st := c.HGet(t.Context(), keys[0], "state").Val(); st != "PROCESSING" {
		t.Fatalf("written without the profile's name: %s", st)
	}
	clitest.Run(t, nil, append(args, "--confirm-profile", "prod")...).MustCode(t, cli.ExitOK)
	if st := c.HGet(t.Context(), keys[0], "state").Val(); st != "FAILED" {
		t.Errorf("with the profile's name: %s", st)
	}
}
