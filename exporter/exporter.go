// Package exporter serves scans as Prometheus metrics: one scan every
// interval makes an inspect.Snapshot; /metrics renders the last complete
// one and /healthz says how fresh it is.
//
// Floor 4 of ARCHITECTURE.md: it may import floors 0–3 (foundations, engine,
// writes and rules, hooks), never the command layer.
package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/doctor"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/ledger"
	"github.com/idemctl/idemctl/inspect/streams"
	"github.com/idemctl/idemctl/internal/units"
)

// Config is what the exporter scans and how often.
type Config struct {
	// Connect returns the client; it is called before each scan until it
	// succeeds, so an exporter started before Redis recovers on its own.
	Connect     func(context.Context) (redis.UniversalClient, error)
	Keyspaces   []*inspect.Keyspace
	Scan        inspect.Options
	Interval    time.Duration // between scan starts
	ScanTimeout time.Duration // a scan running longer is cut and counted as failed
	GroupLabel  string        // optional: a template capture exposed as top-N values
	GroupCap    int           // N for GroupLabel
	Version     string
	Revision    string // the commit the build came from ("" unknown)
	// WebConfigFile is a Prometheus web config (TLS, basic auth), the
	// file node_exporter and redis_exporter read; "" serves plain HTTP.
	WebConfigFile string
	Log           io.Writer      // one line per failed scan and per recovery
	Doctor        doctor.Options // the config's doctor settings and silences
	// Ledgers are the dedupe ledgers read with each scan (ledger.go).
	Ledgers []*ledger.Ledger
	// Streams are the stream keyspaces read with each scan (streams.go).
	Streams []*streams.Space
	// Follow keeps the record and stale counts live between scans
	// (follow.go): the stale alert no longer waits for the next scan.
	Follow bool
	// FullInterval is the time between full scans while the live view
	// holds every change (0: DefaultFullInterval): memory, ages, TTLs,
	// flags and the doctor come from them.
	FullInterval time.Duration
	// Extra collectors served beside the exporter's own (the reaper's
	// metrics when it runs inside the exporter).
	Extra []prometheus.Collector
}

// DefaultFullInterval is the time between full scans while following:
// at 10M records a pass an hour costs the server about 2 % of passes
// every minute.
const DefaultFullInterval = time.Hour

// MaxGroupCap bounds the series one capture may add per keyspace.
const MaxGroupCap = 100

// Exporter scans on a timer and serves the results.
type Exporter struct {
	cfg    Config
	scanMu sync.Mutex // held for the whole of a scan: never two at once

	inProgress atomic.Bool
	progress   atomic.Uint64 // the running scan's share done, as float64 bits
	mu         sync.RWMutex
	good       *inspect.Snapshot // last complete scan
	goodDoc    *doctor.Report    // doctor's findings on it
	last       *inspect.Snapshot // last scan, complete or not
	lastOK     time.Time
	scans      uint64
	errors     uint64
	keysTotal  int64
	failStreak int
	noConfig   bool // CONFIG GET was refused: not asked again (scan goroutine only)

	ledgers ledgerState             // ledger.go: each ledger's last complete read
	streams map[string]streamSeries // streams.go: each stream keyspace's last read
	live    liveState               // follow.go: the live counts, with Config.Follow
}

// New checks the config.
func New(cfg Config) (*Exporter, error) {
	if cfg.Connect == nil || len(cfg.Keyspaces)+len(cfg.Ledgers)+len(cfg.Streams) == 0 {
		return nil, errors.New("exporter: nothing to scan")
	}
	if cfg.Interval <= 0 || cfg.ScanTimeout <= 0 {
		return nil, errors.New("exporter: interval and scan timeout must be positive")
	}
	if cfg.GroupLabel != "" {
		if cfg.GroupCap < 1 || cfg.GroupCap > MaxGroupCap {
			return nil, fmt.Errorf("group cap must be between 1 and %d", MaxGroupCap)
		}
		found := false
		for _, ks := range cfg.Keyspaces {
			found = found || slices.Contains(ks.Template.Names(), cfg.GroupLabel)
		}
		if !found {
			return nil, fmt.Errorf("no keyspace's key template captures %q", cfg.GroupLabel)
		}
	}
	if cfg.FullInterval <= 0 {
		cfg.FullInterval = DefaultFullInterval
	}
	cfg.Keyspaces = inspect.UniqueKeyspaces(cfg.Keyspaces)
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	return &Exporter{cfg: cfg}, nil
}

