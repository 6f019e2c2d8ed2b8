package inspect_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/idemctl/idemctl/appsim"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/inspecttest"
	"github.com/idemctl/idemctl/internal/redistest"
)

// A sample's estimates hold the true counts: 10 % samples from 20 random
// starts over 20,000 seeded records, each count's 95 % interval compared
// with the full scan's count. At least 90 % of all comparisons must hold
// (the harness asks 95 % over more runs; a test this size allows noise).
func TestSampleIntervalsHoldTheTrueCounts(t *testing.T) {
	_, c := redistest.SharedClient(t)
	ctx := context.Background()
	if _, err := appsim.Seed(ctx, c, appsim.Plan{Schema: "atlasmart", Count: 20000, ReserveTTL: time.Hour,
		ProcessingTimeout: 10 * time.Minute, Retention: time.Hour, LargeResponse: 16 << 10, RandSeed: 11}); err != nil {
		t.Fatal(err)
	}
	ks := inspecttest.Keyspace(t, "atlasmart")
	ks.ReserveTTL, ks.ProcessingTimeout = time.Hour, 10*time.Minute
	report := func(opt inspect.Options) inspect.Report {
		st := inspect.NewStats(5)
		covs, err := inspect.Scan(ctx, c, []*inspect.Keyspace{ks}, opt, func(b inspect.Batch) error { st.Add(b); return nil })
		if err != nil {
			t.Fatal(err)
		}
		st.AddCoverage(covs...)
		return st.Report()
	}
	full := report(inspect.Options{})
	if full.Sample != nil || !full.Complete {
		t.Fatalf("the full scan: complete %v, sample %+v", full.Complete, full.Sample)
	}
	truth := map[string]int64{"total": full.Total, "stale": full.Stale, "memory_bytes.total": full.MemoryBytes.Total}
	for st, n := range full.ByState {
		truth["by_state."+st] = n
	}
	for f, n := range full.Flags {
		truth["flags."+f] = n
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var held, checked int
	for run := 0; run < 20; run++ {
		r := report(inspect.Options{Count: 100, Sample: 0.1, SampleStart: rng.Uint64})
		if r.Sample == nil || r.Complete || math.Abs(r.Sample.Share-0.1) > 0.03 {
			t.Fatalf("run %d: sample %+v, complete %v", run, r.Sample, r.Complete)
		}
		for path, v := range truth {
			iv, ok := r.Sample.Intervals95[path]
			if !ok {
				t.Fatalf("run %d: no interval for %s", run, path)
			}
			checked++
			if iv.Contains(v) {
				held++
			}
		}
	}
	if float64(held) < 0.9*float64(checked) {
		t.Fatalf("only %d of %d intervals held the true count", held, checked)
	}
	t.Logf("%d of %d intervals held the true count", held, checked)
}
