package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// baselineFields are the hash fields idemctl's atlasmart preset reads.
var baselineFields = []string{"state", "fingerprint", "status"}

// baselineChildEnv, set to a server address, makes this binary (or the
// bench test binary) the baseline client: it scans, prints the keys it
// read and exits. The harness runs it as a process of its own, so it is
// placed, timed and charged CPU exactly as idemctl is.
const baselineChildEnv = "IDEMCTL_BENCH_BASELINE_ADDR"

// baselineChild is that process's whole run; it returns the exit code.
func baselineChild(ctx context.Context, addr string, stdout, stderr io.Writer) int {
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, ReadTimeout: 30 * time.Second})
	defer c.Close()
	n, err := BaselineScan(ctx, c, matchPattern, 1000)
	if err != nil {
		fmt.Fprintln(stderr, "baseline:", err)
		return 1
	}
	fmt.Fprintln(stdout, n)
	return 0
}

// baseline times the minimal client: what any tool reading these records
// must at least ask the server, with nothing done to the answers.
func (h *harness) baseline(ctx context.Context) (Sample, error) {
	exe, err := os.Executable()
	if err != nil {
		return Sample{}, fmt.Errorf("finding this program to run the baseline client: %w", err)
	}
	var out bytes.Buffer
	s, err := h.measureEnv(ctx, &out, append(h.env(), baselineChildEnv+"="+h.srv.Addr), exe)
	if err != nil {
		return s, err
	}
	s.Keys, err = strconv.ParseInt(strings.TrimSpace(out.String()), 10, 64)
	if err != nil || s.Keys != int64(h.cfg.N) {
		return s, fmt.Errorf("baseline read %q keys, want %d", strings.TrimSpace(out.String()), h.cfg.N)
	}
	return s, nil
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
