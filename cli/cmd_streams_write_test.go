package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
	"github.com/idemctl/idemctl/internal/testkit/streamtest"
)

// pendingTo is the consumer and delivery count of an entry ("" when it is
// not pending).
func pendingTo(t *testing.T, c *redis.Client, stream, group, id string) (string, int64) {
	t.Helper()
	p, err := c.XPendingExt(t.Context(), &redis.XPendingExtArgs{Stream: stream, Group: group, Start: id, End: id, Count: 1}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(p) == 0 {
		return "", 0
	}
	return p[0].Consumer, p[0].RetryCount
}

// Without a terminal a retry of the stale entries is refused with the exact
// command, each entry pinned as shown; run as printed it applies, and an
// entry claimed by someone else between the two is a conflict.
func TestStreamsRetryStalePinned(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	key := fmt.Sprintf("ev:retry:%s", t.Name())
	ids := seedGroups(t, c, key)
	audit := filepath.Join(t.TempDir(), "audit.log")
	base := []string{"streams", "retry", "--url", srv.URL(0), "--match", key, "--stale", "--write", "--reason", "worker crashed", "--audit-log", audit}

	r := clitest.Run(t, nil, base...)
	r.MustCode(t, cli.ExitRefused)
	if !strings.Contains(r.Stderr, "retry "+key+" group billing entry "+ids[0]+":") || strings.Contains(r.Stderr, ids[2]+":") {
		t.Fatalf("the plan should name the one stale entry:\n%s", r.Stderr)
	}
	args, stdin := clitest.PrintedCommand(t, r.Stderr)
	if want := key + "\tbilling\t" + ids[0] + "\tc1\t1\n"; stdin != want {
		t.Fatalf("pinned lines %q, want %q", stdin, want)
	}
	if who, _ := pendingTo(t, c, key, "billing", ids[0]); who != "c1" {
		t.Fatalf("a refused run wrote: pending to %q", who)
	}
	r = clitest.RunStdin(t, stdin, nil, args...)
	r.MustCode(t, 0)
	if who, n := pendingTo(t, c, key, "billing", ids[0]); who != "idemctl-recovery" || n != 2 {
		t.Fatalf("after the retry: pending to %q, %d deliveries\n%s%s", who, n, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "applied     "+key+" group billing entry "+ids[0]) {
		t.Errorf("report:\n%s", r.Stdout)
	}

	// The same command again is the same run: already applied, nothing
	// written twice.
	r = clitest.RunStdin(t, stdin, nil, args...)
	r.MustCode(t, 0)
	if !strings.Contains(r.Stdout, "already_applied") {
		t.Errorf("a re-run should find its earlier execution:\n%s", r.Stdout)
	}
	if _, n := pendingTo(t, c, key, "billing", ids[0]); n != 2 {
		t.Fatalf("a re-run retried again: %d deliveries", n)
	}

	// Another stale entry, shown, then claimed by another worker before the
	// printed command runs: a conflict, nothing written.
	c.Do(t.Context(), "XCLAIM", key, "billing", "c2", 0, ids[4], "IDLE", 600000, "JUSTID")
	r = clitest.Run(t, nil, base...)
	r.MustCode(t, cli.ExitRefused)
	args, stdin = clitest.PrintedCommand(t, r.Stderr)
	c.Do(t.Context(), "XCLAIM", key, "billing", "c9", 0, ids[4], "IDLE", 600000, "JUSTID")
	r = clitest.RunStdin(t, stdin, nil, args...)
	r.MustCode(t, cli.ExitConflict)
	if !strings.Contains(r.Stderr, `claimed by "c9" (was "c2")`) {
		t.Errorf("conflict should say who holds it:\n%s", r.Stderr)
	}
	if who, _ := pendingTo(t, c, key, "billing", ids[4]); who != "c9" {
		t.Errorf("a conflict wrote: pending to %q", who)
	}
	v := clitest.Run(t, nil, "audit", "verify", audit)
	v.MustCode(t, 0)
}

// ack and dead-letter by ID: the entry is no longer pending, the copy is in
// the dead-letter stream once, and the plan said neither can be undone.
func TestStreamsAckAndDeadLetterByID(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	key := fmt.Sprintf("ev:ack:%s", t.Name())
	ids := seedGroups(t, c, key)
	audit := filepath.Join(t.TempDir(), "audit.log")
	run := func(kind string, extra ...string) clitest.Result {
		args := append([]string{"streams", kind, "--url", srv.URL(0), "--stream", key, "--group", "billing", "--write", "--yes",
			"--reason", "handled by hand", "--audit-log", audit, "-o", "json"}, extra...)
		return clitest.Run(t, nil, args...)
	}
	r := run("ack", ids[3])
	r.MustCode(t, 0)
	if who, _ := pendingTo(t, c, key, "billing", ids[3]); who != "" || !strings.Contains(r.Stderr, "will NOT be undoable") {
		t.Fatalf("ack: still pending to %q\n%s", who, r.Stderr)
	}
	var out struct {
		Results []struct{ Stream, Group, ID, Outcome string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || len(out.Results) != 1 || out.Results[0].ID != ids[3] || out.Results[0].Outcome != "applied" {
		t.Fatalf("json %v: %s", err, r.Stdout)
	}
	dlq := key + ":dlq"
	r = run("dead-letter", "--dead-letter", dlq, ids[2])
	r.MustCode(t, 0)
	msgs := c.XRange(t.Context(), dlq, "-", "+").Val()
	if len(msgs) != 1 || msgs[0].Values["idemctl.id"] != ids[2] || msgs[0].Values["n"] != "3" {
		t.Fatalf("dead-letter stream: %+v", msgs)
	}
	r = run("dead-letter", "--dead-letter", dlq, ids[2], "--reason", "once more")
	r.MustCode(t, cli.ExitNotFound)
	if n := c.XLen(t.Context(), dlq).Val(); n != 1 {
		t.Fatalf("a second dead-letter copied again: %d", n)
	}
	r = run("dead-letter", ids[4])
	r.MustCode(t, cli.ExitUsage)
	r.OneLineErr(t)
}

// Flags that cannot select entries are one-line usage errors.
func TestStreamsWriteUsage(t *testing.T) {
	srv, _ := redistest.SharedClient(t)
	for _, args := range [][]string{
		{"streams", "ack", "--url", srv.URL(0), "--reason", "x", "1-1"},
		{"streams", "ack", "--url", srv.URL(0), "--reason", "x"},
		{"streams", "retry", "--url", srv.URL(0), "--reason", "x", "--stream", "s", "--group", "g", "--mode", "push", "1-1"},
		{"streams", "retry", "--url", srv.URL(0), "--reason", "x", "--stream", "s", "--group", "g", "--mode", "redeliver", "--to", "c", "1-1"},
		{"streams", "ack", "--url", srv.URL(0), "--stream", "s", "--group", "g", "1-1"},
	} {
		r := clitest.Run(t, nil, args...)
		r.MustCode(t, cli.ExitUsage)
		r.OneLineErr(t)
	}
}

// triage asks the stream keyspace's hook about each stale entry: done is
// acknowledged with the evidence, not done retried, unknown left alone.
func TestStreamsTriage(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	key := fmt.Sprintf("ev:triage:%s", t.Name())
	ctx := t.Context()
	c.XGroupCreateMkStream(ctx, key, "billing", "$")
	var ids []string
	for _, ev := range []string{"evt-done", "evt-todo", "evt-odd"} {
		ids = append(ids, c.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"event_id", ev}}).Val())
	}
	c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: "w1", Streams: []string{key, ">"}, Count: 10})
	for _, id := range ids {
		c.Do(ctx, "XCLAIM", key, "billing", "w1", 0, id, "IDLE", 600000, "JUSTID")
	}
	dir := t.TempDir()
	hook := filepath.Join(dir, "verify-event")
	script := "#!/bin/sh\ncase \"$1\" in\nevt-done) echo '{\"verdict\":\"done\",\"ref\":\"pay-1\"}';;\nevt-todo) echo '{\"verdict\":\"not_done\",\"detail\":\"no payment\"}';;\n*) echo '{\"verdict\":\"unknown\",\"detail\":\"ledger down\"}';;\nesac\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	other := key + ":nohook" // a stream keyspace without a hook: its stale entry is unknown
	c.XGroupCreateMkStream(ctx, other, "billing", "$")
	oid := c.XAdd(ctx, &redis.XAddArgs{Stream: other, Values: []any{"event_id", "evt-other"}}).Val()
	c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: "w1", Streams: []string{other, ">"}, Count: 10})
	c.Do(ctx, "XCLAIM", other, "billing", "w1", 0, oid, "IDLE", 600000, "JUSTID")
	cfg := clitest.WriteConfig(t, fmt.Sprintf(`keyspaces:
  - name: payments
    kind: stream
    match: %q
    processing_timeout: 1m
    verify:
      command: [%q, "{event_id}", "{consumer}"]
  - name: refunds
    kind: stream
    match: %q
`, key, hook, other))
	audit := filepath.Join(dir, "audit.log")
	r := clitest.Run(t, nil, "streams", "triage", "--config", cfg, "--url", srv.URL(0), "--write", "--yes", "--reason", "payments triage", "--audit-log", audit)
	r.MustCode(t, cli.ExitPartial)
	if who, _ := pendingTo(t, c, key, "billing", ids[0]); who != "" {
		t.Errorf("done entry still pending to %q", who)
	}
	if who, n := pendingTo(t, c, key, "billing", ids[1]); who != "idemctl-recovery" || n != 2 {
		t.Errorf("not-done entry pending to %q (%d)", who, n)
	}
	if who, _ := pendingTo(t, c, key, "billing", ids[2]); who != "w1" {
		t.Errorf("unknown entry pending to %q", who)
	}
	if who, _ := pendingTo(t, c, other, "billing", oid); who != "w1" || !strings.Contains(r.Stderr, "keyspace refunds has no verify hook") {
		t.Errorf("the entry of the keyspace without a hook: pending to %q\n%s", who, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "unknown") || !strings.Contains(r.Stderr, "ledger down") {
		t.Errorf("the unknown verdict's reason:\n%s", r.Stderr)
	}
	log, _ := os.ReadFile(audit)
	if !strings.Contains(string(log), `"ref":"pay-1"`) {
		t.Errorf("the ack's evidence is not in the audit log:\n%s", log)
	}
}

