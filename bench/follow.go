package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/internal/appsim"
)

// FollowResult is the follow step: the application simulator writes at
// Rate requests/s on the seeded keyspace while idemctl's exporter watches
// it, following (--follow) and then by periodic passes at the default
// interval (--follow=false), one after the other in one run. Each mode
// gets a window of its own, after the exporter's first complete pass.
type FollowResult struct {
	Rate      int           `json:"rate"`          // requests/s asked of the simulator
	Achieved  float64       `json:"achieved_rate"` // requests/s it started, over the whole step
	CrashRate float64       `json:"crash_rate"`
	Timeout   time.Duration `json:"processing_timeout_ns"` // the exporter's: a crash's deadline is its RESERVE plus this
	Window    time.Duration `json:"window_ns"`             // the follow window (periodic: at least 3 passes)
	IdleCPU   float64       `json:"idle_server_cpu"`       // server CPU seconds a second with nothing running
	App       FollowPhase   `json:"app"`                   // the application alone
	Modes     []*FollowMode `json:"modes"`
}

// FollowPhase is one window's server CPU and the application's calls.
type FollowPhase struct {
	Window    time.Duration `json:"window_ns"`
	ServerCPU float64       `json:"server_cpu"` // CPU seconds a second, idle subtracted
	AppCalls  int           `json:"app_calls"`
	AppP50    time.Duration `json:"app_p50_ns"`
	AppP99    time.Duration `json:"app_p99_ns"`
}

// FollowMode is the exporter in one mode, beside the application.
type FollowMode struct {
	Mode      string        `json:"mode"`     // follow | periodic
	Command   string        `json:"command"`  // the exporter's flags
	Reported  string        `json:"reported"` // the mode the exporter's metrics said ("" none)
	FirstPass time.Duration `json:"first_pass_ns"`
	Phase     FollowPhase   `json:"phase"`
	// Stale: for each crashed request whose deadline fell in the window,
	// the time from the deadline to the first scrape whose
	// idemctl_stale_records counted it (see staleDelays).
	Stale   []time.Duration `json:"stale_delays_ns"`
	Missed  int             `json:"missed"`   // deadlines in the window never counted by its end
	Early   int             `json:"early"`    // counted before their deadline: the count is off
	Scrapes int             `json:"scrapes"`  // /metrics reads in the window
	RSS     int64           `json:"rss_kb"`   // the exporter's VmRSS at the window's end
	Records int64           `json:"records"`  // records the keyspace held then
	ViewB   float64         `json:"view_bpr"` // idemctl_follow_view_bytes / records (follow), 0 unknown
}

// IdemctlCPU is what the mode costs the server a second: the window's
// CPU minus the application's alone.
func (m *FollowMode) IdemctlCPU(app FollowPhase) float64 {
	return max(m.Phase.ServerCPU-app.ServerCPU, 0)
}

// StaleQ is the q quantile of the stale delays; a missed deadline counts
// as never seen (the window's length).
func (m *FollowMode) StaleQ(q float64, window time.Duration) time.Duration {
	all := slices.Clone(m.Stale)
	for range m.Missed {
		all = append(all, window)
	}
	if len(all) == 0 {
		return 0
	}
	slices.Sort(all)
	return all[min(int(q*float64(len(all))), len(all)-1)]
}

// Follow step settings: a short processing timeout for this step's
// exporter, so the simulator's crashes turn stale within the window while
// every seeded processing record (minutes old by now) is stale from the
// start and stays so: the stale count moves only with the crashes.
const (
	followTimeout   = 10 * time.Second
	followCrashRate = 0.01
	followRate      = 2000
	followScrape    = 100 * time.Millisecond
	followInterval  = 60 * time.Second // the exporter's default
)

// followRun is the state of one follow step: the simulator's crashes and
// call latencies, gathered from its goroutine.
type followRun struct {
	h       *harness
	sim     *appsim.Simulator
	mu      sync.Mutex
	crashes []time.Time // RESERVE times of the crashed requests, in order
	lat     []time.Duration
	base    int64 // stale records before the simulator ran (staleBase)
}

func (f *followRun) crashed(_ string, at time.Time) {
	f.mu.Lock()
	f.crashes = append(f.crashes, at)
	f.mu.Unlock()
}

