// Package doctor names every misconfiguration of an idempotency setup it
// can prove from one read-only pass: the server's INFO and CONFIG, and a scan
// of the keyspaces. Each finding carries a rule id, a severity, the evidence
// (figures and sample keys) and the exact fix. A rule that cannot run (ACL,
// server version) is reported as skipped with the reason, never as passed.
//
// It is a package of its own, not part of inspect: inspect reads records,
// doctor judges a whole setup (server settings included) from what inspect
// and the server report, and the CLI, the exporter and the TUI can share it.
//
// Floor 2 of ARCHITECTURE.md: it may import the read engine and the
// foundations (floors 0–1).
package doctor

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/ledger"
)

// Severity orders findings; the worst sets doctor's exit code.
type Severity int

const (
	Info Severity = iota
	Warning
	Critical
)

var severityNames = [...]string{"info", "warning", "critical"}

func (s Severity) String() string { return severityNames[s] }

// MarshalText writes the severity's name in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Finding is one misconfiguration, proven by its evidence.
type Finding struct {
	Rule     string           `json:"rule"`
	Severity Severity         `json:"severity"`
	Keyspace string           `json:"keyspace,omitempty"` // "" for server-wide findings
	Title    string           `json:"title"`
	Evidence []string         `json:"evidence"`
	Figures  map[string]int64 `json:"figures,omitempty"` // the evidence's numbers, for scripts
	Samples  []string         `json:"samples,omitempty"` // sanitized keys
	Fix      string           `json:"fix"`
	Silenced string           `json:"silenced,omitempty"` // the configured reason, when accepted deliberately
}

// Check statuses: what became of each rule on each keyspace (or the server).
const (
	StatusFinding  = "finding"  // it found something (see findings)
	StatusOK       = "ok"       // it ran on enough data and found nothing
	StatusNoData   = "no_data"  // it ran, but nothing in the data could show the problem
	StatusSkipped  = "skipped"  // it could not run (ACL, server version, incomplete data): not passed
	StatusSilenced = "silenced" // it found something the config accepts, with a reason
)

// Check is one rule's outcome, so "nothing found" is never confused with
// "could not look".
type Check struct {
	Rule     string `json:"rule"`
	Keyspace string `json:"keyspace,omitempty"`
	Status   string `json:"status"`
	Reason   string `json:"reason,omitempty"`
}

// Options tune the rules.
type Options struct {
	RetryHorizon time.Duration // how long clients may retry: retention must cover it (default 24h)
	RequireFsync string        // weakest appendfsync accepted: always, everysec (default) or no
	MaxLag       time.Duration // replication lag above which a failover loses records (default 10s)
	Silence      []Silence     // findings accepted deliberately
	// Ledgers are the dedupe ledgers read beforehand (ledger.ReadAll)
	// for the ledger rules (rules_ledger.go); none: those rules do not run.
	Ledgers []ledger.Report
}

// Silence accepts one rule's findings (on one keyspace, or everywhere when
// Keyspace is ""), for a reason that is shown with them.
type Silence struct {
	Rule     string `yaml:"rule" json:"rule"`
	Keyspace string `yaml:"keyspace" json:"keyspace,omitempty"`
	Reason   string `yaml:"reason" json:"reason"`
}

func (o *Options) silenced(f *Finding) string {
	for _, s := range o.Silence {
		if s.Rule == f.Rule && (s.Keyspace == "" || s.Keyspace == f.Keyspace) {
			return s.Reason
		}
	}
	return ""
}

func (o *Options) defaults() {
	if o.RetryHorizon <= 0 {
		o.RetryHorizon = 24 * time.Hour
	}
	if o.RequireFsync == "" {
		o.RequireFsync = "everysec"
	}
	if o.MaxLag <= 0 {
		o.MaxLag = 10 * time.Second
	}
}