// A profile of stream keyspaces only: record commands say where to look
// instead, and audit check-applied judges the stream writes it audited.
func TestStreamOnlyProfile(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	key := fmt.Sprintf("ev:only:%s", t.Name())
	ids := seedGroups(t, c, key)
	cfg := clitest.WriteConfig(t, fmt.Sprintf("keyspaces:\n  - {name: events, kind: stream, match: %q}\n", key))
	r := clitest.Run(t, nil, "scan", "--config", cfg, "--url", srv.URL(0))
	r.MustCode(t, cli.ExitUsage)
	r.OneLineErr(t)
	if !strings.Contains(r.Stderr, "idemctl streams") {
		t.Errorf("scan should say where stream keyspaces are read:\n%s", r.Stderr)
	}
	audit := filepath.Join(t.TempDir(), "audit.log")
	r = clitest.Run(t, nil, "streams", "ack", "--config", cfg, "--url", srv.URL(0), "--stream", key, "--group", "billing",
		"--write", "--yes", "--reason", "done by hand", "--audit-log", audit, ids[3])
	r.MustCode(t, 0)
	r = clitest.Run(t, nil, "audit", "check-applied", "--config", cfg, "--url", srv.URL(0), "--audit-log", audit, "-o", "json")
	r.MustCode(t, 0)
	if !strings.Contains(r.Stdout, `"status": "kept"`) {
		t.Fatalf("check-applied:\n%s%s", r.Stdout, r.Stderr)
	}
	// A failover that took the ack back: the entry pending again as before.
	c.Do(t.Context(), "XCLAIM", key, "billing", "c2", 0, ids[3], "FORCE", "RETRYCOUNT", 1, "JUSTID")
	r = clitest.Run(t, nil, "audit", "check-applied", "--config", cfg, "--url", srv.URL(0), "--audit-log", audit)
	r.MustCode(t, cli.ExitNotReplicated)
	if !strings.Contains(r.Stdout, "lost") || !strings.Contains(r.Stdout, "idemctl streams ack") {
		t.Fatalf("check-applied should find the ack lost and print the re-apply command:\n%s%s", r.Stdout, r.Stderr)
	}
}

