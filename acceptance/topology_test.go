package acceptance

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

var longTiming = []string{"--reserve-ttl", "1h", "--processing-timeout", "10m"}

func seedPlan(n int) appsim.Plan {
	return appsim.Plan{Schema: "atlasmart", Count: n, ReserveTTL: time.Hour, ProcessingTimeout: 10 * time.Minute,
		Retention: time.Hour, LargeResponse: 16 << 10, RandSeed: 11}
}

// ndjsonKeys parses scan output and fails on a key listed twice.
func ndjsonKeys(t *testing.T, out string) map[string]string {
	t.Helper()
	keys := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct{ Key, State string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		if _, dup := keys[rec.Key]; dup {
			t.Fatalf("key listed twice: %s", rec.Key)
		}
		keys[rec.Key] = rec.State
	}
	return keys
}

type coverageOut struct {
	Coverage []struct {
		Node, Role, Slots, Error string
		Keys                     int64
		Complete                 bool
		Lag                      string `json:"replica_lag"`
	} `json:"coverage"`
	Total    int64 `json:"total"`
	Complete bool  `json:"complete"`
}

// A 3-primary cluster with a replica each: every key exactly once, coverage
// per node, replicas scanned on request, a manual failover survived by scans
// and writes, and a primary killed mid-scan named in the report.
func TestClusterScanFailoverAndNodeLoss(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 1)
	cc := cl.Client()
	defer cc.Close()
	ctx := t.Context()
	res, err := appsim.Seed(ctx, cc, seedPlan(100000))
	if err != nil {
		t.Fatal(err)
	}
	url := "redis://" + cl.Nodes[0].Addr
	base := append([]string{"--cluster", "--url", url, "--addrs", cl.Nodes[1].Addr, "--preset", "atlasmart"}, longTiming...)

	scan := clitest.Run(t, nil, append([]string{"scan", "-o", "ndjson"}, base...)...)
	scan.MustCode(t, 0)
	keys := ndjsonKeys(t, scan.Stdout)
	if len(keys) != 100000 {
		t.Fatalf("cluster scan listed %d keys, want 100000", len(keys))
	}
	n := 0
	cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, "atlasmart:*", 1000).Iterator()
		for iter.Next(ctx) {
			if _, ok := keys[iter.Val()]; !ok {
				t.Errorf("key %s on %s not listed", iter.Val(), c.Options().Addr)
			}
		}
		return iter.Err()
	})
	_ = n

	st := clitest.Run(t, nil, append([]string{"stats", "-o", "json"}, base...)...)
	st.MustCode(t, 0)
	var cov coverageOut
	json.Unmarshal([]byte(st.Stdout), &cov)
	if cov.Total != 100000 || !cov.Complete || len(cov.Coverage) != 3 {
		t.Fatalf("stats: total %d complete %v coverage %+v", cov.Total, cov.Complete, cov.Coverage)
	}
	var sum int64
	for _, c := range cov.Coverage {
		if c.Node == "" || c.Slots == "" || c.Role != "primary" || !c.Complete {
			t.Fatalf("per-node coverage: %+v", c)
		}
		sum += c.Keys
	}
	if sum != 100000 {
		t.Fatalf("per-node keys add up to %d", sum)
	}

	// Scanning the replicas spares the primaries and finds the same keys.
	st = clitest.Run(t, nil, append([]string{"stats", "-o", "json", "--read-from-replicas"}, base...)...)
	st.MustCode(t, 0)
	json.Unmarshal([]byte(st.Stdout), &cov)
	if cov.Total != 100000 || len(cov.Coverage) != 3 {
		t.Fatalf("replica stats: total %d coverage %+v", cov.Total, cov.Coverage)
	}
	for _, c := range cov.Coverage {
		if c.Role != "replica" || !strings.Contains(c.Lag, "ago") {
			t.Fatalf("replica coverage: %+v", c)
		}
	}

	// A manual failover: scans and writes carry on against the new primaries.
	var replica *redistest.Server
	for _, node := range cl.Nodes {
		info, _ := node.Client(0).Info(ctx, "replication").Result()
		if strings.Contains(info, "role:slave") {
			replica = node
			break
		}
	}
	rc := replica.Client(0)
	if err := rc.Do(ctx, "CLUSTER", "FAILOVER").Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		info, _ := rc.Info(ctx, "replication").Result()
		if strings.Contains(info, "role:master") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("CLUSTER FAILOVER did not promote the replica")
		}
		time.Sleep(100 * time.Millisecond)
	}
	rc.Close()
	// Gossip takes a moment to settle after a failover: a scan that sees the
	// slot map change says so (exit 3, "slots moved"), and a rescan is clean.
	for attempt := 0; ; attempt++ {
		st = clitest.Run(t, nil, append([]string{"stats", "-o", "json"}, base...)...)
		if st.Code == cli.ExitIncomplete && strings.Contains(st.Stderr, "slots moved") && attempt < 5 {
			time.Sleep(time.Second)
			continue
		}
		break
	}
	st.MustCode(t, 0)
	json.Unmarshal([]byte(st.Stdout), &cov)
	if cov.Total != 100000 || !cov.Complete {
		t.Fatalf("after failover: total %d complete %v", cov.Total, cov.Complete)
	}
	key := failOneStale(t, base, "failover drill")
	if got, _ := cc.HGet(ctx, key, "state").Result(); got != "FAILED" {
		t.Fatalf("write after failover: state %q", got)
	}
	_ = res

	// Resharding during a scan: every key exactly once, or an explicit
	// incomplete marker naming the moved slots — never a silent gap.
	ids := map[string]string{}
	nodesText, _ := cc.ClusterNodes(ctx).Result()
	var masterIDs []string
	for _, line := range strings.Split(strings.TrimSpace(nodesText), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && strings.Contains(f[2], "master") && !strings.Contains(f[2], "fail") {
			masterIDs = append(masterIDs, f[0])
			ids[f[0]] = strings.Split(f[1], "@")[0]
		}
	}
	done := make(chan []byte, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		out, _ := exec.Command("redis-cli", "--cluster", "reshard", ids[masterIDs[0]], "--cluster-from", masterIDs[0],
			"--cluster-to", masterIDs[1], "--cluster-slots", "200", "--cluster-yes").CombinedOutput()
		done <- out
	}()
	r := clitest.Run(t, nil, append([]string{"scan", "-o", "ndjson", "--keys-per-sec", "40000", "--max-nodes", "1"}, base...)...)
	reshard := <-done
	got := ndjsonKeys(t, r.Stdout)
	switch r.Code {
	case 0:
		if len(got) != 100000 {
			t.Fatalf("complete scan during resharding listed %d keys, want 100000\n%s", len(got), reshard)
		}
	case cli.ExitIncomplete:
		if !strings.Contains(r.Stderr, "slots moved during the scan") {
			t.Fatalf("incomplete without naming the slots: %q", r.Stderr)
		}
	default:
		t.Fatalf("resharding scan: exit %d %s", r.Code, r.Stderr)
	}
	t.Logf("scan during resharding: exit %d, %d keys; %s", r.Code, len(got), firstLine(r.Stderr))

	// A primary killed mid-scan: the report names the node and its slots.
	victim := cl.Nodes[0]
	for _, node := range cl.Nodes {
		info, _ := node.Client(0).Info(ctx, "replication").Result()
		if strings.Contains(info, "role:master") {
			victim = node
			break
		}
	}
	go func() {
		time.Sleep(400 * time.Millisecond)
		victim.Stop()
	}()
	seed := cl.Nodes[0].Addr
	if seed == victim.Addr {
		seed = cl.Nodes[1].Addr
	}
	r = clitest.Run(t, nil, "scan", "-o", "ndjson", "--cluster", "--url", "redis://"+seed, "--preset", "atlasmart",
		"--keys-per-sec", "15000", "--max-nodes", "1", "--read-timeout", "1s", "--dial-timeout", "1s")
	r.MustCode(t, cli.ExitIncomplete)
	if !strings.Contains(r.Stderr, "scan incomplete") || !strings.Contains(r.Stderr, victim.Addr) || !strings.Contains(r.Stderr, "slots") {
		t.Fatalf("node loss not named: %q", r.Stderr)
	}
}

