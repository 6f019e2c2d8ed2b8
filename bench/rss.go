package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
)

// rssScaling measures peak RSS of stats and scan at a smaller N (with
// --max-keys on the same keyspace) beside the full N of the rounds.
func (h *harness) rssScaling(ctx context.Context) error {
	small := h.cfg.RSSSmallN
	if small < 1 || small >= h.cfg.N {
		return nil
	}
	for _, cmd := range []string{"stats", "scan"} {
		out := "json"
		if cmd == "scan" {
			out = "ndjson"
		}
		h.waitQuiet(ctx)
		s, err := h.runIdemctl(ctx, nil, h.idemctlArgs(cmd, "--output", out, "--max-keys", strconv.Itoa(small))...)
		if err != nil {
			return err
		}
		h.res.RSS = append(h.res.RSS, RSSPoint{Command: cmd, N: small, MaxRSSKB: s.MaxRSSKB, Wall: s.Wall})
		full := h.res.variant(cmd)
		h.res.RSS = append(h.res.RSS, RSSPoint{Command: cmd, N: h.cfg.N, MaxRSSKB: full.medianRSS(), Wall: full.Median()})
		h.cfg.logf("rss %s: %d records %.1f MB, %d records %.1f MB", cmd, small, float64(s.MaxRSSKB)/1024, h.cfg.N, float64(full.medianRSS())/1024)
	}
	return nil
}

// markdownRSS is the peak RSS table of the RSS scaling step.
func (r *Results) markdownRSS(p func(string, ...any)) {
	if len(r.RSS) > 0 {
		p("\n| peak RSS | records | MB | wall s |\n|---|---:|---:|---:|\n")
		for _, x := range r.RSS {
			p("| idemctl %s | %d | %.1f | %s |\n", x.Command, x.N, mb(x.MaxRSSKB), secs(x.Wall))
		}
		p("\nThe smaller count is the same keyspace read with `--max-keys`; the full count is the median of the rounds.\n")
	}
}

// evaluateRSS checks that stats' and scan's RSS grow sub-linearly in N.
func (r *Results) evaluateRSS(add func(Target)) {
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
}
