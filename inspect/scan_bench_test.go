package inspect_test

import (
	"context"
	"testing"
	"time"

	"github.com/idemctl/idemctl/appsim"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/redistest"
)

// BenchmarkScan is the hot path end to end against a real server: SCAN,
// pipelined reads, decode and classify, and the hand-off of batches to the
// caller, per record.
func BenchmarkScan(b *testing.B) {
	srv := redistest.Own(b)
	c := srv.Client(0)
	defer c.Close()
	ctx := context.Background()
	const n = 20_000
	if _, err := appsim.Seed(ctx, c, appsim.Plan{Schema: "atlasmart", Count: n, ReserveTTL: time.Hour,
		ProcessingTimeout: 10 * time.Minute, Retention: time.Hour, LargeResponse: 16 << 10, RandSeed: 7}); err != nil {
		b.Fatal(err)
	}
	s, err := inspect.Preset("atlasmart")
	if err != nil {
		b.Fatal(err)
	}
	ks, err := inspect.NewKeyspace(inspect.KeyspaceSpec{Schema: s})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ch := make(chan inspect.Batch, 4)
		done := make(chan []inspect.Coverage, 1)
		go func() { done <- inspect.ScanAll(ctx, c, []*inspect.Keyspace{ks}, inspect.Options{}, ch) }()
		got := 0
		for batch := range ch {
			got += len(batch.Records)
		}
		if covs := <-done; got != n || covs[0].Err != nil {
			b.Fatalf("%d records, %v", got, covs[0].Err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}
