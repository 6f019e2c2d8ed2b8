package acceptance

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/faultproxy"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Issue 8's faults, each against a real redis-server: a stalled connection,
// a restart mid-scan, CLIENT PAUSE during a write, OOM on write, and MEMORY
// and OBJECT unavailable.

// fltWriteErr checks a write command's stderr: the plan it showed, then
// exactly one error line, last, and returns that line.
func fltWriteErr(t *testing.T, r clitest.Result, cmd string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	last := lines[len(lines)-1]
	if strings.Count(r.Stderr, "idemctl "+cmd+":") != 1 || !strings.HasPrefix(last, "idemctl "+cmd+":") ||
		strings.Contains(r.Stderr, "goroutine") || strings.Contains(r.Stderr, "panic") {
		t.Fatalf("want the plan then one error line, got %q", r.Stderr)
	}
	return last
}

var fltKeysRead = regexp.MustCompile(`(\d+) keys read there`)

// (a) A stalled connection: the proxy in front of Redis stops forwarding in
// both directions mid-scan without closing anything. Timeouts fire, the
// command ends promptly with one clear line, and what was read is printed.
func TestStalledConnectionMidScan(t *testing.T) {
	srv := redistest.Shared(t)
	clitest.Seed(t, srv.URL(0), 20000, "--reserve-ttl", "1h", "--processing-timeout", "10m")
	p, err := faultproxy.Start(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var stalled atomic.Int64 // when the proxy went dark, unix ns
	r := clitest.RunWatched(t, nil, func() { stalled.Store(time.Now().UnixNano()); p.Blackhole() },
		"scan", "--url", "redis://"+p.Addr()+"/0", "--preset", "atlasmart", "--reserve-ttl", "1h", "--processing-timeout", "10m",
		"--count", "200", "--keys-per-sec", "4000", "--read-timeout", "500ms", "--dial-timeout", "500ms")
	if stalled.Load() == 0 {
		t.Fatalf("the scan never printed anything: exit %d, stderr %q", r.Code, r.Stderr)
	}
	took := time.Since(time.Unix(0, stalled.Load()))
	if took > 15*time.Second {
		t.Fatalf("the stalled scan took %v to give up after the proxy went dark", took)
	}
	if r.Code != cli.ExitIncomplete && r.Code != cli.ExitError {
		t.Fatalf("exit %d, want %d (incomplete) or %d; stderr %q", r.Code, cli.ExitIncomplete, cli.ExitError, r.Stderr)
	}
	r.OneLineErr(t)
	if !strings.Contains(r.Stderr, "timeout") && !strings.Contains(r.Stderr, "timed out") {
		t.Errorf("the message does not say it timed out: %q", r.Stderr)
	}
	recs := recordtest.NDJSON(t, r.Stdout)
	if len(recs) == 0 || len(recs) >= 20000 {
		t.Fatalf("%d records printed; want those read before the stall", len(recs))
	}
	if r.Code == cli.ExitIncomplete {
		m := fltKeysRead.FindStringSubmatch(r.Stderr)
		if m == nil || !strings.Contains(r.Stderr, "scan incomplete") {
			t.Fatalf("an incomplete scan must say how far it got: %q", r.Stderr)
		}
		if n, _ := strconv.Atoi(m[1]); n < len(recs) {
			t.Errorf("coverage says %d keys read, %d records printed", n, len(recs))
		}
	}
	t.Logf("gave up %v after the stall, %d records printed: %s", took.Round(time.Millisecond), len(recs), strings.TrimSpace(r.Stderr))
}

// (b) The server restarts (empty, same port) in the middle of a throttled
// scan: exit 3, and the message says how far the scan got.
func TestServerRestartMidScan(t *testing.T) {
	own := redistest.Own(t)
	clitest.Seed(t, own.URL(0), 20000, "--reserve-ttl", "1h", "--processing-timeout", "10m")
	printed := make(chan struct{})
	done := make(chan clitest.Result, 1)
	go func() {
		done <- clitest.RunWatched(t, nil, func() { close(printed) }, "scan", "--url", own.URL(0), "--preset", "atlasmart",
			"--reserve-ttl", "1h", "--processing-timeout", "10m",
			"--count", "200", "--keys-per-sec", "4000", "--read-timeout", "1s", "--dial-timeout", "1s")
	}()
	select {
	case <-printed:
	case r := <-done:
		t.Fatalf("the scan ended before the restart: exit %d, stderr %q", r.Code, r.Stderr)
	}
	own.Stop()
	again := redistest.RestartOn(t, own.Port)
	var r clitest.Result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the scan did not end within 30s of the restart")
	}
	r.MustCode(t, cli.ExitIncomplete)
	r.OneLineErr(t)
	m := fltKeysRead.FindStringSubmatch(r.Stderr)
	if m == nil || !strings.Contains(r.Stderr, "scan incomplete") || !strings.Contains(r.Stderr, own.Addr) {
		t.Fatalf("stderr should name the node and the coverage reached: %q", r.Stderr)
	}
	n, _ := strconv.Atoi(m[1])
	recs := recordtest.NDJSON(t, r.Stdout)
	if n == 0 || n >= 20000 || len(recs) == 0 || len(recs) > n {
		t.Fatalf("coverage %d keys, %d records printed", n, len(recs))
	}
	// The new server is up and usable on the same address.
	c := again.Client(0)
	defer c.Close()
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", strings.TrimSpace(r.Stderr))
}

