package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

var recordFields = []string{"key", "keyspace", "type", "state", "raw_state", "fingerprint", "status", "ttl_ms",
	"memory_bytes", "age_ms", "age_source", "stale", "flags", "groups"}

// The "done when": seed 100k, scan lists exactly the seeded records
// with every field, and stats matches seed's counts kind by kind.
func TestSeedScanStatsAgree(t *testing.T) {
	srv := redistest.Shared(t)
	url := srv.URL(0)
	// Long reserve TTL and timeout so no record changes class while the test runs.
	timing := []string{"--reserve-ttl", "1h", "--processing-timeout", "10m"}
	so := clitest.Seed(t, url, 100000, timing...)
	if so.Expected.Total != 100000 || so.ConflictsRejected != so.Kinds["conflict"] || so.Kinds["stale"] == 0 {
		t.Fatalf("seed: %+v", so)
	}

	scan := clitest.Run(t, nil, append([]string{"scan", "--url", url, "--preset", "atlasmart",
		"--match", "atlasmart:ch23:idem:*", "--output", "ndjson"}, timing...)...)
	scan.MustCode(t, 0)
	var keys []string
	byState := map[string]int64{}
	flags := map[string]int64{}
	var stale int64
	sc := bufio.NewScanner(strings.NewReader(scan.Stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("bad ndjson line %q: %v", sc.Text(), err)
		}
		for _, f := range recordFields {
			if _, ok := rec[f]; !ok {
				t.Fatalf("record lacks %q: %s", f, sc.Text())
			}
		}
		keys = append(keys, rec["key"].(string))
		byState[rec["state"].(string)]++
		if rec["stale"].(bool) {
			stale++
		}
		for _, f := range rec["flags"].([]any) {
			flags[f.(string)]++
		}
		g := rec["groups"].(map[string]any)
		if g["principal"] == nil || g["endpoint"] == nil || g["idem_key"] == nil {
			t.Fatalf("groups missing: %s", sc.Text())
		}
		if rec["state"] == "processing" && rec["ttl_ms"].(float64) > 0 && rec["age_source"] != "ttl" {
			t.Fatalf("processing record with TTL should have age from ttl: %s", sc.Text())
		}
	}
	c := srv.Client(0)
	defer c.Close()
	want, err := c.Keys(t.Context(), "atlasmart:ch23:idem:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	sort.Strings(want)
	if len(keys) != 100000 || strings.Join(keys, "\n") != strings.Join(want, "\n") {
		t.Fatalf("scan listed %d records, Redis has %d keys (or they differ)", len(keys), len(want))
	}
	for st, n := range so.Expected.ByState {
		if byState[st] != n {
			t.Errorf("scan: %d %s, seed wrote %d", byState[st], st, n)
		}
	}
	if stale != so.Expected.Stale {
		t.Errorf("scan: %d stale, seed wrote %d", stale, so.Expected.Stale)
	}
	for f, n := range so.Expected.Flags {
		if flags[f] != n {
			t.Errorf("scan: flag %s on %d, seed wrote %d", f, flags[f], n)
		}
	}

	st := clitest.Run(t, nil, append([]string{"stats", "--url", url, "--preset", "atlasmart", "--output", "json"}, timing...)...)
	st.MustCode(t, 0)
	var so2 clitest.StatsOut
	if err := json.Unmarshal([]byte(st.Stdout), &so2); err != nil {
		t.Fatalf("stats output: %v", err)
	}
	if !so2.Complete {
		t.Error("stats: scan not complete")
	}
	for _, m := range so.Expected.Mismatches(so2.Total, so2.Stale, so2.ByState, so2.Flags) {
		t.Errorf("stats: %s", m)
	}
	if so2.Memory.KnownRecords != 100000 || so2.Memory.Total < 100000*100 {
		t.Errorf("memory %+v", so2.Memory)
	}
	if g := so2.Groups["endpoint"]; g.Distinct != 5 || len(g.Top) != 5 {
		t.Errorf("endpoint groups %+v", g)
	}
}

// The same flow with the preset's own defaults, exactly as the README shows it.
func TestSeedScanStatsDefaults(t *testing.T) {
	url := redistest.Shared(t).URL(0)
	so := clitest.Seed(t, url, 2000)
	st := clitest.Run(t, nil, "stats", "--url", url, "--preset", "atlasmart", "--output", "json")
	st.MustCode(t, 0)
	var so2 clitest.StatsOut
	json.Unmarshal([]byte(st.Stdout), &so2)
	if so2.Total != 2000 || so2.Stale != so.Expected.Stale || so2.ByState["processing"] != so.Expected.ByState["processing"] {
		t.Fatalf("stats %+v vs seed %+v", so2, so.Expected)
	}
}

func TestScanFiltersAndFormats(t *testing.T) {
	url := clitest.SeededURL(t, 1000, "--reserve-ttl", "1h", "--processing-timeout", "10m")
	base := []string{"scan", "--url", url, "--preset", "atlasmart", "--reserve-ttl", "1h", "--processing-timeout", "10m"}
	count := func(extra ...string) int {
		r := clitest.Run(t, nil, append(append([]string{}, base...), extra...)...)
		r.MustCode(t, 0)
		return strings.Count(r.Stdout, "\n")
	}
	if n := count("--stale"); n != 80 {
		t.Errorf("--stale: %d lines, want 80", n)
	}
	if n := count("--state", "processing"); n != 200 {
		t.Errorf("--state processing: %d, want 200", n)
	}
	if n := count("--flag", "processing_no_ttl"); n != 20 {
		t.Errorf("--flag processing_no_ttl: %d, want 20", n)
	}
	if n := count("--state", "succeeded,processing", "--flag", "no_ttl,processing_no_ttl"); n != 20 {
		t.Errorf("combined: %d, want 20", n)
	}
	if n := count("--limit", "7"); n != 7 {
		t.Errorf("--limit 7: %d", n)
	}
	r := clitest.Run(t, nil, append(base, "--output", "json", "--stale")...)
	r.MustCode(t, 0)
	var arr []map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &arr); err != nil || len(arr) != 80 {
		t.Fatalf("json array: %v, %d records", err, len(arr))
	}
	r = clitest.Run(t, nil, append(base, "--output", "table", "--limit", "3")...)
	r.MustCode(t, 0)
	if lines := strings.Split(strings.TrimSpace(r.Stdout), "\n"); len(lines) != 4 || !strings.HasPrefix(lines[0], "STATE") {
		t.Fatalf("table: %q", r.Stdout)
	}
	for _, bad := range [][]string{{"--state", "done"}, {"--flag", "nope"}, {"--output", "xml"}} {
		r := clitest.Run(t, nil, append(append([]string{}, base...), bad...)...)
		r.MustCode(t, cli.ExitUsage)
		r.OneLineErr(t)
	}
}

