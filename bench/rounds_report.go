package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// markdownVariants is the rounds' table, one row per variant, and how
// the baseline and the CPU columns were measured.
func (r *Results) markdownVariants(p func(string, ...any)) {
	if len(r.Variants) == 0 { // -only without rounds
		return
	}
	base, memkeys := r.variant("baseline"), r.variant("memkeys")
	p("| variant | median s | min–max s | keys/s | × baseline | memkeys ÷ this | peak RSS MB | client CPU s | redis CPU s | other CPU s |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, v := range r.Variants {
		lo, hi := v.Samples[0].Wall, v.Samples[0].Wall
		for _, s := range v.Samples {
			lo, hi = min(lo, s.Wall), max(hi, s.Wall)
		}
		rss := "–"
		if v.Key == "scan" || v.Key == "stats" || v.Key == "baseline" {
			rss = fmt.Sprintf("%.1f", mb(v.medianRSS()))
		}
		x, mk := "–", "–"
		if base != nil {
			x = fmt.Sprintf("%.2f", ratio(v.Median(), base.Median()))
		}
		if memkeys != nil {
			mk = fmt.Sprintf("%.2f", ratio(memkeys.Median(), v.Median()))
		}
		p("| %s | %s | %s–%s | %.0f | %s | %s | %s | %.2f | %.2f | %.2f |\n", v.Label, secs(v.Median()), secs(lo), secs(hi),
			v.KeysPerSec(), x, mk, rss, time.Duration(v.medianOf(func(s Sample) int64 { return int64(s.ClientCPU) })).Seconds(),
			time.Duration(v.medianOf(func(s Sample) int64 { return int64(s.ServerCPU) })).Seconds(),
			time.Duration(v.medianOf(func(s Sample) int64 { return int64(s.OtherCPU) })).Seconds())
	}
	p("\nBaseline: %s, one pipeline at a time, in a process of its own (the harness's binary run again as that client), started, placed and measured as idemctl is. "+
		"Client CPU is user+system of the measured process (wait4 rusage; for redis-cli variants, the shell and its pipeline); redis CPU is the server's user+system during the run (/proc, 10 ms ticks); other CPU is what the rest of the machine used meanwhile (/proc/stat), i.e. noise.\n",
		r.variantCommand("baseline"))
}

// variantCommand is a variant's command line ("" when it did not run).
func (r *Results) variantCommand(key string) string {
	if v := r.variant(key); v != nil {
		return v.Command
	}
	return ""
}

// markdownCommands is the server's work per key in each variant's last
// round (INFO commandstats).
func (r *Results) markdownCommands(p func(string, ...any)) {
	if !slices.ContainsFunc(r.Variants, func(v *VariantResult) bool { return len(v.Commands) > 0 }) {
		return
	}
	p("\n| server work per key (INFO commandstats, last round) | commands/key | µs/key in commands | by command: calls/key × µs/call |\n|---|---:|---:|---|\n")
	for _, v := range r.Variants {
		if len(v.Commands) == 0 || len(v.Samples) == 0 {
			continue
		}
		n := float64(v.Samples[0].Keys)
		var calls, usec int64
		var names []string
		for name, c := range v.Commands {
			calls += c.Calls
			usec += c.Usec
			names = append(names, name)
		}
		slices.SortFunc(names, func(a, b string) int { // dearest first; ties by name, so the report is stable
			if d := v.Commands[b].Usec - v.Commands[a].Usec; d != 0 {
				return int(d)
			}
			return strings.Compare(a, b)
		})
		var parts []string
		for _, name := range names {
			c := v.Commands[name]
			parts = append(parts, fmt.Sprintf("%s %.3g × %.2f", name, float64(c.Calls)/n, float64(c.Usec)/float64(c.Calls)))
		}
		p("| %s | %.2f | %.2f | %s |\n", v.Label, float64(calls)/n, float64(usec)/n, strings.Join(parts, ", "))
	}
	p("\nINFO commandstats counts only the time inside each command, not reading, parsing and replying, which the redis CPU column includes.\n")
}

// evaluateVariants checks the rounds against the baseline and memkeys,
// and stats' peak RSS at the full N.
func (r *Results) evaluateVariants(add func(Target)) {
	base, scan, stats, memkeys := r.variant("baseline"), r.variant("scan"), r.variant("stats"), r.variant("memkeys")
	if base != nil && scan != nil && stats != nil && memkeys != nil {
		limit := 1.25
		if r.N >= TenM {
			limit = 1.1 // the 10M mode's target
		}
		for _, v := range []*VariantResult{scan, stats} {
			x := ratio(v.Median(), base.Median())
			add(Target{Name: "idemctl " + v.Key + " vs baseline", Want: fmt.Sprintf("≤ %.2f × baseline", limit),
				Got: fmt.Sprintf("%.2f ×", x), Met: x <= limit, Measured: true})
		}
		for _, v := range []*VariantResult{scan, stats} {
			x := ratio(memkeys.Median(), v.Median())
			add(Target{Name: "redis-cli --memkeys vs idemctl " + v.Key, Want: "≥ 4 × faster",
				Got: fmt.Sprintf("%.2f × faster", x), Met: x >= 4, Measured: true})
		}
		rss := stats.medianRSS()
		t := Target{Name: "stats peak RSS at 1M records", Want: "≤ 100 MB",
			Got: fmt.Sprintf("%.1f MB at %d records", mb(rss), r.N), Met: mb(rss) <= 100, Measured: r.N >= 1_000_000}
		if r.N >= TenM {
			t.Name, t.Want, t.Met = "stats peak RSS at 10M records", "≤ 120 MB", mb(rss) <= 120
		}
		if r.N < 1_000_000 {
			t.Note = "run with -n 1000000 to check this target"
		}
		add(t)
	}
}
