package inspect_test

import (
	"context"
	"testing"
	"time"

	"github.com/idemctl/idemctl/appsim"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/inspecttest"
	"github.com/idemctl/idemctl/internal/redistest"
)

// A hash record whose fields carry the TTLs (Redis 7.4+ HPEXPIRE) and whose
// key has none expires with its fields: it is reported with their TTL, its
// age derived from it, and not as blocked forever. Fields ending at
// different times are flagged.
func TestHashFieldTTLs(t *testing.T) {
	_, c := redistest.SharedClient(t)
	redistest.RequireFieldTTL(t, c)
	ctx := context.Background()
	whole := "atlasmart:ch23:idem:c1:POST:/orders:hfe1"
	mixed := "atlasmart:ch23:idem:c1:POST:/orders:hfe2"
	c.HSet(ctx, whole, "fingerprint", "abc", "state", "PROCESSING")
	c.Do(ctx, "hpexpire", whole, 50000, "fields", 2, "fingerprint", "state")
	c.HSet(ctx, mixed, "fingerprint", "def", "state", "SUCCEEDED", "status", "201", "response", `{"id":2}`)
	c.Do(ctx, "hpexpire", mixed, 60000, "fields", 3, "fingerprint", "state", "status") // the response never ends
	recs, _ := scanAll(t, c, inspecttest.Keyspace(t, "atlasmart"), inspect.Options{})
	got := byKey(recs)
	r := got[whole]
	if r.TTLms <= 49000 || r.TTLms > 50000 || r.Flags.Has(inspect.FlagNoTTL) || r.Flags.Has(inspect.FlagProcessingNoTTL) ||
		r.AgeSource != inspect.AgeTTL || r.AgeMs < 10000 || r.AgeMs > 11000 {
		t.Fatalf("field TTLs: ttl %d flags %v age %d from %v", r.TTLms, r.Flags, r.AgeMs, r.AgeSource)
	}
	r = got[mixed]
	if r.TTLms <= 59000 || !r.Flags.Has(inspect.FlagFieldTTLMixed) || r.Flags.Has(inspect.FlagNoTTL) {
		t.Fatalf("a response that outlives its state: ttl %d flags %v", r.TTLms, r.Flags)
	}
	// The detail view shows each field's own TTL.
	d, err := inspect.FetchDetail(ctx, c, inspecttest.Keyspace(t, "atlasmart"), mixed)
	if err != nil {
		t.Fatal(err)
	}
	ttl := map[string]int64{}
	for _, f := range d.Fields {
		ttl[f.Name] = f.TTLms
	}
	if ttl["state"] <= 59000 || ttl["response"] != -1 {
		t.Fatalf("detail field TTLs: %v", ttl)
	}
}

// Seeded with field TTLs, a keyspace reads as it does with key TTLs: the
// same counts by state, the same stale records, no record without a TTL
// but those seeded without one.
func TestSeededFieldTTLsReadLikeKeyTTLs(t *testing.T) {
	_, c := redistest.SharedClient(t)
	redistest.RequireFieldTTL(t, c)
	ctx := context.Background()
	plan := appsim.Plan{Schema: "atlasmart", Count: 400, ReserveTTL: 60 * time.Second, ProcessingTimeout: 30 * time.Second,
		Retention: 300 * time.Second, LargeResponse: inspect.DefaultLargeResponse, RandSeed: 9, FieldTTL: true}
	res, err := appsim.Seed(ctx, c, plan)
	if err != nil {
		t.Fatal(err)
	}
	ks := inspecttest.Keyspace(t, "atlasmart")
	recs, _ := scanAll(t, c, ks, inspect.Options{})
	st := inspect.NewStats(10)
	for i := range recs {
		st.AddRecord(&recs[i])
		if recs[i].TTLms > 0 && c.PTTL(ctx, recs[i].Key).Val() != -1 {
			t.Fatalf("%s: seeded with field TTLs but the key has a TTL", recs[i].Key)
		}
	}
	rep := st.Report()
	for state, n := range res.Expected.ByState {
		if rep.ByState[state] != n {
			t.Errorf("%s: %d, want %d", state, rep.ByState[state], n)
		}
	}
	if rep.Total != res.Expected.Total || rep.Stale != res.Expected.Stale || rep.Flags["no_ttl"] != res.Expected.Flags["no_ttl"] ||
		rep.Flags["processing_no_ttl"] != res.Expected.Flags["processing_no_ttl"] {
		t.Fatalf("stats over field TTLs: total %d stale %d flags %v; want %+v", rep.Total, rep.Stale, rep.Flags, res.Expected)
	}
}
