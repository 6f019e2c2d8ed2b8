package exporter

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/dedup"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// maxHeld records the largest dedup.Bytes seen while the scan's pipelines run.
type maxHeld struct{ max atomic.Int64 }

func (h *maxHeld) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *maxHeld) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *maxHeld) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if b := dedup.Bytes(); b > h.max.Load() {
			h.max.Store(b)
		}
		return next(ctx, cmds)
	}
}

// Between two scans the exporter holds its last snapshots, whose size does
// not depend on the records: the scan's table of keys seen (kept outside
// the Go heap, where no collector would ever free it) is given back when
// each scan ends, and the heap left after a scan of 60,000 records is the
// heap left after one of 2,000.
func TestExporterHoldsNothingPerRecordBetweenScans(t *testing.T) {
	_, c := redistest.SharedClient(t)
	held := &maxHeld{}
	c.AddHook(held)
	e := newExporter(t, c, func(cfg *Config) { cfg.Scan = inspect.Options{Count: 100} })
	var total int64
	heapAfterScan := func(records int, seed uint64) uint64 {
		t.Helper()
		_, err := appsim.Seed(t.Context(), c, appsim.Plan{Schema: "atlasmart", Count: records, ReserveTTL: reserveTTL,
			ProcessingTimeout: timeout, Retention: 5 * time.Minute, RandSeed: seed})
		if err != nil {
			t.Fatal(err)
		}
		total += int64(records)
		held.max.Store(0)
		if !e.ScanOnce(t.Context()) || e.state().good == nil || e.state().good.Totals().Records != total {
			t.Fatalf("scan of %d records failed", total)
		}
		if held.max.Load() == 0 {
			t.Fatal("no key table held during the scan: the check below proves nothing")
		}
		if b := dedup.Bytes(); b != 0 {
			t.Fatalf("%d bytes of the scan's key table still held after it", b)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	small := heapAfterScan(2000, 1)
	large := heapAfterScan(58_000, 2)
	if large > small+256<<10 { // 4 B a record more would be 232 KB
		t.Fatalf("heap after a scan: %d B at 2,000 records, %d B at 60,000", small, large)
	}
	t.Logf("heap after a scan: %d B at 2,000 records, %d B at 60,000; key table during it %d B", small, large, held.max.Load())
}
