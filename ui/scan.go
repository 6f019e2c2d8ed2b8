package ui

import (
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui/common"
)

// batchMsg carries the batches that were waiting when the Cmd ran: the UI
// renders once per group of batches, never once per key.
type batchMsg struct {
	gen     int
	batches []inspect.Batch
}

// scanDoneMsg ends a scan.
type scanDoneMsg struct {
	gen  int
	covs []inspect.Coverage
}

// reconnectMsg retries a failed scan after a backoff.
type reconnectMsg struct{ gen int }

// refreshMsg starts the periodic rescan.
type refreshMsg struct{ gen int }

// scanRun is one background scan. Cmds cannot be cancelled, so each run has
// its own context and generation; messages from older generations are dropped.
type scanRun struct {
	gen      int
	cancel   context.CancelFunc
	started  time.Time
	finished time.Time
	records  int64
	live     bool // streaming into the visible store (first scan); else into pending
	pending  *store
	edits    int  // the visible store's edits when the refresh began
	stopped  bool // cancelled by the operator: what it read is partial
	stats    *inspect.Stats
	perKS    map[string]int64
	perNode  map[string]int64
	covs     []inspect.Coverage
	next     tea.Cmd    // re-armed after each batch
	doctor   *doctorRun // nil without a doctor
	done     float64    // share of the keyspaces visited, from the SCAN cursors
}

const maxCoalesce = 32

// waitBatch blocks for the next batch, then takes whatever else is ready.
func waitBatch(gen int, s *inspect.Stream) tea.Cmd {
	ch := s.Batches
	return func() tea.Msg {
		b, ok := <-ch
		if !ok {
			return scanDoneMsg{gen: gen, covs: s.Coverage()}
		}
		msg := batchMsg{gen: gen, batches: []inspect.Batch{b}}
		for len(msg.batches) < maxCoalesce {
			select {
			case b, ok := <-ch:
				if !ok {
					return msg // the next waitBatch sees the close
				}
				msg.batches = append(msg.batches, b)
			default:
				return msg
			}
		}
		return msg
	}
}

// start cancels any running scan and starts a new generation. The
// goroutine gets copies of what it needs, never the model.
func (ss *scanState) start() tea.Cmd {
	ctx := ss.beginRun()
	s := inspect.StartScan(ctx, ss.Opts.Client, ss.Opts.Keyspaces, ss.Opts.Scan)
	ss.run.next = waitBatch(ss.gen, s)
	return ss.run.next
}

// beginRun retires the current scan and sets up the next generation: live
// into the table when it is empty, else into a pending store swapped in at
// the end so a refresh never blanks the screen.
func (ss *scanState) beginRun() context.Context {
	if ss.run != nil && ss.run.finished.IsZero() {
		ss.run.cancel()
	}
	ss.stopFollow() // started again after this scan: it reads the store it leaves
	ss.gen++
	ctx, cancel := context.WithCancel(ss.Ctx)
	run := &scanRun{gen: ss.gen, cancel: cancel, started: ss.Now(), stats: inspect.NewStats(10), perKS: map[string]int64{}, perNode: map[string]int64{}}
	run.doctor = newDoctorRun(ss.Opts)
	run.live = ss.store.recs.Len() == 0
	if !run.live {
		run.pending = &store{f: ss.store.f, sortCol: ss.store.sortCol, sortDesc: ss.store.sortDesc, sortedBy: order{ss.store.sortCol, ss.store.sortDesc}, limit: maxRecords(ss.Opts)}
		run.edits = ss.store.edits
		if g := ss.store.group; g != nil {
			run.pending.group = newGrouping(g.name)
		}
	} else {
		ss.stats = run.stats
	}
	ss.run = run
	return ctx
}

// stop stops the running scan; what it read stays, marked incomplete.
func (ss *scanState) stop() {
	if ss.run == nil || !ss.run.finished.IsZero() {
		return
	}
	ss.run.cancel()
	ss.run.finished = ss.Now()
	ss.run.stopped = true
	ss.gen++ // drop whatever the cancelled scan still sends
	if ss.run.live {
		ss.records().mergeKeepingCursor(ss.store, true)
		ss.Status = "scan cancelled: the counts are partial (r rescans)"
	} else {
		ss.Status = "refresh cancelled: still showing the previous scan"
	}
}

func (ss *scanState) onBatch(msg batchMsg) {
	run := ss.run
	target := ss.store
	if !run.live {
		target = run.pending
	}
	for _, b := range msg.batches {
		target.add(b.Records)
		run.stats.Add(b)
		run.doctor.observe(b)
		run.done = max(run.done, b.Done)
		run.records += int64(len(b.Records))
		run.perKS[b.Keyspace.Name] += int64(len(b.Records))
		run.perNode[b.Node] += int64(len(b.Records))
		ss.serverTimeMs = b.ServerTimeMs
	}
	if run.live {
		ss.records().mergeKeepingCursor(target, false)
	} else {
		target.mergeTail(false)
	}
}

