package reaper

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Loop runs a cycle now and then every interval (start to start) until ctx
// ends, handing each report to fn, and releases the lease on the way out.
// When Connect is set, a cycle first (re)connects through it while the
// client is missing, so a loop started before Redis recovers on its own.
func (r *Reaper) Loop(ctx context.Context, every time.Duration, connect func(context.Context) (redis.UniversalClient, error), fn func(CycleReport)) {
	defer func() {
		if r.Client != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			_ = r.Lease.Release(rctx, r.Client)
			cancel()
		}
	}()
	for ctx.Err() == nil {
		start := time.Now()
		if r.Client == nil && connect != nil {
			c, err := connect(ctx)
			if err != nil {
				rep := CycleReport{Started: start, Apply: r.Apply, Err: said(err)}
				r.Metrics.observe(&rep)
				fn(rep)
			} else {
				r.Client, r.Exec.Client = c, c
			}
		}
		if r.Client != nil {
			fn(r.Cycle(ctx))
		}
		t := time.NewTimer(every - time.Since(start))
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}
