package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/appsim"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/redistest"
)

// InstallHint tells how to get the external programs the harness drives.
const InstallHint = "the benchmark needs redis-server and redis-cli in PATH: install them with `apt-get install -y redis-server redis-tools` (Debian/Ubuntu) or run `bash .ci/test`"

// Seeding timings: long enough that nothing expires or turns stale while
// the harness runs (a 10M run takes about an hour: seeding alone took 6
// minutes on a busy machine, and a 10-minute timeout turned 94,217 fresh
// records stale before the check) and that a saved seed (-seed-cache)
// stays exact for hours (seedPlan(…).Stable(): 8 h 24 min); idemctl is
// told the same ones. They are the shared 10M server's too.
const (
	reserveTTL        = 48 * time.Hour
	processingTimeout = 12 * time.Hour
	retention         = 96 * time.Hour
	matchPattern      = "atlasmart:ch23:idem:*"
)

// The fixed throttle the production profile used before its latency
// budget, and the budget it uses now (config.example.yaml).
var (
	throttleArgs = []string{"--count", "500", "--keys-per-sec", "20000", "--pause", "5ms"}
	budgetArgs   = []string{"--max-latency", "1ms"}
)

// latencyBudget is budgetArgs' D, for the target.
const latencyBudget = time.Millisecond

// Config is one harness run.
type Config struct {
	N             int
	Rounds        int
	Smoke         bool
	Out           string
	Commit        string // what was measured (default: git describe --always --dirty)
	Idemctl       string // prebuilt binary; "" builds one from the module
	RSSSmallN     int    // smaller N for the RSS comparison (default N/10)
	ThrottledKeys int    // keys for the throttled load run (default min(N, 200000))
	LoadKeys      int    // keys for the unthrottled and latency-budget load runs (default min(N, 1000000))
	IdleProbe     time.Duration
	QuietCPU      float64       // wait until other processes use at most this many CPUs…
	QuietWait     time.Duration // …for at most this long before each timed run (0: don't wait)
	Load          bool
	TUI           bool
	Records       bool
	GoBench       bool
	Sampling      bool   // check stats --sample's intervals against the full scan
	SampleShare   string // the share each sampled run reads
	SampleRuns    int    // sampled runs
	Snapshot      bool   // SAVE the keyspace, time stats --rdb against redis-check-rdb
	ServerCost    bool   // server CPU per key of each tool and read path (INFO cpu)
	Writes        bool   // measure a bulk guarded write run (audited writes/s)
	WriteKeys     int    // records it writes
	WriteDir      string // where its audit log goes ("" the system's temp dir)
	Strict        bool
	Pin           bool      // load phases: the server on one CPU, the clients on the others
	SeedCache     string    // directory of saved seeds ("" none): load one instead of seeding, or save the seed
	Only          string    // comma-separated steps to run after seed and verify ("" every step that is on)
	Log           io.Writer // progress; nil: discarded
}

// DefaultConfig is the full run the issue asks for.
func DefaultConfig() Config {
	return Config{N: 1_000_000, Rounds: 3, IdleProbe: 3 * time.Second, QuietCPU: 0.15, QuietWait: 3 * time.Minute,
		Load: true, TUI: true, Records: true, GoBench: true, Writes: true, WriteKeys: 20_000,
		Sampling: true, SampleShare: "1%", SampleRuns: 20, Pin: true, Snapshot: true, ServerCost: true}
}

// ApplySmoke shrinks the run for CI, keeping any value set explicitly.
func (c *Config) ApplySmoke(set map[string]bool) {
	c.Smoke = true
	c.IdleProbe = 500 * time.Millisecond
	for _, d := range []struct {
		flag  string
		apply func()
	}{
		{"n", func() { c.N = 20_000 }},
		{"rounds", func() { c.Rounds = 1 }},
		{"gobench", func() { c.GoBench = false }},
		{"write-keys", func() { c.WriteKeys = 2_000 }},
		{"sample-runs", func() { c.SampleRuns = 3 }},
		{"sample", func() { c.SampleShare = "20%" }}, // 1 % of 20,000 records is too few to say much
		{"quiet-wait", func() { c.QuietWait = 0 }},
	} {
		if !set[d.flag] {
			d.apply()
		}
	}
}

func (c *Config) logf(format string, a ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "bench: "+format+"\n", a...)
	}
}

