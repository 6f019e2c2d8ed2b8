package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect/pace"
)

// probeInterval paces the probe: one PING per interval, so the probe itself
// adds next to nothing to the load it measures.
const probeInterval = time.Millisecond

// LoadPhase is the latency another client saw during one phase.
type LoadPhase struct {
	Name     string        `json:"name"`
	Label    string        `json:"label"`
	Samples  int           `json:"samples"`
	P50      time.Duration `json:"p50_ns"`
	P90      time.Duration `json:"p90_ns"`
	P99      time.Duration `json:"p99_ns"`
	P999     time.Duration `json:"p999_ns"`
	Max      time.Duration `json:"max_ns"`
	OtherCPU float64       `json:"other_cpus"` // CPUs other processes used meanwhile (noise)
	ScanWall time.Duration `json:"scan_wall_ns,omitempty"`
	ScanKeys int64         `json:"scan_keys,omitempty"`
}

// load measures PING latency from a separate connection while nothing, an
// unthrottled idemctl scan, a throttled one and one held to a latency
// budget run, side by side in one run.
func (h *harness) load(ctx context.Context) error {
	k := h.cfg.ThrottledKeys
	throttled := append(append([]string{"--output", "ndjson"}, throttleArgs...), "--max-keys", strconv.Itoa(k))
	// The latency another client sees is the same over the first million
	// keys as over ten: the unthrottled and budget runs stop there
	// (-load-keys), which saves minutes at 10M.
	lk := h.cfg.LoadKeys
	plain := []string{"--output", "ndjson"}
	if lk < h.cfg.N {
		plain = append(plain, "--max-keys", strconv.Itoa(lk))
	}
	budget := append(slices.Clone(plain), budgetArgs...)
	phases := []struct {
		name, label string
		args        []string
		keys        int64
	}{
		{"idle", "no scan running", nil, 0},
		{"unthrottled", "idemctl scan --output ndjson (unthrottled)", plain, int64(lk)},
		{"throttled", "idemctl scan " + strings.Join(throttleArgs, " ") + " (fixed throttle)", throttled, int64(k)},
		{"budget", "idemctl scan " + strings.Join(budgetArgs, " ") + " (production profile)", budget, int64(lk)},
	}
	for _, p := range phases {
		h.waitQuiet(ctx)
		var ru0, ru1 syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		busy0, srv0, t0 := busyCPU(), procCPU(h.srv.Pid()), time.Now()
		lat, sample, err := h.probeDuring(ctx, func() (Sample, error) {
			if p.args == nil {
				select {
				case <-time.After(h.cfg.IdleProbe):
				case <-ctx.Done():
				}
				return Sample{}, ctx.Err()
			}
			return h.runIdemctl(ctx, nil, h.idemctlArgs("scan", p.args...)...)
		})
		if err != nil {
			return err
		}
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		self := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
		other := busyCPU() - busy0 - (procCPU(h.srv.Pid()) - srv0) - self - sample.ClientCPU
		lp := summarize(lat)
		lp.Name, lp.Label = p.name, p.label
		lp.OtherCPU = max(other.Seconds(), 0) / time.Since(t0).Seconds()
		if p.args != nil {
			lp.ScanWall, lp.ScanKeys = sample.Wall, p.keys
		}
		h.res.Load = append(h.res.Load, lp)
		h.cfg.logf("load %-12s PING p50 %v p99 %v p99.9 %v max %v (%d samples; other processes %.2f CPUs)", p.name,
			lp.P50.Round(time.Microsecond), lp.P99.Round(time.Microsecond), lp.P999.Round(time.Microsecond),
			lp.Max.Round(time.Microsecond), lp.Samples, lp.OtherCPU)
	}
	return nil
}

// probeDuring PINGs the server every probeInterval from its own connection
// while work runs, and returns each round trip's latency: from a real-time
// thread where the system allows it (rtProbe), otherwise from a goroutine.
func (h *harness) probeDuring(ctx context.Context, work func() (Sample, error)) ([]time.Duration, Sample, error) {
	c := redis.NewClient(&redis.Options{Addr: h.srv.Addr, DisableIdentity: true, PoolSize: 1, ReadTimeout: 30 * time.Second})
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil { // connected before timing starts
		return nil, Sample{}, err
	}
	pctx, stop := context.WithCancel(ctx)
	var (
		wg  sync.WaitGroup
		lat = make([]time.Duration, 0, 1<<16)
	)
	add := func(d time.Duration) { lat = append(lat, d) }
	wg.Add(1)
	ready := make(chan error, 1)
	go func() {
		defer wg.Done()
		rtProbe(pctx, h.srv.Addr, probeInterval, ready, add)
	}()
	if err := <-ready; err != nil {
		if h.res.ProbeRealTime == "" {
			h.res.ProbeRealTime = "no: " + err.Error()
			h.cfg.logf("latency probe: %v; probing from a goroutine instead, which waits for a CPU like any thread", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pace.Probe(pctx, c, probeInterval, add)
		}()
	} else {
		h.res.ProbeRealTime = "yes"
	}
	s, err := work()
	stop()
	wg.Wait()
	return lat, s, err
}

func summarize(lat []time.Duration) LoadPhase {
	lp := LoadPhase{Samples: len(lat)}
	if len(lat) == 0 {
		return lp
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	q := func(p float64) time.Duration { return s[min(int(p*float64(len(s))), len(s)-1)] }
	lp.P50, lp.P90, lp.P99, lp.P999, lp.Max = q(0.50), q(0.90), q(0.99), q(0.999), s[len(s)-1]
	return lp
}

// markdownLoad is the latency another client sees in each load phase, and
// whether its probe ran at real-time priority.
func (r *Results) markdownLoad(p func(string, ...any)) {
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
