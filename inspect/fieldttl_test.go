package inspect_test

import (
	"context"
	"testing"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/redistest"
)

// A hash record whose fields carry the TTLs (Redis 7.4+ HPEXPIRE) and whose
// key has none expires with its fields: it is reported with their TTL, its
// age derived from it, and not as blocked forever. Fields ending at
// different times are flagged.
func TestHashFieldTTLs(t *testing.T) {
	srv := redistest.Shared(t)
	c := srv.Client(0)
	defer c.Close()
	redistest.RequireFieldTTL(t, c)
	ctx := context.Background()
	whole := "atlasmart:ch23:idem:c1:POST:/orders:hfe1"
	mixed := "atlasmart:ch23:idem:c1:POST:/orders:hfe2"
	c.HSet(ctx, whole, "fingerprint", "abc", "state", "PROCESSING")
	c.Do(ctx, "hpexpire", whole, 50000, "fields", 2, "fingerprint", "state")
	c.HSet(ctx, mixed, "fingerprint", "def", "state", "SUCCEEDED", "status", "201", "response", `{"id":2}`)
	c.Do(ctx, "hpexpire", mixed, 60000, "fields", 3, "fingerprint", "state", "status") // the response never ends
	recs, _ := scanAll(t, c, keyspace(t, "atlasmart"), inspect.Options{})
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
	d, err := inspect.FetchDetail(ctx, c, keyspace(t, "atlasmart"), mixed)
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
