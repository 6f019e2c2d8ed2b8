package inspect

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Snapshot is what one scan over every keyspace found: a Stats report per
// keyspace plus the scan's coverage. `idemctl check` judges a single one;
// the exporter serves the last complete one as metrics.
type Snapshot struct {
	Started   time.Time
	Duration  time.Duration
	Keyspaces []KeyspaceSnapshot
	Complete  bool    // every keyspace was covered end to end
	Err       error   // why not, when !Complete
	Covered   float64 // the share of the keyspaces visited (1 when complete)
	DBKeys    int64   // keys in the database, read when a keyspace matched none; -1: not read
}

// KeyspaceSnapshot is one keyspace's share of a scan.
type KeyspaceSnapshot struct {
	Name     string
	Report   Report // this keyspace only
	Coverage Coverage
	Scanned  bool       // false when the scan stopped before reaching it
	Nodes    []Coverage // per node (a cluster's primaries), before merging
}

// Totals are a snapshot's numbers summed over its keyspaces.
type Totals struct {
	Records            int64
	Stale              int64
	NoTTL              int64
	ProcessingNoTTL    int64
	UnknownState       int64
	MemoryBytes        int64
	OldestProcessingMs int64 // 0 when no processing record has a known age
	Keys               int64 // keys the scan read
}

// Sampled reports a snapshot of a sample (Options.Sample): its totals are
// estimates, with the intervals of SampleIntervals.
func (s *Snapshot) Sampled() bool {
	for _, k := range s.Keyspaces {
		if k.Report.Sample != nil {
			return true
		}
	}
	return false
}

// SampleIntervals are the 95 % intervals of the Totals a sample estimates,
// by Totals' names (stale, no_ttl, processing_no_ttl, unknown_state,
// memory, records), each summed over the keyspaces — wider than 95 %
// together, which errs on the side of "cannot tell". nil when not sampled.
func (s *Snapshot) SampleIntervals() map[string]Interval {
	if !s.Sampled() {
		return nil
	}
	paths := map[string]string{"records": "total", "stale": "stale", "no_ttl": "flags.no_ttl",
		"processing_no_ttl": "flags.processing_no_ttl", "unknown_state": "flags.unknown_state", "memory": "memory_bytes.total"}
	out := map[string]Interval{}
	for name, path := range paths {
		var sum Interval
		for _, k := range s.Keyspaces {
			iv, ok := Interval{}, false
			if sm := k.Report.Sample; sm != nil {
				iv, ok = sm.Intervals95[path]
			}
			if !ok { // read whole: its count is exact
				v := exactCount(&k.Report, path)
				iv = Interval{v, v}
			}
			sum.Low, sum.High = sum.Low+iv.Low, sum.High+iv.High
		}
		out[name] = sum
	}
	return out
}

// exactCount is the count at path of a report read whole.
func exactCount(r *Report, path string) int64 {
	switch path {
	case "total":
		return r.Total
	case "stale":
		return r.Stale
	case "memory_bytes.total":
		return r.MemoryBytes.Total
	}
	return r.Flags[strings.TrimPrefix(path, "flags.")]
}

// Totals sums the keyspaces.
func (s *Snapshot) Totals() Totals {
	var t Totals
	for _, k := range s.Keyspaces {
		r := &k.Report
		t.Records += r.Total
		t.Stale += r.Stale
		t.NoTTL += r.Flags["no_ttl"]
		t.ProcessingNoTTL += r.Flags["processing_no_ttl"]
		t.UnknownState += r.Flags["unknown_state"]
		t.MemoryBytes += r.MemoryBytes.Total
		t.OldestProcessingMs = max(t.OldestProcessingMs, r.ProcessingAge.Max)
		t.Keys += k.Coverage.Keys
	}
	return t
}

// TakeSnapshot runs one scan over kss and aggregates each keyspace
// separately, so per-keyspace flag counts need no second pass. topN bounds
// the values kept per template capture. Cancel ctx (or give it a deadline)
// to stop early: the snapshot is then incomplete and says why.
func TakeSnapshot(ctx context.Context, c redis.UniversalClient, kss []*Keyspace, opt Options, topN int) Snapshot {
	return TakeSnapshotEach(ctx, c, kss, opt, topN, nil)
}

// TakeSnapshotEach is TakeSnapshot that also hands each record to each (when
// not nil) as it streams, for callers that keep more than the aggregate
// (doctor's sample keys and TTL extremes). The record is only valid during
// the call.
func TakeSnapshotEach(ctx context.Context, c redis.UniversalClient, kss []*Keyspace, opt Options, topN int, each func(*Record)) Snapshot {
	sb := NewSnapshotBuilder(kss, topN)
	covs, _ := Scan(ctx, c, sb.Keyspaces(), opt, func(b Batch) error {
		sb.Add(b)
		if each != nil {
			for i := range b.Records {
				each(&b.Records[i])
			}
		}
		return nil
	})
	return sb.Finish(ctx, c, covs)
}

// SnapshotBuilder builds a Snapshot from the batches of a scan its caller
// reads itself (the TUI's), as TakeSnapshot does from its own.
type SnapshotBuilder struct {
	kss     []*Keyspace
	stats   map[*Keyspace]*Stats
	started time.Time
	covered float64
}

