package appsim

import (
	"strings"
	"testing"
)

// Mismatches names every difference, in a stable order, and none when the
// report agrees.
func TestExpectedMismatches(t *testing.T) {
	e := Expected{Total: 10, Stale: 2, ByState: map[string]int64{"processing": 4, "succeeded": 6}, Flags: map[string]int64{"no_ttl": 1}}
	if m := e.Mismatches(10, 2, map[string]int64{"processing": 4, "succeeded": 6}, map[string]int64{"no_ttl": 1}); len(m) != 0 {
		t.Fatalf("agreeing report: %q", m)
	}
	got := e.Mismatches(9, 2, map[string]int64{"processing": 3}, nil)
	want := []string{"total 9 stale 2, seeded 10 and 2", "by_state[processing] = 3, seeded 4",
		"by_state[succeeded] = 0, seeded 6", "flags[no_ttl] = 0, seeded 1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("mismatches %q, want %q", got, want)
	}
}
