package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/idemctl/idemctl/inspect"

	"github.com/idemctl/idemctl/internal/units"
)

// SampleResult is how well `stats --sample` estimates: each run reads a
// share from a random start, and every count it reports is checked against
// the full scan of the same data.
type SampleResult struct {
	Share      string        `json:"share"`
	Runs       int           `json:"runs"`
	Intervals  int           `json:"intervals"` // counts compared, over all runs
	Held       int           `json:"held"`      // of which the true value lay inside the 95 % interval
	MedianWall time.Duration `json:"median_wall_ns"`
	FullWall   time.Duration `json:"full_wall_ns"` // the full stats run it is compared with
	FullFrom   string        `json:"full_from"`    // which: "verify" (the run's check of the seed) or "sampling" (its own)
	// What one sampled key costs, for the 100M projection: the scan's time
	// over the keys it read, and the rest of the run (start-up, connect,
	// report), medians over the runs.
	KeysRead int64         `json:"keys_read"`
	PerKey   time.Duration `json:"per_key_ns"`
	Fixed    time.Duration `json:"fixed_ns"`
}

// Projection is what `stats --sample 1%` would take at 100M records: it
// reads 1 % of the keys, SCAN visiting the hash table in proportion, so
// the cost per sampled key measured here carries over.
func (s SampleResult) Projection() (keys int64, d time.Duration) {
	keys = projectN / 100
	return keys, s.Fixed + time.Duration(keys)*s.PerKey
}

// projectN is the keyspace the sampling projection is for.
const projectN = 100_000_000

// sampling runs stats cfg.SampleRuns times with --sample
// cfg.SampleShare and checks each interval against verify's full stats of
// the same keyspace.
func (h *harness) sampling(ctx context.Context) error {
	stats := func(extra ...string) (inspect.Report, Sample, error) {
		var out bytes.Buffer
		s, err := h.runIdemctl(ctx, &out, h.idemctlArgs("stats", append([]string{"--output", "json"}, extra...)...)...)
		if err != nil {
			return inspect.Report{}, s, err
		}
		var r inspect.Report
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			return r, s, fmt.Errorf("stats output: %v", err)
		}
		return r, s, nil
	}
	// The truth is verify's full stats of the same, unchanged keyspace:
	// another full scan would cost minutes at 10M.
	full, fullWall, from := h.verified, h.verifiedWall, "verify"
	if full == nil {
		r, fs, err := stats()
		if err != nil {
			return err
		}
		full, fullWall, from = &r, fs.Wall, "sampling"
	}
	truth := map[string]int64{"total": full.Total, "stale": full.Stale, "memory_bytes.total": full.MemoryBytes.Total}
	for k, v := range full.ByState {
		truth["by_state."+k] = v
	}
	for k, v := range full.Flags {
		truth["flags."+k] = v
	}
	res := &SampleResult{Share: h.cfg.SampleShare, FullWall: fullWall, FullFrom: from}
	var walls, perKey, fixed []time.Duration
	var read []int64
	for range h.cfg.SampleRuns {
		r, s, err := stats("--sample", h.cfg.SampleShare)
		if err != nil {
			return err
		}
		if r.Sample == nil {
			return fmt.Errorf("stats --sample %s reported no sample", h.cfg.SampleShare)
		}
		walls = append(walls, s.Wall)
		var keys int64
		var scan time.Duration
		for _, c := range r.Coverage {
			keys += c.Keys
			scan += time.Duration(c.DurationMs) * time.Millisecond
		}
		if keys > 0 {
			read = append(read, keys)
			perKey = append(perKey, scan/time.Duration(keys))
			fixed = append(fixed, max(s.Wall-scan, 0))
		}
		res.Runs++
		for path, v := range truth {
			res.Intervals++
			if iv, ok := r.Sample.Intervals95[path]; ok && iv.Contains(v) {
				res.Held++
			}
		}
	}
	res.MedianWall, res.PerKey, res.Fixed = medianDur(walls), medianDur(perKey), medianDur(fixed)
	if len(read) > 0 {
		slices.Sort(read)
		res.KeysRead = read[len(read)/2]
	}
	h.res.Sampling = res
	h.cfg.logf("sampling: %d of %d intervals held the full scan's count over %d runs of --sample %s (median %v; full %v)",
		res.Held, res.Intervals, res.Runs, res.Share, res.MedianWall.Round(time.Millisecond), res.FullWall.Round(time.Millisecond))
	pk, pd := res.Projection()
	h.cfg.logf("sampling: %d keys read per run, %v per key in the scan + %v fixed ⇒ --sample 1%% of %d records reads %d keys in about %v",
		res.KeysRead, res.PerKey, res.Fixed.Round(time.Millisecond), projectN, pk, pd.Round(100*time.Millisecond))
	return nil
}

// evaluateSampling checks stats --sample's intervals and its projected
// time at 100M records.
func (r *Results) evaluateSampling(add func(Target)) {
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
}
