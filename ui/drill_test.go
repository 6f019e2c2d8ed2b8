package ui

import (
	"strings"
	"testing"

	"github.com/idemctl/idemctl/inspect"
)

// selectLine presses j until the selected line of a drill screen holds want.
func selectLine(t *testing.T, m *Model, want string) {
	t.Helper()
	for range 60 {
		for _, l := range strings.Split(screenText(m), "\n") {
			if strings.Contains(l, "▸ ") && strings.Contains(l, want) {
				return
			}
		}
		press(m, "j")
	}
	t.Fatalf("no selectable line holds %q:\n%s", want, screenText(m))
}

// "Which endpoint is stuck, for whom": from the Overview or the Stats,
// enter opens the records of a state, flag or capture value; = groups them
// by a capture, enter opens a group, esc comes back.
func TestDrillDownAndGroups(t *testing.T) {
	ks := testKeyspace(t)
	m := newTestModel(t, 80, 24, fixture(ks, 70))
	press(m, "tab", "tab", "tab") // Overview
	selectLine(t, m, "stuck")
	press(m, "enter")
	if m.screen != screenRecords || filterText(m.store.f) != "flag=stuck" || len(m.store.view) != 7 {
		t.Fatalf("drill to stuck: screen %v, filter %q, %d rows", m.screen, filterText(m.store.f), len(m.store.view))
	}
	press(m, "tab") // Stats
	selectLine(t, m, "POST:/orders")
	press(m, "enter")
	if m.screen != screenRecords || len(m.store.view) == 0 {
		t.Fatalf("drill to an endpoint: screen %v, %d rows", m.screen, len(m.store.view))
	}
	for pos := range m.store.view {
		if r := m.store.at(pos); r.Group("endpoint") != "POST:/orders" {
			t.Fatalf("the endpoint drill let through %s", r.Key)
		}
	}
	n := len(m.store.view)
	press(m, "=") // group by principal: for whom
	text := screenText(m)
	if !m.recordsSized().grouped() || !strings.Contains(text, "PRINCIPAL") || !strings.Contains(text, "groups by principal") {
		t.Fatalf("= did not group by principal:\n%s", text)
	}
	var total int64
	for _, a := range m.store.group.byValue {
		total += a.n
	}
	if total != int64(n) {
		t.Fatalf("groups count %d records, the view has %d", total, n)
	}
	golden(t, "groups_80x24", text)
	first := m.store.group.sorted(len(m.store.view), true)[0]
	press(m, "enter")
	if m.recordsSized().grouped() || int64(len(m.store.view)) != first.n {
		t.Fatalf("opening group %s: grouped %v, %d rows want %d", first.value, m.recordsSized().grouped(), len(m.store.view), first.n)
	}
	for pos := range m.store.view {
		if r := m.store.at(pos); r.Group("principal") != first.value || r.Group("endpoint") != "POST:/orders" {
			t.Fatalf("group %s shows %s", first.value, r.Key)
		}
	}
	press(m, "esc")
	if !m.recordsSized().grouped() || len(m.store.view) != n {
		t.Fatalf("esc did not return to the groups: grouped %v, %d rows", m.recordsSized().grouped(), len(m.store.view))
	}
	press(m, "esc")
	if m.store.group != nil {
		t.Fatal("esc on the groups did not ungroup")
	}
	checkFrame(t, m)
}

// Groups are kept up to date batch by batch and match a full recount.
func TestGroupsIncremental(t *testing.T) {
	ks := testKeyspace(t)
	recs := fixture(ks, 5000)
	m := scanningModel(t, 80, Options{Keyspaces: []*inspect.Keyspace{ks}})
	m.store.setGrouping("endpoint")
	feed(m, recs[:2500])
	press(m, "x") // a filter while it streams
	feed(m, recs[2500:])
	finish(m, len(recs))
	got := m.store.group.byValue
	m.store.setGrouping("endpoint")
	want := m.store.group.byValue
	if len(got) != len(want) {
		t.Fatalf("%d groups, a recount has %d", len(got), len(want))
	}
	for v, a := range want {
		if g := got[v]; g == nil || *g != *a {
			t.Fatalf("group %q: %+v, a recount says %+v", v, g, a)
		}
	}
}

// Across refreshes the Overview draws each count's history with its change
// since the previous scan; records stale since then are marked +stale; the
// Stats show stale records by the minute they were reserved, by endpoint.
func TestHistoryNewlyStaleAndTimeline(t *testing.T) {
	ks := testKeyspace(t)
	recs := fixture(ks, 60)
	for i := range recs {
		if recs[i].Stale() {
			recs[i].AgeMs = int64(i%4)*60_000 + 40_000 // reserved over four minutes
		}
	}
	m := newTestModel(t, 100, 40, recs)
	if strings.Contains(screenText(m), "+stale") {
		t.Fatal("the first scan marked records newly stale")
	}
	// The next scan: three records that were processing went stale.
	next := append([]inspect.Record(nil), recs...)
	var became []string
	for i := range next {
		if next[i].State == inspect.StateProcessing && !next[i].Stale() && next[i].AgeMs > 0 && len(became) < 3 {
			next[i].Flags |= inspect.FlagStale
			next[i].AgeMs = 35_000
			became = append(became, next[i].Key)
		}
	}
	m.scan.beginRun()
	feed(m, next)
	finish(m, len(next))
	if len(m.history) != 2 || len(m.newStale) != 3 {
		t.Fatalf("history %d scans, %d newly stale", len(m.history), len(m.newStale))
	}
	press(m, "x")
	text := screenText(m)
	if n := strings.Count(text, "+stale"); n != 3 {
		t.Fatalf("%d rows marked +stale, want 3:\n%s", n, text)
	}
	press(m, "tab", "tab", "tab") // Overview
	text = screenText(m)
	for _, want := range []string{"SINCE 03:14:15 (2 scans)", "stale", "+3 since 03:14:15", "3 records became stale since the previous scan"} {
		if !strings.Contains(text, want) {
			t.Errorf("overview lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(text, "▁█") {
		t.Errorf("no sparkline rising from the first scan to the second:\n%s", text)
	}
	press(m, "tab", "tab") // Stats
	text = screenText(m)
	if !strings.Contains(text, "STALE BY MINUTE RESERVED") || !strings.Contains(text, "03:10") || !strings.Contains(text, "POST:/") {
		t.Fatalf("no incident timeline:\n%s", text)
	}
	checkFrame(t, m)
	golden(t, "stats_timeline_100x40", text)
}

// Which endpoint is stuck, for whom, from the Overview: select the endpoint
// with the most stale records, enter, then = for the principals.
func TestOverviewMostStaleEndpoint(t *testing.T) {
	m := newTestModel(t, 80, 40, fixture(testKeyspace(t), 70))
	press(m, "tab", "tab", "tab")
	if !strings.Contains(screenText(m), "MOST STALE BY ENDPOINT") {
		t.Fatalf("overview:\n%s", screenText(m))
	}
	top := m.staleTop[0]
	selectLine(t, m, top.value)
	press(m, "enter")
	if int64(len(m.store.view)) != top.n {
		t.Fatalf("%d records, want the %d stale of %s", len(m.store.view), top.n, top.value)
	}
	for pos := range m.store.view {
		if r := m.store.at(pos); !r.Stale() || r.Group("endpoint") != top.value {
			t.Fatalf("drill let through %s", r.Key)
		}
	}
	press(m, "=")
	if !m.recordsSized().grouped() || m.store.group.name != "principal" {
		t.Fatal("= did not group the endpoint's stale records by principal")
	}
}