func TestScanTableNeverPrintsControlBytes(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	evil := "atlasmart:ch23:idem:\x1b]52;c;ZXZpbA==\x07:POST:/x\x9b:\xff"
	c.HSet(t.Context(), evil, "state", "PROCESSING\x1b[2J", "fingerprint", "\x1b[31mred")
	for _, out := range []string{"table", "ndjson", "json"} {
		r := clitest.Run(t, nil, "scan", "--url", srv.URL(0), "--preset", "atlasmart", "-o", out)
		r.MustCode(t, 0)
		if strings.ContainsAny(r.Stdout, "\x1b\x07\x00") || strings.Contains(r.Stdout, "\u009b") || strings.Contains(r.Stdout, "\xff") {
			t.Errorf("%s output holds raw control bytes: %q", out, r.Stdout)
		}
	}
	r := clitest.Run(t, nil, "scan", "--url", srv.URL(0), "--preset", "atlasmart", "-o", "ndjson")
	var rec map[string]any
	json.Unmarshal([]byte(r.Stdout), &rec)
	if rec["key_base64"] == nil {
		t.Fatalf("invalid UTF-8 key without key_base64: %s", r.Stdout)
	}
}

func TestConnectionErrors(t *testing.T) {
	port, _ := redistest.FreePort()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	r := clitest.Run(t, nil, "scan", "--url", "redis://admin:s3cr3t-pw@"+addr+"/0", "--preset", "atlasmart")
	r.MustCode(t, cli.ExitError)
	r.OneLineErr(t)
	if !strings.Contains(r.Stderr, "connection refused") || !strings.Contains(r.Stderr, addr) || strings.Contains(r.Stderr+r.Stdout, "s3cr3t") {
		t.Fatalf("stderr %q", r.Stderr)
	}
	srv, c := redistest.SharedClient(t)
	c.Do(t.Context(), "ACL", "SETUSER", "ops", "on", ">right-pw", "~*", "+@all")
	defer c.Do(t.Context(), "ACL", "DELUSER", "ops")
	r = clitest.Run(t, map[string]string{"PW": "wr0ng-pw"}, "scan", "--url", "redis://"+srv.Addr, "--user", "ops", "--password-env", "PW", "--preset", "atlasmart")
	r.MustCode(t, cli.ExitError)
	r.OneLineErr(t)
	if !strings.Contains(r.Stderr, "WRONGPASS") || strings.Contains(r.Stderr, "wr0ng") {
		t.Fatalf("stderr %q", r.Stderr)
	}
	r = clitest.Run(t, map[string]string{"PW": "right-pw"}, "scan", "--url", "redis://"+srv.Addr, "--user", "ops", "--password-env", "PW", "--preset", "atlasmart")
	r.MustCode(t, 0)
	pwFile := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pwFile, []byte("right-pw\n"), 0o600)
	clitest.Run(t, nil, "scan", "--url", "redis://ops@"+srv.Addr, "--password-file", pwFile, "--preset", "atlasmart").MustCode(t, 0)
	r = clitest.Run(t, nil, "scan", "--url", "redis://x:leak-me@"+srv.Addr, "--preset", "atlasmart")
	if !strings.Contains(r.Stderr, "visible in the process list") || strings.Contains(r.Stderr, "leak-me") {
		t.Fatalf("URL password warning: %q", r.Stderr)
	}
	for _, bad := range []string{"http://x", "redis://h:notaport", "redis://h:1/db"} {
		r = clitest.Run(t, nil, "scan", "--url", bad, "--preset", "atlasmart")
		r.MustCode(t, cli.ExitUsage)
		r.OneLineErr(t)
	}
}

