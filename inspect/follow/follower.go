package follow

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/idemctl/idemctl/inspect"
)

// Options tune a follower. Zero values take the defaults.
type Options struct {
	// Scan is the session's scan options: the full passes use them whole
	// (their budget included), the reads of changed keys their Count (the
	// batch size), NoMemory, ResponseSizes and KeysPerSec.
	Scan inspect.Options
	Mode Mode // ModeAuto (default): tracking, else notifications, else periodic
	// Coalesce is the window changed keys wait in: a key changed many
	// times within it is read once (default 150ms).
	Coalesce time.Duration
	Interval time.Duration // ModePeriodic: between passes (default 60s)
	// Heartbeat: each watch connection is asked ROLE this often; no reply
	// within Timeout (default 5s), or a primary turned replica, is a lost
	// connection (default 500ms).
	Heartbeat, Timeout time.Duration
	// MaxPending bounds the changed keys waiting to be read; past it the
	// view re-syncs instead (default 100,000).
	MaxPending int
	// ResyncMin is the least time between two re-syncs' starts, doubled
	// after each that fails, up to 30s (default 1s).
	ResyncMin time.Duration
	// KeepKeys keeps each record's key, so a re-sync's KindRemove names
	// the key (the TUI, scripts); without it (counts only) it has Was and
	// Keyspace but Key "".
	KeepKeys bool
}

func (o Options) withDefaults() Options {
	o.Scan = o.Scan.WithDefaults()
	o.Coalesce = orD(o.Coalesce, 150*time.Millisecond)
	o.Interval = orD(o.Interval, 60*time.Second)
	o.Heartbeat = orD(o.Heartbeat, 500*time.Millisecond)
	o.Timeout = orD(o.Timeout, 5*time.Second)
	o.ResyncMin = orD(o.ResyncMin, time.Second)
	if o.MaxPending <= 0 {
		o.MaxPending = 100_000
	}
	return o
}

func orD(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Follower follows keyspaces on one server, cluster or Sentinel master.
type Follower struct {
	c     redis.UniversalClient
	kss   []*inspect.Keyspace
	opt   Options
	start time.Time
	v     *view
	pend  *pending
	down  atomic.Int32 // watch connections not connected
	lim   *rate.Limiter
	out   chan<- Update
	wg    sync.WaitGroup

	mode    Mode
	live    bool
	backoff time.Duration
	lastTry time.Time

	mu    sync.Mutex
	stats Stats

	// watch connections (topology.go)
	spec       watchSpec
	wmu        sync.Mutex
	watched    map[string]bool
	rediscover atomic.Bool
	topoAt     time.Time
}

// New prepares a follower of kss (at most 64) through c; Run starts it.
func New(c redis.UniversalClient, kss []*inspect.Keyspace, opt Options) *Follower {
	opt = opt.withDefaults()
	f := &Follower{c: c, kss: kss, opt: opt, v: newView(opt.KeepKeys), pend: newPending(opt.MaxPending), watched: map[string]bool{}}
	f.backoff = opt.ResyncMin
	if opt.Scan.KeysPerSec > 0 {
		f.lim = rate.NewLimiter(rate.Limit(opt.Scan.KeysPerSec), max(opt.Scan.Count, 1))
	}
	return f
}

// Run follows until ctx ends, sending updates to out, which it closes on
// return. It returns an error only when it cannot start (no server); once
// following, trouble is a KindResync, never an exit.
func (f *Follower) Run(ctx context.Context, out chan<- Update) error {
	defer close(out)
	if len(f.kss) > maxKS {
		return fmt.Errorf("following %d keyspaces at once: at most %d", len(f.kss), maxKS)
	}
	f.out, f.start = out, time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); f.wg.Wait() }()
	mode, why, err := f.choose(ctx)
	if err != nil {
		return err
	}
	f.mode = mode
	f.setStats(func(s *Stats) { s.Mode, s.ModeReason = mode, why })
	if !f.emit(ctx, Update{Kind: KindMode, Reason: why}) {
		return nil
	}
	f.pend.setReason("first pass")
	if mode == ModePeriodic {
		return f.periodic(ctx)
	}
	return f.loop(ctx)
}

// loop is the live follower's: re-syncs when needed, changed keys read
// every Coalesce, stale deadlines on time.
func (f *Follower) loop(ctx context.Context) error {
	tick := time.NewTicker(f.opt.Coalesce)
	defer tick.Stop()
	stale := time.NewTimer(time.Hour)
	defer stale.Stop()
	for {
		f.armStale(stale)
		select {
		case <-ctx.Done():
			return nil
		case <-f.pend.wake:
		case <-tick.C:
		case <-stale.C:
			if !f.fireStale(ctx) {
				return nil
			}
			continue
		}
		f.checkTopology(ctx)
		if f.pend.need() != "" {
			if !f.maybeResync(ctx) {
				return nil
			}
			continue
		}
		if !f.readChanged(ctx) {
			return nil
		}
	}
}

// periodic is the fallback: a full pass every Interval.
func (f *Follower) periodic(ctx context.Context) error {
	stale := time.NewTimer(time.Hour)
	defer stale.Stop()
	next := time.NewTimer(0)
	defer next.Stop()
	for {
		f.armStale(stale)
		select {
		case <-ctx.Done():
			return nil
		case <-stale.C:
			if !f.fireStale(ctx) {
				return nil
			}
		case <-next.C:
			if f.pend.need() == "" {
				f.pend.setReason("periodic pass")
			}
			if !f.resync(ctx) {
				return nil
			}
			next.Reset(f.opt.Interval)
		}
	}
}

// emit sends u stamped with the mode and liveness; false when ctx ended.
func (f *Follower) emit(ctx context.Context, u Update) bool {
	u.Mode, u.Live = f.mode, f.live
	if u.At.IsZero() {
		u.At = time.Now()
	}
	select {
	case f.out <- u:
		return true
	case <-ctx.Done():
		return false
	}
}

// rel is now in ms since the follower started.
func (f *Follower) rel() int64 { return time.Since(f.start).Milliseconds() }

// armStale sets t for the next stale deadline.
func (f *Follower) armStale(t *time.Timer) {
	at, ok := f.v.next()
	d := time.Hour
	if ok {
		d = max(time.Duration(at-f.rel())*time.Millisecond, 0)
	}
	t.Reset(d)
}

// fireStale reports the records whose deadline has passed.
func (f *Follower) fireStale(ctx context.Context) bool {
	now := f.rel()
	for _, it := range f.v.due(now) {
		rec := it.rec
		rec.Flags |= inspect.FlagStale
		if rec.AgeMs >= 0 {
			rec.AgeMs += now - it.readRel
		}
		f.setStats(func(s *Stats) { s.StaleTurned++ })
		was := Summary{Known: true, State: rec.State}
		if !f.emit(ctx, Update{Kind: KindStale, Record: rec, Key: rec.Key, Keyspace: rec.Keyspace, Was: was}) {
			return false
		}
	}
	return true
}
