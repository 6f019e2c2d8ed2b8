package acceptance

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// reserveMany reserves n PROCESSING records of the lesson's format under
// prefix, in one pipeline, and returns their keys.
func reserveMany(t *testing.T, c *redis.Client, prefix string, n int) []string {
	t.Helper()
	ctx := t.Context()
	keys := make([]string, n)
	if err := appsim.Reserve.Load(ctx, c).Err(); err != nil {
		t.Fatal(err)
	}
	pipe := c.Pipeline()
	for i := range keys {
		keys[i] = fmt.Sprintf("atlasmart:ch23:idem:%s-%05d:POST:/orders:req", prefix, i)
		appsim.Reserve.EvalSha(ctx, pipe, []string{keys[i]}, appsim.Fingerprint(keys[i]), 3600)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return keys
}

// auditState checks the audit log is readable (torn lines allowed, bad
// ones not) and returns its entries.
func auditState(t *testing.T, path string) *audit.Log {
	t.Helper()
	l, err := audit.Read(path)
	if err != nil || len(l.Bad) > 0 {
		t.Fatalf("audit log unreadable: %v %+v", err, l.Bad)
	}
	return l
}

// noWriteWithoutIntent checks every record the tool failed has its intent
// in the log, and returns how many it failed.
func noWriteWithoutIntent(t *testing.T, c *redis.Client, keys []string, l *audit.Log) int {
	t.Helper()
	intents := map[string]bool{}
	for _, e := range l.Entries {
		if e.Phase == audit.PhaseIntent {
			intents[e.Key] = true
		}
	}
	ctx := t.Context()
	pipe := c.Pipeline()
	cmds := make([]*redis.StringCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.HGet(ctx, k, "state")
	}
	_, _ = pipe.Exec(ctx)
	failed := 0
	for i, k := range keys {
		if cmds[i].Val() == "FAILED" {
			failed++
			if !intents[k] {
				t.Fatalf("%s was written without an intent in the audit log", k)
			}
		}
	}
	return failed
}

func auditRuns(t *testing.T, auditLog string) []actions.RunSummary {
	t.Helper()
	r := clitest.Run(t, nil, "audit", "--audit-log", auditLog, "-o", "json")
	r.MustCode(t, 0)
	var out struct{ Runs []actions.RunSummary }
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("audit -o json: %v\n%s", err, r.Stdout)
	}
	return out.Runs
}

type writeReport struct {
	Results []actions.Result
	Summary map[string]int
}

func parseReport(t *testing.T, r clitest.Result) writeReport {
	t.Helper()
	var w writeReport
	if err := json.Unmarshal([]byte(r.Stdout), &w); err != nil {
		t.Fatalf("write report: %v\n%s\n%s", err, r.Stdout, r.Stderr)
	}
	return w
}

// The full disk: the audit log on a 64 KiB tmpfs. The run stops
// at the first failed append, before its next write, with one line and
// exit 12; every write made has its intent. Once there is room, the same
// command repairs the torn tail (kept, marked, reported), reports what the
// first execution applied as already_applied, and applies the rest.
// Mounting needs root: CI runs the suite as root.
func TestAuditFullDiskStopsThenResumes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test mounts a 64 KiB tmpfs and needs root: run it as root (CI does), e.g. sudo go test ./acceptance -run TestAuditFullDisk")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	srv, c := redistest.SharedClient(t)
	keys := reserveMany(t, c, fmt.Sprintf("fulldisk-%d", time.Now().UnixNano()), 300)
	input := strings.Join(keys, "\n") + "\n"
	auditLog := filepath.Join(dir, "audit.log")
	args := []string{"fail", "--url", srv.URL(0), "--preset", "atlasmart", "--from-file", "-", "--reason", "full disk drill",
		"--write", "--yes", "--rate", "200", "--audit-log", auditLog, "-o", "json"}

	r := clitest.RunStdin(t, input, nil, args...)
	r.MustCode(t, cli.ExitAudit)
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "idemctl fail: audit log "+auditLog+": write: no space left on device — the run stopped: ") {
		t.Fatalf("want the last line to name the full disk, got %q", last)
	}
	first := parseReport(t, r)
	l := auditState(t, auditLog)
	failed := noWriteWithoutIntent(t, c, keys, l)
	if failed == 0 || failed == len(keys) {
		t.Fatalf("%d of %d written before the disk filled: the test did not fill the disk mid-run", failed, len(keys))
	}
	if failed > first.Summary["applied"] {
		t.Fatalf("%d records written, the report says %d applied", failed, first.Summary["applied"])
	}
	raw, _ := os.ReadFile(auditLog)
	torn := len(raw) > 0 && raw[len(raw)-1] != '\n'
	t.Logf("first execution: %d applied, then the disk was full (torn tail: %v, %d bytes)", failed, torn, len(raw))

	if out, err := exec.Command("mount", "-o", "remount,size=16m", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	r = clitest.RunStdin(t, input, nil, args...)
	r.MustCode(t, 0)
	second := parseReport(t, r)
	if second.Summary["already_applied"] != failed || second.Summary["applied"] != len(keys)-failed || second.Summary["conflict"] != 0 {
		t.Fatalf("re-run: %v, want %d already_applied and %d applied", second.Summary, failed, len(keys)-failed)
	}
	if torn != strings.Contains(r.Stderr, "was left unfinished by an earlier run") {
		t.Fatalf("torn tail %v, reported: %q", torn, r.Stderr)
	}
	l = auditState(t, auditLog)
	if torn && len(l.Torn) != 1 {
		t.Fatalf("the torn line is not marked: %+v", l.Torn)
	}
	if n := noWriteWithoutIntent(t, c, keys, l); n != len(keys) {
		t.Fatalf("%d of %d failed after the re-run", n, len(keys))
	}
	runs := auditRuns(t, auditLog)
	if len(runs) != 1 || runs[0].Planned != len(keys) || runs[0].Applied != len(keys) || runs[0].Undone != 0 || runs[0].Executions != 2 {
		t.Fatalf("audit runs: %+v", runs)
	}
}