// Report is one doctor pass.
type Report struct {
	Server   string          `json:"server"`
	Version  string          `json:"version,omitempty"`
	Records  int64           `json:"records"`
	Complete bool            `json:"complete"`
	Duration time.Duration   `json:"-"`
	Findings []Finding       `json:"findings"`
	Checks   []Check         `json:"checks"`
	Counts   map[string]int  `json:"counts"` // findings by severity, silenced ones left out
	Source   *inspect.Source `json:"source,omitempty"`
}

// Worst is the worst severity found, silenced findings aside; ok is false
// when nothing was found.
func (r *Report) Worst() (s Severity, ok bool) {
	for _, f := range r.Findings {
		if f.Silenced != "" {
			continue
		}
		if !ok || f.Severity > s {
			s, ok = f.Severity, true
		}
	}
	return s, ok
}

// Skipped counts the rules that could not run (but the server rules a
// snapshot has no data for: they do not apply to a file).
func (r *Report) Skipped() int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == StatusSkipped && c.Reason != errNoServer.Error() {
			n++
		}
	}
	return n
}

// Run makes the one read-only pass: server facts, then a scan of kss.
func Run(ctx context.Context, c redis.UniversalClient, kss []*inspect.Keyspace, scan inspect.Options, opt Options) Report {
	var srv Server
	if scan.Snapshot != nil {
		srv = SnapshotServer(scan.Snapshot.String())
	} else {
		srv = ReadServer(ctx, c, true)
	}
	p := NewPass(opt)
	snap := inspect.TakeSnapshotEach(ctx, c, kss, scan, 1, p.Observe)
	return p.Judge(&srv, &snap, kss)
}

// Pass gathers, while a scan streams, what the rules need beyond the
// snapshot (sample keys, TTL extremes), so a caller that scans anyway (the
// exporter) judges with no second pass.
type Pass struct {
	opt Options
	obs *observations
}

// NewPass starts a pass; hand Observe to inspect.TakeSnapshotEach.
func NewPass(opt Options) *Pass {
	opt.defaults()
	return &Pass{opt: opt, obs: newObservations()}
}

// Observe folds one streamed record in.
func (p *Pass) Observe(r *inspect.Record) { p.obs.add(r) }

// Judge runs every rule on the server facts and the finished snapshot.
func (p *Pass) Judge(srv *Server, snap *inspect.Snapshot, kss []*inspect.Keyspace) Report {
	in := &input{opt: p.opt, srv: srv, snap: snap, obs: p.obs, kss: inspect.UniqueKeyspaces(kss)}
	rep := Report{Server: srv.Addr, Version: srv.Info["redis_version"], Complete: snap.Complete, Duration: snap.Duration,
		Findings: []Finding{}, Checks: []Check{}} // [] in JSON, never null
	if v := srv.Info["valkey_version"]; v != "" {
		rep.Version = "valkey " + v
	}
	rep.Records = snap.Totals().Records
	for _, r := range rules {
		r.run(in, &rep)
	}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if f.Silenced = p.opt.silenced(f); f.Silenced != "" {
			for j := range rep.Checks {
				if c := &rep.Checks[j]; c.Rule == f.Rule && c.Keyspace == f.Keyspace && c.Status == StatusFinding {
					c.Status, c.Reason = StatusSilenced, f.Silenced
				}
			}
		}
	}
	for j := range rep.Checks {
		// a rule that cannot run here (CONFIG refused on a managed service)
		// may be accepted too: said with both reasons, not counted as skipped
		c := &rep.Checks[j]
		if c.Status != StatusSkipped {
			continue
		}
		if why := p.opt.silenced(&Finding{Rule: c.Rule, Keyspace: c.Keyspace}); why != "" {
			c.Status, c.Reason = StatusSilenced, why+" (skipped: "+c.Reason+")"
		}
	}
	rep.Counts = map[string]int{}
	for _, f := range rep.Findings {
		if f.Silenced == "" {
			rep.Counts[f.Severity.String()]++
		}
	}
	return rep
}
