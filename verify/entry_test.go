package verify

import (
	"strings"
	"testing"
	"time"
)

// An entry's builtins and fields fill the placeholders, each inside its
// own argument; a field the entry lacks is an unknown verdict naming it.
func TestVerifyEntryFillsFields(t *testing.T) {
	e := &Entry{Stream: "payments:events", Group: "billing", ID: "1700000000000-0", Consumer: "worker 1", Deliveries: 3,
		Fields: map[string]string{"event_id": "evt-'$(x)\"", "amount": "100"}}
	h := hook("args", 20*time.Second, "{stream}", "{group}/{id}", "{consumer}", "{deliveries}", "--event={event_id}", "{amount}")
	if err := h.CheckEntry(); err != nil {
		t.Fatal(err)
	}
	r := h.VerifyEntry(t.Context(), e)
	want := `payments:events|billing/1700000000000-0|worker 1|3|--event=evt-'$(x)"|100`
	if r.Verdict != NotDone || r.Detail != want {
		t.Fatalf("got %+v\nwant detail %q", r, want)
	}
	r = hook("args", 20*time.Second, "{order_id}").VerifyEntry(t.Context(), e)
	if r.Verdict != Unknown || !strings.Contains(r.Why, `has no field "order_id"`) {
		t.Fatalf("missing field: %+v", r)
	}
	if err := (Hook{Command: []string{"{stream}"}}).CheckEntry(); err == nil {
		t.Fatal("a placeholder in the executable was accepted")
	}
}
