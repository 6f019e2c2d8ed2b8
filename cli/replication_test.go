package cli_test

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// A write the replica acknowledged exits 0 and says so; with the replica
// frozen, the same write is applied on the primary only: the report marks
// it NOT REPLICATED with why, the JSON carries replicas_acked and
// not_replicated, the audit outcome line too, and the run exits 14.
func TestActionCLINotReplicated(t *testing.T) {
	primary, replica := redistest.OwnWithReplica(t)
	auditLog := recordtest.AuditPath(t)
	base := []string{"--reason", "stuck", "--url", primary.URL(0), "--preset", "atlasmart", "--write", "--yes", "--audit-log", auditLog}

	recordtest.Reserve(t, primary, cliKey+"-kept", "body")
	r := clitest.Run(t, nil, append([]string{"fail", cliKey + "-kept"}, base...)...)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stderr, "replication: each batch waits up to 2s for the primary's replica") || !strings.Contains(r.Stdout, "applied") {
		t.Fatalf("replicated write:\nstdout %s\nstderr %s", r.Stdout, r.Stderr)
	}

	// The application reserved these while the link was up: the replica
	// has them PROCESSING.
	for _, k := range []string{"-lost-a", "-lost-b", "-lost-json", "-nowait"} {
		recordtest.Reserve(t, primary, cliKey+k, "body")
	}
	pc := primary.Client(0)
	defer pc.Close()
	if n, err := pc.Do(t.Context(), "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("the reservations did not reach the replica: %d %v", n, err)
	}
	// The link is cut: the replica frozen, and its connection closed by
	// the primary (a frozen process still takes what the kernel buffers:
	// a freeze alone loses nothing). The primary then counts no replica,
	// so the runs ask for one (--min-replicas 1).
	if err := syscall.Kill(replica.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(replica.Pid(), syscall.SIGCONT)
	if err := pc.Do(t.Context(), "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		t.Fatal(err)
	}
	keys := []string{cliKey + "-lost-a", cliKey + "-lost-b"}
	r = clitest.Run(t, nil, append(append([]string{"fail", "--min-replicas", "1", "--replica-timeout", "300ms"}, keys...), base...)...)
	r.MustCode(t, cli.ExitNotReplicated)
	if strings.Count(r.Stdout, "applied, NOT REPLICATED") != 2 || !strings.Contains(r.Stdout, "0 of 1 replicas acknowledged within 300ms") || !strings.Contains(r.Stderr, "waits up to 300ms for 1 replica to acknowledge") ||
		!strings.Contains(r.Stdout, "2 applied (2 not replicated)") || !strings.Contains(r.Stderr, "not replicated") {
		t.Fatalf("frozen replica:\nstdout %s\nstderr %s", r.Stdout, r.Stderr)
	}
	for _, k := range keys {
		if st := recordtest.HGetAll(t, primary, k)["state"]; st != "FAILED" {
			t.Fatalf("%s on the primary: %s", k, st)
		}
	}

	keys = []string{cliKey + "-lost-json"}
	r = clitest.Run(t, nil, append(append([]string{"fail", "--min-replicas", "1", "--replica-timeout", "200ms", "-o", "json"}, keys...), base...)...)
	r.MustCode(t, cli.ExitNotReplicated)
	var out struct {
		Results []map[string]any `json:"results"`
		Summary map[string]int   `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	if len(out.Results) != 1 || out.Results[0]["outcome"] != "applied" || out.Results[0]["not_replicated"] != true ||
		out.Results[0]["replicas_acked"] != 0.0 || out.Results[0]["replicas_wanted"] != 1.0 || out.Summary["not_replicated"] != 1 {
		t.Fatalf("json: %s", r.Stdout)
	}
	lg, err := audit.Read(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	var outcome *audit.Entry
	for i := range lg.Entries {
		if e := &lg.Entries[i]; e.Phase == audit.PhaseOutcome && e.Key == keys[0] {
			outcome = e
		}
	}
	if outcome == nil || outcome.Replication == nil || !outcome.NotReplicated || outcome.Acked != 0 {
		t.Fatalf("the audit outcome line of %s: %+v", keys[0], outcome)
	}

	// --min-replicas 0: no wait, said in the plan, exit 0.
	keys = []string{cliKey + "-nowait"}
	r = clitest.Run(t, nil, append(append([]string{"fail", "--min-replicas", "0"}, keys...), base...)...)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stderr, "replication: not waited for (--min-replicas 0)") {
		t.Fatalf("no wait: %s", r.Stderr)
	}
	r = clitest.Run(t, nil, append(append([]string{"fail", "--min-replicas", "many"}, keys...), base...)...)
	r.MustCode(t, cli.ExitUsage)
	r.OneLineErr(t)

	// The failover: the primary dies (kill -9) before its frozen replica
	// had any of those writes, and the replica is promoted. check-applied
	// on the new primary finds the four writes lost and the first kept,
	// and prints the commands that redo them; run, they are kept.
	if err := syscall.Kill(primary.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(replica.Pid(), syscall.SIGCONT)
	rc := replica.Client(0)
	defer rc.Close()
	if err := rc.Do(t.Context(), "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	check := []string{"audit", "check-applied", "--url", replica.URL(0), "--preset", "atlasmart", "--audit-log", auditLog}
	r = clitest.Run(t, nil, check...)
	r.MustCode(t, cli.ExitNotReplicated)
	if !strings.Contains(r.Stdout, "summary: 1 kept, 4 lost") || strings.Count(r.Stdout, "lost (not replicated)") != 3 ||
		!strings.Contains(r.Stdout, "exactly as it was before this write") {
		t.Fatalf("check-applied after the failover:\n%s\n%s", r.Stdout, r.Stderr)
	}
	args, stdin := reapplyCommand(t, r.Stdout)
	r = clitest.RunStdin(t, stdin, nil, append(args, "--yes", "--min-replicas", "0")...)
	r.MustCode(t, cli.ExitOK)
	for _, k := range []string{cliKey + "-lost-a", cliKey + "-lost-b", cliKey + "-lost-json", cliKey + "-nowait"} {
		if st := rc.HGet(t.Context(), k, "state").Val(); st != "FAILED" {
			t.Fatalf("re-applied %s on the new primary: %q", k, st)
		}
	}
	r = clitest.Run(t, nil, check...)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stdout, "summary: 5 kept") {
		t.Fatalf("after the re-apply:\n%s", r.Stdout)
	}
}

// reapplyCommand is the one command check-applied printed to redo the
// lost writes: its words, and its here-document.
func reapplyCommand(t *testing.T, out string) ([]string, string) {
	t.Helper()
	_, cmd, ok := strings.Cut(out, "re-apply the lost writes")
	head, body, _ := strings.Cut(cmd, "<<'EOF'\n")
	lines := strings.Split(head, "\n")
	words := clitest.ShellWords(t, strings.TrimPrefix(lines[len(lines)-1], "  idemctl "))
	doc, _, closed := strings.Cut(body, "\nEOF")
	if !ok || !closed || len(words) < 3 || words[len(words)-2] != "--from-file" {
		t.Fatalf("no re-apply command:\n%s", out)
	}
	return words, doc + "\n"
}

// The replication line before a write says what each batch will wait
// for: not on a dry run (nothing waits), not on a server with no replica
// (nothing to wait for), unless a wait was asked for.
func TestReplicationLineOnlyWhereItApplies(t *testing.T) {
	srv := redistest.Shared(t)
	auditLog := recordtest.AuditPath(t)
	base := []string{"--reason", "stuck", "--url", srv.URL(0), "--preset", "atlasmart", "--audit-log", auditLog}
	key := cliKey + "-replline"
	recordtest.Reserve(t, srv, key, "body")

	r := clitest.Run(t, nil, append([]string{"fail", key, "--dry-run"}, base...)...)
	r.MustCode(t, cli.ExitOK)
	if strings.Contains(r.Stderr, "replication:") || !strings.Contains(r.Stderr, "dry run") {
		t.Errorf("a dry run speaks of replication:\n%s", r.Stderr)
	}
	r = clitest.Run(t, nil, append([]string{"fail", key, "--write", "--yes"}, base...)...)
	r.MustCode(t, cli.ExitOK)
	if strings.Contains(r.Stderr, "replication: each batch waits") {
		t.Errorf("a server with no replica is told each batch waits for one:\n%s", r.Stderr)
	}
	recordtest.Reserve(t, srv, key+"-2", "body")
	r = clitest.Run(t, nil, append([]string{"fail", key + "-2", "--write", "--yes", "--min-replicas", "0"}, base...)...)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stderr, "replication: not waited for (--min-replicas 0)") {
		t.Errorf("--min-replicas 0 is not said:\n%s", r.Stderr)
	}
}