func TestConfigFile(t *testing.T) {
	srv := redistest.Shared(t)
	clitest.Seed(t, srv.URL(0), 300)
	dir := t.TempDir()
	n := 0
	write := func(body string) string {
		n++
		p := filepath.Join(dir, strconv.Itoa(n), "config.yaml")
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	good := write(`
default_profile: local
profiles:
  local:
    url: redis://` + srv.Addr + `/0
    scan: {count: 200}
keyspaces:
  - name: orders
    preset: atlasmart
    processing_timeout: 20s
`)
	r := clitest.Run(t, nil, "stats", "--config", good, "-o", "json")
	r.MustCode(t, 0)
	var so clitest.StatsOut
	json.Unmarshal([]byte(r.Stdout), &so)
	if so.Total != 300 {
		t.Fatalf("stats via config: %s %s", r.Stdout, r.Stderr)
	}
	r = clitest.Run(t, map[string]string{"IDEMCTL_CONFIG": good}, "scan", "--keyspace", "orders", "--limit", "1")
	r.MustCode(t, 0)
	cases := map[string]string{
		"unknown key":     "profiles:\n  local:\n    url: redis://x\n    colour: red\n",
		"bad duration":    "keyspaces:\n  - name: a\n    preset: atlasmart\n    processing_timeout: soon\n",
		"unknown preset":  "keyspaces:\n  - name: a\n    preset: nope\n",
		"bad type":        "profiles:\n  local:\n    scan: {count: many}\n",
		"unknown ks ref":  "profiles:\n  p:\n    keyspaces: [ghost]\nkeyspaces:\n  - name: a\n    preset: atlasmart\n",
		"default missing": "default_profile: prod\n",
	}
	for name, body := range cases {
		r := clitest.Run(t, nil, "scan", "--config", write(body))
		if r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "config.yaml") {
			t.Errorf("%s: exit %d, stderr %q", name, r.Code, r.Stderr)
		}
		r.OneLineErr(t)
		if name != "default missing" && !strings.Contains(r.Stderr, "line ") {
			t.Errorf("%s: error does not name the line: %q", name, r.Stderr)
		}
	}
	r = clitest.Run(t, nil, "scan", "--config", filepath.Join(dir, "absent.yaml"))
	r.MustCode(t, cli.ExitUsage)
	// A name a terminal would act on (OSC 52 sets the clipboard) is shown escaped.
	r = clitest.Run(t, nil, "scan", "--config", filepath.Join(dir, "x\x1b]52;c;aGk=\x07\x9b.yaml"))
	r.MustCode(t, cli.ExitUsage)
	r.OneLineErr(t)
	if !strings.Contains(r.Stderr, `x\x1b]52;c;aGk=\x07\x9b.yaml`) {
		t.Errorf("the file name is not shown escaped: %q", r.Stderr)
	}
	r = clitest.Run(t, nil, "scan", "--config", good, "--profile", "prod")
	r.MustCode(t, cli.ExitUsage)
	if !strings.Contains(r.Stderr, "local") {
		t.Errorf("unknown profile should list the known ones: %q", r.Stderr)
	}
}