func (f *followRun) latency(d time.Duration) {
	f.mu.Lock()
	f.lat = append(f.lat, d)
	f.mu.Unlock()
}

// takeLatencies hands out the calls' latencies since the last take.
func (f *followRun) takeLatencies() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.lat
	f.lat = nil
	return out
}

// deadlines are the crashes' deadlines so far, in order.
func (f *followRun) deadlines() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]time.Time, len(f.crashes))
	for i, at := range f.crashes {
		out[i] = at.Add(followTimeout)
	}
	return out
}

// follow runs the step: the server idle, the application alone, then the
// exporter following and the exporter by periodic passes beside it.
func (h *harness) follow(ctx context.Context) error {
	window := h.cfg.FollowWindow
	res := &FollowResult{Rate: h.cfg.FollowRate, CrashRate: followCrashRate, Timeout: followTimeout, Window: window}
	h.res.Follow = res
	f := &followRun{h: h}
	if err := f.staleBase(ctx); err != nil {
		return err
	}
	idle, err := h.serverCPUOver(ctx, min(window/6, 10*time.Second))
	if err != nil {
		return err
	}
	res.IdleCPU = idle
	c := redis.NewClient(&redis.Options{Addr: h.srv.Addr, PoolSize: 4})
	defer c.Close()
	f.sim = appsim.NewSimulator(c, appsim.SimConfig{Rate: h.cfg.FollowRate, CrashRate: followCrashRate, WorkTime: 50 * time.Millisecond,
		ReserveTTL: reserveTTL, Retention: 10 * time.Minute, RetryRate: 0.05, RandSeed: uint64(time.Now().UnixNano()),
		Crashed: f.crashed, Latency: f.latency})
	simCtx, stopSim := context.WithCancel(ctx)
	simDone := make(chan error, 1)
	began := time.Now()
	go func() { simDone <- f.sim.Run(simCtx) }()
	defer func() {
		stopSim()
		<-simDone
		res.Achieved = float64(f.sim.Stats().Started) / time.Since(began).Seconds()
	}()
	sleepCtx(ctx, 5*time.Second) // warm: the simulator's first crashes, its connections
	if res.App, err = f.phase(ctx, window, idle); err != nil {
		return err
	}
	h.cfg.logf("follow: the application alone: server %.1f ms/s, its calls p99 %s ms", res.App.ServerCPU*1000, ms(res.App.AppP99))
	for _, mode := range []string{"follow", "periodic"} {
		m, err := f.mode(ctx, mode, idle)
		if err != nil {
			return fmt.Errorf("follow step, %s: %w", mode, err)
		}
		res.Modes = append(res.Modes, m)
		h.cfg.logf("follow: %-8s stale seen p50 %s s p99 %s s (%d deadlines, %d missed), idemctl costs the server %.1f ms/s, app p99 %s ms",
			mode, secs(m.StaleQ(0.5, window)), secs(m.StaleQ(0.99, window)), len(m.Stale), m.Missed, m.IdemctlCPU(res.App)*1000, ms(m.Phase.AppP99))
	}
	return nil
}

// phase measures a window: the server's CPU a second (idle subtracted)
// and the application's calls in it.
func (f *followRun) phase(ctx context.Context, window time.Duration, idle float64) (FollowPhase, error) {
	f.takeLatencies()
	cpu, err := f.h.serverCPUOver(ctx, window)
	if err != nil {
		return FollowPhase{}, err
	}
	lat := f.takeLatencies()
	s := summarize(lat)
	return FollowPhase{Window: window, ServerCPU: max(cpu-idle, 0), AppCalls: len(lat), AppP50: s.P50, AppP99: s.P99}, nil
}

// serverCPUOver is the server's CPU seconds a second over d.
func (h *harness) serverCPUOver(ctx context.Context, d time.Duration) (float64, error) {
	before := procCPU(h.srv.Pid())
	start := time.Now()
	if !sleepCtx(ctx, d) {
		return 0, ctx.Err()
	}
	return (procCPU(h.srv.Pid()) - before).Seconds() / time.Since(start).Seconds(), nil
}

// sleepCtx sleeps d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
