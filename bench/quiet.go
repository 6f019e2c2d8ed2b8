package main

import (
	"context"
	"time"
)

// maxRetries is how often a sample disturbed by other processes is redone.
const maxRetries = 3

// redoUnder is the longest sample that is redone when disturbed: a longer
// one averages the noise over its minutes, the report gives the CPU
// others took meanwhile, and redoing it would cost minutes each time at
// 10M records.
const redoUnder = 30 * time.Second

// redo reports whether a sample is measured again.
func (h *harness) redo(s Sample, attempt int) bool {
	return h.noisy(s) && attempt < maxRetries && s.Wall <= redoUnder
}

// noisy reports whether other processes used more than QuietCPU×1.5 CPUs on
// average during the sample (when waiting for quiet is on).
func (h *harness) noisy(s Sample) bool {
	return h.cfg.QuietWait > 0 && s.Wall > 0 && s.OtherCPU.Seconds()/s.Wall.Seconds() > h.cfg.QuietCPU*1.5
}

// waitQuiet waits (up to QuietWait) until the rest of the machine has used
// at most QuietCPU CPUs for a second, so other processes do not skew a
// timed run. On a shared machine this is the difference between noise and
// a measurement; the report says how long it waited.
func (h *harness) waitQuiet(ctx context.Context) {
	if h.cfg.QuietWait <= 0 {
		return
	}
	limit := h.quietLimit()
	start := time.Now()
	defer func() { h.res.QuietWaited += time.Since(start) }()
	quiet := 0
	for {
		b0, t0 := busyCPU(), time.Now()
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return
		}
		if busy := (busyCPU() - b0).Seconds() / time.Since(t0).Seconds(); busy <= h.cfg.QuietCPU {
			if quiet++; quiet >= 4 {
				return
			}
		} else {
			quiet = 0
		}
		if time.Since(start) > limit {
			h.res.NotQuiet++
			h.cfg.logf("machine still busy after %v: measuring anyway", limit)
			return
		}
	}
}

// busyQuietWait bounds each wait for quiet once one has run out: a
// machine busy for a whole QuietWait is shared for the run, and waiting
// three minutes before each of dozens of timed runs only delays it.
const busyQuietWait = 15 * time.Second

// quietLimit is how long the next wait for quiet may take.
func (h *harness) quietLimit() time.Duration {
	if h.res.NotQuiet > 0 {
		return min(h.cfg.QuietWait, busyQuietWait)
	}
	return h.cfg.QuietWait
}
