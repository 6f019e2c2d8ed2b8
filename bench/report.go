package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idemctl/idemctl/appsim"

	"github.com/idemctl/idemctl/internal/units"
)

// Results is everything one harness run measured.
type Results struct {
	N            int           `json:"n"`
	Commit       string        `json:"commit"`
	Rounds       int           `json:"rounds"`
	Smoke        bool          `json:"smoke"`
	Started      time.Time     `json:"started"`
	Duration     time.Duration `json:"duration_ns"`
	CPUs         int           `json:"cpus"`
	GoVersion    string        `json:"go_version"`
	RedisVersion string        `json:"redis_version"`
	RedisCLI     string        `json:"redis_cli"`
	LoadAvgStart string        `json:"loadavg_start"`
	Pinning      string        `json:"pinning,omitempty"` // where the load phases ran ("" not pinned)
	// ProbeRealTime says whether the load phases' probe ran on a real-time
	// thread ("yes", or "no: " and why).
	ProbeRealTime string           `json:"probe_real_time,omitempty"`
	LoadAvgEnd    string           `json:"loadavg_end"`
	QuietWaited   time.Duration    `json:"quiet_waited_ns"` // total time spent waiting for other processes to calm down
	NotQuiet      int              `json:"not_quiet"`       // timed runs started although the machine stayed busy
	Retried       int              `json:"retried"`         // samples redone because other processes took CPU meanwhile
	Seed          SeedInfo         `json:"seed"`
	NDJSONBytes   int64            `json:"ndjson_bytes"`
	Variants      []*VariantResult `json:"variants"`
	RSS           []RSSPoint       `json:"rss"`
	Load          []LoadPhase      `json:"load,omitempty"`
	TUI           *TUIResult       `json:"tui,omitempty"`
	RecordMemory  *RecordMemory    `json:"record_memory,omitempty"`
	GoBench       []GoBench        `json:"go_bench,omitempty"`
	Writes        *WriteResult     `json:"writes,omitempty"`
	Sampling      *SampleResult    `json:"sampling,omitempty"`
	Snapshot      *SnapshotResult  `json:"snapshot,omitempty"`
	ServerCost    *ServerCost      `json:"server_cost,omitempty"`
	Steps         []StepTime       `json:"steps"` // each step's time, and what was estimated
	Targets       []Target         `json:"targets"`
}

// SeedInfo is how the keyspace was filled.
type SeedInfo struct {
	Duration      time.Duration         `json:"duration_ns"`
	RecordsPerSec float64               `json:"records_per_sec"`
	UsedMemory    int64                 `json:"redis_used_memory"`
	Kinds         map[appsim.Kind]int64 `json:"kinds"`
	Expected      appsim.Expected       `json:"expected"`
	Cache         *CacheInfo            `json:"cache,omitempty"` // -seed-cache
}

// VariantResult is one contender over all rounds.
type VariantResult struct {
	Key     string   `json:"key"`
	Label   string   `json:"label"`
	Command string   `json:"command"`
	Samples []Sample `json:"samples"`
	// Commands is the server's work in the last round, by command.
	Commands map[string]CmdStat `json:"commands,omitempty"`
}

// Median wall time.
func (v *VariantResult) Median() time.Duration {
	var d []time.Duration
	for _, s := range v.Samples {
		d = append(d, s.Wall)
	}
	return medianDur(d)
}

func (v *VariantResult) medianOf(f func(Sample) int64) int64 {
	var d []time.Duration
	for _, s := range v.Samples {
		d = append(d, time.Duration(f(s)))
	}
	return int64(medianDur(d))
}

func (v *VariantResult) medianRSS() int64 {
	return v.medianOf(func(s Sample) int64 { return s.MaxRSSKB })
}

// KeysPerSec at the median wall time.
func (v *VariantResult) KeysPerSec() float64 {
	m := v.Median()
	if m <= 0 || len(v.Samples) == 0 {
		return 0
	}
	return float64(v.Samples[0].Keys) / m.Seconds()
}

