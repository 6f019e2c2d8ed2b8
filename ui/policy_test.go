package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/actions/write"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
	"github.com/idemctl/idemctl/ui/common"
)

// executor builds what the CLI hands the TUI, with its own audit log. No
// Redis: these tests stop before anything is read.
func executor(t *testing.T, writes bool) *actions.Executor {
	t.Helper()
	ex, err := actions.NewExecutor(actions.Setup{AuditPath: recordtest.AuditPath(t),
		Policy: &actions.Policy{Writes: writes, Profile: "local"}, Identity: audit.Identity{OSUser: "tester"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	return ex
}

var spaceKey = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}

// writeHelp is the help text of every key that only serves writes.
var writeHelp = []string{"mark record", "mark all in view", "unmark all", "expire / delete", "force-fail", "mark reconciled"}

// In a read-only session (no executor, or one whose policy has writes off)
// the write keys do nothing but say why on the status line; the footer
// names them off and how to turn them on, and the help overlay lists them
// dim under the same hint, as k9s shows its disabled actions in read-only
// mode.
func TestReadOnlyShowsWriteKeysOff(t *testing.T) {
	recs := fixture(testKeyspace(t), 30)
	for _, c := range []struct {
		name string
		ex   *actions.Executor
	}{{"no executor", nil}, {"writes off", executor(t, false)}} {
		m := newTestModelWith(t, 160, 24, recs, c.ex)
		before := strings.Split(screenText(m), "\n")
		status := len(before) - 2
		for _, k := range []tea.KeyPressMsg{{Code: 'F', Text: "F"}, {Code: 'E', Text: "E"}, {Code: 'R', Text: "R"},
			spaceKey, {Code: 'a', Text: "a"}, {Code: 'u', Text: "u"}} {
			m.Status = ""
			m.Update(k)
			if m.dialog != nil || len(m.records.marks) != 0 || m.records.cursor != 0 {
				t.Fatalf("%s: %q changed the session (dialog %v, %d marked, cursor %d)", c.name, k.String(), m.dialog != nil, len(m.records.marks), m.records.cursor)
			}
			after := strings.Split(screenText(m), "\n")
			for i := range after {
				if i != status && after[i] != before[i] {
					t.Fatalf("%s: %q changed line %d:\n%s\nwas\n%s", c.name, k.String(), i, after[i], before[i])
				}
			}
			if !strings.Contains(after[status], common.ReadOnlyHint) {
				t.Fatalf("%s: %q gave no hint: %q", c.name, k.String(), after[status])
			}
		}
		footer := before[len(before)-1]
		for _, h := range writeHelp {
			if strings.Contains(footer, h) {
				t.Fatalf("%s: the footer offers %q: %q", c.name, h, footer)
			}
		}
		if !strings.Contains(footer, "F/R/E/space off: start with --write") {
			t.Fatalf("%s: the footer does not say the write keys are off: %q", c.name, footer)
		}
		press(m, "?")
		checkFrame(t, m)
		help := screenText(m)
		for _, h := range append([]string{"write (off)", common.ReadOnlyHint}, writeHelp...) {
			if !strings.Contains(help, h) {
				t.Fatalf("%s: the help lacks %q:\n%s", c.name, h, help)
			}
		}
		golden(t, "help_readonly_160x24", help)
		press(m, "tab", "tab", "tab")
		if m.screen != screenWrites || !strings.Contains(screenText(m), common.ReadOnlyHint) {
			t.Fatalf("%s: writes screen:\n%s", c.name, screenText(m))
		}
	}

	// Writes on: the same keys are offered, and act.
	m := newTestModelWith(t, 160, 24, recs, executor(t, true))
	if footer := screenText(m); !strings.Contains(footer, "F force-fail") || !strings.Contains(footer, "WRITES ENABLED") {
		t.Fatalf("writes on, the footer or badge lacks them:\n%s", footer)
	}
	press(m, "?")
	help := screenText(m)
	for _, h := range writeHelp {
		if !strings.Contains(help, h) {
			t.Fatalf("writes on, the help lacks %q:\n%s", h, help)
		}
	}
	golden(t, "help_writes_160x24", help)
	press(m, "q")
	m.Update(spaceKey)
	press(m, "F")
	if len(m.records.marks) != 1 || m.dialog == nil || len(m.dialog.targets) != 1 {
		t.Fatalf("writes on: %d marked, dialog %v", len(m.records.marks), m.dialog != nil)
	}
}

// The form asks for a reference only where the schema records one, and
// reads the TTL with the CLI's rules.
func TestDialogRefAndTTL(t *testing.T) {
	atlas := newTestModelWith(t, 120, 30, fixture(testKeyspace(t), 10), executor(t, true))
	press(atlas, "R")
	if !strings.Contains(screenText(atlas), "(required)") {
		t.Fatalf("atlasmart records a reference; the form does not say it is required:\n%s", screenText(atlas))
	}
	press(atlas, "enter") // ref left empty
	typeText(atlas, "in the order system")
	press(atlas, "enter")
	press(atlas, "enter")
	if d := atlas.dialog; d.step != stepForm || !strings.Contains(d.errText, "reference from the authoritative system is required") {
		t.Fatalf("reconcile without a reference: step %v, %q", d.step, d.errText)
	}
	atlas.dialog.inputs[0].SetValue("ord-1")
	for _, c := range []struct{ ttl, err string }{{"500us", "TTL: must be at least 1ms, or 0"}, {"soon", "TTL: bad duration"}} {
		atlas.dialog.inputs[2].SetValue(c.ttl)
		press(atlas, "enter")
		if d := atlas.dialog; d.step != stepForm || !strings.HasPrefix(d.errText, c.err) {
			t.Fatalf("TTL %q: step %v, %q", c.ttl, d.step, d.errText)
		}
	}

	plain := newTestModelWith(t, 120, 30, fixture(inspecttest.Keyspace(t, "setnx"), 10), executor(t, true))
	press(plain, "R")
	if !strings.Contains(screenText(plain), "optional: reference") {
		t.Fatalf("setnx records no reference; the form should not demand one:\n%s", screenText(plain))
	}
	press(plain, "enter")
	typeText(plain, "done per the order system")
	press(plain, "enter")
	press(plain, "enter") // the last field: plan
	if d := plain.dialog; d.step != stepPlanning || d.errText != "" {
		t.Fatalf("reconcile without a reference where none is recorded: step %v, %q", d.step, d.errText)
	}
}

// The TTL field's "retention" is the action's default, like the CLI's
// unset --ttl: force-failing a bare marker deletes it, and an explicit TTL
// would be refused as dropped.
func TestDialogDefaultTTLOnADeletingAction(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := t.Context()
	const key = "idempotency:order:ui-1"
	if err := c.Set(ctx, key, "processing", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	ks := inspecttest.Keyspace(t, "setnx")
	ex, err := actions.NewExecutor(actions.Setup{Client: c, AuditPath: recordtest.AuditPath(t),
		Policy: &actions.Policy{Writes: true, Profile: "local"}, Identity: audit.Identity{OSUser: "tester"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	m := New(ctx, Options{Client: c, Keyspaces: []*inspect.Keyspace{ks}, NoColor: true, Executor: ex})
	m.resize(120, 30)
	run(m, m.scan.start())
	if m.store.recs.Len() != 1 {
		t.Fatalf("scan: %d records", m.store.recs.Len())
	}
	press(m, "F")
	typeText(m, "worker crashed")
	press(m, "enter")
	if got := m.dialog.value("TTL"); got != "retention" {
		t.Fatalf("TTL field starts at %q", got)
	}
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	if d := m.dialog; d.step != stepConfirm || d.runnable() != 1 {
		t.Fatalf("step %v, plans %+v:\n%s", d.step, d.plans, screenText(m))
	}
	typeText(m, "yes")
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	run(m, cmd)
	if n := c.Exists(ctx, key).Val(); n != 0 || m.dialog.results[0].Outcome != write.Applied {
		t.Fatalf("marker still there (%d), result %+v", n, m.dialog.results[0])
	}
}
