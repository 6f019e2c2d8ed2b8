package ui

import (
	"strings"
	"testing"

	"github.com/idemctl/idemctl/inspect"
)

// Issue 46, finding 6: inside an opened group, / starts from the group's
// term and a space, so a term typed after it is a term of its own
// (principal=customer-1 flag=stuck), never glued onto the value.
func TestFilterTypedInsideAGroup(t *testing.T) {
	ks := testKeyspace(t)
	m := newTestModel(t, 80, 24, fixture(ks, 70))
	press(m, "=", "enter") // by principal; the top group's records
	who := m.store.group.expanding
	if who == "" {
		t.Fatal("enter did not open a group")
	}
	press(m, "/")
	if got, want := m.records.input.Value(), "principal="+who+" "; got != want {
		t.Fatalf("the filter starts as %q, want %q", got, want)
	}
	typeText(m, "flag=stuck")
	press(m, "enter")
	if m.records.filtering || len(m.store.view) == 0 {
		t.Fatalf("principal=%s flag=stuck: filtering %v, %d rows (%s):\n%s", who, m.records.filtering, len(m.store.view), m.records.filterErr, screenText(m))
	}
	for pos := range m.store.view {
		if r := m.store.at(pos); r.Group("principal") != who || !r.Flags.Has(inspect.FlagProcessingNoTTL) {
			t.Fatalf("the filter let through %s", r.Key)
		}
	}
	if text := screenText(m); !strings.Contains(text, "filter: principal="+who+" flag=stuck") && !strings.Contains(text, "flag=stuck principal="+who) {
		t.Fatalf("the status line does not name the filter:\n%s", text)
	}
}