// RSSPoint is a command's peak RSS at one record count.
type RSSPoint struct {
	Command  string        `json:"command"`
	N        int           `json:"n"`
	MaxRSSKB int64         `json:"max_rss_kb"`
	Wall     time.Duration `json:"wall_ns"`
}

// Target is one of the targets and whether this run met it.
type Target struct {
	Name     string `json:"name"`
	Want     string `json:"want"`
	Got      string `json:"got"`
	Met      bool   `json:"met"`
	Measured bool   `json:"measured"` // false: not measured in this run (skipped or N too small)
	Note     string `json:"note,omitempty"`
}

func medianDur(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (r *Results) variant(key string) *VariantResult {
	for _, v := range r.Variants {
		if v.Key == key {
			return v
		}
	}
	return nil
}

func (r *Results) rssAt(cmd string, n int) (int64, bool) {
	for _, p := range r.RSS {
		if p.Command == cmd && p.N == n {
			return p.MaxRSSKB, true
		}
	}
	return 0, false
}

// ratio is a/b of two medians.
func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return a.Seconds() / b.Seconds()
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

// evaluate checks every target of the issue against this run.
func (r *Results) evaluate() {
	r.Targets = nil
	add := func(t Target) { r.Targets = append(r.Targets, t) }
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
	for _, cmd := range []string{"stats", "scan"} {
		name := "stats RSS sub-linear in N"
		if cmd == "scan" {
			name = "scan --output ndjson streams (RSS not ∝ N)"
		}
		t := Target{Name: name, Want: "RSS(N) / RSS(n) ≤ √(N/n) (3.16 for 10× the records)"}
		var small RSSPoint
		for _, p := range r.RSS {
			if p.Command == cmd && p.N < r.N {
				small = p
			}
		}
		full, ok := r.rssAt(cmd, r.N)
		if ok && small.N > 0 {
			growth := float64(full) / float64(small.MaxRSSKB)
			perRec := float64(full-small.MaxRSSKB) * 1024 / float64(r.N-small.N)
			t.Measured = true
			t.Met = growth <= math.Sqrt(float64(r.N)/float64(small.N))
			t.Got = fmt.Sprintf("%.1f MB → %.1f MB for %d → %d records (× %.2f; %.0f B per extra record)",
				mb(small.MaxRSSKB), mb(full), small.N, r.N, growth, perRec)
		} else {
			t.Got = "not measured"
		}
		add(t)
	}
	tui := Target{Name: "TUI first rows on screen", Want: "≤ 300 ms"}
	if r.TUI != nil && len(r.TUI.FirstRows) > 0 {
		m := r.TUI.Median()
		tui.Got = fmt.Sprintf("%d ms (median of %d, tmux-polled; first frame without rows at %d ms)",
			m.Milliseconds(), len(r.TUI.FirstRows), medianDur(r.TUI.FirstFrame).Milliseconds())
		tui.Met, tui.Measured = m <= 300*time.Millisecond, true
		if r.N < 1_000_000 {
			tui.Note = "the target is on the 1M keyspace"
		}
	} else if r.TUI != nil && r.TUI.Skipped != "" {
		tui.Got = "skipped: " + r.TUI.Skipped
	} else {
		tui.Got = "not measured"
	}
	add(tui)
	render := Target{Name: "TUI frame with 1M records", Want: "≤ 2 ms", Got: "not measured (-gobench)"}
	filter := Target{Name: "TUI filter over every held record", Want: "≤ 1 s", Got: "not measured (-gobench)"}
	for _, b := range r.GoBench {
		held, isHeld := strings.CutPrefix(b.Name, "BenchmarkRenderHeld/")
		switch {
		case strings.HasPrefix(b.Name, "BenchmarkRender1M") && r.N < TenM,
			isHeld && r.N >= TenM:
			render.Got = fmt.Sprintf("%.3f ms, %d allocs (%s, 120×40)", b.NsPerOp/1e6, b.AllocsPerOp, b.Name)
			render.Met, render.Measured = b.NsPerOp <= 2e6, true
			if isHeld {
				render.Name = "TUI frame with " + heldCount(held) + " records"
			}
		case strings.HasPrefix(b.Name, "BenchmarkFilterHeld/"):
			filter.Name = "TUI filter over " + heldCount(strings.TrimPrefix(b.Name, "BenchmarkFilterHeld/")) + " held records"
			filter.Got = fmt.Sprintf("%.0f ms (%s: key substring, view rebuilt and sorted)", b.NsPerOp/1e6, b.Name)
			filter.Met, filter.Measured = b.NsPerOp <= 1e9, r.N >= TenM
			if r.N < TenM {
				filter.Note = "the target is on 10M records (-n 10000000)"
			}
		}
	}
	add(render)
	add(filter)
	held := Target{Name: "TUI RSS holding every record", Want: "≤ 1.5 GB at 10M", Got: "not measured (-tui)"}
	if t := r.TUI; t != nil && t.HeldRSSKB > 0 {
		held.Got = fmt.Sprintf("%.0f MB peak (%.0f MB after the scan) for %d records: %.0f B per record; whole scan shown after %v",
			mb(t.HeldRSSKB), mb(t.HeldNowKB), r.N, float64(t.HeldRSSKB)*1024/float64(r.N), t.ScanDone.Round(time.Millisecond))
		held.Met, held.Measured = r.N < TenM || mb(t.HeldRSSKB) <= 1.5*1024, r.N >= TenM
		if r.N < TenM {
			held.Note = "the target is on 10M records (-n 10000000)"
		}
	} else if t != nil && t.HeldErr != "" {
		held.Got = "not measured: " + t.HeldErr
	}
	add(held)
	r.evaluateBudget(add)
	st := Target{Name: "stats --sample: true counts inside their 95% intervals", Want: "≥ 95 % over repeated runs", Got: "not measured (-sampling)"}
	if s := r.Sampling; s != nil && s.Intervals > 0 {
		share := float64(s.Held) / float64(s.Intervals)
		st.Got = fmt.Sprintf("%.1f %% (%d of %d over %d runs of --sample %s; %v each, full scan %v)", share*100, s.Held, s.Intervals, s.Runs,
			s.Share, s.MedianWall.Round(time.Millisecond), s.FullWall.Round(time.Millisecond))
		st.Met, st.Measured = share >= 0.95, true
	}
	add(st)
	proj := Target{Name: "stats --sample 1% at 100M records (projected)", Want: "< 1 minute", Got: "not measured (-sampling)"}
	if s := r.Sampling; s != nil && s.PerKey > 0 {
		keys, d := s.Projection()
		proj.Got = fmt.Sprintf("≈ %.1f s = %v fixed + %s keys × %v per sampled key (measured: %s keys per run of --sample %s on %s records)",
			d.Seconds(), s.Fixed.Round(time.Millisecond), units.FormatCount(keys), s.PerKey, units.FormatCount(s.KeysRead), s.Share, units.FormatCount(int64(r.N)))
		proj.Met, proj.Measured = d < time.Minute, r.N >= 1_000_000
		if r.N < 1_000_000 {
			proj.Note = "too few keys per run to say: use -n 1000000 or more"
		}
	}
	add(proj)
	rm := Target{Name: "held record heap beyond key + fingerprint", Want: "≤ 250 B/record", Got: "not measured (-records)"}
	if m := r.RecordMemory; m != nil {
		rm.Got = fmt.Sprintf("%.0f B/record (%d records)", m.PerRecord(), m.Records)
		rm.Met, rm.Measured = m.PerRecord() <= 250, true
	}
	add(rm)
	wr := Target{Name: "bulk audited writes (intent fsynced before each write)", Want: "≥ 1,000 writes/s", Got: "not measured (-writes)"}
	if w := r.Writes; w != nil {
		wr.Got = fmt.Sprintf("%.0f writes/s (%d writes in %.2f s, audit log on %s)", w.WritesPerSec, w.Keys, w.WritePhase.Seconds(), w.AuditFS)
		wr.Met, wr.Measured = w.WritesPerSec >= 1000, true
		if w.AuditFS == "tmpfs" {
			wr.Measured, wr.Note = false, "the audit log was on tmpfs, where fsync is free: use -write-dir"
		}
	}
	add(wr)
	r.evaluateSnapshot(add)
	r.evaluateServerCost(add)
}

// TenM is the record count from which the harness checks the 10M targets.
const TenM = 10_000_000

// heldCount is a benchmark's record count (its sub-benchmark name, with the
// -GOMAXPROCS suffix) with thousands separators.
func heldCount(name string) string {
	n, _, _ := strings.Cut(name, "-")
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return n
	}
	return units.FormatCount(v)
}

