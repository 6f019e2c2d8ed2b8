package inspect

import (
	"strings"
	"testing"
	"time"
)

func testKeyspace(t *testing.T, preset string, reserve time.Duration) *Keyspace {
	t.Helper()
	s, err := Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := NewKeyspace(KeyspaceSpec{Schema: s, ReserveTTL: reserve})
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// Each reason a processing record's age cannot be derived is named; a
// record whose staleness is known (stale, a stored deadline) is judged.
func TestAgeGapCauses(t *testing.T) {
	atlas := testKeyspace(t, "atlasmart", time.Minute)
	noReserve := testKeyspace(t, "atlasmart", time.Minute)
	noReserve.ReserveTTL = 0
	marker := testKeyspace(t, "marker-lock", 0) // no age from TTL, no timestamp on a record
	rec := func(ks *Keyspace, ttl int64) Record {
		return Record{Keyspace: ks, State: StateProcessing, TTLms: ttl, AgeMs: -1}
	}
	cases := []struct {
		r    Record
		want AgeGap
	}{
		{rec(atlas, 6*3_600_000), AgeGapTTLAboveReserve},
		{rec(atlas, -1), AgeGapNoTTL},
		{rec(atlas, TTLUnknown), AgeGapTTLUnreadable},
		{rec(noReserve, 30_000), AgeGapNoReserveTTL},
		{rec(marker, 30_000), AgeGapNoTimestamp},
		{Record{Keyspace: atlas, State: StateProcessing, TTLms: 30_000, AgeMs: 30_000}, AgeGapNone},
		{Record{Keyspace: atlas, State: StateProcessing, TTLms: -1, AgeMs: -1, Flags: FlagStale}, AgeGapNone},
		{Record{Keyspace: atlas, State: StateProcessing, TTLms: -1, AgeMs: -1, DeadlineMs: 1}, AgeGapNone},
		{Record{Keyspace: atlas, State: StateSucceeded, TTLms: -1, AgeMs: -1}, AgeGapNone},
	}
	for i, c := range cases {
		if got := c.r.AgeGap(); got != c.want {
			t.Errorf("case %d: %v, want %v", i, got, c.want)
		}
	}

	// Aggregated: a gap per cause, with the reserve TTL to set.
	st := NewStats(1)
	for i := range cases[:2] {
		st.AddRecord(&cases[i].r)
	}
	gaps := st.Report().CannotJudge
	if len(gaps) != 2 || gaps[0].Cause != "ttl_above_reserve" || !strings.Contains(gaps[0].Fix, "reserve_ttl: 6h") || gaps[1].Cause != "no_ttl" {
		t.Fatalf("%+v", gaps)
	}
}

func TestProposeDuration(t *testing.T) {
	for ms, want := range map[int64]time.Duration{
		6*3_600_000 - 5_000: 6 * time.Hour, // a record reserved 5 s ago under EX 6h
		3_600_000 + 900:     time.Hour,     // EX rounded up by a second
		59_000:              58 * time.Second,
		90_500:              2 * time.Minute,
		1:                   time.Second,
	} {
		if got := ProposeDuration(ms); got != want {
			t.Errorf("ProposeDuration(%d) = %v, want %v", ms, got, want)
		}
	}
}

// A pattern that matched nothing is a gap only when the database holds keys
// no keyspace matched.
func TestGapsNoMatch(t *testing.T) {
	r := Report{Coverage: []CoverageReport{{Keyspace: "a", Match: "a:*", Complete: true}, {Keyspace: "b", Match: "b:*", Keys: 5, Complete: true}}}
	if !r.MatchedNothing() {
		t.Fatal("keyspace a matched nothing")
	}
	if g := r.Gaps(5); len(g) != 0 {
		t.Errorf("every key is b's: %+v", g)
	}
	if g := r.Gaps(-1); len(g) != 0 {
		t.Errorf("unknown key count: %+v", g)
	}
	if g := r.Gaps(8); len(g) != 1 || g[0].Kind != GapNoMatch || !strings.Contains(g[0].Message, "3 keys no keyspace matched") {
		t.Errorf("%+v", g)
	}
}
