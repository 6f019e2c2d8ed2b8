package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/internal/appsim"
)

// seed fills the fresh server: from the seed cache when it holds a usable
// copy, otherwise with SeedParallel.
func (h *harness) seed(ctx context.Context) error {
	if n, err := h.client.DBSize(ctx).Result(); err != nil || n != 0 {
		return fmt.Errorf("fresh server not empty (%d keys, %v)", n, err)
	}
	if h.cfg.SeedCache != "" {
		if loaded, err := h.loadCache(ctx); err != nil || loaded {
			return err
		}
	}
	h.cfg.logf("seeding %d records on %s", h.cfg.N, h.srv.Addr)
	start := time.Now()
	exp, kinds, err := SeedParallel(ctx, h.client, h.cfg.N, seedWorkers)
	if err != nil {
		return err
	}
	s := &h.res.Seed
	s.Duration, s.Expected, s.Kinds = time.Since(start), exp, kinds
	s.RecordsPerSec = float64(h.cfg.N) / s.Duration.Seconds()
	s.UsedMemory = usedMemory(ctx, h.client)
	if s.Cache != nil {
		s.Cache.SeedStarted = start
	}
	h.cfg.logf("seeded in %v (%.0f records/s), used_memory %.0f MB", s.Duration.Round(time.Millisecond),
		s.RecordsPerSec, float64(s.UsedMemory)/1e6)
	return nil
}

// seedWorkers seed in parallel: the server's Lua work overlaps the
// client's pipeline building.
const seedWorkers = 2

// SeedParallel writes n records of the lesson's format with appsim.Seed
// from several goroutines (each its own random seed, hence its own run id
// in the keys) and sums what a correct stats must report.
func SeedParallel(ctx context.Context, c redis.UniversalClient, n, workers int) (appsim.Expected, map[appsim.Kind]int64, error) {
	exp := appsim.Expected{ByState: map[string]int64{}, Flags: map[string]int64{}}
	kinds := map[appsim.Kind]int64{}
	shares := seedShares(n, workers)
	results := make([]appsim.Result, len(shares))
	errs := make([]error, len(shares))
	var wg sync.WaitGroup
	for w, count := range shares {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[w], errs[w] = appsim.Seed(ctx, c, seedPlan(count, w))
		}()
	}
	wg.Wait()
	for w, r := range results {
		if errs[w] != nil {
			return exp, kinds, errs[w]
		}
		e := r.Expected
		exp.Total += e.Total
		exp.Stale += e.Stale
		for k, v := range e.ByState {
			exp.ByState[k] += v
		}
		for k, v := range e.Flags {
			exp.Flags[k] += v
		}
		for k, v := range r.Kinds {
			kinds[k] += v
		}
	}
	return exp, kinds, nil
}
