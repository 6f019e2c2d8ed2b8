package main

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// baselineFields are the hash fields idemctl's atlasmart preset reads.
var baselineFields = []string{"state", "fingerprint", "status"}

// baseline times the minimal client: what any tool reading these records
// must at least ask the server, with nothing done to the answers.
func (h *harness) baseline(ctx context.Context) (Sample, error) {
	c := redis.NewClient(&redis.Options{Addr: h.srv.Addr, DisableIdentity: true, ReadTimeout: 30 * time.Second})
	defer c.Close()
	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	cpu0, busy0 := procCPU(h.srv.Pid()), busyCPU()
	start := time.Now()
	n, err := BaselineScan(ctx, c, matchPattern, 1000)
	s := Sample{Wall: time.Since(start), ServerCPU: procCPU(h.srv.Pid()) - cpu0, Keys: n}
	var ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	s.ClientCPU = time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	s.OtherCPU = max(busyCPU()-busy0-s.ServerCPU-s.ClientCPU, 0)
	if err == nil && n != int64(h.cfg.N) {
		err = fmt.Errorf("baseline read %d keys, want %d", n, h.cfg.N)
	}
	return s, err
}

// BaselineScan walks the keyspace with SCAN MATCH COUNT and, per batch, one
// pipeline of HMGET (the preset's fields), PTTL and MEMORY USAGE SAMPLES 0
// per key — one pipeline at a time, replies parsed by go-redis and dropped.
// It returns the number of keys read.
func BaselineScan(ctx context.Context, c *redis.Client, match string, count int) (int64, error) {
	var (
		cursor uint64
		n      int64
	)
	for {
		keys, next, err := c.Scan(ctx, cursor, match, int64(count)).Result()
		if err != nil {
			return n, fmt.Errorf("SCAN: %w", err)
		}
		if len(keys) > 0 {
			pipe := c.Pipeline()
			for _, k := range keys {
				pipe.HMGet(ctx, k, baselineFields...)
				pipe.PTTL(ctx, k)
				pipe.MemoryUsage(ctx, k, 0)
			}
			if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
				return n, fmt.Errorf("pipeline: %w", err)
			}
			n += int64(len(keys))
		}
		cursor = next
		if cursor == 0 {
			return n, nil
		}
	}
}
