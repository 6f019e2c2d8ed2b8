package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/appsim"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/ui"
)

// Demo timing: long enough reserve TTL that crashed requests stay visible
// as stale for minutes, a short timeout so they turn stale while you watch.
const (
	demoReserveTTL = 2 * time.Minute
	demoTimeout    = 30 * time.Second
	demoRetention  = 10 * time.Minute
)

// demoCmdOptions are demo's flags.
type demoCmdOptions struct {
	count, rate int
	crash       float64
	auditLog    string
	refresh     time.Duration
}

func newDemoCmd(a *app) *cobra.Command {
	o := demoCmdOptions{refresh: 3 * time.Second}
	c := newCommand("demo [flags]", "try it: the TUI on an embedded Redis with a live simulated application",
		"Try idemctl with nothing installed: starts an embedded in-process Redis-compatible\n"+
			"server (miniredis), seeds it with realistic records, runs a simulated application\n"+
			"that keeps reserving and completing requests — and now and then crashes, leaving\n"+
			"PROCESSING records that go stale while you watch — and opens the TUI on it with\n"+
			"writes enabled (a sandbox: nothing leaves this process).",
		func(ctx context.Context, _ *pflag.FlagSet, _ []string) error { return runDemo(ctx, a, &o) })
	fs := c.Flags()
	fs.IntVar(&o.count, "count", 3000, "records to seed")
	fs.IntVar(&o.rate, "rate", 20, "simulated requests per second")
	fs.Float64Var(&o.crash, "crash-rate", 0.05, "share of simulated requests whose worker crashes")
	fs.StringVar(&o.auditLog, "audit-log", filepath.Join(os.TempDir(), "idemctl-demo-audit.log"), "the demo's own audit log")
	fs.Var(durationValue{&o.refresh}, "refresh", "rescan interval")
	return c
}

func runDemo(ctx context.Context, a *app, o *demoCmdOptions) error {
	if o.count < 1 || o.rate < 0 || o.crash < 0 || o.crash > 1 {
		return usageErr("--count must be positive, --rate ≥ 0, --crash-rate between 0 and 1")
	}
	if !a.isTTY || !a.inTTY {
		return usageErr("the demo opens the terminal UI and needs a terminal")
	}
	d, err := startDemo(ctx, o.count, o.rate, o.crash)
	if err != nil {
		return err
	}
	defer d.stop()
	// The demo's audit log is a file of its own: sandbox writes never mix
	// with real ones.
	addr := "redis://" + d.srv.Addr() + "/0"
	ex, err := actions.NewExecutor(actions.Setup{Client: d.client, Policy: &actions.Policy{Writes: true, Profile: "demo"},
		Identity: actions.Identity{OSUser: a.user(), Profile: "demo", Address: addr}, AuditPath: o.auditLog})
	if err != nil {
		return err
	}
	defer ex.Close()
	return ui.Run(ctx, ui.Options{
		Client: d.client, Keyspaces: []*inspect.Keyspace{d.ks}, Profile: "demo",
		Address: addr, User: "default", Demo: true, Refresh: o.refresh, Executor: ex,
		NoColor: a.getenv("NO_COLOR") != "",
	})
}

// demo is the embedded server, its client, the simulated application and
// the clock that makes TTLs run down (miniredis only moves time when told).
type demo struct {
	srv    *miniredis.Miniredis
	client redis.UniversalClient
	ks     *inspect.Keyspace
	cancel context.CancelFunc
	done   chan struct{}
}

func startDemo(ctx context.Context, count, rate int, crash float64) (*demo, error) {
	srv := miniredis.NewMiniRedis()
	// TTLs run down with a clock that moves in steps: TIME, PTTL and
	// PEXPIRETIME then agree with each other at every moment, as on a real
	// server (FastForward alone moves TTLs but not the clock, so a key's
	// expiry time would drift and every guarded write would see a change).
	srv.SetTime(time.Now())
	srv.ClockTTL(true)
	if err := srv.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("start the embedded Redis: %w", err)
	}
	client := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr()}, DisableIdentity: true})
	schema, err := inspect.Preset("atlasmart")
	if err != nil {
		return nil, err
	}
	ks, err := inspect.NewKeyspace(inspect.KeyspaceSpec{Schema: schema, ProcessingTimeout: demoTimeout,
		ReserveTTL: demoReserveTTL, Retention: demoRetention})
	if err != nil {
		return nil, err
	}
	plan := func(n int, seed uint64) appsim.Plan {
		return appsim.Plan{Schema: "atlasmart", Count: n, ReserveTTL: demoReserveTTL, ProcessingTimeout: demoTimeout,
			Retention: demoRetention, LargeResponse: inspect.DefaultLargeResponse, RandSeed: seed}
	}
	// miniredis runs Lua slowly (~1 ms a script): seed a first part now so
	// the UI opens on data at once, and the rest in the background.
	first := min(count, 400)
	if _, err := appsim.Seed(ctx, client, plan(first, 42)); err != nil {
		srv.Close()
		return nil, fmt.Errorf("seed the demo: %w", err)
	}
	dctx, cancel := context.WithCancel(ctx)
	d := &demo{srv: srv, client: client, ks: ks, cancel: cancel, done: make(chan struct{})}
	sim := appsim.NewSimulator(client, appsim.SimConfig{Rate: rate, CrashRate: crash, ReserveTTL: demoReserveTTL, Retention: demoRetention})
	go func() {
		defer close(d.done)
		go sim.Run(dctx)
		if rest := count - first; rest > 0 {
			go appsim.Seed(dctx, client, plan(rest, 43))
		}
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-dctx.Done():
				return
			case now := <-t.C:
				srv.SetTime(now)
			}
		}
	}()
	return d, nil
}

func (d *demo) stop() {
	d.cancel()
	<-d.done
	d.client.Close()
	d.srv.Close()
}