// A primary, a replica and three sentinels: scans through the sentinels,
// and a SENTINEL FAILOVER survived by scans and writes.
func TestSentinelScanAndFailover(t *testing.T) {
	se := redistest.StartSentinel(t)
	ctx := t.Context()
	fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: se.Master, SentinelAddrs: se.SentinelAddrs(), DisableIdentity: true})
	defer fc.Close()
	if _, err := appsim.Seed(ctx, fc, seedPlan(20000)); err != nil {
		t.Fatal(err)
	}
	addrs := se.SentinelAddrs()
	base := append([]string{"--sentinel-master", se.Master, "--url", "redis://" + addrs[0], "--addrs", strings.Join(addrs[1:], ","),
		"--preset", "atlasmart"}, longTiming...)
	st := clitest.Run(t, nil, append([]string{"stats", "-o", "json"}, base...)...)
	st.MustCode(t, 0)
	var cov coverageOut
	json.Unmarshal([]byte(st.Stdout), &cov)
	if cov.Total != 20000 || !cov.Complete {
		t.Fatalf("sentinel stats: %+v", cov)
	}
	// Wait for the replica to have everything before promoting it.
	rc := se.Replica.Client(0)
	defer rc.Close()
	for deadline := time.Now().Add(20 * time.Second); ; {
		if n, _ := rc.DBSize(ctx).Result(); n == 20000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("replica never caught up")
		}
		time.Sleep(100 * time.Millisecond)
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: addrs[0]})
	defer sc.Close()
	if err := sc.Failover(ctx, se.Master).Err(); err != nil {
		t.Fatal(err)
	}
	pc := se.Primary.Client(0)
	defer pc.Close()
	for deadline := time.Now().Add(30 * time.Second); ; {
		agreed := true
		for _, sn := range se.Sentinels { // every sentinel, not just one, names the new primary
			c := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr})
			addr, err := c.GetMasterAddrByName(ctx, se.Master).Result()
			c.Close()
			if err != nil || len(addr) != 2 || addr[0]+":"+addr[1] != se.Replica.Addr {
				agreed = false
			}
		}
		info, _ := rc.Info(ctx, "replication").Result()
		old, _ := pc.Info(ctx, "replication").Result()
		if agreed && strings.Contains(info, "role:master") && strings.Contains(old, "role:slave") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("SENTINEL FAILOVER did not promote the replica")
		}
		time.Sleep(100 * time.Millisecond)
	}
	st = clitest.Run(t, nil, append([]string{"stats", "-o", "json"}, base...)...)
	st.MustCode(t, 0)
	json.Unmarshal([]byte(st.Stdout), &cov)
	if cov.Total != 20000 || !cov.Complete {
		t.Fatalf("after failover: %+v", cov)
	}
	key := failOneStale(t, base, "sentinel drill")
	if got, _ := rc.HGet(ctx, key, "state").Result(); got != "FAILED" {
		t.Fatalf("write after failover went elsewhere: state on the new primary %q", got)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// failOneStale finds a stale record through the CLI and force-fails it,
// as an operator would after a failover, and returns its key.
func failOneStale(t *testing.T, base []string, reason string) string {
	t.Helper()
	stale := clitest.Run(t, nil, append([]string{"scan", "-o", "ndjson", "--stale", "--limit", "1"}, base...)...)
	var rec struct{ Key string }
	if err := json.Unmarshal([]byte(stale.Stdout), &rec); err != nil || rec.Key == "" {
		t.Fatalf("no stale record found: %v %s", err, stale.Stderr)
	}
	w := clitest.Run(t, nil, append([]string{"fail", rec.Key, "--reason", reason, "--write", "--yes",
		"--audit-log", t.TempDir() + "/audit.log"}, base...)...)
	w.MustCode(t, 0)
	return rec.Key
}
