package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// idemctl audit names a run by what it did — a triage that failed three
// records and reconciled one is "triage: fail 3, reconcile 1", not the
// action of its first write — and names its columns for what they count:
// applied, conflicts, unapplied (planned, not applied) and reverted (by
// an undo since). audit show, piped, keeps every key whole.
func TestAuditNamesRunsByWhatTheyDid(t *testing.T) {
	srv, rc := redistest.SharedClient(t)
	if err := rc.FlushAll(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(t.TempDir(), "verify")
	if err := os.WriteFile(hook, []byte(`#!/bin/sh
case "$1" in
done-*) echo '{"verdict":"done","ref":"ord-1","status":201,"response":"{}","detail":"order ord-1"}' ;;
*) echo '{"verdict":"not_done","detail":"no order"}' ;;
esac
`), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := clitest.TriageConfig(t, srv.URL(0), "1s", "20s", nil, hook, "{idem_key}")
	audit := recordtest.AuditPath(t)
	long := "atlasmart:ch23:idem:customer-with-a-rather-long-account-name-0001:POST:/v2/checkout/confirm:"
	keys := []string{long + "done-0001", long + "nd-0001", long + "nd-0002", long + "nd-0003"}
	for _, k := range keys {
		recordtest.Reserve(t, srv, k, "body")
	}
	time.Sleep(1200 * time.Millisecond) // past the processing timeout: stale
	clitest.Run(t, nil, "triage", "--config", cfg, "--audit-log", audit, "--write", "--yes", "--reason", "incident 7").MustCode(t, cli.ExitOK)

	runs := func() []actions.RunSummary {
		r := clitest.Run(t, nil, "audit", "-o", "json", "--audit-log", audit)
		r.MustCode(t, 0)
		var out struct{ Runs []actions.RunSummary }
		if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
			t.Fatal(err)
		}
		return out.Runs
	}
	rs := runs()
	if len(rs) != 1 || rs[0].Command != "triage" || rs[0].Actions[write.KindFail] != 3 || rs[0].Actions[write.KindReconcile] != 1 ||
		rs[0].Applied != 4 || rs[0].Unapplied != 0 || rs[0].Reverted != 0 || rs[0].Label() != "triage: fail 3, reconcile 1" {
		t.Fatalf("audit -o json: %+v", rs)
	}
	triage := rs[0].ID

	// Undo the reconcile: the triage run now counts one write reverted.
	show := clitest.Run(t, nil, "audit", "show", triage, "--audit-log", audit, "-o", "json")
	var rep actions.RunReport
	if err := json.Unmarshal([]byte(show.Stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var reconcile string
	for _, w := range rep.Writes {
		if w.Action == write.KindReconcile {
			reconcile = w.ID
		}
	}
	clitest.Run(t, nil, "undo", reconcile, "--config", cfg, "--audit-log", audit, "--reason", "wrong verdict", "--write", "--yes").MustCode(t, cli.ExitOK)
	rs = runs()
	if len(rs) != 2 || rs[0].Reverted != 1 || rs[0].Applied != 4 || rs[1].Label() != "undo" {
		t.Fatalf("after the undo: %+v", rs)
	}

	text := clitest.Run(t, nil, "audit", "--audit-log", audit)
	text.MustCode(t, 0)
	lines := strings.Split(strings.TrimSpace(text.Stdout), "\n")
	header := strings.Fields(lines[0])
	wantHeader := []string{"RUN", "STARTED", "OPERATOR", "PLANNED", "APPLIED", "CONFLICTS", "FAILED", "UNAPPLIED", "REVERTED", "WHAT"}
	if strings.Join(header, " ") != strings.Join(wantHeader, " ") {
		t.Errorf("audit header %q, want %q", header, wantHeader)
	}
	row := strings.Fields(lines[1])
	if len(row) < 11 || strings.Join(row[4:9], " ") != "4 4 0 0 0" || row[9] != "1" || !strings.HasSuffix(lines[1], "  triage: fail 3, reconcile 1") {
		t.Errorf("the triage run reads %q", lines[1])
	}

	show = clitest.Run(t, nil, "audit", "show", triage, "--audit-log", audit)
	show.MustCode(t, 0)
	for _, want := range []string{"run " + triage + ": triage: fail 3, reconcile 1 by idemctl-test", "1 execution\n",
		"planned 4, applied 4, conflicts 0, failed 0, in doubt 0, unapplied 0, reverted since 1", "every planned key was applied"} {
		if !strings.Contains(show.Stdout, want) {
			t.Errorf("audit show lacks %q:\n%s", want, show.Stdout)
		}
	}
	for _, k := range keys { // piped: each key whole, its request id with it
		if !strings.Contains(show.Stdout, " "+k+" ") {
			t.Errorf("audit show cut %s:\n%s", k, show.Stdout)
		}
	}
	if !strings.Contains(show.Stdout, "reverted by ") {
		t.Errorf("audit show does not say the reconcile was reverted:\n%s", show.Stdout)
	}
}