// Run scans now and then every Interval (start to start) until ctx ends. A
// scan that overruns the interval delays the next one; none is skipped into
// overlap. While a live view holds every change (Follow), a full scan of
// the records runs only every FullInterval: the ticks between read the
// ledgers and streams alone, and the view keeps the counts the alerts use.
func (e *Exporter) Run(ctx context.Context) {
	var lastFull time.Time
	for ctx.Err() == nil {
		start := time.Now()
		if !e.followLive() || start.Sub(lastFull) >= e.cfg.FullInterval {
			if e.ScanOnce(ctx) && e.lastComplete().After(start) {
				lastFull = start
			}
		} else {
			e.readAside(ctx)
		}
		t := time.NewTimer(e.cfg.Interval - time.Since(start))
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// lastComplete is when the last complete scan finished.
func (e *Exporter) lastComplete() time.Time {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.lastOK
}

// readAside reads the ledgers and the stream keyspaces, which the live
// view does not follow, between full scans.
func (e *Exporter) readAside(ctx context.Context) {
	if !e.scanMu.TryLock() {
		return
	}
	defer e.scanMu.Unlock()
	sctx, cancel := context.WithTimeout(ctx, e.cfg.ScanTimeout)
	defer cancel()
	if c, err := e.cfg.Connect(sctx); err == nil {
		e.readLedgers(sctx, c)
		e.readStreams(sctx, c)
	}
}

// ScanOnce runs one scan and publishes it. It returns false without
// scanning when another scan is running, or when ctx ended.
func (e *Exporter) ScanOnce(ctx context.Context) bool {
	if !e.scanMu.TryLock() {
		return false
	}
	defer e.scanMu.Unlock()
	e.inProgress.Store(true)
	e.progress.Store(0)
	defer e.inProgress.Store(false)

	sctx, cancel := context.WithTimeout(ctx, e.cfg.ScanTimeout)
	defer cancel()
	var snap inspect.Snapshot
	start := time.Now()
	c, err := e.cfg.Connect(sctx)
	if err != nil {
		snap = inspect.Snapshot{Started: start, Duration: time.Since(start), Err: err}
		for _, ks := range e.cfg.Keyspaces {
			snap.Keyspaces = append(snap.Keyspaces, inspect.KeyspaceSnapshot{Name: ks.Name})
		}
	}
	var doc *doctor.Report
	if err == nil {
		// doctor rides on the scan: INFO (and CONFIG GET while allowed),
		// and what its rules gather from the streamed records.
		docOpt := e.cfg.Doctor
		docOpt.Ledgers = e.readLedgers(sctx, c)
		e.readStreams(sctx, c)
		pass := doctor.NewPass(docOpt)
		opt := e.cfg.Scan
		opt.Progress = func(p inspect.Progress) { e.progress.Store(math.Float64bits(p.Done)) }
		snap = inspect.TakeSnapshotEach(sctx, c, e.cfg.Keyspaces, opt, e.cfg.GroupCap, pass.Observe)
		if snap.Complete { // after the scan, so its duration and timeout stay the scan's own
			srv := doctor.ReadServer(sctx, c, !e.noConfig)
			e.noConfig = e.noConfig || srv.ConfigRefused
			rep := pass.Judge(&srv, &snap, e.cfg.Keyspaces)
			doc = &rep
		}
	}
	if ctx.Err() != nil {
		return false // shutting down: not a failed scan
	}
	e.publish(&snap, doc)
	return true
}

func (e *Exporter) publish(s *inspect.Snapshot, doc *doctor.Report) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.scans++
	e.last = s
	e.keysTotal += s.Totals().Keys
	if s.Complete {
		e.good, e.goodDoc, e.lastOK = s, doc, s.Started.Add(s.Duration)
		if e.failStreak > 0 {
			fmt.Fprintf(e.cfg.Log, "idemctl exporter: scan complete again after %s\n", units.Nouns(int64(e.failStreak), "failed scan", "failed scans"))
		}
		e.failStreak = 0
		return
	}
	e.errors++
	e.failStreak++
	since := "never"
	if !e.lastOK.IsZero() {
		since = time.Since(e.lastOK).Round(time.Second).String() + " ago"
	}
	fmt.Fprintf(e.cfg.Log, "idemctl exporter: scan failed: %s (last complete scan: %s)\n", inspect.Sanitize(errText(s.Err)), since)
}

func errText(err error) string {
	if err == nil {
		return "scan incomplete"
	}
	return err.Error()
}

// exporterState is a consistent copy for one scrape.
type exporterState struct {
	good, last  *inspect.Snapshot
	goodDoc     *doctor.Report
	lastSuccess time.Time
	scans       uint64
	errors      uint64
	keysTotal   int64
	inProgress  bool
	progress    float64 // share of the running scan done
	ledgers     []ledgerSeries
	streams     []streamSeries
}

func (e *Exporter) state() exporterState {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return exporterState{
		good: e.good, goodDoc: e.goodDoc, last: e.last, lastSuccess: e.lastOK, scans: e.scans, errors: e.errors,
		keysTotal: e.keysTotal, inProgress: e.inProgress.Load(), progress: math.Float64frombits(e.progress.Load()),
		ledgers: e.ledgerView(), streams: e.streamView(),
	}
}