// A run is named by its input: the printed command run twice applies once
// and then reports every key already_applied (it used to answer conflicts,
// exit 5), and audit / audit show list the run and what it left undone.
func TestRunNamedRerunAlreadyApplied(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	keys := reserveMany(t, c, fmt.Sprintf("named-%d", time.Now().UnixNano()), 40)
	auditLog := recordtest.AuditPath(t)
	base := []string{"fail", "--url", srv.URL(0), "--preset", "atlasmart", "--reason", "named run", "--write", "--audit-log", auditLog, "-o", "json"}
	// Without a terminal the command is printed, pinned to each version.
	r := clitest.Run(t, nil, append(base, keys...)...)
	r.MustCode(t, cli.ExitRefused)
	_, doc, ok := strings.Cut(r.Stderr, "<<'EOF'\n")
	pinned, _, ok2 := strings.Cut(doc, "EOF")
	if !ok || !ok2 || strings.Count(pinned, "\n") != len(keys) {
		t.Fatalf("no pinned command printed:\n%s", r.Stderr)
	}
	// The application completes the last ten before the first execution.
	ctx := t.Context()
	for _, k := range keys[30:] {
		appsim.Complete.Run(ctx, c, []string{k}, appsim.Fingerprint(k), 201, `{"ok":true}`, 3600)
	}
	args := append(base, "--yes", "--from-file", "-")
	r = clitest.RunStdin(t, pinned, nil, args...)
	r.MustCode(t, cli.ExitPartial)
	if s := parseReport(t, r).Summary; s["applied"] != 30 || s["conflict"] != 10 {
		t.Fatalf("first execution: %v", s)
	}
	r = clitest.RunStdin(t, pinned, nil, args...)
	if s := parseReport(t, r).Summary; s["already_applied"] != 30 || s["conflict"] != 10 || s["applied"] != 0 {
		t.Fatalf("re-run: %v (exit %d)\n%s", s, r.Code, r.Stderr)
	}
	runs := auditRuns(t, auditLog)
	if len(runs) != 1 || runs[0].Planned != 40 || runs[0].Applied != 30 || runs[0].Conflict != 10 || runs[0].Undone != 10 ||
		runs[0].Operator != "idemctl-test" || runs[0].Action != write.KindFail || runs[0].Executions != 2 {
		t.Fatalf("audit: %+v", runs)
	}
	text := clitest.Run(t, nil, "audit", "--audit-log", auditLog)
	text.MustCode(t, 0)
	if !strings.Contains(text.Stdout, runs[0].ID) || !strings.Contains(text.Stdout, "UNAPPLIED") {
		t.Fatalf("audit text:\n%s", text.Stdout)
	}
	show := clitest.Run(t, nil, "audit", "show", runs[0].ID[:8], "--audit-log", auditLog)
	show.MustCode(t, 0)
	// Its unapplied section lists exactly the keys left undone (the writes
	// section after it lists every write, whole when piped).
	unapplied, _, _ := strings.Cut(show.Stdout, "writes (idemctl undo ID)")
	for _, k := range keys[30:] {
		if !strings.Contains(unapplied, k) {
			t.Fatalf("audit show does not list %s as unapplied:\n%s", k, show.Stdout)
		}
	}
	if strings.Contains(unapplied, keys[0]) || !strings.Contains(show.Stdout, keys[0]) {
		t.Fatalf("audit show lists an applied key as unapplied, or not among the writes:\n%s", show.Stdout)
	}
	clitest.Run(t, nil, "audit", "show", "ffffffffffff", "--audit-log", auditLog).MustCode(t, cli.ExitNotFound)
}

