package ui

import (
	"context"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/follow"
	"github.com/idemctl/idemctl/internal/units"
)

// liveState is the follower of a live session (inspect/follow): started
// after the first complete scan, it keeps the table, the counts and the
// timeline moving with the keyspace instead of --refresh passes. Stopped
// by a rescan, a switch of source and quitting.
type liveState struct {
	cancel context.CancelFunc
	ch     <-chan follow.Update
	errc   <-chan error
	done   chan struct{} // closed when the follower has returned
	mode   follow.Mode
	live   bool
	reason string // why the view is not live
	edit   liveEdit
	// starts is each stale record's start (ms), by key hash: the minute
	// the timeline puts it in when the counts are drawn again.
	starts     map[uint64]int64
	statsAt    time.Time
	statsDirty bool
	statsTick  bool          // a liveStatsMsg is on its way
	statsEvery time.Duration // between two recounts: 1s, or 5× what the last took
	sampleAt   time.Time     // when the history's current point began
	sampled    bool          // the history's last point is this follower's
}

// liveMsg carries the updates that were waiting, at most maxLiveBatch:
// a burst is drawn in slices, never floods the event loop.
type liveMsg struct {
	l      *liveState
	ups    []follow.Update
	closed bool
	err    error // why the follower could not start, when closed
}

// liveStatsMsg draws the counts again once a second while events flow.
type liveStatsMsg struct{ l *liveState }

const maxLiveBatch = 2048

// startFollow starts following after a complete scan of a live server;
// nil when the session does not follow (a snapshot, --follow=false) or
// already does.
func (ss *scanState) startFollow() tea.Cmd {
	if !ss.Opts.Follow || ss.Opts.Scan.Snapshot != nil || ss.live != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ss.Ctx)
	ch, errc := make(chan follow.Update, 4*maxLiveBatch), make(chan error, 1)
	l := &liveState{cancel: cancel, ch: ch, errc: errc, done: make(chan struct{}), reason: "starting to follow",
		edit: liveEdit{changed: map[int32]bool{}}, starts: map[uint64]int64{}}
	// No KeepKeys: a re-sync's removals are the store's own sweep of what
	// the pass did not upsert (it must sweep anyway: the follower's first
	// pass knows nothing of the first scan), so the keys are not kept twice.
	f := follow.New(ss.Opts.Client, ss.Opts.Keyspaces, follow.Options{Scan: ss.Opts.Scan, Mode: ss.Opts.FollowMode})
	go func() {
		defer close(l.done)
		errc <- f.Run(ctx, ch)
	}()
	ss.live, ss.liveWhy = l, ""
	return l.wait()
}

// stopFollow stops the follower, if one runs, and waits for it.
func (ss *scanState) stopFollow() {
	if l := ss.live; l != nil {
		l.cancel()
		<-l.done
		ss.live = nil
	}
}

// following: the session follows (or is about to): no --refresh passes.
func (ss *scanState) following() bool { return ss.live != nil }

// wait blocks for the next update, then takes whatever else is ready.
func (l *liveState) wait() tea.Cmd {
	return func() tea.Msg {
		u, ok := <-l.ch
		if !ok {
			return liveMsg{l: l, closed: true, err: <-l.errc}
		}
		msg := liveMsg{l: l, ups: []follow.Update{u}}
		for len(msg.ups) < maxLiveBatch {
			select {
			case u, ok := <-l.ch:
				if !ok {
					return msg
				}
				msg.ups = append(msg.ups, u)
			default:
				return msg
			}
		}
		return msg
	}
}

// onLive applies a batch of updates to the store, keeping the cursor on
// its record.
func (ss *scanState) onLive(msg liveMsg) tea.Cmd {
	l := ss.live
	if msg.closed {
		ss.stopFollow()
		why := "the follower stopped"
		if msg.err != nil {
			why = units.OneLine(msg.err.Error())
		}
		return ss.fallBack(why)
	}
	rs := ss.records()
	key := rs.cursorKey()
	for i := range msg.ups {
		if cmd, stop := ss.applyUpdate(l, &msg.ups[i]); stop {
			ss.store.finish(&l.edit)
			rs.restoreLive(key)
			return cmd
		}
	}
	ss.store.finish(&l.edit)
	rs.restoreLive(key)
	return tea.Batch(l.wait(), ss.statsSoon(l))
}

