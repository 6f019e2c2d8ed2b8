package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/inspect"
)

// The header always shows the mode badge, the profile and the whole
// address; the rest gives way.
func TestHeaderKeepsBadgeProfileAndAddress(t *testing.T) {
	ks := testKeyspace(t)
	recs := fixture(ks, 10)
	prot, err := actions.NewExecutor(actions.Setup{AuditPath: t.TempDir() + "/audit.log",
		Policy: &actions.Policy{Writes: true, Protected: true, Profile: "prod-eu"}, Identity: audit.Identity{OSUser: "tester"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prot.Close() })
	for _, c := range []struct {
		ex    *actions.Executor
		badge string
	}{{nil, "READ-ONLY"}, {executor(t, true), "WRITES"}, {prot, "WRITES"}} {
		for _, w := range []int{220, 120, 80, 60} {
			m := scanningModel(t, w, Options{Keyspaces: []*inspect.Keyspace{ks}, Profile: "prod-eu",
				Address: "rediss://redis-prod-eu-1.internal.example:6380/3", User: "idemctl-operator", Executor: c.ex})
			feed(m, recs)
			finish(m, len(recs))
			lines := strings.Split(screenText(m), "\n")
			head := lines[0] + "\n" + lines[1]
			for _, want := range []string{c.badge, "prod-eu", "rediss://redis-prod-eu-1.internal.example:6380/3", "Records"} {
				if !strings.Contains(head, want) {
					t.Errorf("%d columns: the header lacks %q: %q", w, want, head)
				}
			}
			checkFrame(t, m)
		}
	}
}

// Columns give way in the documented order: FP, MEM, TTL, AGE, FLAGS;
// STATE and KEY stay, KEY with about half the width.
func TestColumnsGiveWayInOrder(t *testing.T) {
	shown := func(l tableLayout) string {
		var s []string
		for _, c := range []struct {
			name string
			w    int
		}{{"STATE", l.state}, {"AGE", l.age}, {"TTL", l.ttl}, {"MEM", l.mem}, {"FP", l.fp}, {"FLAGS", l.flags}, {"KEY", l.key}} {
			if c.w > 0 {
				s = append(s, c.name)
			}
		}
		return strings.Join(s, " ")
	}
	for w, want := range map[int]string{
		160: "STATE AGE TTL MEM FP FLAGS KEY", 120: "STATE AGE TTL MEM FP FLAGS KEY", 100: "STATE AGE TTL MEM FLAGS KEY",
		80: "STATE AGE TTL FLAGS KEY", 60: "STATE AGE FLAGS KEY", 50: "STATE FLAGS KEY", 40: "STATE KEY",
	} {
		l := computeLayout(w)
		if got := shown(l); got != want {
			t.Errorf("%d columns: %s, want %s", w, got, want)
		}
		if l.key < min(26, w-11) {
			t.Errorf("%d columns: KEY only %d wide", w, l.key)
		}
	}
	// At 80 columns the key keeps principal and endpoint.
	m := newTestModel(t, 80, 24, fixture(testKeyspace(t), 60))
	if text := screenText(m); !strings.Contains(text, "customer-7:PUT:/carts/items:req-00041") {
		t.Fatalf("the key column loses principal or endpoint at 80 columns:\n%s", text)
	}
}

// One name per flag: the table's word works in the filter; f cycles only
// through flags some record has, and c resets it.
func TestFlagNamesAndCycle(t *testing.T) {
	m := newTestModel(t, 80, 24, fixture(testKeyspace(t), 70))
	filterBy(m, "flag=stuck")
	if n := len(m.store.view); n != 7 || m.records.filtering {
		t.Fatalf("flag=stuck: %d rows, filtering %v (%q)", n, m.records.filtering, m.records.filterErr)
	}
	if text := screenText(m); !strings.Contains(text, "nottl,stuck") {
		t.Fatalf("the table does not show the filter's word:\n%s", text)
	}
	press(m, "c")
	var seen []string
	for range 4 {
		press(m, "f")
		seen = append(seen, filterText(m.store.f))
	}
	if got := strings.Join(seen, "|"); got != "flag=stale|flag=nottl|flag=stuck|" {
		t.Fatalf("f cycles %q, want only the flags present, then none", got)
	}
	press(m, "f", "f", "c", "f")
	if got := filterText(m.store.f); got != "flag=stale" {
		t.Fatalf("after c, f starts over: %q", got)
	}
	if text := screenText(m); !strings.Contains(text, "filter: flag=stale") {
		t.Fatalf("status:\n%s", text)
	}
}

// The default order puts what needs attention first: stale, then stuck.
func TestDefaultOrderStaleThenStuck(t *testing.T) {
	m := newTestModel(t, 80, 24, fixture(testKeyspace(t), 3000))
	if r := m.store.at(0); !r.Stale() {
		t.Fatalf("first row is %s, not stale", r.Key)
	}
	n := 0
	for pos := range m.store.view {
		if !m.store.at(pos).Stale() {
			break
		}
		n++
	}
	if n != 600 || !m.store.at(n).Flags.Has(inspect.FlagProcessingNoTTL) {
		t.Fatalf("%d stale rows first, then %v", n, m.store.at(n).Flags)
	}
	if text := screenText(m); !strings.Contains(text, "3,000 of 3,000") {
		t.Fatalf("counts not grouped:\n%s", text)
	}
}

// E starts with a TTL that does not delete; 0 stays possible, typed.
func TestExpireDefaultTTLIsNotZero(t *testing.T) {
	m := newTestModelWith(t, 80, 24, fixture(testKeyspace(t), 10), executor(t, true))
	press(m, "E")
	if got := m.dialog.value("TTL"); got != "10m" {
		t.Fatalf("E's TTL starts at %q", got)
	}
	if text := screenText(m); !strings.Contains(text, "0 deletes it now") {
		t.Fatalf("the dialog does not say how to delete:\n%s", text)
	}
}

// An empty keyspace says where else to look.
func TestEmptyKeyspaceHint(t *testing.T) {
	m := scanningModel(t, 80, Options{Keyspaces: []*inspect.Keyspace{testKeyspace(t)}, Address: "redis://127.0.0.1:6379/0"})
	finish(m, 0)
	text := strings.Join(strings.Fields(screenText(m)), " ")
	for _, want := range []string{"no records in these keyspaces", "atlasmart:ch23:idem:*", "127.0.0.1:6379/0", "idemctl detect", "--db"} {
		if !strings.Contains(text, want) {
			t.Errorf("empty hint lacks %q:\n%s", want, screenText(m))
		}
	}
	checkFrame(t, m)
}

// Every screen at 80×24 and 60×20, as the layout rules in headerView and
// computeLayout lay it out; the frame never wraps or overflows.
func TestScreensGoldenNarrow(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {60, 20}} {
		w, h := size[0], size[1]
		m := newTestModelWith(t, w, h, fixture(testKeyspace(t), 12_000), executor(t, true))
		name := func(s string) string { return fmt.Sprintf("narrow_%s_%dx%d", s, w, h) }
		checkFrame(t, m)
		golden(t, name("records"), screenText(m))
		press(m, "enter")
		r := m.detail.cur.scanned
		m.Update(detailMsg{key: r.Key, d: inspect.Detail{Record: r, FieldCount: 2, Encoding: "listpack", Fields: []inspect.Field{
			{Name: "fingerprint", Value: r.Fingerprint, Len: 64, TTLms: -1}, {Name: "state", Value: "PROCESSING", Len: 10, TTLms: -1}}}})
		checkFrame(t, m)
		golden(t, name("detail"), screenText(m))
		press(m, "esc", "tab")
		checkFrame(t, m)
		golden(t, name("stats"), screenText(m))
		press(m, "tab")
		bulkRun(t, m, 40, 2, 20, 1)
		checkFrame(t, m)
		golden(t, name("bulk_done"), screenText(m))
		m.dialog = nil
		checkFrame(t, m)
		golden(t, name("writes"), regexp.MustCompile(`audit log: \S*`).ReplaceAllString(screenText(m), "audit log: AUDIT"))
		press(m, "tab")
		checkFrame(t, m)
		golden(t, name("overview"), screenText(m))
	}
}
