package snapshot_test

import (
	"os"
	"testing"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/snapshot"
)

// BenchmarkStatsSnapshot is stats --rdb in process over the file named by
// IDEMCTL_BENCH_RDB (an atlasmart dump, as the bench harness saves one):
// what to profile when the snapshot read is slower than redis-check-rdb.
func BenchmarkStatsSnapshot(b *testing.B) {
	path := os.Getenv("IDEMCTL_BENCH_RDB")
	if path == "" {
		b.Skip("IDEMCTL_BENCH_RDB names no file")
	}
	s, err := inspect.Preset("atlasmart")
	if err != nil {
		b.Fatal(err)
	}
	ks, err := inspect.NewKeyspace(inspect.KeyspaceSpec{Name: "atlasmart", Schema: s,
		ReserveTTL: 48 * time.Hour, ProcessingTimeout: 12 * time.Hour, Retention: 96 * time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		src, err := snapshot.Open(snapshot.Spec{Path: path})
		if err != nil {
			b.Fatal(err)
		}
		st := inspect.NewStats(10)
		covs, err := inspect.Scan(b.Context(), nil, []*inspect.Keyspace{ks}, inspect.Options{Snapshot: src}, func(bt inspect.Batch) error {
			st.Add(bt)
			return nil
		})
		if err != nil || covs[0].Err != nil {
			b.Fatal(err, covs[0].Err)
		}
		st.AddCoverage(covs...)
		b.ReportMetric(float64(covs[0].Records), "records")
		src.Close()
	}
}
