package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
)

// variant is one timed contender.
type variant struct {
	key, label, command string
	run                 func(context.Context) (Sample, error)
}

func (h *harness) variants() []variant {
	addr := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(h.srv.Port)}
	n := int64(h.cfg.N)
	return []variant{
		{"baseline", "(a) baseline client", "SCAN MATCH COUNT 1000 + 1 pipeline/batch of HMGET(state,fingerprint,status), PTTL, MEMORY USAGE SAMPLES 0",
			func(ctx context.Context) (Sample, error) { return h.baseline(ctx) }},
		{"scan", "(b) idemctl scan", "idemctl scan --output ndjson > /dev/null",
			func(ctx context.Context) (Sample, error) {
				return h.runIdemctl(ctx, nil, h.idemctlArgs("scan", "--output", "ndjson")...)
			}},
		{"stats", "(c) idemctl stats", "idemctl stats --output json",
			func(ctx context.Context) (Sample, error) {
				var out bytes.Buffer
				s, err := h.runIdemctl(ctx, &out, h.idemctlArgs("stats", "--output", "json")...)
				if err == nil && !bytes.Contains(out.Bytes(), []byte(fmt.Sprintf(`"total": %d,`, n))) {
					err = fmt.Errorf("stats did not report total %d", n)
				}
				return s, err
			}},
		{"memkeys", "(d) redis-cli --memkeys", "redis-cli --memkeys",
			func(ctx context.Context) (Sample, error) {
				var out bytes.Buffer
				s, err := h.runTool(ctx, &out, "redis-cli", append(addr, "--memkeys")...)
				if err == nil && !bytes.Contains(out.Bytes(), []byte(fmt.Sprintf("Sampled %d keys", n))) {
					err = fmt.Errorf("redis-cli --memkeys did not sample %d keys:\n%s", n, tail(out.String(), 400))
				}
				s.Keys = n
				return s, err
			}},
		{"cliscan", "(e) redis-cli --scan | wc -l", "redis-cli --scan | wc -l",
			func(ctx context.Context) (Sample, error) {
				var out bytes.Buffer
				line := fmt.Sprintf("set -o pipefail; redis-cli -h 127.0.0.1 -p %d --scan | wc -l", h.srv.Port)
				s, err := h.runTool(ctx, &out, "bash", "-c", line)
				if got := strings.TrimSpace(out.String()); err == nil && got != strconv.FormatInt(n, 10) {
					err = fmt.Errorf("redis-cli --scan | wc -l printed %q, want %d", got, n)
				}
				s.Keys = n
				return s, err
			}},
	}
}

// rounds times the variants in alternation, rotating the order each round
// so no variant always runs first (or always right after another).
func (h *harness) rounds(ctx context.Context) error {
	vs := h.variants()
	for _, v := range vs {
		h.res.Variants = append(h.res.Variants, &VariantResult{Key: v.key, Label: v.label, Command: v.command})
	}
	for round := range h.cfg.Rounds {
		for i := range vs {
			j := (i + round) % len(vs)
			v := vs[j]
			var (
				s   Sample
				err error
			)
			var cmds map[string]CmdStat
			for attempt := 0; ; attempt++ {
				h.waitQuiet(ctx)
				before := h.commandStats(ctx)
				if s, err = v.run(ctx); err != nil {
					return fmt.Errorf("%s: %w", v.label, err)
				}
				cmds = diffStats(h.commandStats(ctx), before)
				if !h.redo(s, attempt) {
					break
				}
				h.res.Retried++
				h.cfg.logf("round %d/%d  %-30s %8.3f s: other processes took %.2f CPU-s meanwhile; measuring again",
					round+1, h.cfg.Rounds, v.label, s.Wall.Seconds(), s.OtherCPU.Seconds())
			}
			if s.Keys == 0 {
				s.Keys = int64(h.cfg.N)
			}
			h.res.Variants[j].Samples = append(h.res.Variants[j].Samples, s)
			h.res.Variants[j].Commands = cmds
			h.cfg.logf("round %d/%d  %-30s %8.3f s  rss %6.1f MB  cpu: client %6.2f s, redis %6.2f s, other %6.2f s",
				round+1, h.cfg.Rounds, v.label, s.Wall.Seconds(), float64(s.MaxRSSKB)/1024, s.ClientCPU.Seconds(), s.ServerCPU.Seconds(), s.OtherCPU.Seconds())
		}
	}
	return nil
}