// evaluateBudget checks the latency budget against the same run's idle
// and fixed-throttle phases: another client's p99 within idle p99 + D, and
// at least 2.5 × the throttle's keys/s.
func (r *Results) evaluateBudget(add func(Target)) {
	phases := map[string]LoadPhase{}
	for _, p := range r.Load {
		phases[p.Name] = p
	}
	idle, okI := phases["idle"]
	thr, okT := phases["throttled"]
	bud, okB := phases["budget"]
	lat := Target{Name: "latency budget 1 ms: another client's PING p99", Want: "≤ idle p99 + 1 ms", Got: "not measured (-load)"}
	rate := Target{Name: "latency budget 1 ms: keys/s vs the fixed throttle", Want: "≥ 2.5 ×", Got: "not measured (-load)"}
	if okI && okT && okB && bud.ScanWall > 0 && thr.ScanWall > 0 {
		lat.Got = fmt.Sprintf("p99 %v (idle %v, + %v)", bud.P99.Round(time.Microsecond), idle.P99.Round(time.Microsecond),
			(bud.P99 - idle.P99).Round(time.Microsecond))
		lat.Met, lat.Measured = bud.P99 <= idle.P99+latencyBudget, true
		br, tr := bud.keysPerSec(), thr.keysPerSec()
		rate.Got = fmt.Sprintf("%.2f × (%.0f vs %.0f keys/s)", br/tr, br, tr)
		rate.Met, rate.Measured = br >= 2.5*tr, true
	}
	add(lat)
	add(rate)
}