// kill -9 in the middle of a bulk run: every record written has its intent
// (group commit: intents durable before their batch), the log stays
// readable, and the same command run again finishes the job, reporting
// what the killed run did as already_applied — including writes whose
// outcome the kill cut off — with no conflicts.
func TestKillNineMidRunResumes(t *testing.T) {
	bin := clitest.BuildBinary(t)
	srv, c := redistest.SharedClient(t)
	keys := reserveMany(t, c, fmt.Sprintf("kill9-%d", time.Now().UnixNano()), 3000)
	dir, auditLog, args := bulkFail(t, srv, keys, "kill drill", "100000")
	cmd := exec.Command(bin, args...)
	cmd.Env = clitest.Environ(t, "HOME="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		fi, err := os.Stat(auditLog)
		if err == nil && fi.Size() > 1<<20 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the run wrote less than 1 MiB of audit log in 30 s")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	l := auditState(t, auditLog)
	failed := noWriteWithoutIntent(t, c, keys, l)
	if failed == 0 || failed == len(keys) {
		t.Fatalf("killed after %d of %d writes: not mid-run", failed, len(keys))
	}
	open := map[string]bool{}
	for _, e := range l.Entries {
		switch e.Phase {
		case audit.PhaseIntent:
			open[e.ID] = true
		case audit.PhaseOutcome:
			delete(open, e.ID)
		}
	}
	r := clitest.Run(t, nil, args...)
	r.MustCode(t, 0)
	s := parseReport(t, r).Summary
	if s["already_applied"] != failed || s["applied"] != len(keys)-failed || s["conflict"] != 0 {
		t.Fatalf("after kill -9 at %d written: re-run %v", failed, s)
	}
	l = auditState(t, auditLog)
	if n := noWriteWithoutIntent(t, c, keys, l); n != len(keys) {
		t.Fatalf("%d of %d failed after the re-run", n, len(keys))
	}
	runs := auditRuns(t, auditLog)
	if len(runs) != 1 || runs[0].Applied != len(keys) || runs[0].Undone != 0 || runs[0].InDoubt != 0 {
		t.Fatalf("audit runs after the re-run: %+v", runs)
	}
	t.Logf("killed at %d of %d written (%d intents without outcome); the re-run applied %d and found %d already applied",
		failed, len(keys), len(open), s["applied"], s["already_applied"])
}

// Another write failure than a full disk: the file-size limit (EFBIG, a
// short write, then an error). The run stops with exit 12, every write made
// has its intent, and the same command afterwards finishes the job.
func TestAuditWriteErrorStopsRun(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Fatal("prlimit not found: install util-linux (apt-get install -y util-linux)")
	}
	bin := clitest.BuildBinary(t)
	srv, c := redistest.SharedClient(t)
	keys := reserveMany(t, c, fmt.Sprintf("efbig-%d", time.Now().UnixNano()), 200)
	dir, auditLog, args := bulkFail(t, srv, keys, "size limit drill", "200")
	cmd := exec.Command(prlimit, append([]string{"--fsize=60000", bin}, args...)...)
	cmd.Env = clitest.Environ(t, "HOME="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if last := lines[len(lines)-1]; code != cli.ExitAudit || !strings.Contains(last, "file too large — the run stopped") {
		t.Fatalf("exit %d (%v), want %d and one line naming the failure; last line %q", code, err, cli.ExitAudit, last)
	}
	failed := noWriteWithoutIntent(t, c, keys, auditState(t, auditLog))
	if failed == 0 || failed == len(keys) {
		t.Fatalf("%d of %d written before the limit: not mid-run", failed, len(keys))
	}
	r := clitest.Run(t, nil, args...)
	r.MustCode(t, 0)
	if s := parseReport(t, r).Summary; s["already_applied"] != failed || s["applied"] != len(keys)-failed {
		t.Fatalf("re-run after %d written: %v\n%s", failed, s, r.Stderr)
	}
	auditState(t, auditLog)
}

// bulkFail writes keys to a --from-file input in a fresh directory and
// returns it, the audit log there, and the bulk fail command's arguments.
func bulkFail(t *testing.T, srv *redistest.Server, keys []string, reason, rate string) (dir, auditLog string, args []string) {
	t.Helper()
	dir = t.TempDir()
	input := filepath.Join(dir, "keys.txt")
	if err := os.WriteFile(input, []byte(strings.Join(keys, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auditLog = filepath.Join(dir, "audit.log")
	return dir, auditLog, []string{"fail", "--url", srv.URL(0), "--preset", "atlasmart", "--from-file", input, "--reason", reason,
		"--write", "--yes", "--rate", rate, "--audit-log", auditLog, "-o", "json"}
}
