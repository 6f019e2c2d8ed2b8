package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// Run builds, starts, seeds, measures, and returns the results.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	if err := cfg.resolve(); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "idemctl-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	h := &harness{cfg: cfg, tmp: tmp, res: newResults(cfg)}
	if err := h.build(ctx); err != nil {
		return nil, err
	}
	only, err := parseOnly(cfg.Only)
	if err != nil {
		return nil, err
	}
	if err := h.start(ctx); err != nil {
		return nil, err
	}
	defer h.stop()
	steps := h.steps()
	on := stepFilter(steps, only)
	if err := h.pin(); err != nil {
		return nil, err
	}
	if err := h.runSteps(ctx, steps, on); err != nil {
		return nil, err
	}
	res := h.res
	res.Duration = time.Since(res.Started)
	res.LoadAvgEnd = loadAvg()
	res.evaluate()
	return res, nil
}

// newResults starts the report: the machine, and the commit measured
// (git describe when -commit is not given).
func newResults(cfg Config) *Results {
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
	return res
}

// start runs the server the steps measure against, connects to it, and
// notes its version and redis-cli's.
func (h *harness) start(ctx context.Context) error {
	var srvArgs []string
	if h.cfg.SeedCache != "" {
		// It saves to and loads from seed.rdb in its own directory
		// (SAVE; DEBUG RELOAD NOSAVE, from this host only).
		srvArgs = []string{"--dbfilename", cacheRDB, "--enable-debug-command", "local"}
	}
	srv, err := redistest.Start(srvArgs...)
	if err != nil {
		return err
	}
	h.srv = srv
	h.client = redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true, ReadTimeout: 30 * time.Second})
	res := h.res
	res.RedisVersion = infoField(ctx, h.client, "server", "redis_version")
	if v := infoField(ctx, h.client, "server", "valkey_version"); v != "" {
		res.RedisVersion = "valkey " + v // Valkey also reports redis_version 7.2.4, for clients
	}
	res.RedisCLI = firstLine(exec.Command("redis-cli", "--version").Output())
	return nil
}

// stop closes the client, then stops the server.
func (h *harness) stop() {
	h.client.Close()
	h.srv.Stop()
}

// pin sets up -pin's CPU placement (nil pinning where there is none).
func (h *harness) pin() error {
	if !h.cfg.Pin {
		return nil
	}
	var err error
	if h.pinning, err = newPinning(); err != nil {
		return err
	}
	if h.pinning != nil {
		h.res.Pinning = h.pinning.desc
	}
	return nil
}

// runSteps logs the run's estimate, then runs each step that is on and
// records its time beside what was estimated.
func (h *harness) runSteps(ctx context.Context, steps []step, on func(string) bool) error {
	cfg, res := h.cfg, h.res
	est, waits := estimate(cfg, h.cacheUsable(), on)
	h.cfg.logf("%s", estimateLine(est, waits, cfg.QuietWait, min(cfg.QuietWait, busyQuietWait)))
	for _, s := range steps {
		if !on(s.name) || s.name == "cache" && res.Seed.Cache != nil && res.Seed.Cache.Loaded {
			continue // a loaded keyspace is saved already
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		start := time.Now()
		if err := h.runStep(ctx, s.name, s.fn); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
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
	return nil
}

// pinnedSteps run with the server and the clients apart (-pin): the load
// phases, where what one client costs another is the measure, and the
// follow step, where it is what idemctl costs the application.
// The rounds are not: there the server saturates one CPU while idemctl,
// four pipelines in flight, waits on it, and everything else on the
// machine lands on that CPU (10M, the baseline then run in-process: stats
// 1.45 × it pinned, 0.90 × unpinned).
var pinnedSteps = map[string]bool{"load": true, "follow": true}

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

// harness is one run's state: the built idemctl, the server and its
// client, and the results so far.
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
