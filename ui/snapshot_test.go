package ui

import (
	"strings"
	"testing"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/doctor"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/recordstore"
	"github.com/idemctl/idemctl/ui/common"
)

// TestSnapshotSession: the TUI on a snapshot says so in its header, holds
// at most --max-records but every record that needs attention (and says
// so on every screen), judges the doctor's record rules from the file,
// offers no writes, and Y pins the marked rows to the file's versions.
func TestSnapshotSession(t *testing.T) {
	src, c, ks := seededSnapshot(t)
	dopt := doctor.Options{}
	m := New(t.Context(), Options{Keyspaces: []*inspect.Keyspace{ks}, Scan: inspect.Options{Snapshot: src},
		Address: "SNAPSHOT dump.rdb · taken 2026-12-05 03:10:00Z", NoColor: true, MaxRecords: 50, Doctor: &dopt})
	defer m.shutdown()
	m.resize(160, 30)
	run(m, m.scan.start())

	notableN := 0
	for i := range m.store.recs.Len() {
		var p recordstore.Peeker
		r := m.store.recs.Peek(i, &p)
		if notable(r) {
			notableN++
		}
	}
	held := m.store.recs.Len()
	if held < 50 || held >= 300 || m.store.dropped != int64(300-held) || notableN < held-50 {
		t.Fatalf("held %d (%d needing attention), dropped %d of 300", held, notableN, m.store.dropped)
	}
	if rep := m.stats.Report(); rep.Total != 300 {
		t.Fatalf("stats count %d records, want all 300", rep.Total)
	}
	for i := range numScreens { // every screen says the table holds part
		text := screenText(m)
		if !strings.Contains(text, "SNAPSHOT dump.rdb") || !strings.Contains(text, "of 300 records (--max-records 50)") {
			t.Fatalf("screen %d:\n%s", i, text)
		}
		press(m, "tab")
	}
	m.screen = screenRecords
	press(m, "F")
	if m.Status != common.SnapshotHint {
		t.Fatalf("a write key on a snapshot: %q", m.Status)
	}
	press(m, "enter")
	if m.screen != screenDetail || !strings.Contains(screenText(m), "as the snapshot held it") {
		t.Fatalf("detail on a snapshot:\n%s", screenText(m))
	}
	press(m, "esc")
	if m.doctor.report == nil || !strings.Contains(m.doctor.report.Server, "snapshot") {
		t.Fatalf("doctor report %+v", m.doctor.report)
	}

	// Y on marked rows: lines pinned to the file that a live write accepts
	// because nothing changed since.
	m.screen, m.records.cursor = screenRecords, 0
	for range 3 { // marked from the keyboard: a snapshot keeps the marking keys
		press(m, "space")
		if m.records.cursor == 0 {
			press(m, "j")
		}
	}
	sel := m.recordsSized().markedRecords()
	if len(sel) != 3 {
		t.Fatalf("space on a snapshot marked %d rows, want 3 (status %q)", len(sel), m.Status)
	}
	msg := pinSnapshot(t.Context(), src, sel, "")().(pinnedMsg)
	if msg.err != nil || msg.pinned != 3 {
		t.Fatalf("pinned %d: %v", msg.pinned, msg.err)
	}
	live, errs := actions.ReadVersions(t.Context(), c, ks, sel)
	var lines []string
	for _, l := range strings.Split(msg.text, "\n") {
		if cols, err := actions.TargetColumns(l); err == nil && len(cols) == 4 {
			lines = append(lines, cols[3])
		}
	}
	if len(lines) != 3 {
		t.Fatalf("copied:\n%s", msg.text)
	}
	for i, v := range lines {
		if errs[i] != nil || v != live[i] {
			t.Errorf("%s: pinned %s, live %s (%v)", sel[i].Key, v, live[i], errs[i])
		}
	}
}
