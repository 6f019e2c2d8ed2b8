// Package ui is idemctl's terminal UI (bubbletea v2): the root model (the
// chrome, the routing between screens, the scan run and the session) and
// the record screens. With its subpackages (ui/common, what every screen
// is handed; ui/streams, the Streams screens) and the command layer, the
// only code that imports charm.land. It renders what inspect/ streams and
// never talks to Redis except through inspect/.
//
// Floor 4 of ARCHITECTURE.md: it may import floors 0–3 (foundations, engine,
// writes and rules, hooks), never the command layer.
package ui

import (
	"context"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/ui/common"
	"github.com/idemctl/idemctl/ui/streams"
)

func maxRecords(o Options) int {
	if o.MaxRecords > 0 {
		return o.MaxRecords
	}
	return DefaultMaxRecords
}

type screen int

const (
	screenOverview screen = iota
	screenRecords
	screenStats
	screenWrites
	numScreens
	screenDetail  // entered from records, not part of the tab cycle
	screenDoctor  // :doctor, not part of the tab cycle; esc goes back
	screenStreams // :streams, not part of the tab cycle; esc goes back
	numAllScreens
)

var screenNames = [...]string{"Overview", "Records", "Stats", "Writes"}

// Model is the root bubbletea model: the chrome around the body, the
// screens and the routing between them, the scan run and the session.
// Update routes: dialog/input first, then global keys, then the focused
// screen.
type Model struct {
	*shared // the session, keys, styles and size every screen shares
	help    help.Model
	chrome  chrome // the header's and banners' state

	screen  screen  // the screen shown
	screens         // every screen, made once
	dialog  *dialog // the write dialog, over the screen while open
	writeCh <-chan writeMsg

	scan scanState // the scan run and what the last ones left
	src  source    // what :keyspace, :db and :profile opened
}

// screens are the root's screens and overlays; each holds the common
// value and its own state.
type screens struct {
	keyHelp     *helpScreen  // the help overlay (?)
	cmdLine     *commandLine // the command line (:)
	records     *recordsScreen
	overview    *overviewScreen
	statsScreen *statsScreen
	writes      *writesScreen
	detail      *detailScreen
	doctor      *doctorScreen
	streams     *streams.Screen
	streamsFrom screen        // where esc from the Streams screen's groups returns to
	finder      *recordFinder // :find
}

// chrome is what is drawn around the body: the header, the scan's line
// and the banners, and their state.
type chrome struct {
	*shared
	scan          *scanState
	twoLineHeader bool
	headerCache   [numAllScreens]string // by screen; cleared when the size, styles or source change
	bannerOpen    bool                  // w: the warning banners whole, not folded (banner.go)
	bannerMemo    bannerMemo            // the banners as last drawn
	gaps          gapCache              // the cannot-judge banner (evidence.go)
	liveShown     string                // the live label the cached headers show
}

// scanState is the scan running (its generation drops the results of an
// older one) and what the complete scans left.
type scanState struct {
	*shared
	records func() *recordsScreen // sized: a merge keeps its cursor on its record
	doctor  *doctorScreen         // judges after each complete scan
	banner  string                // why the last scan failed; "" after one that did not

	gen          int
	run          *scanRun
	serverTimeMs int64
	lastComplete time.Time
	dataStale    bool
	backoff      time.Duration
	live         *liveState // the follower, after a complete scan (live.go)
	liveWhy      string     // why the session cannot follow; "" it can
}

// source is what the session opened itself and must release.
type source struct {
	closeProfile func()              // releases a profile opened with :profile
	allKeyspaces []*inspect.Keyspace // the session's keyspaces, when :keyspace narrowed them
	ownClient    *redis.Client       // the connection :db opened (the session's own is the CLI's)
}

// New builds the model; Init starts the first scan.
func New(ctx context.Context, opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	m := &Model{
		shared: &shared{Common: &common.Common{Ctx: ctx, Opts: opts, Keys: common.DefaultKeyMap(), Dark: true, Width: 80, Height: 24},
			store: newStore(maxRecords(opts)), stats: inspect.NewStats(10)},
		help: help.New(), screen: screenRecords,
	}
	m.chrome.shared, m.chrome.scan = m.shared, &m.scan
	m.scan.shared, m.scan.records = m.shared, m.recordsSized
	m.keyHelp, m.cmdLine, m.records = newHelpScreen(m.shared), newCommandLine(m.shared), newRecordsScreen(m.shared, m.scan.scanning)
	m.doctor, m.writes, m.detail = newDoctorScreen(m.shared), newWritesScreen(m.shared), newDetailScreen(m.shared)
	m.streams, m.finder = streams.New(m.Common), &recordFinder{shared: m.shared}
	m.scan.doctor = m.doctor
	m.overview, m.statsScreen = newOverviewScreen(m.shared, m.doctor, m.streams, m.scan.keyspaceStatus), newStatsScreen(m.shared)
	if len(opts.Keyspaces) > 1 {
		m.screen = screenOverview
	}
	m.Keys.SetWrites(m.CanWrite(), m.Opts.Scan.Snapshot != nil)
	m.Styles = common.NewStyles(true, opts.NoColor)
	m.help.Styles = help.DefaultStyles(true)
	m.resize(80, 24)
	return m
}

// tickMsg drives the elapsed-time and TTL countdown displays.
type tickMsg time.Time

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Init starts the first scan, the clock, and asks for the background colour.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.scan.start(), tick(), tea.RequestBackgroundColor, m.streams.Read())
}

