package inspect

import (
	"context"
	"testing"
	"time"
)

// --keys-per-sec holds: batches of keys at rate r take as long as their
// keys at r (the bucket starts empty, as the old start+keys/r schedule
// did), and after a stall only one batch (the burst) catches up at once:
// n keys then take (n-batch)/r.
func TestRateLimiterHoldsTheRate(t *testing.T) {
	const perSec, batch = 2000, 100
	l := newRateLimiter(perSec, batch)
	ctx := context.Background()
	start := time.Now()
	for range 10 { // 1000 keys: 0.5 s
		if !l.wait(ctx, batch, 0) {
			t.Fatal("wait failed")
		}
	}
	if d := time.Since(start); d < 450*time.Millisecond || d > 1500*time.Millisecond {
		t.Errorf("1000 keys at %d/s took %v, want about 500ms", perSec, d)
	}

	time.Sleep(300 * time.Millisecond) // a stall: 600 keys' worth, but the bucket holds one batch
	start = time.Now()
	for range 4 { // 400 keys, 100 of them from the bucket: (400-100)/2000 = 150ms
		l.wait(ctx, batch, 0)
	}
	if d := time.Since(start); d < 130*time.Millisecond || d > 1000*time.Millisecond {
		t.Errorf("400 keys after a stall took %v, want about 150ms (one batch caught up)", d)
	}

	start = time.Now()
	l.wait(ctx, 3*batch, 0) // a SCAN that returned more than --count: counted whole
	if d := time.Since(start); d < 130*time.Millisecond {
		t.Errorf("300 keys at once waited %v, want about 150ms", d)
	}
	if !newRateLimiter(0, batch).wait(ctx, 1_000_000, 0) {
		t.Error("unthrottled: no wait")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if newRateLimiter(1, 1).wait(cctx, 10, 0) {
		t.Error("a cancelled wait says so")
	}
}
