package inspect_test

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// recordLines are records as comparable lines, times left out (they move
// between two reads), in key order.
func recordLines(recs []inspect.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%s %s %q fp=%q st=%d mem=%d resp=%d flags=%v groups=%v type=%v src=%v",
			r.Key, r.State, r.RawState, r.Fingerprint, r.Status, r.MemoryBytes, r.ResponseLen, r.Flags, r.Groups, r.Type, r.AgeSource)
	}
	sort.Strings(out)
	return out
}

func sameRecords(t *testing.T, what string, a, b []inspect.Record) {
	t.Helper()
	la, lb := recordLines(a), recordLines(b)
	if strings.Join(la, "\n") != strings.Join(lb, "\n") {
		t.Errorf("%s: %d and %d records differ", what, len(la), len(lb))
		for i := range min(len(la), len(lb)) {
			if la[i] != lb[i] {
				t.Errorf("first difference:\n %s\n %s", la[i], lb[i])
				break
			}
		}
	}
}

// auto reads by the client path (the cheaper for the server) without
// trying the script; --read-path script reads the same records, and for a
// user who may not run scripts refuses with the rights to grant. Rights
// taken away mid-scan move the rest of it to the client path, nothing lost.
func TestScriptPathRefusedFallsBack(t *testing.T) {
	srv, admin := redistest.OwnClient(t)
	ctx := t.Context()
	seedRecords(t, admin, "atlasmart", 3000, 21)
	ks := inspecttest.Keyspace(t, "atlasmart")
	ks.ReserveTTL, ks.ProcessingTimeout = time.Hour, 10*time.Minute
	want, cov := inspecttest.ScanAll(t, admin, ks, inspect.Options{ReadPath: inspect.ReadClient})
	if cov.ReadPath != "client" || len(want) != 3000 {
		t.Fatalf("client path: %q, %d records", cov.ReadPath, len(want))
	}
	admin.ConfigResetStat(ctx)
	got, cov := inspecttest.ScanAll(t, admin, ks, inspect.Options{})
	if calls, _ := evalshaStats(t, admin); cov.ReadPath != "client" || !cov.Complete || calls != 0 {
		t.Fatalf("auto on an unrestricted user: read path %q, %d script calls, coverage %+v", cov.ReadPath, calls, cov)
	}
	sameRecords(t, "auto and the client path", want, got)
	got, cov = inspecttest.ScanAll(t, admin, ks, inspect.Options{ReadPath: inspect.ReadScript})
	if cov.ReadPath != "script" || !cov.Complete {
		t.Fatalf("--read-path script on an unrestricted user: read path %q, coverage %+v", cov.ReadPath, cov)
	}
	sameRecords(t, "client and script paths", want, got)

	admin.Do(ctx, "ACL", "SETUSER", "reader", "on", ">pw", "~*", "-@all", "+@read", "+ping", "+info", "+time", "+evalsha", "+script|load")
	user := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "reader", Password: "pw", DisableIdentity: true})
	defer user.Close()
	admin.Do(ctx, "ACL", "SETUSER", "reader", "-evalsha")
	got, cov = inspecttest.ScanAll(t, user, ks, inspect.Options{})
	if cov.ReadPath != "client" || !cov.Complete {
		t.Errorf("auto without +evalsha: read path %q, coverage %+v", cov.ReadPath, cov)
	}
	sameRecords(t, "auto without +evalsha", want, got)
	_, cov = inspecttest.ScanAll(t, user, ks, inspect.Options{ReadPath: inspect.ReadScript})
	var refused *inspect.ScriptRefusedError
	if !errors.As(cov.Err, &refused) || !strings.Contains(cov.Err.Error(), "+evalsha +script|load") {
		t.Errorf("--read-path script without +evalsha: %v", cov.Err)
	}

	// Granted, then taken away after the first batch.
	admin.Do(ctx, "ACL", "SETUSER", "reader", "+evalsha")
	taken := false
	opt := inspect.Options{Count: 200, ReadPath: inspect.ReadScript, Progress: func(inspect.Progress) {
		if !taken {
			taken = true
			admin.Do(ctx, "ACL", "SETUSER", "reader", "-evalsha")
		}
	}}
	got, cov = inspecttest.ScanAll(t, user, ks, opt)
	if !strings.HasPrefix(cov.ReadPath, "client (left the script path: ") || !strings.Contains(cov.ReadPath, "evalsha") || !cov.Complete {
		t.Errorf("rights taken mid-scan: read path %q, coverage %+v", cov.ReadPath, cov)
	}
	sameRecords(t, "left mid-scan", want, got)
}