// Run builds, starts, seeds, measures, and returns the results.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	if cfg.N < 1 || cfg.Rounds < 1 || cfg.Writes && cfg.WriteKeys < 1 {
		return nil, fmt.Errorf("-n, -rounds and -write-keys must be positive")
	}
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			return nil, fmt.Errorf("%s not found in PATH: %s", bin, InstallHint)
		}
	}
	if cfg.RSSSmallN <= 0 {
		cfg.RSSSmallN = cfg.N / 10
	}
	if cfg.ThrottledKeys <= 0 {
		cfg.ThrottledKeys = min(cfg.N, 200_000)
	}
	if cfg.LoadKeys <= 0 {
		cfg.LoadKeys = min(cfg.N, 1_000_000)
	}
	tmp, err := os.MkdirTemp("", "idemctl-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	res := &Results{N: cfg.N, Rounds: cfg.Rounds, Smoke: cfg.Smoke, Started: time.Now(),
		CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadAvgStart: loadAvg()}

	res.Commit = cfg.Commit
	if res.Commit == "" {
		if root, err := moduleRoot(); err == nil {
			cmd := exec.Command("git", "describe", "--always", "--dirty")
			cmd.Dir = root
			res.Commit = firstLine(cmd.Output())
		}
	}
	h := &harness{cfg: cfg, tmp: tmp, res: res}
	if err := h.build(ctx); err != nil {
		return nil, err
	}
	only, err := parseOnly(cfg.Only)
	if err != nil {
		return nil, err
	}
	var srvArgs []string
	if cfg.SeedCache != "" {
		// It saves to and loads from seed.rdb in its own directory
		// (SAVE; DEBUG RELOAD NOSAVE, from this host only).
		srvArgs = []string{"--dbfilename", cacheRDB, "--enable-debug-command", "local"}
	}
	srv, err := redistest.Start(srvArgs...)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	h.srv = srv
	h.client = redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true, ReadTimeout: 30 * time.Second})
	defer h.client.Close()
	res.RedisVersion = infoField(ctx, h.client, "server", "redis_version")
	if v := infoField(ctx, h.client, "server", "valkey_version"); v != "" {
		res.RedisVersion = "valkey " + v // Valkey also reports redis_version 7.2.4, for clients
	}
	res.RedisCLI = firstLine(exec.Command("redis-cli", "--version").Output())

	steps := []struct {
		name string
		on   bool
		fn   func(context.Context) error
	}{
		{"seed", true, h.seed},
		{"verify", true, h.verify},
		{"cache", cfg.SeedCache != "", h.saveCache}, // once verified
		{"rounds", true, h.rounds},
		{"rss", true, h.rssScaling},
		{"load", cfg.Load, h.load},
		{"tui", cfg.TUI, h.tui},
		{"records", cfg.Records, h.records},
		{"gobench", cfg.GoBench, h.goBench},
		{"sampling", cfg.Sampling, h.sampling},
		{"snapshot", cfg.Snapshot, h.snapshot},
		{"servercost", cfg.ServerCost, h.serverCost},
		{"writes", cfg.Writes, h.writes}, // last: it changes records
	}
	on := func(name string) bool {
		for _, s := range steps {
			if s.name == name {
				return s.on && (only == nil || always[name]) || only[name]
			}
		}
		return false
	}
	if cfg.Pin {
		if h.pinning, err = newPinning(); err != nil {
			return nil, err
		}
		if h.pinning != nil {
			res.Pinning = h.pinning.desc
		}
	}
	est, waits := estimate(cfg, h.cacheUsable(), on)
	h.cfg.logf("%s", estimateLine(est, waits, cfg.QuietWait, min(cfg.QuietWait, busyQuietWait)))
	for _, s := range steps {
		if !on(s.name) || s.name == "cache" && res.Seed.Cache != nil && res.Seed.Cache.Loaded {
			continue // a loaded keyspace is saved already
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		start := time.Now()
		if err := h.runStep(ctx, s.name, s.fn); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		st := StepTime{Step: s.name, Took: time.Since(start)}
		for _, e := range est {
			if e.Step == s.name {
				st.Estimate = e.Estimate
			}
		}
		res.Steps = append(res.Steps, st)
		h.cfg.logf("step %s took %v (estimated %s)", s.name, st.Took.Round(time.Second), roughly(st.Estimate))
	}
	res.Duration = time.Since(res.Started)
	res.LoadAvgEnd = loadAvg()
	res.evaluate()
	return res, nil
}

