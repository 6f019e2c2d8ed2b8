package ui

import (
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
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

// startScan cancels any running scan and starts a new generation. The
// goroutine gets copies of what it needs, never the model.
func (m *Model) startScan() tea.Cmd {
	ctx := m.beginRun()
	s := inspect.StartScan(ctx, m.opts.Client, m.opts.Keyspaces, m.opts.Scan)
	m.scan.run.next = waitBatch(m.scan.gen, s)
	return m.scan.run.next
}

// beginRun retires the current scan and sets up the next generation: live
// into the table when it is empty, else into a pending store swapped in at
// the end so a refresh never blanks the screen.
func (m *Model) beginRun() context.Context {
	if m.scan.run != nil && m.scan.run.finished.IsZero() {
		m.scan.run.cancel()
	}
	m.scan.gen++
	ctx, cancel := context.WithCancel(m.ctx)
	run := &scanRun{gen: m.scan.gen, cancel: cancel, started: m.now(), stats: inspect.NewStats(10), perKS: map[string]int64{}, perNode: map[string]int64{}}
	run.doctor = newDoctorRun(m.opts)
	run.live = m.store.recs.Len() == 0
	if !run.live {
		run.pending = &store{f: m.store.f, sortCol: m.store.sortCol, sortDesc: m.store.sortDesc, sortedBy: order{m.store.sortCol, m.store.sortDesc}, limit: maxRecords(m.opts)}
		run.edits = m.store.edits
		if g := m.store.group; g != nil {
			run.pending.group = newGrouping(g.name)
		}
	} else {
		m.stats = run.stats
	}
	m.scan.run = run
	return ctx
}

// cancelScan stops the running scan; what it read stays, marked incomplete.
func (m *Model) cancelScan() {
	if m.scan.run == nil || !m.scan.run.finished.IsZero() {
		return
	}
	m.scan.run.cancel()
	m.scan.run.finished = m.now()
	m.scan.run.stopped = true
	m.scan.gen++ // drop whatever the cancelled scan still sends
	if m.scan.run.live {
		m.recordsSized().mergeKeepingCursor(m.store, true)
		m.status = "scan cancelled: the counts are partial (r rescans)"
	} else {
		m.status = "refresh cancelled: still showing the previous scan"
	}
}

func (m *Model) onBatch(msg batchMsg) {
	run := m.scan.run
	target := m.store
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
		m.scan.serverTimeMs = b.ServerTimeMs
	}
	if run.live {
		m.recordsSized().mergeKeepingCursor(target, false)
	} else {
		target.mergeTail(false)
	}
}

// onScanDone swaps a refresh into view (keeping the cursor on its record)
// and handles failures: keep the last data, mark it stale, retry with backoff.
func (m *Model) onScanDone(msg scanDoneMsg) tea.Cmd {
	run := m.scan.run
	run.finished = m.now()
	run.covs = msg.covs
	run.stats.AddCoverage(msg.covs...)
	var failed error
	for _, c := range msg.covs {
		if c.Err != nil && !errors.Is(c.Err, context.Canceled) {
			failed = c.Err
		}
	}
	if failed != nil {
		m.scan.dataStale = true
		m.chrome.banner = inspect.Sanitize(units.OneLine(failed.Error()))
		m.scan.backoff = nextBackoff(m.scan.backoff)
		m.status = ""
		if run.live {
			m.recordsSized().mergeKeepingCursor(m.store, true)
		}
		gen := m.scan.gen
		return tea.Tick(m.scan.backoff, func(time.Time) tea.Msg { return reconnectMsg{gen: gen} })
	}
	m.chrome.banner, m.scan.dataStale, m.scan.backoff = "", false, 0
	if !run.live {
		key := m.recordsSized().cursorKey()
		p := run.pending
		if m.store.edits != run.edits {
			// The operator changed the filter or order while this refresh
			// ran: the refreshed view takes the current ones, not the copy
			// made when it started.
			p.f, p.sortCol, p.sortDesc = m.store.f, m.store.sortCol, m.store.sortDesc
			p.rebuild()
		} else {
			p.mergeTail(true)
		}
		p.edits = m.store.edits
		switch g := m.store.group; {
		case g == nil:
			p.group = nil
		case p.group == nil || p.group.name != g.name:
			p.setGrouping(g.name)
		}
		if p.group != nil {
			p.group.expanding = m.store.group.expanding
		}
		m.store = p
		m.stats = run.stats
		m.recordsSized().restoreCursor(key)
	} else {
		m.recordsSized().mergeKeepingCursor(m.store, true)
	}
	m.scan.lastComplete = run.finished
	m.afterScan(m.scan.lastComplete, m.scan.serverTimeMs)
	m.status = ""
	judge := run.doctor.judge(m.ctx, m.scan.gen, m.opts.Client, m.opts.Keyspaces, msg.covs, !m.doctor.noConfig, m.opts.Scan.Snapshot)
	if m.opts.Refresh > 0 && m.opts.Scan.Snapshot == nil { // a file does not change
		gen := m.scan.gen
		return tea.Batch(judge, tea.Tick(m.opts.Refresh, func(time.Time) tea.Msg { return refreshMsg{gen: gen} }))
	}
	return judge
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

// status is how far the scan of one keyspace got, for its Overview row.
func (s *scanState) status(keyspace string) string {
	if s.run == nil {
		return "…"
	}
	scan := count(s.run.perKS[keyspace]) + " read"
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