// A script cache flushed mid-scan (SCRIPT FLUSH, a restart, a failover)
// is loaded again: the scan stays on the script path.
func TestScriptPathReloadsAfterFlush(t *testing.T) {
	_, c := redistest.OwnClient(t)
	ctx := t.Context()
	seedRecords(t, c, "atlasmart", 2000, 22)
	ks := inspecttest.Keyspace(t, "atlasmart")
	flushes := 0
	opt := inspect.Options{Count: 100, InFlight: 1, ReadPath: inspect.ReadScript, Progress: func(inspect.Progress) {
		if flushes < 3 {
			flushes++
			c.ScriptFlush(ctx)
		}
	}}
	recs, cov := inspecttest.ScanAll(t, c, ks, opt)
	if cov.ReadPath != "script" || !cov.Complete || len(recs) != 2000 {
		t.Errorf("after SCRIPT FLUSH: read path %q, %d records, coverage %+v", cov.ReadPath, len(recs), cov)
	}
}

// One call holds the server at most 1 ms with no budget, half the budget
// under one: the mean call the server timed is under the cap (with a
// quarter to spare: on a loaded machine the server's own time includes
// waits for a CPU, and the first batch is sized from a guess).
func TestScriptCallsStayUnderTheCap(t *testing.T) {
	_, c := redistest.OwnClient(t)
	ctx := t.Context()
	seedRecords(t, c, "atlasmart", 20000, 23)
	ks := inspecttest.Keyspace(t, "atlasmart")
	for _, tc := range []struct {
		opt inspect.Options
		cap time.Duration
	}{
		{inspect.Options{Count: 1000, ReadPath: inspect.ReadScript}, time.Millisecond},
		{inspect.Options{MaxLatency: 400 * time.Microsecond, ReadPath: inspect.ReadScript}, 200 * time.Microsecond},
	} {
		c.ConfigResetStat(ctx)
		recs, cov := inspecttest.ScanAll(t, c, ks, tc.opt)
		if cov.ReadPath != "script" || len(recs) != 20000 {
			t.Fatalf("%+v: read path %q, %d records", tc.opt, cov.ReadPath, len(recs))
		}
		calls, usec := evalshaStats(t, c)
		if calls == 0 || time.Duration(usec/calls)*time.Microsecond > tc.cap*5/4 {
			t.Errorf("count %d, budget %v: %d calls of %d µs on average, over the %v cap", tc.opt.Count, tc.opt.MaxLatency, calls, usec/max(calls, 1), tc.cap)
		}
		t.Logf("count %d, budget %v: %d calls for 20000 keys, %d µs each on average", tc.opt.Count, tc.opt.MaxLatency, calls, usec/max(calls, 1))
	}
}

// evalshaStats reads EVALSHA's calls and microseconds from INFO commandstats.
func evalshaStats(t *testing.T, c *redis.Client) (calls, usec int64) {
	t.Helper()
	return commandStats(t, c, "evalsha")
}

// commandStats reads one command's calls and microseconds from INFO
// commandstats (which counts a script's calls too).
func commandStats(t *testing.T, c *redis.Client, cmd string) (calls, usec int64) {
	t.Helper()
	info := c.Info(t.Context(), "commandstats").Val()
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				calls = n
			case "usec":
				usec = n
			}
		}
	}
	return calls, usec
}

// On a cluster each call's keys share a slot (no CROSSSLOT), and the
// records are the client path's.
func TestScriptPathOnCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	c := cl.Client()
	defer c.Close()
	seedRecords(t, c, "atlasmart", 3000, 24)
	ks := inspecttest.Keyspace(t, "atlasmart")
	scan := func(path string) ([]inspect.Record, []inspect.Coverage) {
		var recs []inspect.Record
		covs, err := inspect.Scan(t.Context(), c, []*inspect.Keyspace{ks}, inspect.Options{ReadPath: path}, func(b inspect.Batch) error {
			recs = append(recs, b.Records...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return recs, covs
	}
	want, _ := scan(inspect.ReadClient)
	got, covs := scan(inspect.ReadScript)
	if len(covs) != 3 {
		t.Fatalf("%d node coverages, want 3", len(covs))
	}
	for _, cov := range covs {
		if cov.ReadPath != "script" || !cov.Complete {
			t.Errorf("node %s: read path %q, coverage %+v", cov.Node, cov.ReadPath, cov)
		}
	}
	if len(want) != 3000 {
		t.Fatalf("client path on the cluster: %d records", len(want))
	}
	sameRecords(t, "cluster", want, got)
}
