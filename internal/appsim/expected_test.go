package appsim

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
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

// Stable is the first moment a seeded record could change class: no
// planned record's age reaches the timeout or its TTL within it, and one
// more hour would (the bench's seed cache relies on the bound).
func TestPlanStable(t *testing.T) {
	p := Plan{Schema: "atlasmart", Count: 20_000, ReserveTTL: 48 * time.Hour, ProcessingTimeout: 12 * time.Hour,
		Retention: 96 * time.Hour, LargeResponse: 1024, Mix: DefaultMix}
	stable := p.Stable()
	if want := 8*time.Hour + 24*time.Minute; stable != want { // the freshest class, 0.7 × the timeout, comes first
		t.Fatalf("stable for %v, want %v", stable, want)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.2, 4, 100)
	var oldestFresh, oldestStale time.Duration
	for i, k := range assignKinds(p, rng) {
		r := planRecord(p, rng, zipf, "run", i, k)
		age := time.Duration(r.ageMs) * time.Millisecond
		switch k {
		case KindProcessing:
			oldestFresh = max(oldestFresh, age)
		case KindStale:
			oldestStale = max(oldestStale, age)
		}
	}
	if oldestFresh+stable > p.ProcessingTimeout || oldestStale+stable >= p.ReserveTTL {
		t.Errorf("within %v a record changes: oldest fresh %v (timeout %v), oldest stale %v (TTL %v)",
			stable, oldestFresh, p.ProcessingTimeout, oldestStale, p.ReserveTTL)
	}
	if oldestFresh+stable+time.Hour <= p.ProcessingTimeout {
		t.Errorf("bound %v is loose by over an hour: oldest fresh record %v, timeout %v", stable, oldestFresh, p.ProcessingTimeout)
	}
	short := p
	short.Retention = time.Hour
	if short.Stable() != time.Hour {
		t.Errorf("retention 1h: stable for %v", short.Stable())
	}
}

// StaleTTL bounds the TTLs planRecord gives stale records, and
// DefaultReserveTTL makes the shortest of them MinStaleLife at least for
// both presets' timeouts, a minute more being the least that does.
func TestStaleTTLAndDefaultReserveTTL(t *testing.T) {
	for _, tc := range []struct{ preset, timeout, want time.Duration }{
		{60 * time.Second, 30 * time.Second, time.Hour},   // atlasmart
		{time.Hour, 5 * time.Minute, time.Hour},           // setnx
		{time.Minute, 30 * time.Minute, 80 * time.Minute}, // a long timeout needs more
		{2 * time.Hour, 30 * time.Second, 2 * time.Hour},  // a longer preset TTL is kept
	} {
		got := DefaultReserveTTL(tc.preset, tc.timeout)
		if got != tc.want {
			t.Errorf("DefaultReserveTTL(%v, %v) = %v, want %v", tc.preset, tc.timeout, got, tc.want)
		}
		p := Plan{Schema: "atlasmart", Count: 5000, ReserveTTL: got, ProcessingTimeout: tc.timeout, Retention: time.Hour, LargeResponse: 1024, Mix: DefaultMix}
		first, last := p.StaleTTL()
		if first < MinStaleLife || first > last {
			t.Errorf("reserve %v, timeout %v: stale TTLs %v to %v", got, tc.timeout, first, last)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		zipf := rand.NewZipf(rng, 1.2, 4, 100)
		for i, k := range assignKinds(p, rng) {
			r := planRecord(p, rng, zipf, "run", i, k)
			if ttl := got - time.Duration(r.ageMs)*time.Millisecond; k == KindStale && (ttl < first || ttl > last) {
				t.Fatalf("a stale record seeded with TTL %v, outside %v to %v", ttl, first, last)
			}
		}
	}
}