// pinnedSteps run with the server and the clients apart (-pin): the load
// phases, where what one client costs another is the measure.
// The rounds are not: there the server saturates one CPU while idemctl,
// four pipelines in flight, waits on it, and everything else on the
// machine lands on that CPU (10M, the baseline then run in-process: stats
// 1.45 × it pinned, 0.90 × unpinned).
var pinnedSteps = map[string]bool{"load": true}

// runStep runs one step, pinned if it is one of pinnedSteps.
func (h *harness) runStep(ctx context.Context, name string, fn func(context.Context) error) error {
	if h.pinning == nil || !pinnedSteps[name] {
		return fn(ctx)
	}
	if err := h.pinning.hold(h.srv.Pid()); err != nil {
		return err
	}
	h.pinned = h.pinning
	err := fn(ctx)
	h.pinned = nil
	if e := h.pinning.release(h.srv.Pid()); err == nil {
		err = e
	}
	return err
}

type harness struct {
	cfg     Config
	tmp     string
	bin     string
	srv     *redistest.Server
	client  *redis.Client
	res     *Results
	devnull *os.File
	// verify's full stats report and its time: the truth the sampled
	// estimates are checked against.
	verified     *inspect.Report
	verifiedWall time.Duration
	pinning      *pinning // nil: not pinned (-pin=false, one CPU)
	pinned       *pinning // set while a pinned step runs
}

// moduleRoot finds the directory of this module's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the idemctl module: run from the repository (go run ./bench)")
	}
	return filepath.Dir(gomod), nil
}

func (h *harness) build(ctx context.Context) error {
	if h.cfg.Idemctl != "" {
		h.bin = h.cfg.Idemctl
		return nil
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	h.bin = filepath.Join(h.tmp, "idemctl")
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", h.bin, ".")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build idemctl: %v\n%s", err, out)
	}
	h.cfg.logf("built idemctl in %v", time.Since(start).Round(time.Millisecond))
	return nil
}

// idemctlArgs are the connection and keyspace flags every idemctl run gets.
func (h *harness) idemctlArgs(cmd string, extra ...string) []string {
	args := []string{cmd, "--url", h.srv.URL(0), "--preset", "atlasmart",
		"--reserve-ttl", reserveTTL.String(), "--processing-timeout", processingTimeout.String(),
		"--retention", retention.String()}
	return append(args, extra...)
}

// env keeps the developer's config and URL away from the measured runs.
func (h *harness) env() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "IDEMCTL_") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "XDG_CONFIG_HOME="+filepath.Join(h.tmp, "xdg"))
}

// seed fills the fresh server: from the seed cache when it holds a usable
// copy, otherwise with SeedParallel.
func (h *harness) seed(ctx context.Context) error {
	if n, err := h.client.DBSize(ctx).Result(); err != nil || n != 0 {
		return fmt.Errorf("fresh server not empty (%d keys, %v)", n, err)
	}
	if h.cfg.SeedCache != "" {
		if loaded, err := h.loadCache(ctx); err != nil || loaded {
			return err
		}
	}
	h.cfg.logf("seeding %d records on %s", h.cfg.N, h.srv.Addr)
	start := time.Now()
	exp, kinds, err := SeedParallel(ctx, h.client, h.cfg.N, seedWorkers)
	if err != nil {
		return err
	}
	s := &h.res.Seed
	s.Duration, s.Expected, s.Kinds = time.Since(start), exp, kinds
	s.RecordsPerSec = float64(h.cfg.N) / s.Duration.Seconds()
	s.UsedMemory = usedMemory(ctx, h.client)
	if s.Cache != nil {
		s.Cache.SeedStarted = start
	}
	h.cfg.logf("seeded in %v (%.0f records/s), used_memory %.0f MB", s.Duration.Round(time.Millisecond),
		s.RecordsPerSec, float64(s.UsedMemory)/1e6)
	return nil
}

func usedMemory(ctx context.Context, c *redis.Client) int64 {
	mem, _ := strconv.ParseInt(infoField(ctx, c, "memory", "used_memory"), 10, 64)
	return mem
}

