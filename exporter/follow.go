package exporter

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/follow"
)

// With Config.Follow, a follower keeps the record counts and the stale
// count live between scans (inspect/follow): counted from each update's
// Was and new state, so the exporter keeps nothing per record beyond the
// follower's own entry (about 40 bytes). While the follower re-syncs, the
// published counts stay those of the last moment it was live: never an
// all-clear from a view that may be missing changes.

var (
	mFollowMode       = def("follow_mode", gauge, "1 for the mode the live view learns changes by: tracking, notifications or periodic (periodic: the scans alone; the log says why).", "mode")
	mFollowLive       = def("follow_live", gauge, "1 while the live view holds every change; 0 while it re-syncs after a loss (its counts are then those of the last live moment).")
	mFollowEvents     = def("follow_events_total", counter, "Changed keys the server reported to the live view.")
	mFollowReads      = def("follow_reads_total", counter, "Keys the live view read after a change.")
	mFollowResyncs    = def("follow_resyncs_total", counter, "Full passes the live view ran: the first, and one after each loss.")
	mFollowLastResync = def("follow_last_resync_timestamp_seconds", gauge, "Unix time the live view's last re-sync completed; 0 before the first.")
	mFollowStale      = def("follow_stale_turned_total", counter, "Records the live view turned stale at their deadline, with no read.")
	mFullInterval     = def("full_scan_interval_seconds", gauge, "Configured time between full scans while the live view holds every change (the other record metrics come from them).")
)

func init() {
	allMetrics = append(allMetrics, mFollowMode, mFollowLive, mFollowEvents, mFollowReads, mFollowResyncs, mFollowLastResync, mFollowStale, mFullInterval)
}

// liveCounts are the followed counts per keyspace.
type liveCounts struct {
	byState map[string][]int64 // keyspace -> count per inspect.State
	stale   map[string]int64
}

func newLiveCounts() liveCounts {
	return liveCounts{byState: map[string][]int64{}, stale: map[string]int64{}}
}

func (l liveCounts) add(ks string, s follow.Summary, d int64) {
	if !s.Known {
		return
	}
	if l.byState[ks] == nil {
		l.byState[ks] = make([]int64, len(inspect.AllStates())+1)
	}
	if int(s.State) < len(l.byState[ks]) {
		l.byState[ks][s.State] += d
	}
	if s.Stale {
		l.stale[ks] += d
	}
}

func (l liveCounts) clone() liveCounts {
	c := newLiveCounts()
	for k, v := range l.byState {
		c.byState[k] = append([]int64(nil), v...)
	}
	for k, v := range l.stale {
		c.stale[k] = v
	}
	return c
}

// liveState is what the follower publishes for the collector.
type liveState struct {
	mu        sync.Mutex
	published *liveCounts // nil until the view was first live
	f         *follow.Follower
}

// runFollow follows the keyspaces until ctx ends, once a client is had,
// starting again after a follower that could not start; in periodic mode
// it stops: the scans are the periodic passes.
func (e *Exporter) runFollow(ctx context.Context) {
	for ctx.Err() == nil {
		if c, err := e.cfg.Connect(ctx); err == nil {
			f := follow.New(c, e.cfg.Keyspaces, follow.Options{Scan: e.cfg.Scan, Interval: e.cfg.Interval})
			e.live.mu.Lock()
			e.live.f = f
			e.live.mu.Unlock()
			out := make(chan follow.Update, 1024)
			fctx, cancel := context.WithCancel(ctx)
			errc := make(chan error, 1)
			go func() { errc <- f.Run(fctx, out) }()
			periodic := e.countUpdates(out)
			cancel()
			for range out { // drained until the follower has stopped
			}
			if periodic {
				return
			}
			if err := <-errc; err != nil && ctx.Err() == nil {
				fmt.Fprintf(e.cfg.Log, "idemctl exporter: cannot follow the keyspace: %s (retrying)\n", inspect.Sanitize(err.Error()))
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(e.cfg.Interval):
		}
	}
}

// countUpdates keeps the counts from the updates, publishing a copy after
// each burst while the view is live, until out closes or the mode is
// periodic.
func (e *Exporter) countUpdates(out <-chan follow.Update) (periodic bool) {
	counts := newLiveCounts()
	for u := range out {
		if u.Kind == follow.KindMode && u.Reason != "" {
			fmt.Fprintf(e.cfg.Log, "idemctl exporter: following by %s: %s\n", u.Mode, inspect.Sanitize(u.Reason))
		}
		if u.Kind == follow.KindMode && u.Mode == follow.ModePeriodic {
			return true
		}
		if u.Kind == follow.KindResync && u.Reason != "first pass" {
			fmt.Fprintf(e.cfg.Log, "idemctl exporter: live view re-syncing: %s\n", inspect.Sanitize(u.Reason))
		}
		name := ""
		if u.Keyspace != nil {
			name = u.Keyspace.Name
		}
		switch u.Kind {
		case follow.KindUpsert:
			counts.add(name, u.Was, -1)
			counts.add(name, follow.Summary{Known: true, State: u.Record.State, Stale: u.Record.Stale()}, 1)
		case follow.KindStale:
			counts.add(name, u.Was, -1)
			counts.add(name, follow.Summary{Known: true, State: u.Record.State, Stale: true}, 1)
		case follow.KindRemove:
			counts.add(name, u.Was, -1)
		}
		if u.Live && len(out) == 0 {
			c := counts.clone()
			e.live.mu.Lock()
			e.live.published = &c
			e.live.mu.Unlock()
		}
	}
	return false
}

// followLive reports whether a live view holds every change now: the full
// scans may then wait for FullInterval.
func (e *Exporter) followLive() bool {
	e.live.mu.Lock()
	f := e.live.f
	e.live.mu.Unlock()
	if f == nil {
		return false
	}
	st := f.Stats()
	return st.Live && st.Mode != follow.ModePeriodic
}

// followView is the live counts and the follower's stats (nil, false:
// not following, or never live yet).
func (e *Exporter) followView() (*liveCounts, follow.Stats, bool) {
	e.live.mu.Lock()
	defer e.live.mu.Unlock()
	if e.live.f == nil {
		return nil, follow.Stats{}, false
	}
	return e.live.published, e.live.f.Stats(), true
}

// emitFollow emits the follower's own metrics.
func emitFollow(emit func(*metricDef, float64, ...string), st follow.Stats) {
	emit(mFollowMode, 1, st.Mode.String())
	emit(mFollowLive, b2f(st.Live))
	emit(mFollowEvents, float64(st.Events))
	emit(mFollowReads, float64(st.Reads))
	emit(mFollowResyncs, float64(st.Resyncs))
	emit(mFollowStale, float64(st.StaleTurned))
	last := 0.0
	if !st.LastResync.IsZero() {
		last = float64(st.LastResync.UnixMilli()) / 1000
	}
	emit(mFollowLastResync, last)
}
