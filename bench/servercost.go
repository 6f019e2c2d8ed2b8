package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ServerCost is the server-cost step: what each tool costs the server per
// key on the same keyspace (INFO cpu, user+system, before and after each
// run), and what another client's PING saw meanwhile. Every tool runs once
// a round, the order rotated, so the ratios come from one run.
type ServerCost struct {
	Tools []*ToolCost `json:"tools"`
}

// ToolCost is one tool's runs in the server-cost step.
type ToolCost struct {
	Key     string          `json:"key"`
	Label   string          `json:"label"`
	Command string          `json:"command"`
	CPU     []time.Duration `json:"server_cpu_ns"` // per run
	Wall    []time.Duration `json:"wall_ns"`
	PingP99 []time.Duration `json:"ping_p99_ns"`
	Keys    int64           `json:"keys"`
}

// PerKey is the median server CPU per key.
func (t *ToolCost) PerKey() time.Duration {
	if t.Keys <= 0 || len(t.CPU) == 0 {
		return 0
	}
	return medianDur(t.CPU) / time.Duration(t.Keys)
}

// costTools are the step's contenders, timed contenders like the rounds'.
func (h *harness) costTools() []variant {
	addr := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(h.srv.Port)}
	n := int64(h.cfg.N)
	stats := func(path string, extra ...string) func(context.Context) (Sample, error) {
		return func(ctx context.Context) (Sample, error) {
			var out bytes.Buffer
			args := append([]string{"--output", "json", "--read-path", path}, extra...)
			s, err := h.runIdemctl(ctx, &out, h.idemctlArgs("stats", args...)...)
			if err == nil && !bytes.Contains(out.Bytes(), []byte(`"read_path": "`+path+`"`)) {
				err = fmt.Errorf("stats --read-path %s did not read by that path:\n%s", path, tail(out.String(), 400))
			}
			return s, err
		}
	}
	cli := func(flag string) func(context.Context) (Sample, error) {
		return func(ctx context.Context) (Sample, error) {
			var out bytes.Buffer
			s, err := h.runTool(ctx, &out, "redis-cli", append(addr, flag)...)
			if err == nil && !bytes.Contains(out.Bytes(), []byte(fmt.Sprintf("Sampled %d keys", n))) {
				err = fmt.Errorf("redis-cli %s did not sample %d keys:\n%s", flag, n, tail(out.String(), 400))
			}
			return s, err
		}
	}
	budget := strings.Join(budgetArgs, " ")
	return []variant{
		{"idle", "no tool running", "(the probe alone, for the budget's idle p99)", func(ctx context.Context) (Sample, error) {
			select {
			case <-time.After(h.cfg.IdleProbe):
			case <-ctx.Done():
			}
			return Sample{}, ctx.Err()
		}},
		{"baseline", "baseline client", "SCAN + one pipeline per batch of HMGET, PTTL, MEMORY USAGE", func(ctx context.Context) (Sample, error) { return h.baseline(ctx) }},
		{"scan", "idemctl scan (script path)", "idemctl scan --output ndjson --read-path script", func(ctx context.Context) (Sample, error) {
			return h.runIdemctl(ctx, nil, h.idemctlArgs("scan", "--output", "ndjson", "--read-path", "script")...)
		}},
		{"stats-script", "idemctl stats (script path)", "idemctl stats --read-path script", stats("script")},
		{"stats-client", "idemctl stats (client path)", "idemctl stats --read-path client", stats("client")},
		{"budget-script", "idemctl stats --read-path script " + budget, "idemctl stats --read-path script " + budget, stats("script", budgetArgs...)},
		{"budget-client", "idemctl stats --read-path client " + budget, "idemctl stats --read-path client " + budget, stats("client", budgetArgs...)},
		{"memkeys", "redis-cli --memkeys", "redis-cli --memkeys", cli("--memkeys")},
		{"bigkeys", "redis-cli --bigkeys", "redis-cli --bigkeys", cli("--bigkeys")},
	}
}

// serverCost runs every tool once a round, rotating the order, each while
// a probe PINGs the server.
func (h *harness) serverCost(ctx context.Context) error {
	tools := h.costTools()
	res := &ServerCost{}
	h.res.ServerCost = res
	for _, t := range tools {
		tc := &ToolCost{Key: t.key, Label: t.label, Command: t.command, Keys: int64(h.cfg.N)}
		if t.key == "idle" {
			tc.Keys = 0
		}
		res.Tools = append(res.Tools, tc)
	}
	for round := range h.cfg.Rounds {
		for i := range tools {
			j := (i + round) % len(tools)
			h.waitQuiet(ctx)
			before, err := serverCPU(ctx, h)
			if err != nil {
				return err
			}
			lat, s, err := h.probeDuring(ctx, func() (Sample, error) { return tools[j].run(ctx) })
			if err != nil {
				return fmt.Errorf("%s: %w", tools[j].label, err)
			}
			after, err := serverCPU(ctx, h)
			if err != nil {
				return err
			}
			tc := res.Tools[j]
			tc.CPU, tc.Wall = append(tc.CPU, after-before), append(tc.Wall, s.Wall)
			tc.PingP99 = append(tc.PingP99, summarize(lat).P99)
			perKey := "     –"
			if tc.Keys > 0 {
				perKey = fmt.Sprintf("%6.2f", us(after-before)/float64(tc.Keys))
			}
			h.cfg.logf("server cost round %d/%d  %-28s %s µs/key  wall %7.3f s  PING p99 %s ms", round+1, h.cfg.Rounds,
				tc.Label, perKey, s.Wall.Seconds(), ms(summarize(lat).P99))
		}
	}
	return nil
}