// onDone swaps a refresh into view (keeping the cursor on its record)
// and handles failures: keep the last data, mark it stale, retry with backoff.
func (ss *scanState) onDone(msg scanDoneMsg) tea.Cmd {
	run := ss.run
	run.finished = ss.Now()
	run.covs = msg.covs
	run.stats.AddCoverage(msg.covs...)
	var failed error
	for _, c := range msg.covs {
		if c.Err != nil && !errors.Is(c.Err, context.Canceled) {
			failed = c.Err
		}
	}
	if failed != nil {
		ss.dataStale = true
		ss.banner = inspect.Sanitize(units.OneLine(failed.Error()))
		ss.backoff = nextBackoff(ss.backoff)
		ss.Status = ""
		if run.live {
			ss.records().mergeKeepingCursor(ss.store, true)
		}
		gen := ss.gen
		return tea.Tick(ss.backoff, func(time.Time) tea.Msg { return reconnectMsg{gen: gen} })
	}
	ss.banner, ss.dataStale, ss.backoff = "", false, 0
	ss.showDone(run)
	ss.lastComplete = run.finished
	ss.afterScan(ss.lastComplete, ss.serverTimeMs)
	ss.Status = ""
	judge := run.doctor.judge(ss.Ctx, ss.gen, ss.Opts.Client, ss.Opts.Keyspaces, msg.covs, !ss.doctor.noConfig, ss.Opts.Scan.Snapshot)
	if ss.liveWhy == "" { // not known to be impossible here
		if follow := ss.startFollow(); follow != nil {
			return tea.Batch(judge, follow) // instead of --refresh passes
		}
	}
	if ss.Opts.Refresh > 0 && ss.Opts.Scan.Snapshot == nil { // a file does not change
		gen := ss.gen
		return tea.Batch(judge, tea.Tick(ss.Opts.Refresh, func(time.Time) tea.Msg { return refreshMsg{gen: gen} }))
	}
	return judge
}

// showDone shows what a complete scan read: a refresh swapped into view,
// keeping the cursor on its record and the filter, order and grouping
// the operator set while it ran; a first scan merged whole.
func (ss *scanState) showDone(run *scanRun) {
	if !run.live {
		key := ss.records().cursorKey()
		p := run.pending
		if ss.store.edits != run.edits {
			// The operator changed the filter or order while this refresh
			// ran: the refreshed view takes the current ones, not the copy
			// made when it started.
			p.f, p.sortCol, p.sortDesc = ss.store.f, ss.store.sortCol, ss.store.sortDesc
			p.rebuild()
		} else {
			p.mergeTail(true)
		}
		p.edits = ss.store.edits
		switch g := ss.store.group; {
		case g == nil:
			p.group = nil
		case p.group == nil || p.group.name != g.name:
			p.setGrouping(g.name)
		}
		if p.group != nil {
			p.group.expanding = ss.store.group.expanding
		}
		ss.store = p
		ss.stats = run.stats
		ss.records().restoreCursor(key)
	} else {
		ss.records().mergeKeepingCursor(ss.store, true)
	}
}

// mergeKeepingCursor merges a store's new records into its order and
// keeps the cursor on its record, looking it up only when rows moved: the
// lookup reads the whole view, and most batches move nothing.
func (rs *recordsScreen) mergeKeepingCursor(s *store, force bool) {
	key := rs.cursorKey()
	if rs.cursor == 0 {
		key = "" // the top stays the top
	}
	if s.mergeTail(force) {
		rs.restoreCursor(key)
	} else {
		rs.clampCursor()
	}
}

func nextBackoff(d time.Duration) time.Duration {
	if d == 0 {
		return time.Second
	}
	return min(d*2, 30*time.Second)
}

func (s *scanState) scanning() bool { return s.run != nil && s.run.finished.IsZero() }

// keyspaceStatus is how far the scan of one keyspace got, for its Overview row.
func (s *scanState) keyspaceStatus(keyspace string) string {
	if s.run == nil {
		return "…"
	}
	scan := common.Count(s.run.perKS[keyspace]) + " read"
	if s.run.stopped {
		scan = "cancelled"
	}
	for _, c := range s.run.covs {
		if c.Keyspace == keyspace {
			scan = "complete"
			if !c.Complete {
				scan = "INCOMPLETE"
			}
		}
	}
	return scan
}
