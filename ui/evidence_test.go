package ui

import (
	"strings"
	"testing"

	"github.com/idemctl/idemctl/inspect"
)

// Records reserved with a TTL above the configured reserve TTL have no age:
// Overview and Records say the counts cannot be backed, and why; the banner
// is gone once every processing record's age is known.
func TestCannotJudgeBanner(t *testing.T) {
	ks := testKeyspace(t) // reserve TTL 60s
	recs := fixture(ks, 40)
	for i := range recs {
		r := &recs[i]
		if r.State == inspect.StateProcessing && r.TTLms == -1 {
			r.TTLms, r.Flags = 6*3_600_000-2_000, 0 // reserved with EX 6h
		}
	}
	m := newTestModel(t, 140, 24, recs)
	want := "⚠ cannot judge 4 processing records in atlasmart: their TTL (up to 5h59m) is above the configured reserve TTL (1m)"
	for _, sc := range []screen{screenRecords, screenOverview} {
		m.screen = sc
		checkFrame(t, m)
		if got := screenText(m); !strings.Contains(got, want) {
			t.Errorf("screen %d lacks the banner:\n%s", sc, got)
		}
	}
	m.screen = screenStats
	if strings.Contains(screenText(m), "cannot judge") {
		t.Error("the banner belongs to Overview and Records")
	}

	// Every age known: no banner, and the table gets its line back.
	ok := fixture(ks, 40)
	for i := range ok {
		if ok[i].TTLms == -1 {
			ok[i].TTLms, ok[i].AgeMs, ok[i].Flags = 30_000, 30_000, 0
		}
	}
	m = newTestModel(t, 100, 24, ok)
	if strings.Contains(screenText(m), "cannot judge") {
		t.Errorf("banner without a gap:\n%s", screenText(m))
	}
}

// The detail view says why such a record's age is unknown.
func TestAgeExplainTTLAboveReserve(t *testing.T) {
	ks := testKeyspace(t)
	r := inspect.Record{Keyspace: ks, State: inspect.StateProcessing, TTLms: 6*3_600_000 - 2_000, AgeMs: -1}
	if got := ageExplain(&r, ks, 0); !strings.Contains(got, "its TTL (5h59m) is above the configured reserve TTL (1m00s)") {
		t.Errorf("%q", got)
	}
}