func TestUsageAndExitCodes(t *testing.T) {
	srv := redistest.Shared(t)
	r := clitest.Run(t, nil)
	r.MustCode(t, 0)
	for _, cmd := range []string{"scan", "stats", "check", "exporter", "expire", "fail", "reconcile", "detect", "seed", "presets", "ui", "demo", "version"} {
		if !strings.Contains(r.Stdout, cmd) {
			t.Errorf("usage lacks %s", cmd)
		}
		for _, help := range []string{"--help", "-h"} {
			h := clitest.Run(t, nil, cmd, help)
			h.MustCode(t, 0)
			if strings.Count(h.Stdout, "Usage: idemctl "+cmd) != 1 || h.Stderr != "" {
				t.Errorf("%s %s: want the usage once on stdout, got %q, stderr %q", cmd, help, h.Stdout, h.Stderr)
			}
			if m := regexp.MustCompile(`\(default [^)]*\) \(default`).FindString(h.Stdout); m != "" {
				t.Errorf("%s --help repeats a default: %q", cmd, m)
			}
		}
	}
	clitest.Run(t, nil, "help", "scan").MustCode(t, 0)
	clitest.Run(t, nil, "nope").MustCode(t, cli.ExitUsage)
	r = clitest.Run(t, nil, "scan", "--bogus")
	r.MustCode(t, cli.ExitUsage)
	r.OneLineErr(t)
	r = clitest.Run(t, nil, "scan", "--url", srv.URL(0), "--preset", "nope")
	r.MustCode(t, cli.ExitUsage)
	r = clitest.Run(t, nil, "scan", "--url", srv.URL(0), "--match", "x:*")
	r.MustCode(t, cli.ExitUsage)
	r = clitest.Run(t, nil, "scan", "--url", srv.URL(0))
	r.MustCode(t, cli.ExitUsage)
	r = clitest.Run(t, nil, "version")
	r.MustCode(t, 0)
	if !strings.HasPrefix(r.Stdout, "idemctl ") {
		t.Errorf("version: %q", r.Stdout)
	}
	r = clitest.Run(t, nil, "presets")
	if !strings.Contains(r.Stdout, "atlasmart") || !strings.Contains(r.Stdout, "setnx") {
		t.Errorf("presets: %q", r.Stdout)
	}
	r = clitest.Run(t, nil, "scan", "--url", srv.URL(0), "--preset", "setnx", "--match", "nothing:here:*")
	r.MustCode(t, 0)
	if !strings.Contains(r.Stderr, "no keys match") {
		t.Errorf("empty pattern: %q", r.Stderr)
	}
	// A refused seed sends nothing: TEST-NET-1 is never dialled.
	r = clitest.Run(t, nil, "seed", "--url", "redis://192.0.2.1:6379", "--count", "1")
	r.MustCode(t, cli.ExitRefused)
	r.OneLineErr(t)
	r = clitest.Run(t, nil, "seed", "--url", srv.URL(0), "--preset", "nope")
	r.MustCode(t, cli.ExitUsage)
}

