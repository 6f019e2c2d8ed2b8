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
	if !m.grouped() || !strings.Contains(text, "PRINCIPAL") || !strings.Contains(text, "groups by principal") {
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
	if m.grouped() || int64(len(m.store.view)) != first.n {
		t.Fatalf("opening group %s: grouped %v, %d rows want %d", first.value, m.grouped(), len(m.store.view), first.n)
	}
	for pos := range m.store.view {
		if r := m.store.at(pos); r.Group("principal") != first.value || r.Group("endpoint") != "POST:/orders" {
			t.Fatalf("group %s shows %s", first.value, r.Key)
		}
	}
	press(m, "esc")
	if !m.grouped() || len(m.store.view) != n {
		t.Fatalf("esc did not return to the groups: grouped %v, %d rows", m.grouped(), len(m.store.view))
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