// applyUpdate applies one update; stop when following ended (periodic:
// the --refresh passes take over).
func (ss *scanState) applyUpdate(l *liveState, u *follow.Update) (tea.Cmd, bool) {
	s := ss.store
	switch u.Kind {
	case follow.KindMode:
		l.mode = u.Mode
		if u.Mode == follow.ModePeriodic {
			ss.stopFollow()
			return ss.fallBack(u.Reason), true
		}
		l.reason = "first pass"
	case follow.KindResync:
		l.live, l.reason = false, "re-syncing: "+inspect.Sanitize(units.OneLine(u.Reason))
		s.startMarks()
		clear(l.starts) // the pass upserts every record again: what it does not see goes
	case follow.KindResyncDone:
		s.sweep(&l.edit)
		l.live, l.reason = true, ""
		l.statsDirty = true
	case follow.KindUpsert, follow.KindStale:
		s.upsert(&l.edit, &u.Record)
		h := keyHash(u.Record.Key)
		if u.Record.Stale() {
			l.starts[h] = u.At.UnixMilli() - u.Record.AgeMs
		} else {
			delete(l.starts, h)
		}
		l.statsDirty = true
	case follow.KindRemove:
		s.remove(&l.edit, u.Key) // "" (a re-sync's): the sweep removes it
		delete(l.starts, keyHash(u.Key))
		l.statsDirty = true
	}
	return nil, false
}

// fallBack is following found impossible: say why, and keep the
// --refresh passes the session asked for.
func (ss *scanState) fallBack(why string) tea.Cmd {
	ss.liveWhy = "NOT LIVE: " + inspect.Sanitize(units.OneLine(why))
	if ss.Opts.Refresh > 0 && !ss.scanning() {
		gen := ss.gen
		return tea.Tick(ss.Opts.Refresh, func(time.Time) tea.Msg { return refreshMsg{gen: gen} })
	}
	return nil
}

// statsSoon draws the counts again now, or once statsEvery has passed
// since they last were: each time reads every record held (about 0.5 s
// at 1M records), so a large store is recounted less often than a second.
func (ss *scanState) statsSoon(l *liveState) tea.Cmd {
	if !l.statsDirty || l.statsTick {
		return nil
	}
	if wait := max(l.statsEvery, time.Second) - ss.Now().Sub(l.statsAt); wait > 0 {
		l.statsTick = true
		return tea.Tick(wait, func(time.Time) tea.Msg { return liveStatsMsg{l: l} })
	}
	ss.recount(l)
	return nil
}

// recount is the counts and the timeline from the records held.
func (ss *scanState) recount(l *liveState) {
	l.statsDirty, l.statsAt = false, ss.Now()
	began := time.Now()
	defer func() { l.statsEvery = 5 * time.Since(began) }()
	st := inspect.NewStats(10)
	s := ss.store
	now := ss.Now().UnixMilli()
	var one [1]inspect.Record
	for i := range s.recs.Len() {
		one[0] = *s.recs.Peek(i, &s.peek)
		at := now
		if one[0].Stale() {
			if start, ok := l.starts[s.keyHash[i]]; ok {
				at = start + one[0].AgeMs
			}
		}
		st.Add(inspect.Batch{Records: one[:], ServerTimeMs: at, Done: 1})
	}
	if ss.run != nil {
		st.AddCoverage(ss.run.covs...)
	}
	ss.stats = st
	ss.afterScan(ss.Now(), now) // the Overview's history and timeline
	// The history keeps a point every 10s while following, the last one
	// current: 30 points are minutes, as with passes, not seconds.
	if n := len(ss.history); l.sampled && n >= 2 && ss.Now().Sub(l.sampleAt) < historyStep {
		ss.history = append(ss.history[:n-2], ss.history[n-1]) // replaces the current point
	} else {
		l.sampleAt = ss.Now() // the current point is kept: a new one starts
	}
	l.sampled = true
}

const historyStep = 10 * time.Second

// liveLabel is the header's word on following: "LIVE", "NOT LIVE: why",
// or "" for a session that does not follow.
func (ss *scanState) liveLabel() string {
	switch l := ss.live; {
	case l != nil && l.live:
		return "LIVE"
	case l != nil:
		return "NOT LIVE: " + l.reason
	}
	return ss.liveWhy
}

// liveLine is the scan line's word on following: the mode while live,
// why not otherwise; "" for a session that does not follow.
func (ss *scanState) liveLine() string {
	if l := ss.live; l != nil && l.live {
		return " · live (" + l.mode.String() + ")"
	}
	if l := ss.liveLabel(); l != "" {
		return " · not live: " + strings.TrimPrefix(l, "NOT LIVE: ")
	}
	return ""
}

// restoreLive puts the cursor back on key's record after live edits.
func (rs *recordsScreen) restoreLive(key string) {
	if key != "" {
		if i := rs.store.lookup(key); i >= 0 {
			if pos := slices.Index(rs.store.view, int32(i)); pos >= 0 {
				rs.cursor = pos
			}
		}
	}
	rs.clampCursor()
}
