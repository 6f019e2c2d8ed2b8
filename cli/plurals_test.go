package cli_test

import (
	"os"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// From a snapshot every record's memory is estimated from its encoding:
// stats says so, not the live scan's "a big collection…".
func TestSnapshotStatsSayWhyMemoryIsEstimated(t *testing.T) {
	srv := redistest.Shared(t)
	clitest.Seed(t, srv.URL(0), 50)
	r := clitest.Run(t, nil, "stats", "--rdb", srv.Snapshot(t), "--preset", "atlasmart", "-o", "text")
	r.MustCode(t, 0)
	var line string
	for _, l := range strings.Split(r.Stdout, "\n") {
		if strings.HasPrefix(l, "memory_estimated ") {
			line = l
		}
	}
	if !strings.Contains(line, "read from a snapshot: its memory is estimated from the record's encoding") || strings.Contains(line, "big collection") {
		t.Errorf("stats --rdb: %q\n%s", line, r.Stdout)
	}
}

// Counts of one read in the singular: "1 torn line", never "1 torn line(s)".
func TestOneIsSingular(t *testing.T) {
	srv := redistest.Shared(t)
	audit := recordtest.AuditPath(t)
	key := cliKey + "-singular"
	recordtest.Reserve(t, srv, key, "body")
	clitest.Run(t, nil, "fail", key, "--reason", "x", "--url", srv.URL(0), "--preset", "atlasmart", "--write", "--yes", "--audit-log", audit).MustCode(t, 0)
	f, err := os.OpenFile(audit, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-12-07T00:00:00Z","id":"cut`) // a crash mid-line
	f.Close()
	r := clitest.Run(t, nil, "audit", "--audit-log", audit)
	r.MustCode(t, 0)
	if !strings.Contains(r.Stderr, ": 1 torn line (a crash or a full disk) passed over") {
		t.Errorf("audit with one torn line: %q", r.Stderr)
	}
}
