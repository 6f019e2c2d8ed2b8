package exporter

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/ledger"
)

// Ledger metrics come from each ledger's last complete read, as record
// metrics do; growth is against the complete read before it.
var (
	mLedgerKeys    = def("ledger_keys", gauge, "Keys of each dedupe ledger keyspace: zsets, or period sets (last complete read).", "keyspace")
	mLedgerMembers = def("ledger_members", gauge, "Event IDs held by each dedupe ledger keyspace, ZCARD or SCARD summed (last complete read).", "keyspace")
	mLedgerGrowth  = def("ledger_members_growth", gauge, "Change in ledger_members since the complete read before the last; 0 on the first.", "keyspace")
	mLedgerMemory  = def("ledger_memory_bytes", gauge, "MEMORY USAGE (SAMPLES 128) summed over the ledger's keys (last complete read).", "keyspace")
	mLedgerOldest  = def("ledger_oldest_entry_age_seconds", gauge, "Age of the ledger's oldest entry: its lowest zset score, or the oldest period set's start (last complete read).", "keyspace")
	mLedgerPast    = def("ledger_past_window_entries", gauge, "Ledger entries older than the keyspace's window: what a working trim or EXPIRE would have removed (last complete read).", "keyspace")
	mLedgerNoTTL   = def("ledger_no_ttl_keys", gauge, "Period sets of the ledger without a TTL: they live forever (last complete read).", "keyspace")
	mLedgerWindow  = def("ledger_window_seconds", gauge, "The ledger keyspace's configured window: how long an entry is meant to be kept.", "keyspace")
)

var ledgerMetrics = []*metricDef{mLedgerKeys, mLedgerMembers, mLedgerGrowth, mLedgerMemory, mLedgerOldest, mLedgerPast, mLedgerNoTTL, mLedgerWindow}

func init() { allMetrics = append(allMetrics, ledgerMetrics...) }

// ledgerState is, per ledger keyspace, its last complete read and the
// members of the complete read before it.
type ledgerState struct {
	last   map[string]ledger.Report
	growth map[string]int64
}

// readLedgers reads the configured ledgers for this scan and keeps each
// complete read; the reports go to doctor's ledger rules too.
func (e *Exporter) readLedgers(ctx context.Context, c redis.UniversalClient) []ledger.Report {
	if len(e.cfg.Ledgers) == 0 {
		return nil
	}
	reps, err := ledger.ReadAll(ctx, c, e.cfg.Ledgers, ledger.Options{})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(e.cfg.Log, "idemctl exporter: ledger read failed: %s\n", inspect.Line(err.Error()))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ledgers.last == nil {
		e.ledgers = ledgerState{last: map[string]ledger.Report{}, growth: map[string]int64{}}
	}
	for _, r := range reps {
		if !r.Complete {
			continue // the last complete read stands
		}
		if prev, ok := e.ledgers.last[r.Name]; ok {
			e.ledgers.growth[r.Name] = r.Members - prev.Members
		}
		r.Details = nil // the metrics need only the aggregate
		e.ledgers.last[r.Name] = r
	}
	return reps
}

// ledgerSeries is one ledger's values for a scrape.
type ledgerSeries struct {
	rep    ledger.Report
	growth int64
}

// ledgerView copies the ledger state, in the configured order (caller
// holds e.mu).
func (e *Exporter) ledgerView() []ledgerSeries {
	var out []ledgerSeries
	for _, l := range e.cfg.Ledgers {
		if r, ok := e.ledgers.last[l.Name]; ok {
			out = append(out, ledgerSeries{rep: r, growth: e.ledgers.growth[l.Name]})
		}
	}
	return out
}

func emitLedgers(emit func(m *metricDef, v float64, labels ...string), ls []ledgerSeries) {
	for _, s := range ls {
		r, ks := &s.rep, s.rep.Name
		emit(mLedgerKeys, float64(r.Keys), ks)
		emit(mLedgerMembers, float64(r.Members), ks)
		emit(mLedgerGrowth, float64(s.growth), ks)
		emit(mLedgerMemory, float64(r.MemoryBytes), ks)
		emit(mLedgerOldest, float64(r.OldestAgeMs)/1000, ks)
		emit(mLedgerPast, float64(r.PastWindow), ks)
		emit(mLedgerNoTTL, float64(r.NoTTL), ks)
		emit(mLedgerWindow, float64(r.WindowMs)/1000, ks)
	}
}