// NewSnapshotBuilder starts a snapshot of kss (each counted once).
func NewSnapshotBuilder(kss []*Keyspace, topN int) *SnapshotBuilder {
	sb := &SnapshotBuilder{kss: UniqueKeyspaces(kss), stats: map[*Keyspace]*Stats{}, started: time.Now()}
	for _, ks := range sb.kss {
		sb.stats[ks] = NewStats(topN)
	}
	return sb
}

// Keyspaces are the keyspaces to scan.
func (sb *SnapshotBuilder) Keyspaces() []*Keyspace { return sb.kss }

// Add folds one batch in.
func (sb *SnapshotBuilder) Add(b Batch) {
	sb.covered = max(sb.covered, b.Done)
	if st := sb.stats[b.Keyspace]; st != nil {
		st.Add(b)
	}
}

// Finish makes the snapshot once the scan has ended with covs. It may read
// DBSIZE: a pattern that matched nothing proves nothing while the database
// holds other keys.
func (sb *SnapshotBuilder) Finish(ctx context.Context, c redis.UniversalClient, covs []Coverage) Snapshot {
	snap := Snapshot{Started: sb.started, Duration: time.Since(sb.started)}
	byName := map[string][]Coverage{}
	for _, c := range covs {
		byName[c.Keyspace] = append(byName[c.Keyspace], c)
	}
	snap.Complete = true
	for _, ks := range sb.kss {
		cs := byName[ks.Name]
		st := sb.stats[ks]
		st.AddCoverage(cs...)
		ksn := KeyspaceSnapshot{Name: ks.Name, Report: st.Report(), Coverage: mergeCoverage(ks, cs), Scanned: len(cs) > 0, Nodes: cs}
		if err := coverageErr(ksn); err != nil && snap.Err == nil {
			snap.Err = err
		}
		if !ksn.Coverage.Complete {
			snap.Complete = false
		}
		snap.Keyspaces = append(snap.Keyspaces, ksn)
	}
	if !snap.Complete && snap.Err == nil && !snap.Sampled() {
		snap.Err = errors.New("scan incomplete")
	}
	snap.Covered = 1
	if !snap.Complete {
		snap.Covered = sb.covered
	}
	snap.DBKeys = -1
	for _, k := range snap.Keyspaces {
		if k.Coverage.Complete && k.Coverage.Keys == 0 && ctx.Err() == nil && c != nil {
			// an empty pattern proves nothing while the database holds other keys
			if n, err := DBKeys(ctx, c); err == nil {
				snap.DBKeys = n
			}
			break
		}
	}
	return snap
}

// mergeCoverage folds a keyspace's per-node coverages (one per cluster
// primary; one in all for a single server) into one: complete only when
// every node was.
func mergeCoverage(ks *Keyspace, cs []Coverage) Coverage {
	m := Coverage{Keyspace: ks.Name, Match: ks.Match, Complete: len(cs) > 0}
	for _, c := range cs {
		if m.Started.IsZero() || c.Started.Before(m.Started) {
			m.Started = c.Started
		}
		m.Keys += c.Keys
		m.Records += c.Records
		m.Vanished += c.Vanished
		m.Expired += c.Expired
		m.Duplicates += c.Duplicates
		m.Duration = max(m.Duration, c.Duration)
		m.Complete = m.Complete && c.Complete
		m.Limited = m.Limited || c.Limited
		m.Sampled = m.Sampled || c.Sampled
		m.MemoryOff = m.MemoryOff || c.MemoryOff
		if m.ReadPath == "" || c.ReadPath != ReadScript {
			m.ReadPath = c.ReadPath // a node that did not read by the script says so
		}
		if c.Err != nil && m.Err == nil {
			m.Err = c.Err
			if c.Node != "" && c.Role != "snapshot" { // a snapshot's error names its file
				m.Err = fmt.Errorf("on %s: %w", c.Node, c.Err)
			}
		}
	}
	return m
}

// coverageErr says, in one line, why a keyspace was not fully covered.
func coverageErr(k KeyspaceSnapshot) error {
	c := k.Coverage
	switch {
	case !k.Scanned:
		return fmt.Errorf("keyspace %s was not scanned (the scan stopped before it)", k.Name)
	case errors.Is(c.Err, context.DeadlineExceeded):
		return fmt.Errorf("keyspace %s: scan timed out after %d keys", k.Name, c.Keys)
	case c.Err != nil:
		return fmt.Errorf("keyspace %s (%s): %v — %d keys read before it stopped", k.Name, Sanitize(c.Match), c.Err, c.Keys)
	case c.Limited:
		return fmt.Errorf("keyspace %s: stopped at --max-keys after %d keys", k.Name, c.Keys)
	case c.Sampled:
		return nil // a sample stops early by design: its report carries the intervals
	case !c.Complete:
		return fmt.Errorf("keyspace %s: scan incomplete after %d keys", k.Name, c.Keys)
	}
	return nil
}

// UniqueKeyspaces drops repeated names (--keyspace a,a): one keyspace,
// counted once.
func UniqueKeyspaces(kss []*Keyspace) []*Keyspace {
	seen := make(map[string]bool, len(kss))
	out := make([]*Keyspace, 0, len(kss))
	for _, ks := range kss {
		if !seen[ks.Name] {
			seen[ks.Name] = true
			out = append(out, ks)
		}
	}
	return out
}
