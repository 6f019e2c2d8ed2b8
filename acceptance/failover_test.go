package acceptance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// The failover the replication wait exists for, end to end: a primary,
// its replica and three sentinels; a bulk fail of 2,000 stuck records
// through the sentinels; mid-run the replica's link is cut (the replica
// frozen, its connection closed by the primary), then the primary is
// killed (kill -9) and Sentinel promotes the replica. Every write the run
// reported replicated is on the new primary; every write the new primary
// lacks was reported not replicated, and audit check-applied finds each;
// none is lost silently.
func TestSentinelFailoverLosesNoWriteSilently(t *testing.T) {
	se := redistest.StartSentinel(t)
	ctx := t.Context()
	pc := se.Primary.Client(0)
	defer pc.Close()
	keys := make([]string, 2000)
	var stdin strings.Builder
	for i := range keys {
		keys[i] = fmt.Sprintf("atlasmart:ch23:idem:customer-%d:POST:/orders:req-fo-%04d", i%20, i)
		if _, err := appsim.Reserve.Run(ctx, pc, []string{keys[i]}, appsim.Fingerprint(keys[i]), 3600).StringSlice(); err != nil {
			t.Fatal(err)
		}
		stdin.WriteString(keys[i] + "\n")
	}
	if n, err := pc.Do(ctx, "WAIT", 1, 10000).Int(); err != nil || n != 1 {
		t.Fatalf("the reservations did not reach the replica: %d %v", n, err)
	}
	// Sentinel promotes no replica whose link to the primary has been down
	// longer than ten times down-after-milliseconds (plus the time the
	// primary has been down): the cut replica's link is down for the rest
	// of the run, which on a loaded machine outlasts the helper's 1s × 10
	// ("-failover-abort-no-good-slave" for ever). 5s × 10 covers it.
	for _, sn := range se.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr})
		err := c.Set(ctx, se.Master, "down-after-milliseconds", "5000").Err()
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	addrs := se.SentinelAddrs()
	base := []string{"--sentinel-master", se.Master, "--url", "redis://" + addrs[0], "--addrs", strings.Join(addrs[1:], ","),
		"--preset", "atlasmart", "--audit-log", t.TempDir() + "/audit.log"}

	// The run takes about 5s at 400 writes/s; the link is cut once the
	// 500th record (they go in order) is written.
	cut := make(chan struct{})
	go func() {
		defer close(cut)
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if pc.HGet(ctx, keys[499], "state").Val() == "FAILED" {
				break
			}
		}
		syscall.Kill(se.Replica.Pid(), syscall.SIGSTOP)
		pc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica")
	}()
	r := clitest.RunStdin(t, stdin.String(), nil, append([]string{"fail", "--from-file", "-", "--reason", "failover drill",
		"--write", "--yes", "--rate", "400", "--replica-timeout", "300ms", "-o", "json"}, base...)...)
	<-cut
	defer syscall.Kill(se.Replica.Pid(), syscall.SIGCONT)
	r.MustCode(t, cli.ExitNotReplicated)
	var run struct {
		Results []struct {
			Key           string `json:"key"`
			Outcome       string `json:"outcome"`
			NotReplicated bool   `json:"not_replicated"`
			Acked         int    `json:"replicas_acked"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &run); err != nil || len(run.Results) != len(keys) {
		t.Fatalf("%d results, %v\n%.2000s", len(run.Results), err, r.Stdout)
	}
	replicated, unreplicated := map[string]bool{}, map[string]bool{}
	for _, res := range run.Results {
		switch {
		case res.Outcome != "applied":
			t.Fatalf("%s: %s", res.Key, res.Outcome)
		case res.NotReplicated:
			unreplicated[res.Key] = true
		case res.Acked == 1:
			replicated[res.Key] = true
		default:
			t.Fatalf("%s is neither replicated nor said not to be: %+v", res.Key, res)
		}
	}
	if len(replicated) == 0 || len(unreplicated) == 0 {
		t.Fatalf("the cut did not fall mid-run: %d replicated, %d not", len(replicated), len(unreplicated))
	}

	// The failover: the primary dies, Sentinel promotes the replica.
	syscall.Kill(se.Primary.Pid(), syscall.SIGKILL)
	syscall.Kill(se.Replica.Pid(), syscall.SIGCONT)
	rc := se.Replica.Client(0)
	defer rc.Close()
	// Sentinel retries a failed election after twice the failover timeout
	// (8 s): on a loaded 2-CPU machine the first attempts can fail.
	for deadline := time.Now().Add(120 * time.Second); ; {
		agreed := true
		for _, sn := range se.Sentinels {
			c := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr})
			addr, err := c.GetMasterAddrByName(ctx, se.Master).Result()
			c.Close()
			agreed = agreed && err == nil && len(addr) == 2 && addr[0]+":"+addr[1] == se.Replica.Addr
		}
		if info, _ := rc.Info(ctx, "replication").Result(); agreed && strings.Contains(info, "role:master") {
			break
		}
		if time.Now().After(deadline) {
			for _, sn := range se.Sentinels { // why: each sentinel's own account
				b, _ := os.ReadFile(filepath.Join(sn.Dir, "redis.log"))
				t.Logf("sentinel %s:\n%s", sn.Addr, lastLines(string(b), 25))
			}
			t.Fatal("Sentinel did not promote the replica")
		}
		time.Sleep(200 * time.Millisecond)
	}
	missing := map[string]bool{}
	for _, k := range keys {
		if st := rc.HGet(ctx, k, "state").Val(); st != "FAILED" {
			missing[k] = true
			if replicated[k] {
				t.Errorf("lost silently: %s was reported replicated, and the new primary has it %q", k, st)
			}
		}
	}

	r = clitest.Run(t, nil, append([]string{"audit", "check-applied", "-o", "json"}, base...)...)
	if len(missing) > 0 {
		r.MustCode(t, cli.ExitNotReplicated)
	}
	var check struct {
		Checks []struct {
			Key, Status string
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &check); err != nil || len(check.Checks) != len(keys) {
		t.Fatalf("check-applied: %d checks, %v\n%.2000s\n%s", len(check.Checks), err, r.Stdout, r.Stderr)
	}
	lost := 0
	for _, c := range check.Checks {
		switch {
		case c.Status == "lost" && !missing[c.Key], c.Status == "kept" && missing[c.Key]:
			t.Errorf("check-applied says %s of %s", c.Status, c.Key)
		case c.Status == "lost":
			lost++
		case c.Status != "kept":
			t.Errorf("check-applied: %s %s", c.Key, c.Status)
		}
	}
	if lost != len(missing) {
		t.Errorf("check-applied found %d lost, the new primary lacks %d", lost, len(missing))
	}
	t.Logf("failover: %d writes attempted, %d acknowledged by the replica, %d reported not replicated, %d lost (found by check-applied: %d), 0 lost silently",
		len(keys), len(replicated), len(unreplicated), len(missing), lost)
}

// lastLines is the end of a log, for a failure's message.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
