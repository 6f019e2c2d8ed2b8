package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Markdown renders the report: each section writes itself through p, in
// the order the report reads.
func (r *Results) Markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	for _, section := range []func(p func(string, ...any)){
		r.markdownHeader, r.markdownVariants, r.markdownCommands, r.markdownRSS, r.markdownLoad,
		r.markdownRecordMemory, r.markdownGoBench, r.markdownWrites, r.markdownServerCost, r.markdownLedger, r.markdownFollow, r.markdownTargets,
	} {
		section(p)
	}
	return b.String()
}

// markdownHeader is the title and the run's setting: what was measured,
// on what, how the keyspace was filled, pinning, and the machine's noise.
func (r *Results) markdownHeader(p func(string, ...any)) {
	mode := ""
	if r.Smoke {
		mode = " (smoke)"
	}
	p("## idemctl benchmark%s: %d records, %d round(s)\n\n", mode, r.N, r.Rounds)
	if r.Commit != "" {
		p("idemctl %s. ", r.Commit)
	}
	seeded := fmt.Sprintf("seeded in %.1f s (%.0f records/s)", r.Seed.Duration.Seconds(), r.Seed.RecordsPerSec)
	if c := r.Seed.Cache; c != nil && c.Loaded {
		seeded = fmt.Sprintf("loaded from the seed cache in %.1f s (%s, seeded %s in %.1f s)", c.LoadTime.Seconds(),
			filepath.Base(c.File), c.SeedStarted.UTC().Format("2006-01-02 15:04 MST"), r.Seed.Duration.Seconds())
	}
	p("redis-server %s (%s), %s, %d CPUs, load average %s at the start and %s at the end; %s, Redis used_memory %.0f MB; NDJSON output %.0f MB. Whole run %s.\n\n",
		r.RedisVersion, r.RedisCLI, r.GoVersion, r.CPUs, r.LoadAvgStart, r.LoadAvgEnd, seeded,
		float64(r.Seed.UsedMemory)/1e6, float64(r.NDJSONBytes)/1e6, r.Duration.Round(time.Second))
	if r.Pinning != "" {
		p("Load phases pinned: %s (as if the clients ran on another host; `-pin=false` shares every CPU). The rounds share every CPU.\n\n", r.Pinning)
	} else {
		p("Not pinned: the server, the harness and the measured clients share every CPU.\n\n")
	}
	if r.QuietWaited > 0 || r.Retried > 0 || r.NotQuiet > 0 {
		p("Shared machine: waited %s in all for other processes to go quiet before timed runs; %d sample(s) redone because other processes took CPU meanwhile; %d run(s) started while still busy.\n\n",
			r.QuietWaited.Round(time.Second), r.Retried, r.NotQuiet)
	}
}

// markdownTargets is the closing table: every target, met or not.
func (r *Results) markdownTargets(p func(string, ...any)) {
	p("\n| target | want | got | |\n|---|---|---|---|\n")
	for _, t := range r.Targets {
		mark := "✅ met"
		switch {
		case !t.Measured && t.Note != "":
			mark = "– (" + t.Note + ")"
		case !t.Measured:
			mark = "–"
		case !t.Met:
			mark = "❌ missed"
		}
		p("| %s | %s | %s | %s |\n", t.Name, t.Want, t.Got, mark)
	}
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/1e6) }