// (c) CLIENT PAUSE WRITE, issued by another client just before a write:
// the script blocks past --read-timeout, and the outcome is settled by a
// re-read and audited — never assumed — with the exit code to match. Once
// the pause ends, the record is what the outcome said.
func TestClientPauseDuringWrite(t *testing.T) {
	own, c := redistest.OwnClient(t)
	ctx := t.Context()
	key := secKey("paused-1")
	secReserve(t, c, key, `{"sku":"paused"}`)
	before := c.HGetAll(ctx, key).Val()
	audit := recordtest.AuditPath(t)

	const pause = 2 * time.Second
	if err := c.Do(ctx, "CLIENT", "PAUSE", pause.Milliseconds(), "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	r := clitest.Run(t, nil, "fail", key, "--reason", "stuck behind a pause", "--write", "--yes", "--audit-log", audit,
		"--url", own.URL(0), "--preset", "atlasmart", "--read-timeout", "500ms", "-o", "json")
	if time.Since(paused) >= pause {
		t.Fatalf("the write took longer than the pause (%v): nothing was tested; stderr %q", time.Since(paused), r.Stderr)
	}
	out := secIntentAndOutcome(t, audit, key)
	if !strings.Contains(out.Detail, "re-read") || !strings.Contains(out.Detail, "uncertain") {
		t.Fatalf("the paused write's outcome was not settled by a re-read: %+v", out)
	}
	var rep struct {
		Results []actions.Result `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || len(rep.Results) != 1 || rep.Results[0].Outcome != out.Outcome {
		t.Fatalf("reported %s, audited %s (%v)", r.Stdout, out.Outcome, err)
	}
	switch out.Outcome {
	case write.Applied:
		r.MustCode(t, cli.ExitOK)
	case write.NotApplied, write.Unknown:
		r.MustCode(t, cli.ExitError)
		if line := fltWriteErr(t, r, "fail"); !strings.Contains(line, string(out.Outcome)) || !strings.Contains(line, "re-read") {
			t.Errorf("the message does not give the outcome %s and how it was settled: %q", out.Outcome, line)
		}
	default:
		t.Fatalf("outcome %q: want applied, not_applied or unknown", out.Outcome)
	}

	// After the pause, the record agrees with what was reported.
	time.Sleep(time.Until(paused.Add(pause + 300*time.Millisecond)))
	after := c.HGetAll(ctx, key).Val()
	switch out.Outcome {
	case write.Applied:
		if after["state"] != "FAILED" {
			t.Fatalf("reported applied, the record is %v", after)
		}
	case write.NotApplied:
		if !secSameMap(before, after) {
			t.Fatalf("reported not_applied, but the record changed after the pause: %v -> %v", before, after)
		}
	}
	t.Logf("outcome %s (exit %d): %s", out.Outcome, r.Code, out.Detail)
}

// (d) Redis at maxmemory (noeviction) refuses the write: exit 1, the
// message says OOM and maxmemory, the record is unchanged, and the audit
// log has the intent and an error outcome.
func TestOOMOnWrite(t *testing.T) {
	own, c := redistest.OwnClient(t, "--maxmemory", "2mb", "--maxmemory-policy", "noeviction")
	ctx := t.Context()
	key := secKey("oom-1")
	secReserve(t, c, key, `{"sku":"oom"}`)
	filler := strings.Repeat("f", 32<<10)
	for i := 0; ; i++ {
		err := c.Set(ctx, "filler:"+strconv.Itoa(i), filler, 0).Err()
		if err != nil {
			if !strings.HasPrefix(err.Error(), "OOM") {
				t.Fatalf("filling: %v", err)
			}
			break
		}
		if i > 1000 {
			t.Fatal("maxmemory 2mb never reached")
		}
	}
	before, ttl := c.HGetAll(ctx, key).Val(), c.PTTL(ctx, key).Val()
	audit := recordtest.AuditPath(t)
	r := clitest.Run(t, nil, "fail", key, "--reason", "stuck", "--write", "--yes", "--audit-log", audit,
		"--url", own.URL(0), "--preset", "atlasmart")
	r.MustCode(t, cli.ExitError)
	if line := fltWriteErr(t, r, "fail"); !strings.Contains(line, "OOM") || !strings.Contains(line, "maxmemory") {
		t.Fatalf("the error should say OOM and maxmemory: %q", line)
	}
	if after := c.HGetAll(ctx, key).Val(); !secSameMap(before, after) || c.PTTL(ctx, key).Val() > ttl {
		t.Fatalf("the record changed under OOM: %v -> %v", before, after)
	}
	if out := secIntentAndOutcome(t, audit, key); out.Outcome != write.Failed || !strings.Contains(out.Detail, "OOM") {
		t.Fatalf("audited outcome: %+v", out)
	}
}

// (e) MEMORY and OBJECT unavailable — renamed away, or denied by the ACL:
// the scan completes with memory unknown (null) and says so once; the
// detail fetch works with the encoding unknown.
func TestMemoryObjectRenamedOrDenied(t *testing.T) {
	renamed, rc := redistest.OwnClient(t, "--rename-command", "MEMORY", "", "--rename-command", "OBJECT", "")
	if err := rc.Do(t.Context(), "MEMORY", "USAGE", "x").Err(); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("MEMORY should be renamed away: %v", err)
	}

	shared, sc := redistest.SharedClient(t)
	// The documented inspector role without the two optional rights.
	fields := secReadmeACL(t, "idemctl-inspector", secProposedInspectorACL)
	if secFieldTTLs(sc) {
		fields = append(fields, secReadmeRights(t, "inspector-field-ttl")...)
	}
	var limited []string
	for _, f := range fields {
		if f != "+memory|usage" && f != "+object|encoding" {
			limited = append(limited, f)
		}
	}
	secSetUser(t, sc, limited, "insp-"+secPW)
	env := map[string]string{"INSP_PW": "insp-" + secPW}

	for _, tc := range []struct {
		name string
		srv  *redistest.Server
		url  []string
		user *redis.Client
	}{
		{"renamed", renamed, []string{"--url", renamed.URL(0)}, renamed.Client(0)},
		{"ACL", shared, []string{"--url", "redis://idemctl-inspector@" + shared.Addr + "/0", "--password-env", "INSP_PW"},
			secUserClient(shared.Addr, "idemctl-inspector", "insp-"+secPW)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.user.Close()
			clitest.Seed(t, tc.srv.URL(0), 500)
			sc.Do(t.Context(), "ACL", "LOG", "RESET")
			r := clitest.Run(t, env, append([]string{"scan", "--preset", "atlasmart", "-o", "ndjson"}, tc.url...)...)
			r.MustCode(t, cli.ExitOK)
			recs := recordtest.NDJSON(t, r.Stdout)
			if len(recs) != 500 {
				t.Fatalf("%d records, want 500", len(recs))
			}
			for _, rec := range recs {
				if v, ok := rec["memory_bytes"]; !ok || v != nil {
					t.Fatalf("memory_bytes should be null: %v", rec)
				}
			}
			if strings.Count(r.Stderr, "MEMORY USAGE") != 1 || !strings.Contains(r.Stderr, "null") {
				t.Fatalf("want one note that memory is unknown: %q", r.Stderr)
			}
			r = clitest.Run(t, env, append([]string{"stats", "--preset", "atlasmart", "-o", "json"}, tc.url...)...)
			r.MustCode(t, cli.ExitOK)
			var st clitest.StatsOut
			if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || st.Total != 500 || !st.Complete || st.Memory.KnownRecords != 0 {
				t.Fatalf("stats: %v %+v", err, st)
			}
			key, _ := recs[0]["key"].(string)
			d, err := inspect.FetchDetail(t.Context(), tc.user, secKeyspace(t, "atlasmart"), key)
			if err != nil {
				t.Fatalf("detail: %v", err)
			}
			if tc.name == "ACL" {
				for _, d := range secACLDenials(t, sc, "idemctl-inspector") {
					if !strings.HasPrefix(d, "command memory") && !strings.HasPrefix(d, "command object") {
						t.Fatalf("the documented inspector role (less the two optional rights) lacks rights idemctl uses (ACL LOG): %s", d)
					}
				}
			}
			names := map[string]bool{}
			for _, f := range d.Fields {
				names[f.Name] = f.Value != ""
			}
			if d.Encoding != "" || d.Record.MemoryBytes != -1 || !names["state"] || !names["fingerprint"] {
				t.Fatalf("detail: encoding %q, memory %d, fields %v, partial %q", d.Encoding, d.Record.MemoryBytes, names, d.Partial)
			}
		})
	}
}
