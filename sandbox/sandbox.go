// Package sandbox is the demo's world: an embedded Redis-compatible server
// (miniredis) seeded with realistic records, a simulated application that
// keeps reserving, completing and now and then crashing, and the clock that
// makes TTLs run down. Nothing leaves the process.
//
// Floor 4 of ARCHITECTURE.md: it may import floors 0–3 (foundations, engine,
// writes and rules, hooks), never the command layer.
package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/appsim"
)

// Timing: a reserve TTL long enough that crashed requests stay visible as
// stale for minutes, a timeout short enough that they turn stale while you
// watch.
const (
	ReserveTTL = 2 * time.Minute
	Timeout    = 30 * time.Second
	Retention  = 10 * time.Minute
)

// Config is what the sandbox holds and how busy its application is.
type Config struct {
	Count     int     // records seeded
	Rate      int     // simulated requests per second
	CrashRate float64 // share of simulated requests whose worker crashes
}

// Sandbox is a running embedded server with its client and keyspace.
type Sandbox struct {
	Client   redis.UniversalClient
	Keyspace *inspect.Keyspace
	// Orders is the application's database, which the demo's verify
	// hook (Orders.Hook) asks.
	Orders *Orders
	srv    *miniredis.Miniredis
	cancel context.CancelFunc
	done   chan struct{}
}

// Addr is the embedded server's loopback address.
func (s *Sandbox) Addr() string { return s.srv.Addr() }

// Start runs the server, seeds a first part of the records (the rest, the
// application and the clock run in the background until Stop).
func Start(ctx context.Context, cfg Config) (*Sandbox, error) {
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
	serveHashDumps(srv)
	client := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr()}, DisableIdentity: true})
	schema, err := inspect.Preset("atlasmart")
	if err != nil {
		srv.Close()
		return nil, err
	}
	ks, err := inspect.NewKeyspace(inspect.KeyspaceSpec{Schema: schema, ProcessingTimeout: Timeout,
		ReserveTTL: ReserveTTL, Retention: Retention})
	if err != nil {
		srv.Close()
		return nil, err
	}
	plan := func(n int, seed uint64) appsim.Plan {
		return appsim.Plan{Schema: "atlasmart", Count: n, ReserveTTL: ReserveTTL, ProcessingTimeout: Timeout,
			Retention: Retention, LargeResponse: inspect.DefaultLargeResponse, RandSeed: seed}
	}
	// miniredis runs Lua slowly (~1 ms a script): seed a first part now so
	// the UI opens on data at once, and the rest in the background.
	orders := newOrders()
	first := min(cfg.Count, 400)
	if _, err := appsim.Seed(ctx, client, plan(first, 42)); err != nil {
		srv.Close()
		return nil, fmt.Errorf("seed the demo: %w", err)
	}
	if err := orders.recordSeeded(ctx, client); err != nil {
		srv.Close()
		return nil, fmt.Errorf("seed the demo's orders: %w", err)
	}
	dctx, cancel := context.WithCancel(ctx)
	s := &Sandbox{Client: client, Keyspace: ks, Orders: orders, srv: srv, cancel: cancel, done: make(chan struct{})}
	sim := appsim.NewSimulator(client, appsim.SimConfig{Rate: cfg.Rate, CrashRate: cfg.CrashRate, ReserveTTL: ReserveTTL,
		Retention: Retention, Effects: orders.Created})
	go func() {
		defer close(s.done)
		go sim.Run(dctx)
		if rest := cfg.Count - first; rest > 0 {
			go func() {
				if _, err := appsim.Seed(dctx, client, plan(rest, 43)); err == nil {
					_ = orders.recordSeeded(dctx, client)
				}
			}()
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
	return s, nil
}

// Stop ends the application and the clock and closes the server.
func (s *Sandbox) Stop() {
	s.cancel()
	<-s.done
	s.Client.Close()
	s.srv.Close()
}
