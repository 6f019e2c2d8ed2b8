package inspect_test

import (
	"context"
	"testing"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/inspecttest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

func TestSnapshotMatchesSeed(t *testing.T) {
	// Long reserve TTL and timeout: no record changes class during the test.
	const reserveTTL, timeout = time.Hour, 10 * time.Minute
	_, c := redistest.SharedClient(t)
	res, err := appsim.Seed(t.Context(), c, appsim.Plan{
		Schema: "atlasmart", Count: 3000, ReserveTTL: reserveTTL, ProcessingTimeout: timeout,
		Retention: 5 * time.Minute, LargeResponse: inspect.DefaultLargeResponse, RandSeed: 7,
	})
	if err != nil {
		t.Fatal(err)
	}
	ks := inspecttest.Spec(t, inspect.KeyspaceSpec{Name: "orders", Schema: inspecttest.Preset(t, "atlasmart"), ReserveTTL: reserveTTL, ProcessingTimeout: timeout})
	snap := inspect.TakeSnapshot(t.Context(), c, []*inspect.Keyspace{ks, ks}, inspect.Options{}, 5)
	if !snap.Complete || snap.Err != nil || len(snap.Keyspaces) != 1 {
		t.Fatalf("snapshot: complete %v err %v keyspaces %d (a repeated keyspace counts once)", snap.Complete, snap.Err, len(snap.Keyspaces))
	}
	r := snap.Keyspaces[0].Report
	for _, m := range res.Expected.Mismatches(r.Total, r.Stale, r.ByState, r.Flags) {
		t.Error(m)
	}
	tot := snap.Totals()
	if tot.Records != 3000 || tot.Stale != res.Expected.Stale || tot.ProcessingNoTTL != res.Kinds[appsim.KindProcessingNoTTL] ||
		tot.Keys != 3000 || tot.OldestProcessingMs <= timeout.Milliseconds() {
		t.Errorf("totals %+v, seed %+v", tot, res.Expected)
	}

	// Cut short, a snapshot says it is incomplete and why.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	snap = inspect.TakeSnapshot(ctx, c, []*inspect.Keyspace{ks}, inspect.Options{}, 5)
	if snap.Complete || snap.Err == nil {
		t.Fatalf("cancelled snapshot: complete %v err %v", snap.Complete, snap.Err)
	}
}