// seedWorkers seed in parallel: the server's Lua work overlaps the
// client's pipeline building.
const seedWorkers = 2

// SeedParallel writes n records of the lesson's format with appsim.Seed
// from several goroutines (each its own random seed, hence its own run id
// in the keys) and sums what a correct stats must report.
func SeedParallel(ctx context.Context, c redis.UniversalClient, n, workers int) (appsim.Expected, map[appsim.Kind]int64, error) {
	exp := appsim.Expected{ByState: map[string]int64{}, Flags: map[string]int64{}}
	kinds := map[appsim.Kind]int64{}
	shares := seedShares(n, workers)
	results := make([]appsim.Result, len(shares))
	errs := make([]error, len(shares))
	var wg sync.WaitGroup
	for w, count := range shares {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[w], errs[w] = appsim.Seed(ctx, c, seedPlan(count, w))
		}()
	}
	wg.Wait()
	for w, r := range results {
		if errs[w] != nil {
			return exp, kinds, errs[w]
		}
		e := r.Expected
		exp.Total += e.Total
		exp.Stale += e.Stale
		for k, v := range e.ByState {
			exp.ByState[k] += v
		}
		for k, v := range e.Flags {
			exp.Flags[k] += v
		}
		for k, v := range r.Kinds {
			kinds[k] += v
		}
	}
	return exp, kinds, nil
}

// verify runs scan and stats once, untimed, and checks they saw every
// record and classified them as the seed says they must.
func (h *harness) verify(ctx context.Context) error {
	var out bytes.Buffer
	r, err := h.runIdemctl(ctx, &out, h.idemctlArgs("stats", "--output", "json")...)
	if err != nil {
		return err
	}
	var rep inspect.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return fmt.Errorf("stats output: %v", err)
	}
	if !rep.Complete {
		return errors.New("stats: scan not complete")
	}
	if m := h.res.Seed.Expected.Mismatches(rep.Total, rep.Stale, rep.ByState, rep.Flags); len(m) > 0 {
		return fmt.Errorf("stats: %s", strings.Join(m, "; "))
	}
	h.verified, h.verifiedWall = &rep, r.Wall
	h.cfg.logf("verified stats (%v): %d records, %d stale, as seeded", r.Wall.Round(time.Millisecond), rep.Total, rep.Stale)

	lc := &lineCounter{}
	r, err = h.runIdemctl(ctx, lc, h.idemctlArgs("scan", "--output", "ndjson")...)
	if err != nil {
		return err
	}
	if lc.lines != int64(h.cfg.N) {
		return fmt.Errorf("scan --output ndjson printed %d lines, want %d", lc.lines, h.cfg.N)
	}
	h.res.NDJSONBytes = lc.bytes
	h.cfg.logf("verified scan (%v): %d lines, %.0f MB of NDJSON", r.Wall.Round(time.Millisecond), lc.lines, float64(lc.bytes)/1e6)
	return nil
}

type lineCounter struct{ lines, bytes int64 }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.lines += int64(bytes.Count(p, []byte{'\n'}))
	c.bytes += int64(len(p))
	return len(p), nil
}

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

// CmdStat is one command's work on the server (INFO commandstats).
type CmdStat struct {
	Calls int64 `json:"calls"`
	Usec  int64 `json:"usec"`
}

// commandStats reads INFO commandstats.
func (h *harness) commandStats(ctx context.Context) map[string]CmdStat {
	info, err := h.client.Info(ctx, "commandstats").Result()
	out := map[string]CmdStat{}
	if err != nil {
		return out
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		var st CmdStat
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				st.Calls = n
			case "usec":
				st.Usec = n
			}
		}
		out[name] = st
	}
	return out
}

// diffStats is the work done between two snapshots (the snapshots' own
// INFO calls left out).
func diffStats(after, before map[string]CmdStat) map[string]CmdStat {
	out := map[string]CmdStat{}
	for k, a := range after {
		b := before[k]
		if d := (CmdStat{a.Calls - b.Calls, a.Usec - b.Usec}); d.Calls > 0 && k != "info" {
			out[k] = d
		}
	}
	return out
}

func infoField(ctx context.Context, c *redis.Client, section, field string) string {
	info, err := c.Info(ctx, section).Result()
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func firstLine(b []byte, err error) string {
	if err != nil {
		return ""
	}
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
