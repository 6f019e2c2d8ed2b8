package ui

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions/write"
)

// runCmd runs a Cmd inline and feeds its message back, as the runtime would.
func runCmd(m *Model, cmd tea.Cmd) tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	m.Update(msg)
	return msg
}

// y copies the key, Y the CLI command pinned to what is shown, through
// OSC 52; a key with control bytes is never copied.
func TestCopyKeyAndCommand(t *testing.T) {
	recs := fixture(testKeyspace(t), 20)
	recs[19].Key = "atlasmart:ch23:idem:customer-1:POST:/x:\x1b]52;c;evil\x07"
	m := newTestModel(t, 80, 24, recs)
	r := m.store.at(0)
	_, cmd := m.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if cmd == nil || fmt.Sprint(cmd()) != r.Key || !strings.Contains(m.Status, "copied the key") {
		t.Fatalf("y: status %q", m.Status)
	}
	_, cmd = m.Update(tea.KeyPressMsg{Code: 'Y', Text: "Y"})
	want := "idemctl fail --profile 'local' '" + r.Key + "' --expect-state 'PROCESSING' --expect-fingerprint '" + r.Fingerprint + "' --reason 'TODO: why' --dry-run"
	if cmd == nil || fmt.Sprint(cmd()) != want {
		t.Fatalf("Y copied %v, want %s", cmd, want)
	}
	m.records.cursor = m.store.find(recs[19].Key)
	if _, cmd = m.Update(tea.KeyPressMsg{Code: 'y', Text: "y"}); cmd != nil || !strings.Contains(m.Status, "not copied") {
		t.Fatalf("a key with control bytes was copied: %q", m.Status)
	}
	if strings.Contains(m.View().Content, "\x1b]52;c;evil") {
		t.Fatal("the hostile key reached the terminal raw")
	}
}

// ctrl+f finds as it is typed; n and N step through the matches, wrapping.
func TestIncrementalFind(t *testing.T) {
	m := newTestModel(t, 80, 24, fixture(testKeyspace(t), 60))
	m.Update(tea.KeyPressMsg{Code: 'f', Mod: tea.ModCtrl})
	if !m.records.find.active {
		t.Fatal("ctrl+f did not open find")
	}
	typeText(m, "req-0004")
	if k := m.recordsSized().cursorKey(); !strings.Contains(k, "req-0004") {
		t.Fatalf("find moved to %s", k)
	}
	press(m, "enter")
	seen := map[string]bool{m.recordsSized().cursorKey(): true}
	for range 9 {
		press(m, "n")
		seen[m.recordsSized().cursorKey()] = true
	}
	if len(seen) != 10 {
		t.Fatalf("n visited %d keys, want the 10 matches", len(seen))
	}
	press(m, "n") // wraps to where it started
	first := m.recordsSized().cursorKey()
	press(m, "N", "n")
	if m.recordsSized().cursorKey() != first {
		t.Fatalf("N then n did not return: %s vs %s", m.recordsSized().cursorKey(), first)
	}
	m.Update(tea.KeyPressMsg{Code: 'f', Mod: tea.ModCtrl})
	typeText(m, "nowhere")
	if !strings.Contains(screenText(m), "find: nowhere") || !strings.Contains(m.Status, "no key") {
		t.Fatalf("no match: status %q", m.Status)
	}
}

// :export writes the filtered view, as NDJSON or CSV; :fail opens the dialog.
func TestCommandLineExportAndWrites(t *testing.T) {
	m := newTestModelWith(t, 80, 24, fixture(testKeyspace(t), 60), executor(t, true))
	dir := t.TempDir()
	press(m, "x", ":")
	typeText(m, "export "+filepath.Join(dir, "stale.ndjson"))
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	runCmd(m, cmd)
	data, err := os.ReadFile(filepath.Join(dir, "stale.ndjson"))
	if err != nil || !strings.Contains(m.Status, "exported 12 records") {
		t.Fatalf("export: %v, status %q", err, m.Status)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for _, l := range lines {
		var rec struct {
			Key   string `json:"key"`
			Stale bool   `json:"stale"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil || !rec.Stale {
			t.Fatalf("ndjson line %q: %v", l, err)
		}
	}
	if len(lines) != 12 {
		t.Fatalf("%d lines, want the 12 in view", len(lines))
	}
	press(m, ":")
	typeText(m, "export "+filepath.Join(dir, "stale.csv"))
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	runCmd(m, cmd)
	f, _ := os.Open(filepath.Join(dir, "stale.csv"))
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 13 || rows[0][0] != "key" || rows[1][8] != "true" {
		t.Fatalf("csv: %v %d rows %v", err, len(rows), rows[:min(len(rows), 2)])
	}
	press(m, ":")
	typeText(m, "export "+filepath.Join(dir, "stale.csv")) // never over a file
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	runCmd(m, cmd)
	if !strings.Contains(m.Status, "export failed") {
		t.Fatalf("overwrote an existing file: %q", m.Status)
	}
	press(m, ":")
	typeText(m, "fail")
	press(m, "enter")
	if m.dialog == nil || m.dialog.kind != write.KindFail {
		t.Fatal(":fail did not open the dialog")
	}
	press(m, "esc", ":")
	typeText(m, "bogus")
	press(m, "enter")
	if !strings.Contains(m.Status, `unknown command "bogus"`) {
		t.Fatalf("status %q", m.Status)
	}
}
