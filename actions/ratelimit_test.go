package actions

import (
	"context"
	"testing"
	"time"
)

// --rate holds: the first write goes at once, the n-th n/r after the start;
// after a stall (a slow fsync) at most one batch of writes catches up, so
// n writes then take (n-batch)/r.
func TestPaceHoldsTheRate(t *testing.T) {
	const perSec = 200 // batches of 10
	r := &run{limit: newLimit(perSec)}
	ctx := context.Background()
	start := time.Now()
	r.pace(ctx)
	if d := time.Since(start); d > 20*time.Millisecond {
		t.Errorf("the first write waited %v", d)
	}
	for range 40 { // writes 1..40: 200ms
		r.pace(ctx)
	}
	if d := time.Since(start); d < 190*time.Millisecond || d > 1000*time.Millisecond {
		t.Errorf("41 writes at %d/s took %v, want about 200ms", perSec, d)
	}

	time.Sleep(200 * time.Millisecond) // 40 writes' worth; the bucket holds one batch
	start = time.Now()
	for range 30 { // 10 from the bucket: (30-10)/200 = 100ms
		r.pace(ctx)
	}
	if d := time.Since(start); d < 90*time.Millisecond || d > 800*time.Millisecond {
		t.Errorf("30 writes after a stall took %v, want about 100ms (one batch caught up)", d)
	}
	if newLimit(0) != nil || newLimit(-1) != nil {
		t.Error("no --rate: unpaced")
	}
}
