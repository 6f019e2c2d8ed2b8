package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/idemctl/idemctl/internal/units"
)

// Rates the estimate assumes: what this harness measured at 10M records
// on the 2-CPU VM while other processes took 1–1.3 CPUs (README
// Performance), rounded down. An estimate says how long to expect, not
// what will be measured.
const (
	rateSeed     = 17_000  // records/s, two writers
	rateLoad     = 130_000 // records/s, DEBUG RELOAD of a cached RDB
	rateSave     = 100_000 // records/s, SAVE
	rateOffline  = 500_000 // records/s, stats --rdb and redis-check-rdb
	rateBaseline = 50_000  // keys/s
	rateScan     = 45_000  // NDJSON to a pipe (verify) or /dev/null
	rateStats    = 50_000
	rateMemkeys  = 50_000 // 57,000 at 10M (24,000 at 1M: a shorter run)
	rateCliScan  = 120_000
	rateBudget   = 45_000 // --max-latency 1ms
	rateThrottle = 20_000 // the fixed throttle's --keys-per-sec
	rateTUI      = 55_000 // the TUI's scan, every record held
	rateHeld     = 100_000
	rateWrites   = 1_000 // audited writes/s
	goBenchTime  = 4 * time.Minute
	perRun       = time.Second // a process's start, connect and report
)

// StepTime is one step's time: estimated before the run, taken after.
type StepTime struct {
	Step     string        `json:"step"`
	Estimate time.Duration `json:"estimate_ns"`
	Took     time.Duration `json:"took_ns,omitempty"`
}

// estimate is each step's expected duration for cfg (which is resolved:
// RSSSmallN, ThrottledKeys and LoadKeys set), in the order they run, and
// the number of timed runs that may first wait for a quiet machine.
func estimate(cfg Config, cached bool, on func(step string) bool) (steps []StepTime, waits int) {
	n := float64(cfg.N)
	per := func(keys, rate float64) time.Duration {
		return perRun + time.Duration(keys/rate*float64(time.Second))
	}
	add := func(step string, d time.Duration, timed int) {
		if on(step) {
			steps = append(steps, StepTime{Step: step, Estimate: d})
			waits += timed
		}
	}
	if cached {
		add("seed", per(n, rateLoad), 0)
	} else {
		add("seed", per(n, rateSeed), 0)
	}
	add("verify", per(n, rateStats)+per(n, rateScan), 0)
	if !cached {
		add("cache", per(n, rateSave), 0)
	}
	round := per(n, rateBaseline) + per(n, rateScan) + per(n, rateStats) + per(n, rateMemkeys) + per(n, rateCliScan)
	add("rounds", time.Duration(cfg.Rounds)*round, 5*cfg.Rounds)
	small := float64(cfg.RSSSmallN)
	add("rss", per(small, rateStats)+per(small, rateScan), 2)
	lk := float64(cfg.LoadKeys)
	add("load", cfg.IdleProbe+per(lk, rateScan)+per(float64(cfg.ThrottledKeys), rateThrottle)+per(lk, rateBudget), 4)
	add("tui", time.Duration(cfg.Rounds)*2*time.Second+per(n, rateTUI), cfg.Rounds)
	add("records", per(n, rateHeld), 1)
	add("gobench", goBenchTime, 0)
	share, _ := units.ParseShare(cfg.SampleShare)
	add("sampling", time.Duration(cfg.SampleRuns)*per(share*n, rateStats), 0)
	add("snapshot", per(n, rateSave)+time.Duration(cfg.Rounds)*(2*per(n, rateOffline)+per(n, rateStats)), 3*cfg.Rounds)
	add("servercost", time.Duration(cfg.Rounds)*(per(n, rateBaseline)+per(n, rateScan)+2*per(n, rateStats)+2*per(n, rateMemkeys)), 6*cfg.Rounds)
	// follow: a stats pass, the idle and application windows, then each
	// mode's first pass and window (periodic: three passes at the interval).
	pass := per(n, rateStats)
	add("follow", pass+cfg.FollowWindow*2+2*pass+cfg.FollowWindow+max(cfg.FollowWindow, 3*(followInterval+2*pass)), 0)
	add("writes", per(float64(cfg.WriteKeys), rateWrites), 1)
	return steps, waits
}

// estimateLine says what the run should take, step by step, and how much
// waiting for a quiet machine may add at worst.
func estimateLine(steps []StepTime, waits int, firstWait, laterWait time.Duration) string {
	var total time.Duration
	var parts []string
	for _, s := range steps {
		total += s.Estimate
		parts = append(parts, s.Step+" "+roughly(s.Estimate))
	}
	line := fmt.Sprintf("this run should take about %s (%s)", roughly(total), strings.Join(parts, ", "))
	if waits > 0 && firstWait > 0 {
		worst := firstWait + time.Duration(waits-1)*laterWait
		line += fmt.Sprintf("; waiting for a quiet machine before %d timed runs can add up to %s", waits, roughly(worst))
	}
	return line
}

// roughly rounds a duration for an estimate: seconds under two minutes,
// else minutes.
func roughly(d time.Duration) string {
	if d < 2*time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}
