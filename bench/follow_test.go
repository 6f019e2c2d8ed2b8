package main

import (
	"testing"
	"time"
)

// The k-th deadline is counted when the stale count reaches base+k+1:
// its delay is that scrape's time less the deadline; a deadline never
// reached is missed, one reached before it is early, and deadlines out
// of the window are not measured.
func TestStaleDelays(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	deadlines := []time.Time{at(-500), at(100), at(250), at(900), at(5000)}
	scrapes := []scrape{{at: at(0), stale: 11}, {at: at(200), stale: 12}, {at: at(300), stale: 12}, {at: at(400), stale: 13}, {at: at(1000), stale: 13}}
	// base 10: the first deadline (before the window) makes 11.
	delays, missed, early := staleDelays(deadlines, scrapes, 10, at(0), at(1000))
	want := []time.Duration{100 * time.Millisecond, 150 * time.Millisecond}
	if len(delays) != 2 || delays[0] != want[0] || delays[1] != want[1] || missed != 1 || early != 0 {
		t.Fatalf("delays %v missed %d early %d, want %v, 1 missed", delays, missed, early, want)
	}
	// A count already past the deadline's rank before the deadline: early.
	scrapes[0].stale = 14
	if _, _, early := staleDelays(deadlines, scrapes, 10, at(0), at(1000)); early != 3 {
		t.Errorf("early %d, want 3", early)
	}
}