func (p LoadPhase) keysPerSec() float64 {
	if p.ScanWall <= 0 {
		return 0
	}
	return float64(p.ScanKeys) / p.ScanWall.Seconds()
}

// AllMet reports whether every measured target was met.
func (r *Results) AllMet() bool {
	for _, t := range r.Targets {
		if t.Measured && !t.Met {
			return false
		}
	}
	return true
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/1e6) }

// Markdown renders the report.
func (r *Results) Markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
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
		slices.SortFunc(names, func(a, b string) int { return int(v.Commands[b].Usec - v.Commands[a].Usec) })
		var parts []string
		for _, name := range names {
			c := v.Commands[name]
			parts = append(parts, fmt.Sprintf("%s %.3g × %.2f", name, float64(c.Calls)/n, float64(c.Usec)/float64(c.Calls)))
		}
		p("| %s | %.2f | %.2f | %s |\n", v.Label, float64(calls)/n, float64(usec)/n, strings.Join(parts, ", "))
	}
	p("\nINFO commandstats counts only the time inside each command, not reading, parsing and replying, which the redis CPU column includes.\n")

	if len(r.RSS) > 0 {
		p("\n| peak RSS | records | MB | wall s |\n|---|---:|---:|---:|\n")
		for _, x := range r.RSS {
			p("| idemctl %s | %d | %.1f | %s |\n", x.Command, x.N, mb(x.MaxRSSKB), secs(x.Wall))
		}
		p("\nThe smaller count is the same keyspace read with `--max-keys`; the full count is the median of the rounds.\n")
	}

	if len(r.Load) > 0 {
		p("\n| latency another client sees (PING every %v) | samples | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | scan s | scan keys/s | other CPUs |\n", probeInterval)
		p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, l := range r.Load {
			sw, sk := "–", "–"
			if l.ScanWall > 0 {
				sw, sk = secs(l.ScanWall), fmt.Sprintf("%.0f", float64(l.ScanKeys)/l.ScanWall.Seconds())
			}
			p("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %.2f |\n", l.Label, l.Samples, ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max), sw, sk, l.OtherCPU)
		}
		if r.ProbeRealTime == "yes" {
			p("\nThe probe runs on a thread of its own at real-time priority (SCHED_FIFO), with blocking syscalls: another client on a host of its own, whose round trip is the server's queue, not a wait for a CPU on this machine.\n")
		} else if r.ProbeRealTime != "" {
			p("\nThe probe could not run at real-time priority (%s): its round trips include waits for a CPU this machine's other processes hold.\n", r.ProbeRealTime)
		}
	}

	if m := r.RecordMemory; m != nil {
		p("\nHeld records (inspect.Scan into an inspect.RecordStore plus an []int32 view, as the TUI store does; live heap after GC plus the store's off-heap blocks): "+
			"%d records, %.1f MB (%.1f MB off the heap), **%.0f B/record in all**: packed slots %.1f + view %.1f + arena and the rest %.1f; "+
			"their keys and fingerprints as text would be %.1f + %.1f, so **%.0f B/record beyond key and fingerprint**. In-process Scan: first batch after %v, all in %.2f s.\n",
			m.Records, float64(m.HeapBytes)/1e6, float64(m.OffHeapBytes)/1e6, m.per(m.HeapBytes), m.per(m.SlotBytes), m.per(m.ViewBytes), m.Other(),
			m.per(m.KeyBytes), m.per(m.FingerprintBytes), m.PerRecord(),
			m.FirstBatch.Round(time.Millisecond), m.ScanWall.Seconds())
	}

	if len(r.GoBench) > 0 {
		p("\n| Go benchmark | ns/op | B/op | allocs/op | MB/s |\n|---|---:|---:|---:|---:|\n")
		for _, g := range r.GoBench {
			mbs := ""
			if g.MBPerS > 0 {
				mbs = fmt.Sprintf("%.1f", g.MBPerS)
			}
			p("| %s %s | %.1f | %d | %d | %s |\n", g.Package, g.Name, g.NsPerOp, g.BytesPerOp, g.AllocsPerOp, mbs)
		}
	}

	if w := r.Writes; w != nil {
		p("\nBulk guarded write: `%s` over %d freshly reserved records: %d applied; writes (first intent to last outcome in the audit log) %.2f s = **%.0f audited writes/s**; the whole command, planning included, %.2f s; audit log %.1f MB on %s.\n",
			w.Command, w.Keys, w.Applied, w.WritePhase.Seconds(), w.WritesPerSec, w.Wall.Seconds(), float64(w.AuditBytes)/1e6, w.AuditFS)
	}

	r.markdownServerCost(p)

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
	return b.String()
}

func (r *Results) variantCommand(key string) string {
	if v := r.variant(key); v != nil {
		return v.Command
	}
	return ""
}

// WriteFile writes the report: JSON for a .json path, markdown otherwise.
func (r *Results) WriteFile(path string) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	var data []byte
	if strings.HasSuffix(path, ".json") {
		var err error
		if data, err = json.MarshalIndent(r, "", "  "); err != nil {
			return err
		}
		data = append(data, '\n')
	} else {
		data = []byte(r.Markdown())
	}
	return os.WriteFile(path, data, 0o644)
}