// undo puts a retried entry back, named by stream, group and id, with no
// config or keyspace: a pending-entry write needs none.
func TestStreamsUndoRetryWithoutConfig(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	key := fmt.Sprintf("ev:undo:%s", t.Name())
	ids := seedGroups(t, c, key)
	audit := filepath.Join(t.TempDir(), "audit.log")
	r := clitest.Run(t, nil, "streams", "retry", "--url", srv.URL(0), "--stream", key, "--group", "billing", "--write", "--yes",
		"--reason", "stuck", "--audit-log", audit, ids[4])
	r.MustCode(t, 0)
	if who, n := pendingTo(t, c, key, "billing", ids[4]); who != "idemctl-recovery" || n != 2 {
		t.Fatalf("retry: pending to %q (%d)", who, n)
	}
	r = clitest.Run(t, nil, "undo", "--url", srv.URL(0), "--since", "1h", "--write", "--yes", "--reason", "wrong call", "--audit-log", audit)
	r.MustCode(t, 0)
	if who, n := pendingTo(t, c, key, "billing", ids[4]); who != "c2" || n != 1 {
		t.Fatalf("undo: pending to %q (%d)\n%s%s", who, n, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "applied     "+key+" group billing entry "+ids[4]) {
		t.Errorf("undo report:\n%s", r.Stdout)
	}
}

// config view shows the stream and ledger keyspaces with their defaults.
func TestConfigViewShowsStreamsAndLedgers(t *testing.T) {
	cfg := clitest.WriteConfig(t, "keyspaces:\n  - {name: orders, preset: atlasmart}\n"+
		"  - {name: payments, kind: stream, match: \"pay:*\", dead_letter: \"dlq:{stream}\"}\n"+
		"  - {name: billing, kind: ledger, preset: zset-window}\n")
	r := clitest.Run(t, nil, "config", "view", "--config", cfg, "-o", "json")
	r.MustCode(t, 0)
	var v struct {
		Keyspaces []struct{ Name string }
		Streams   []struct {
			Name, Match, DeadLetter, RecoveryConsumer string
			ProcessingTimeout                         string `json:"processing_timeout"`
			MaxDeliveries                             int64  `json:"max_deliveries"`
		}
		Ledgers []struct{ Name, Preset, Match, Window string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Keyspaces) != 1 || len(v.Streams) != 1 || len(v.Ledgers) != 1 ||
		v.Streams[0].ProcessingTimeout != "5m0s" || v.Streams[0].MaxDeliveries != 5 ||
		v.Ledgers[0].Preset != "zset-window" || v.Ledgers[0].Window != "24h0m0s" || v.Ledgers[0].Match != "dedupe:*" {
		t.Fatalf("config view:\n%s", r.Stdout)
	}
}

// stats counts the profile's stream keyspaces beside its records: per
// group, pending, stale and poison, in the table and the JSON.
func TestStatsCountsStreams(t *testing.T) {
	srv, c := redistest.SharedClient(t)
	key := fmt.Sprintf("ev:stats:%s", t.Name())
	streamtest.SeedGroups(t, c, key)
	cfg := clitest.WriteConfig(t, fmt.Sprintf("keyspaces:\n  - {name: orders, preset: atlasmart, match: \"atlasmart:none:*\"}\n  - {name: events, kind: stream, match: %q}\n", key))
	r := clitest.Run(t, nil, "stats", "--config", cfg, "--url", srv.URL(0), "-o", "table")
	r.MustCode(t, 0)
	if !strings.Contains(r.Stdout, "KEYSPACE events ("+key+"): stale after 5m0s idle") || !strings.Contains(r.Stdout, key+"  billing") {
		t.Fatalf("stats table:\n%s", r.Stdout)
	}
	r = clitest.Run(t, nil, "stats", "--config", cfg, "--url", srv.URL(0), "-o", "json")
	r.MustCode(t, 0)
	var out struct {
		Streams []struct {
			Streams []struct {
				Groups []struct {
					Group                  string
					Pending, Stale, Poison int
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || len(out.Streams) != 1 || len(out.Streams[0].Streams) != 1 {
		t.Fatalf("stats json %v:\n%s", err, r.Stdout)
	}
	for _, g := range out.Streams[0].Streams[0].Groups {
		if g.Group == "billing" && (g.Pending != 4 || g.Stale != 1 || g.Poison != 1) {
			t.Errorf("billing: %+v", g)
		}
	}
}