func TestSeedSetnxScan(t *testing.T) {
	srv := redistest.Shared(t)
	so := clitest.Seed(t, srv.URL(0), 1000, "--preset", "setnx")
	st := clitest.Run(t, nil, "stats", "--url", srv.URL(0), "--preset", "setnx", "-o", "json")
	st.MustCode(t, 0)
	var so2 clitest.StatsOut
	json.Unmarshal([]byte(st.Stdout), &so2)
	if so2.Total != 1000 || so2.Stale != so.Expected.Stale || so2.Flags["processing_no_ttl"] != so.Expected.Flags["processing_no_ttl"] ||
		so2.Flags["missing_fingerprint"] != 0 || so2.ByState["succeeded"] != so.Expected.ByState["succeeded"] {
		t.Fatalf("setnx stats %+v vs seed %+v", so2, so.Expected)
	}
}

// A server that dies mid-scan: what was read is printed, the error says
// how far it got, and the exit code is 3.
func TestScanIncompleteWhenServerDies(t *testing.T) {
	own := redistest.Own(t)
	clitest.Seed(t, own.URL(0), 20000)
	go func() {
		time.Sleep(300 * time.Millisecond)
		own.Stop()
	}()
	r := clitest.Run(t, nil, "scan", "--url", own.URL(0), "--preset", "atlasmart", "--count", "100", "--keys-per-sec", "10000",
		"--dial-timeout", "1s", "--read-timeout", "1s")
	r.MustCode(t, cli.ExitIncomplete)
	r.OneLineErr(t)
	if !strings.Contains(r.Stderr, "scan incomplete") || strings.Count(r.Stdout, "\n") == 0 {
		t.Fatalf("stderr %q, %d lines out", r.Stderr, strings.Count(r.Stdout, "\n"))
	}
}

// runWithStderrTTY runs idemctl with stderr a terminal, cut off after limit.
func runWithStderrTTY(t *testing.T, limit time.Duration, args ...string) clitest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	var out, errb bytes.Buffer
	o := clitest.IO(t, nil, "", &out, &errb)
	o.StderrTTY = true
	code := cli.Run(ctx, o, args)
	return clitest.Result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// On a terminal, stats keeps a progress line on stderr and wipes it before
// the report; --quiet, or stderr not a terminal, shows none; stdout (JSON
// here) never carries it.
func TestProgressLineOnATerminal(t *testing.T) {
	url := clitest.SeededURL(t, 3000)
	base := []string{"stats", "--url", url, "--preset", "atlasmart", "-o", "json", "--count", "100", "--keys-per-sec", "10000"}

	r := runWithStderrTTY(t, time.Minute, base...)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stderr, "\r\x1b[Kstats ") || !strings.Contains(r.Stderr, "% · ") || !strings.Contains(r.Stderr, " records · ") ||
		!strings.HasSuffix(r.Stderr, "\r\x1b[K") {
		t.Fatalf("progress line: %q", r.Stderr)
	}
	if strings.Contains(r.Stdout, "\x1b") || !json.Valid([]byte(r.Stdout)) {
		t.Fatalf("the progress line reached stdout: %q", r.Stdout)
	}
	if q := runWithStderrTTY(t, time.Minute, append(base, "--quiet")...); q.Code != 0 || q.Stderr != "" {
		t.Fatalf("--quiet: exit %d, stderr %q", q.Code, q.Stderr)
	}
	if p := clitest.Run(t, nil, base...); p.Code != 0 || p.Stderr != "" {
		t.Fatalf("stderr not a terminal: exit %d, stderr %q", p.Code, p.Stderr)
	}
}

