package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/idemctl/idemctl/inspect"
)

// timelineFixture is fixture's records with the stale ones reserved over
// four minutes: the Stats end in an incident timeline.
func timelineFixture(ks *inspect.Keyspace, n int) []inspect.Record {
	recs := fixture(ks, n)
	for i := range recs {
		if recs[i].Stale() {
			recs[i].AgeMs = int64(i%4)*60_000 + 40_000
		}
	}
	return recs
}

// lastLine is the last line of the screen's whole page, unscrolled.
func lastLine(m *Model) string {
	lines := strings.Split(ansi.Strip(m.drillShown().renderDrills()), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// atEnd reports whether the page shows its last line and no longer says
// more follows.
func atEnd(m *Model) bool {
	text := screenText(m)
	return strings.Contains(text, lastLine(m)) && !strings.Contains(text, "more lines")
}

// refresh runs a complete rescan of recs, as --refresh does.
func refresh(m *Model, recs []inspect.Record) {
	m.scan.beginRun()
	feed(m, recs)
	finish(m, len(recs))
}

// Issue 46, finding 3: the Overview and the Stats reach their last line
// with G, with pgdn and with j alone, and stay at their end across a
// refresh that makes the page longer (the Overview's history appears).
func TestDrillPagesReachTheirEnd(t *testing.T) {
	ks := testKeyspace(t)
	recs := timelineFixture(ks, 70)
	for _, sc := range []struct {
		name string
		tabs []string
	}{{"Overview", []string{"tab", "tab", "tab"}}, {"Stats", []string{"tab"}}} {
		for _, k := range []string{"G", "pgdown", "j", "j120"} {
			w, h := 80, 24
			if k == "j120" { // the Stats' two columns side by side
				k, w, h = "j", 120, 16
			}
			m := newTestModel(t, w, h, recs)
			press(m, sc.tabs...)
			if atEnd(m) {
				t.Fatalf("%s: the fixture's page fits %d×%d:\n%s", sc.name, w, h, screenText(m))
			}
			for range 60 {
				if atEnd(m) {
					break
				}
				press(m, k)
			}
			if !atEnd(m) {
				t.Fatalf("%s: %s never reached the last line %q:\n%s", sc.name, k, lastLine(m), screenText(m))
			}
			refresh(m, recs)
			if !atEnd(m) {
				t.Fatalf("%s after %s: a refresh moved the page off its end (%q):\n%s", sc.name, k, lastLine(m), screenText(m))
			}
			checkFrame(t, m)
		}
	}
}

// A page scrolled part way keeps its place across refreshes, and the
// selection follows the page: after pgdn, enter opens a line shown.
func TestDrillPageKeepsItsPlace(t *testing.T) {
	ks := testKeyspace(t)
	recs := timelineFixture(ks, 70)
	m := newTestModel(t, 80, 24, recs)
	press(m, "tab") // Stats
	press(m, "pgdown")
	before := strings.Split(screenText(m), "\n")[2] // the page's first line
	if strings.Contains(before, "STATES") {
		t.Fatalf("pgdn did not move the page:\n%s", screenText(m))
	}
	refresh(m, recs)
	refresh(m, recs)
	if got := strings.Split(screenText(m), "\n")[2]; got != before {
		t.Fatalf("a refresh moved the page: first line %q, was %q:\n%s", got, before, screenText(m))
	}
	var selected string
	for _, l := range strings.Split(screenText(m), "\n") {
		if strings.Contains(l, "▸ ") {
			selected = l
		}
	}
	if selected == "" {
		t.Fatalf("after pgdn the selection is off the page:\n%s", screenText(m))
	}
	press(m, "enter")
	if m.screen != screenRecords || len(m.store.view) == 0 {
		t.Fatalf("enter on %q: screen %v, %d rows", selected, m.screen, len(m.store.view))
	}
}

// The detail is a page too: G reaches its last line, and neither the
// second's tick nor a refresh moves it back.
func TestDetailPageStaysAtItsEnd(t *testing.T) {
	ks := testKeyspace(t)
	recs := fixture(ks, 60)
	m := newTestModel(t, 80, 24, recs)
	press(m, "x", "enter")
	r := m.detail.cur.scanned
	m.Update(detailMsg{key: r.Key, d: inspect.Detail{Record: r, FieldCount: 2, Encoding: "listpack", Fields: []inspect.Field{
		{Name: "fingerprint", Value: r.Fingerprint, Len: 64}, {Name: "state", Value: "PROCESSING", Len: 10}}}})
	if !strings.Contains(screenText(m), "more lines") {
		t.Fatalf("the detail fits 80×24:\n%s", screenText(m))
	}
	press(m, "G")
	m.Update(tickMsg(clock))
	refresh(m, recs)
	if text := screenText(m); strings.Contains(text, "more lines") || !strings.Contains(text, "state") {
		t.Fatalf("the detail is not at its end after G, a tick and a refresh:\n%s", text)
	}
}