// Update handles one message: the scan's, then a screen's, then the rest.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if cmd, ok := m.scan.onMsg(msg); ok {
		return m, cmd
	}
	if cmd, ok := m.toScreen(msg); ok {
		return m, cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil
	case tea.BackgroundColorMsg:
		m.Dark = msg.IsDark()
		m.Styles = common.NewStyles(m.Dark, m.Opts.NoColor)
		m.help.Styles = help.DefaultStyles(m.Dark)
		m.resize(m.Width, m.Height) // the header is drawn anew in these styles
		return m, nil
	case profileMsg:
		return m, m.onProfile(msg)
	case pinnedMsg:
		return m, m.onPinned(msg)
	case writeMsg:
		m.writes.add(m.dialog, msg)
		return m, waitWrite(m.writeCh)
	case exportedMsg:
		m.onExported(msg)
		return m, nil
	case writesDoneMsg:
		if m.dialog != nil {
			m.dialog.finish()
		}
		return m, nil
	case tickMsg:
		if m.screen == screenDetail {
			m.detail.Update(msg)
		}
		return m, tick()
	case tea.KeyPressMsg:
		return m, m.onKey(msg)
	case tea.MouseWheelMsg:
		return m, m.onWheel(msg)
	}
	if m.dialog != nil {
		return m, m.route(m.dialog, msg)
	}
	return m, m.records.Update(msg) // the / filter's cursor blink, while it is typed
}

// onMsg takes the scan's messages, dropping those of an old scan.
func (ss *scanState) onMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case batchMsg:
		if msg.gen != ss.gen {
			return nil, true // a cancelled or superseded scan
		}
		ss.onBatch(msg)
		return ss.rearm(), true
	case doctorMsg:
		if msg.gen == ss.gen {
			ss.doctor.Update(msg)
		}
		return nil, true
	case scanDoneMsg:
		if msg.gen != ss.gen {
			return nil, true
		}
		return ss.onDone(msg), true
	case liveMsg:
		if msg.l != ss.live {
			return nil, true // a follower stopped since
		}
		return ss.onLive(msg), true
	case liveStatsMsg:
		if msg.l == ss.live {
			msg.l.statsTick = false
			if msg.l.statsDirty {
				ss.recount(msg.l)
			}
		}
		return nil, true
	case reconnectMsg, refreshMsg:
		if g := genOf(msg); g == ss.gen && !ss.scanning() {
			return ss.start(), true
		}
		return nil, true
	}
	return nil, false
}

func genOf(msg tea.Msg) int {
	switch v := msg.(type) {
	case reconnectMsg:
		return v.gen
	case refreshMsg:
		return v.gen
	}
	return -1
}

// rearm waits for the next batch of the running scan.
func (ss *scanState) rearm() tea.Cmd { return ss.run.next }

func (m *Model) onWheel(msg tea.MouseWheelMsg) tea.Cmd {
	delta := 3
	if msg.Button == tea.MouseWheelUp {
		delta = -3
	}
	if d := m.dialog; d != nil {
		if d.step == stepConfirm {
			d.scroll = max(d.scroll+delta, 0) // the plan; clamped to it when drawn
		}
		return nil
	}
	switch m.screen {
	case screenRecords:
		m.recordsSized().moveCursor(delta)
	case screenOverview, screenStats:
		ds := m.drillShown()
		ds.SetSize(m.Width, m.bodyHeight())
		ds.pageMove(delta)
	case screenWrites:
		m.writes.page.scroll += delta
	case screenStreams:
		m.streams.Move(delta)
	case screenDetail:
		m.detail.scroll(delta)
	}
	return nil
}

// release stops the scan and releases the connections this model
// opened itself (:db) or was handed with a profile (:profile).
func (s *source) release(scan *scanState) {
	scan.stopFollow()
	if scan.run != nil {
		scan.run.cancel()
	}
	if s.ownClient != nil {
		s.ownClient.Close()
		s.ownClient = nil
	}
	if s.closeProfile != nil {
		s.closeProfile()
		s.closeProfile = nil
	}
}

// shutdown stops background work before quitting; a bulk write stops
// before its next record.
func (m *Model) shutdown() {
	m.src.release(&m.scan)
	if m.dialog != nil && m.dialog.cancel != nil {
		m.dialog.cancel()
	}
}

func (m *Model) resize(w, h int) {
	m.Width, m.Height = max(w, 20), max(h, 6)
	m.chrome.headerCache = [numAllScreens]string{}
	// The header takes two lines when some screen's would not fit one; the
	// choice is made here, so the body's height never changes with the screen.
	m.chrome.twoLineHeader = false
	for sc := range numScreens {
		m.chrome.twoLineHeader = m.chrome.twoLineHeader || strings.Contains(m.chrome.headerView(sc), "\n")
	}
	m.help.SetWidth(m.Width)
	m.recordsSized().clampCursor() // and the / filter's width
	m.detail.SetSize(m.Width, max(m.bodyHeight(), 1))
}

// Run starts the program and returns when the operator quits. bubbletea
// restores the terminal on every exit path, a panic included.
func Run(ctx context.Context, opts Options) error {
	m := New(ctx, opts)
	p := tea.NewProgram(m, tea.WithContext(ctx))
	_, err := p.Run()
	m.shutdown()
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