// Ctrl-C in the middle: stats and check print what they read, marked
// incomplete with the share covered, and exit 3.
func TestInterruptedStatsAndCheckReportWhatTheyRead(t *testing.T) {
	url := clitest.SeededURL(t, 5000)
	slow := []string{"--url", url, "--preset", "atlasmart", "--count", "50", "--keys-per-sec", "1000", "--quiet"}

	r := runWithStderrTTY(t, 1500*time.Millisecond, append([]string{"stats", "-o", "json"}, slow...)...)
	r.MustCode(t, cli.ExitIncomplete)
	var rep struct {
		Total    int64   `json:"total"`
		Complete bool    `json:"complete"`
		Covered  float64 `json:"covered"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("stats printed no report: %v %q", err, r.Stdout)
	}
	if rep.Complete || rep.Covered <= 0 || rep.Covered >= 0.9 || rep.Total == 0 || !strings.Contains(r.Stderr, "interrupted after") {
		t.Fatalf("interrupted stats: %+v, stderr %q", rep, r.Stderr)
	}

	c := runWithStderrTTY(t, 1500*time.Millisecond, append([]string{"check", "--max-stale", "100000"}, slow...)...)
	c.MustCode(t, cli.ExitIncomplete)
	if !strings.HasPrefix(c.Stdout, "INCOMPLETE: interrupted after ") || !strings.Contains(c.Stdout, "% of the keyspace") {
		t.Fatalf("interrupted check: %q %q", c.Stdout, c.Stderr)
	}
}

// seed shows its progress too, and Ctrl-C reports what it wrote.
func TestSeedProgressAndInterrupt(t *testing.T) {
	srv := redistest.Shared(t)
	// Ctrl-C as soon as the progress line first shows: after a batch.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out bytes.Buffer
	errb := &clitest.Buffer{OnFirstWrite: cancel}
	o := clitest.IO(t, nil, "", &out, errb)
	o.StderrTTY = true
	code := cli.Run(ctx, o, []string{"seed", "--url", srv.URL(0), "--count", "2000000"})
	r := clitest.Result{Stdout: out.String(), Stderr: errb.String(), Code: code}
	r.MustCode(t, cli.ExitInterrupt)
	var res struct{ Count, Written int }
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("seed printed nothing on Ctrl-C: %v %q", err, r.Stdout)
	}
	c := srv.Client(0)
	defer c.Close()
	n, _ := c.DBSize(t.Context()).Result()
	if res.Count != 2000000 || res.Written <= 0 || res.Written >= res.Count || n < int64(res.Written) ||
		!strings.Contains(r.Stderr, "interrupted after writing ") || !strings.Contains(r.Stderr, "\r\x1b[Kseed ") {
		t.Fatalf("interrupted seed: %+v (%d keys in Redis), stderr %q", res, n, r.Stderr)
	}
}

// stats --sample reads a share and reports estimates with 95 % intervals;
// a share outside (0, 1) is a usage error.
func TestStatsSample(t *testing.T) {
	url := clitest.SeededURL(t, 20000)
	base := []string{"stats", "--url", url, "--preset", "atlasmart", "-o", "json"}
	var full, smp struct {
		Total   int64            `json:"total"`
		ByState map[string]int64 `json:"by_state"`
		Sample  *struct {
			Share       float64                              `json:"share"`
			Intervals95 map[string]struct{ Low, High int64 } `json:"intervals_95"`
		} `json:"sample"`
	}
	r := clitest.Run(t, nil, base...)
	if err := json.Unmarshal([]byte(r.Stdout), &full); err != nil || full.Sample != nil {
		t.Fatalf("full stats: %v %+v", err, full.Sample)
	}
	r = clitest.Run(t, nil, append(base, "--sample", "20%")...)
	r.MustCode(t, cli.ExitOK)
	if err := json.Unmarshal([]byte(r.Stdout), &smp); err != nil || smp.Sample == nil || smp.Sample.Share < 0.15 || smp.Sample.Share > 0.3 {
		t.Fatalf("sampled stats: %v %+v", err, smp.Sample)
	}
	// Whether intervals hold the truth is inspect's test, over many runs;
	// here the estimate is about right and its interval is around it.
	if iv := smp.Sample.Intervals95["total"]; iv.Low > smp.Total || iv.High < smp.Total || iv.Low >= iv.High ||
		math.Abs(float64(smp.Total-full.Total)) > 0.2*float64(full.Total) {
		t.Errorf("total %d, sample's estimate %d in %+v", full.Total, smp.Total, iv)
	}
	table := clitest.Run(t, nil, append(base[:len(base)-2], "-o", "table", "--sample", "0.2")...)
	if !strings.HasPrefix(table.Stdout, "SAMPLE  ") || !strings.Contains(table.Stdout, "sampled ") {
		t.Errorf("sampled table: %.300s", table.Stdout)
	}
	for _, bad := range []string{"0", "1", "150%", "x"} {
		clitest.Run(t, nil, append(base, "--sample", bad)...).MustCode(t, cli.ExitUsage)
	}
}

// detect shows how far its search for sample keys has come, on a terminal.
func TestDetectProgressLine(t *testing.T) {
	url := clitest.SeededURL(t, 5000)
	r := runWithStderrTTY(t, time.Minute, "detect", "--url", url, "--match", "atlasmart:*", "--sample", "3000")
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stderr, "\r\x1b[Kdetect ") || !strings.HasSuffix(r.Stderr, "\r\x1b[K") || strings.Contains(r.Stdout, "\x1b") {
		t.Fatalf("detect's progress: stderr %q", r.Stderr)
	}
}

// detect on node-idempotency records mixed with junk strings under one
// pattern: it names the mix, and never proposes a preset whose key
// template fits none of the sampled keys.
func TestDetectMixedFormats(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := t.Context()
	for i := range 21 {
		c.Set(ctx, fmt.Sprintf("node-idempotency:POST:/orders:k%d", i), `{"status":"IN_PROGRESS","fingerPrint":"aa11"}`, time.Hour)
	}
	for i := range 7 {
		c.Set(ctx, fmt.Sprintf("node-idempotency:junk%d", i), "junk value", time.Hour)
	}
	r := clitest.Run(t, nil, "detect", "--url", srv.URL(0), "--match", "node-idempotency:*", "-o", "json")
	r.MustCode(t, 0)
	var det struct {
		Best *struct {
			Preset   string
			Template int
		} `json:"best"`
		Mixed []string `json:"mixed"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &det); err != nil {
		t.Fatal(err)
	}
	if det.Best == nil || det.Best.Preset != "node-idempotency" {
		t.Fatalf("want node-idempotency proposed:\n%s", r.Stdout)
	}
	mixed := strings.Join(det.Mixed, "; ")
	if !strings.Contains(mixed, "7 of 28 sampled keys are not node-idempotency records") || strings.Contains(mixed, "setnx") {
		t.Fatalf("the mix is not named, or named through a preset whose template fits none: %q", mixed)
	}
	text := clitest.Run(t, nil, "detect", "--url", srv.URL(0), "--match", "node-idempotency:*")
	if !strings.Contains(text.Stdout, "mixed formats: 7 of 28 sampled keys") {
		t.Fatalf("text output does not name the mix:\n%s", text.Stdout)
	}
}
