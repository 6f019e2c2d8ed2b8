package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// ndjsonKeys is the records of an ndjson scan, by key, without the
// fields a snapshot and a live read legitimately differ in.
func ndjsonKeys(t *testing.T, out string) map[string]map[string]any {
	t.Helper()
	recs := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("bad ndjson line %q: %v", line, err)
		}
		for _, f := range []string{"ttl_ms", "age_ms", "memory_bytes", "flags"} {
			delete(r, f)
		}
		recs[r["key"].(string)] = r
	}
	return recs
}

// TestScanStatsFromSnapshot: scan and stats read a snapshot the server
// wrote as they read the server, say where the records came from, and
// read it through standard input from redis-cli --rdb -.
func TestScanStatsFromSnapshot(t *testing.T) {
	srv := redistest.Shared(t)
	url := srv.URL(0)
	timing := []string{"--reserve-ttl", "1h", "--processing-timeout", "10m"}
	clitest.Seed(t, url, 3000, timing...)
	path := srv.Snapshot(t)

	live := clitest.Run(t, nil, append([]string{"scan", "--url", url, "--preset", "atlasmart", "-o", "ndjson", "--response-sizes"}, timing...)...)
	live.MustCode(t, 0)
	snap := clitest.Run(t, nil, append([]string{"scan", "--rdb", path, "--preset", "atlasmart", "-o", "ndjson"}, timing...)...)
	snap.MustCode(t, 0)
	want, got := ndjsonKeys(t, live.Stdout), ndjsonKeys(t, snap.Stdout)
	if len(got) != 3000 || len(want) != 3000 {
		t.Fatalf("%d records from the snapshot, %d live", len(got), len(want))
	}
	for k, w := range want {
		g, _ := json.Marshal(got[k])
		l, _ := json.Marshal(w)
		if !bytes.Equal(g, l) {
			t.Fatalf("%s:\n snapshot %s\n live     %s", k, g, l)
		}
	}
	if !strings.Contains(snap.Stderr, "reading snapshot "+path) || !strings.Contains(snap.Stderr, "TTLs and ages as of") {
		t.Errorf("stderr does not say what was read: %q", snap.Stderr)
	}

	// stats through a pipe from redis-cli --rdb -, as over the
	// replication link of a server one may not scan.
	cmd := exec.Command("redis-cli", "-p", srv.Addr[strings.LastIndex(srv.Addr, ":")+1:], "--rdb", "-")
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("redis-cli: %v (install it with apt-get install -y redis-tools)", err)
	}
	var out, errb bytes.Buffer
	io := clitest.IO(t, nil, "", &out, &errb)
	io.Stdin = pipe
	code := cli.Run(context.Background(), io, append([]string{"stats", "--rdb", "-", "--preset", "atlasmart", "-o", "json"}, timing...))
	if err := cmd.Wait(); err != nil || code != 0 {
		t.Fatalf("redis-cli --rdb - | stats --rdb -: exit %d, %v: %s", code, err, errb.String())
	}
	var rep struct {
		Total    int64 `json:"total"`
		Complete bool  `json:"complete"`
		Source   struct {
			Kind, File, Clock, Checksum string
			RDBVersion                  int `json:"rdb_version"`
		} `json:"source"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Total != 3000 || !rep.Complete || rep.Source.Kind != "snapshot" || rep.Source.File != "-" || rep.Source.Clock != "snapshot" ||
		rep.Source.Checksum != "verified" || rep.Source.RDBVersion < 10 {
		t.Fatalf("stats from the pipe: %s", out.String())
	}
	det := clitest.Run(t, nil, "detect", "--rdb", path, "--match", "atlasmart:*", "-o", "json")
	if det.Code != 0 || !strings.Contains(det.Stdout, `"preset": "atlasmart"`) {
		t.Errorf("detect --rdb: exit %d %s %s", det.Code, det.Stdout, det.Stderr)
	}
	liveStats := clitest.Run(t, nil, append([]string{"stats", "--url", url, "--preset", "atlasmart", "-o", "json"}, timing...)...)
	if !strings.Contains(liveStats.Stdout, `"kind": "server"`) {
		t.Errorf("live stats carry no source: %s", liveStats.Stdout)
	}
}

// TestSnapshotBadFiles: one line naming the offset, exit 13, and for a
// cut file the records before the cut, marked partial.
func TestSnapshotBadFiles(t *testing.T) {
	srv := redistest.Shared(t)
	clitest.Seed(t, srv.URL(0), 2000)
	b, err := os.ReadFile(srv.Snapshot(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flipped := bytes.Clone(b)
	flipped[len(b)/2] ^= 0xff
	newer := bytes.Clone(b)
	copy(newer[5:9], "0099")
	for _, c := range []struct {
		name, path, want string
		code             int
	}{
		{"cut", write("cut.rdb", b[:len(b)/2]), "truncated", cli.ExitSnapshot},
		{"not rdb", write("x.rdb", []byte("PK\x03\x04 a zip file")), "not an RDB file", cli.ExitSnapshot},
		{"newer", write("new.rdb", newer), "RDB version 99 is newer", cli.ExitSnapshot},
		{"damaged", write("bad.rdb", flipped), "at byte ", cli.ExitSnapshot},
		{"missing", filepath.Join(dir, "none.rdb"), "snapshot " + filepath.Join(dir, "none.rdb") + ": no such file", cli.ExitSnapshot},
		{"a directory", dir, "snapshot " + dir + ": ", cli.ExitSnapshot},
	} {
		for _, cmd := range []string{"scan", "stats", "check", "doctor", "detect"} {
			args := []string{cmd, "--rdb", c.path, "--preset", "atlasmart", "-o", map[string]string{"scan": "ndjson", "stats": "json", "check": "json", "doctor": "json", "detect": "json"}[cmd]}
			if cmd == "check" {
				args = append(args, "--max-stale", "1000000")
			}
			if (cmd == "check" || cmd == "doctor") && c.name != "missing" && c.name != "a directory" {
				continue // their reading of a damaged file is TestCheckSnapshot* and TestDoctor*
			}
			if cmd == "detect" {
				if c.name == "cut" || c.name == "damaged" {
					continue // its sample (the first keys) comes before the fault
				}
				args = []string{cmd, "--rdb", c.path, "--match", "*", "-o", "json"}
			}
			r := clitest.Run(t, nil, args...)
			lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
			last := lines[len(lines)-1]
			if r.Code != c.code || !strings.Contains(last, c.want) || strings.Contains(r.Stderr, "goroutine") {
				t.Errorf("%s %s: exit %d, stderr %q; want %d and %q", cmd, c.name, r.Code, r.Stderr, c.code, c.want)
			}
			if c.name == "cut" && cmd == "scan" {
				n := strings.Count(r.Stdout, "\n")
				if n == 0 || n >= 2000 || !strings.Contains(last, "partial result") {
					t.Errorf("cut: %d records printed, %q", n, last)
				}
			}
		}
	}
	for _, args := range [][]string{
		{"--rdb", "x.rdb", "--url", srv.URL(0)},
		{"--at", "2026-01-01T00:00:00Z"},
		{"--rdb", "x.rdb", "--at", "yesterday"},
		{"--rdb", write("good.rdb", b), "--sample", "0.1"},
	} {
		r := clitest.Run(t, nil, append([]string{"stats", "--preset", "atlasmart"}, args...)...)
		if r.Code != cli.ExitUsage {
			t.Errorf("stats %v: exit %d, %q; want a usage error", args, r.Code, r.Stderr)
		}
	}
}

// TestFindOfflineFixOnline: stale records found in a snapshot are pinned
// (scan --stale -o pinned); the application then completes some and a
// retry re-reserves one; a live fail from those lines applies to the
// rest and refuses every record that changed since the snapshot.
func TestFindOfflineFixOnline(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	ctx := context.Background()
	timing := []string{"--reserve-ttl", "1h", "--processing-timeout", "10m"}
	clitest.Seed(t, srv.URL(0), 400, timing...)
	path := srv.Snapshot(t)

	pinned := clitest.Run(t, nil, append([]string{"scan", "--rdb", path, "--preset", "atlasmart", "--stale", "-o", "pinned"}, timing...)...)
	pinned.MustCode(t, 0)
	var keys []string
	for _, line := range strings.Split(strings.TrimSpace(pinned.Stdout), "\n") {
		if !strings.HasPrefix(line, "#") {
			keys = append(keys, strings.Split(line, "\t")[0])
		}
	}
	if len(keys) < 6 {
		t.Fatalf("%d stale records pinned:\n%s", len(keys), pinned.Stdout)
	}
	// Meanwhile the application completes two, and a retry re-reserves a
	// third with the same body: the same state and fingerprint, a new TTL.
	c.HSet(ctx, keys[0], "state", "SUCCEEDED", "status", "201", "response", "{}")
	c.HSet(ctx, keys[1], "state", "SUCCEEDED", "status", "201", "response", "{}")
	c.Expire(ctx, keys[2], 2*time.Hour)
	file := filepath.Join(t.TempDir(), "stale.pinned")
	if err := os.WriteFile(file, []byte(pinned.Stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_STATE_HOME": t.TempDir()}
	r := clitest.Run(t, env, append([]string{"fail", "--url", srv.URL(0), "--preset", "atlasmart", "--write", "--yes",
		"--reason", "stale in the 03:10 snapshot", "--from-file", file, "-o", "json"}, timing...)...)
	r.MustCode(t, cli.ExitPartial)
	var out struct {
		Results []struct {
			Key, Outcome, Detail string
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("%v: %s", err, r.Stdout)
	}
	changed := map[string]bool{keys[0]: true, keys[1]: true, keys[2]: true}
	applied := 0
	for _, res := range out.Results {
		switch {
		case changed[res.Key] && res.Outcome != "conflict":
			t.Errorf("%s changed since the snapshot, yet %s: %s", res.Key, res.Outcome, res.Detail)
		case res.Key == keys[2] && !strings.Contains(res.Detail, "TTL was re-set"):
			t.Errorf("the re-reserved record's conflict does not say its TTL was re-set: %s", res.Detail)
		case !changed[res.Key] && res.Outcome != "applied":
			t.Errorf("%s unchanged since the snapshot, yet %s: %s", res.Key, res.Outcome, res.Detail)
		case res.Outcome == "applied":
			applied++
			if st := c.HGet(ctx, res.Key, "state").Val(); st != "FAILED" {
				t.Errorf("%s applied, but its state is %q", res.Key, st)
			}
		}
	}
	if len(out.Results) != len(keys) || applied != len(keys)-3 {
		t.Fatalf("%d results, %d applied, for %d pinned keys: %s", len(out.Results), applied, len(keys), r.Stdout)
	}
	for _, k := range keys[:2] {
		if st := c.HGet(ctx, k, "state").Val(); st != "SUCCEEDED" {
			t.Errorf("%s: the application's completion was overwritten (%q)", k, st)
		}
	}
}