// serverCPU is the server's own CPU time so far (INFO cpu: used_cpu_user
// plus used_cpu_sys, microsecond resolution).
func serverCPU(ctx context.Context, h *harness) (time.Duration, error) {
	info, err := h.client.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, fmt.Errorf("INFO cpu: %w", err)
	}
	var total float64
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("INFO cpu %s: %q", k, v)
			}
			total += f
		}
	}
	return time.Duration(total * float64(time.Second)), nil
}

func (r *Results) costTool(key string) *ToolCost {
	if r.ServerCost == nil {
		return nil
	}
	for _, t := range r.ServerCost.Tools {
		if t.Key == key {
			return t
		}
	}
	return nil
}

// markdownServerCost is the step's table.
func (r *Results) markdownServerCost(p func(string, ...any)) {
	if r.ServerCost == nil || len(r.ServerCost.Tools) == 0 {
		return
	}
	memkeys := r.costTool("memkeys")
	p("\n| server cost per key (INFO cpu, median of %d) | µs/key | ÷ memkeys | wall s | another client's PING p99 ms |\n|---|---:|---:|---:|---:|\n", r.Rounds)
	for _, t := range r.ServerCost.Tools {
		perKey, x, wall := "–", "–", "–"
		if t.Keys > 0 {
			perKey, wall = fmt.Sprintf("%.2f", us(t.PerKey())), secs(medianDur(t.Wall))
			if memkeys != nil && memkeys.PerKey() > 0 {
				x = fmt.Sprintf("%.2f", float64(t.PerKey())/float64(memkeys.PerKey()))
			}
		}
		p("| %s | %s | %s | %s | %s |\n", t.Label, perKey, x, wall, ms(medianDur(t.PingP99)))
	}
	p("\nThe server's user+system CPU (INFO cpu) from just before to just after each run, over the keys of the keyspace; the tools run once a round, the order rotated. The PING is another client's, every %v, during the run.\n", probeInterval)
}

// evaluateServerCost checks the step's targets (all on 1M records, ratios
// inside the one run): stats by the default (auto: the client) path at most
// half of what redis-cli --memkeys costs the server per key, the script path
// 0.7 of the client path's; scan and stats no slower than the baseline; and
// under --max-latency 1ms, by either path, another client's PING p99 within
// the idle p99 + 1 ms.
func (r *Results) evaluateServerCost(add func(Target)) {
	big := r.N >= 1_000_000
	note := func(t Target) Target {
		if !big && t.Got != costUnmeasured {
			t.Measured, t.Note = false, "the targets are on 1M records"
		}
		return t
	}
	memkeys, client, base := r.costTool("memkeys"), r.costTool("stats-client"), r.costTool("baseline")
	add(note(r.costRatio("stats (default path) server CPU per key vs redis-cli --memkeys", "stats-client", memkeys, 0.5)))
	add(note(r.costRatio("stats server CPU per key, script path vs client path", "stats-script", client, 0.7)))
	for _, key := range []string{"stats-client", "stats-script", "scan"} {
		add(note(r.wallRatio(key, base)))
	}
	for _, path := range []string{"client", "script"} {
		add(r.costBudget(path))
	}
}

const costUnmeasured = "not measured (-only servercost)"

// costRatio is tool key's server CPU per key over ref's.
func (r *Results) costRatio(name, key string, ref *ToolCost, limit float64) Target {
	t := Target{Name: name, Want: fmt.Sprintf("≤ %.1f ×", limit), Got: costUnmeasured}
	if c := r.costTool(key); c != nil && ref != nil && ref.PerKey() > 0 && c.PerKey() > 0 {
		x := float64(c.PerKey()) / float64(ref.PerKey())
		t.Got, t.Met, t.Measured = fmt.Sprintf("%.2f × (%.2f vs %.2f µs/key)", x, us(c.PerKey()), us(ref.PerKey())), x <= limit, true
	}
	return t
}

// wallRatio is tool key's median wall time over the baseline's.
func (r *Results) wallRatio(key string, base *ToolCost) Target {
	c := r.costTool(key)
	t := Target{Name: "server-cost step: wall time vs the baseline client, " + key, Want: "≤ 1.0 ×", Got: costUnmeasured}
	if c != nil {
		t.Name = "server-cost step: wall time vs the baseline client, " + c.Label
	}
	if c != nil && base != nil && len(c.Wall) > 0 && medianDur(base.Wall) > 0 {
		x := float64(medianDur(c.Wall)) / float64(medianDur(base.Wall))
		t.Got, t.Met, t.Measured = fmt.Sprintf("%.2f × (%s vs %s s)", x, secs(medianDur(c.Wall)), secs(medianDur(base.Wall))), x <= 1.0, true
	}
	return t
}

// costBudget is another client's PING p99 while stats reads by path under
// the latency budget, against the same step's idle p99.
func (r *Results) costBudget(path string) Target {
	t := Target{Name: "server-cost step: PING p99 under stats --read-path " + path + " " + strings.Join(budgetArgs, " "), Want: "≤ idle p99 + 1 ms", Got: costUnmeasured}
	idle, b := r.costTool("idle"), r.costTool("budget-"+path)
	if idle != nil && b != nil && len(idle.PingP99) > 0 && len(b.PingP99) > 0 {
		ip, bp := medianDur(idle.PingP99), medianDur(b.PingP99)
		t.Got = fmt.Sprintf("p99 %v (idle %v, + %v)", bp.Round(time.Microsecond), ip.Round(time.Microsecond), (bp - ip).Round(time.Microsecond))
		t.Met, t.Measured = bp <= ip+latencyBudget, true
	}
	return t
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
