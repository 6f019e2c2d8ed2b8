package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/verify"
)

// planScreens presses key on the confirm step until the plan no longer
// says more lines follow, each screen fitting 80×24 with the confirmation
// in sight, and returns every screen seen.
func planScreens(t *testing.T, m *Model, key string) string {
	t.Helper()
	var seen strings.Builder
	for range 300 {
		text := screenText(m)
		checkFrame(t, m)
		if !strings.Contains(flatText(text), "and enter to apply") {
			t.Fatalf("%s: the confirmation left the screen:\n%s", key, text)
		}
		seen.WriteString(text + "\n")
		if !strings.Contains(text, "more lines of the plan") {
			return seen.String()
		}
		press(m, key)
	}
	t.Fatalf("%s never reached the plan's end:\n%s", key, screenText(m))
	return ""
}

// confirmStep marks the live fixture's stale records and opens write (F
// with a reason, or V) on them, up to the confirmation; it returns them.
func confirmStep(t *testing.T, m *Model, write string) []inspect.Record {
	t.Helper()
	m.resize(80, 24)
	press(m, "x", "a")
	var recs []inspect.Record
	for pos := range m.store.view {
		recs = append(recs, *m.store.at(pos))
	}
	_, cmd := m.Update(tea.KeyPressMsg{Code: []rune(write)[0], Text: write})
	if write == "F" {
		typeText(m, "worker crashed; no order")
		press(m, "enter")
		_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	}
	run(m, cmd)
	if m.dialog == nil || m.dialog.step != stepConfirm {
		t.Fatalf("%s: no confirmation:\n%s", write, screenText(m))
	}
	return recs
}

// Issue 46, finding 5: every line of a write's plan — each of the 24
// records a force-fail goes to — is reachable with pgdn, with j and with G
// before the count is typed, the count always in sight; the count then
// applies them all.
func TestWritePlanReachableBeforeTheCount(t *testing.T) {
	for _, key := range []string{"pgdown", "j", "G"} {
		f := newLive(t, true, false)
		m := f.m
		recs := confirmStep(t, m, "F")
		first := screenText(m)
		if !strings.Contains(first, "more lines of the plan") || !strings.Contains(first, "Type 24 and enter") {
			t.Fatalf("24 records fit the first page, or no count is asked:\n%s", first)
		}
		seen := planScreens(t, m, key)
		if key == "G" { // G shows the end: the plan's last record
			last := m.dialog.plans[len(m.dialog.plans)-1]
			recs = []inspect.Record{{Key: last.Key, Keyspace: last.Keyspace, Groups: []string{}}}
		}
		for _, r := range recs {
			if !strings.Contains(seen, displayKey(&r)) {
				t.Fatalf("%s: %s never showed in the plan:\n%s", key, displayKey(&r), seen)
			}
		}
		press(m, "g")
		if screenText(m) != first {
			t.Fatalf("g did not go back to the plan's top:\n%s", screenText(m))
		}
		typeText(m, "24")
		_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
		run(m, cmd)
		if !strings.Contains(screenText(m), "24 applied") {
			t.Fatalf("the count did not apply the plan:\n%s", screenText(m))
		}
	}
}

// The triage's plan too: every verdict, with its record and why, is
// reachable with pgdn; the columns' titles, the counts and the
// confirmation stay in sight.
func TestTriagePlanReachableBeforeTheCount(t *testing.T) {
	f := newLive(t, true, false)
	m := f.m
	m.Opts.Hooks = map[string]*verify.Hook{f.ks.Name: {Command: []string{"builtin"}, Timeout: 5 * time.Second,
		Builtin: func(context.Context, *inspect.Record) []byte {
			return []byte(`{"verdict":"not_done","detail":"no order in the orders table for this request"}`)
		}}}
	recs := confirmStep(t, m, "V")
	seen := planScreens(t, m, "pgdown")
	for _, r := range recs {
		if !strings.Contains(seen, m.dialog.shownKey(displayKey(&r), 40)) {
			t.Fatalf("%s never showed in the triage's plan:\n%s", displayKey(&r), seen)
		}
	}
	if n := strings.Count(seen, "no order in the orders table"); n < len(recs) {
		t.Fatalf("%d whys shown for %d verdicts:\n%s", n, len(recs), seen)
	}
	if text := screenText(m); !strings.Contains(text, "verdicts: ") || !strings.Contains(text, "Type 24 and enter") || !strings.Contains(text, "VERDICT") {
		t.Fatalf("the counts, the confirmation or the columns' titles left the screen:\n%s", text)
	}
}
