package exporter

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idemctl/idemctl/inspect"
)

// OtherValue is the bucket holding every capture value outside the top N.
const OtherValue = "__other__"

type metricDef struct {
	name   string
	help   string
	kind   prometheus.ValueType
	labels []string
	desc   *prometheus.Desc
}

func def(name string, kind prometheus.ValueType, help string, labels ...string) *metricDef {
	return &metricDef{name: "idemctl_" + name, help: help, kind: kind, labels: labels,
		desc: prometheus.NewDesc("idemctl_"+name, help, labels, nil)}
}

const (
	gauge   = prometheus.GaugeValue
	counter = prometheus.CounterValue
)

// Record metrics come from the last complete scan: a failed or partial scan
// leaves them as they were, so a half-read keyspace never looks like a drop.
var (
	mRecords         = def("records", gauge, "Records by keyspace and canonical state (last complete scan).", "keyspace", "state")
	mStale           = def("stale_records", gauge, "Processing records older than the keyspace's processing timeout (last complete scan).", "keyspace")
	mNoTTL           = def("no_ttl_records", gauge, "Records without a TTL: they never expire (last complete scan).", "keyspace")
	mProcessingNoTTL = def("processing_no_ttl_records", gauge, "Processing records without a TTL: retries blocked until repaired (last complete scan).", "keyspace")
	mFlag            = def("flag_records", gauge, "Records carrying each finding flag (last complete scan).", "keyspace", "flag")
	mMemory          = def("memory_bytes", gauge, "MEMORY USAGE summed by keyspace and state (last complete scan).", "keyspace", "state")
	mMemoryUnknown   = def("memory_unknown_records", gauge, "Records whose MEMORY USAGE could not be read (last complete scan).", "keyspace")
	mOldest          = def("oldest_processing_age_seconds", gauge, "Age of the oldest processing record whose age is known; 0 when none (last complete scan).", "keyspace")
	mAgeUnknown      = def("processing_age_unknown_records", gauge, "Processing records whose age cannot be derived (last complete scan).", "keyspace")
	mAgeGap          = def("age_unknown_records", gauge, "Processing records whose staleness cannot be judged, by cause: the stuck-request alerts are blind to them (last complete scan).", "keyspace", "cause")
	mCannotJudge     = def("cannot_judge", gauge, "1 when verdicts on the keyspace cannot be backed for this reason: age_unknown, undecoded, no_match (last complete scan).", "keyspace", "kind")
	mTTLBucket       = def("ttl_bucket_records", gauge, "Records by remaining TTL: bucket is the upper bound (1m … 7d, inf), none (no TTL) or unknown; not cumulative (last complete scan).", "keyspace", "bucket")
	mAgeQuantile     = def("processing_age_quantile_seconds", gauge, "Processing-record age percentiles among records of known age: quantile 0.5, 0.9, 0.99 and 1 (the oldest); ~3% precision (last complete scan).", "keyspace", "quantile")
	mDoctorFindings  = def("doctor_findings", gauge, "idemctl doctor's findings on the last complete scan, by severity (critical, warning, info).", "severity")
	mDoctorFinding   = def("doctor_finding", gauge, "1 for each idemctl doctor finding on the last complete scan: rule, keyspace (\"\" for the server) and severity; absent when the rule found nothing.", "rule", "keyspace", "severity")
	mDoctorSkipped   = def("doctor_skipped_checks", gauge, "idemctl doctor checks that could not run on the last complete scan (ACL, server version): not passed.")
	mGroup           = def("group_records", gauge, "Records per value of one key-template capture: the top N values and "+OtherValue+" (last complete scan).", "keyspace", "capture", "value")

	mScanKeys     = def("scan_keys", gauge, "Keys the last scan read.", "keyspace")
	mScanComplete = def("scan_complete", gauge, "1 when the last scan covered the keyspace end to end.", "keyspace")
	mDuration     = def("scan_duration_seconds", gauge, "How long the last scan took.")
	mSuccess      = def("scan_success", gauge, "1 when the last scan was complete, 0 when it failed, timed out or stopped early.")
	mInProgress   = def("scan_in_progress", gauge, "1 while a scan runs.")
	mProgress     = def("scan_progress_ratio", gauge, "Share of the keyspaces the running scan has visited, from the SCAN cursors (0 when none runs).")
	mLastSuccess  = def("last_success_timestamp_seconds", gauge, "Unix time the last complete scan finished; 0 before the first.")
	mScans        = def("scans_total", counter, "Scans finished, complete or not.")
	mErrors       = def("scan_errors_total", counter, "Scans that failed, timed out or stopped early.")
	mKeysTotal    = def("scan_keys_total", counter, "Keys read by all scans.")
	mInterval     = def("scan_interval_seconds", gauge, "Configured time between scan starts.")
	mTimeout      = def("scan_timeout_seconds", gauge, "Configured limit on one scan.")
	mInfo         = def("build_info", gauge, "Always 1; the idemctl version, the commit it was built from (\"\" when unknown) and the last complete scan's read path (script, client; \"\" before the first) as labels.", "version", "revision", "read_path")
)

var allMetrics = []*metricDef{
	mRecords, mStale, mNoTTL, mProcessingNoTTL, mFlag, mMemory, mMemoryUnknown, mOldest, mAgeUnknown, mAgeGap, mCannotJudge, mTTLBucket, mAgeQuantile, mDoctorFindings, mDoctorFinding, mDoctorSkipped, mGroup,
	mScanKeys, mScanComplete, mDuration, mSuccess, mInProgress, mProgress, mLastSuccess, mScans, mErrors, mKeysTotal,
	mInterval, mTimeout, mInfo,
}

// MetricNames lists every idemctl_* metric the exporter can expose.
func MetricNames() []string {
	out := make([]string, len(allMetrics))
	for i, m := range allMetrics {
		out[i] = m.name
	}
	return out
}

// LabelNames lists every label an idemctl_* metric can carry.
func LabelNames() []string {
	var out []string
	for _, m := range allMetrics {
		for _, l := range m.labels {
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// collector renders the exporter's state at scrape time: every value of one
// scrape comes from the same snapshot.
type collector struct{ e *Exporter }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range allMetrics {
		ch <- m.desc
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	st := c.e.state()
	emit := func(m *metricDef, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, v, labels...)
	}
	cfg := c.e.cfg
	readPath := ""
	if st.good != nil && len(st.good.Keyspaces) > 0 {
		readPath = inspect.ReadPathName(st.good.Keyspaces[0].Coverage.ReadPath) // the last complete scan's
	}
	emit(mInfo, 1, cfg.Version, cfg.Revision, readPath)
	emitScanState(emit, cfg, &st)
	if st.last != nil {
		emit(mDuration, st.last.Duration.Seconds())
		emit(mSuccess, b2f(st.last.Complete))
		for _, k := range st.last.Keyspaces {
			emit(mScanKeys, float64(k.Coverage.Keys), k.Name)
			emit(mScanComplete, b2f(k.Coverage.Complete), k.Name)
		}
	}
	live, fst, following := c.e.followView()
	if following {
		emitFollow(emit, fst)
	}
	if st.good == nil {
		return // no complete scan yet: absent, not a misleading zero
	}
	emitGaps(emit, st.good)
	emitLedgers(emit, st.ledgers) // ledger.go
	emitStreams(emit, st.streams) // streams.go
	emitDoctor(emit, st.goodDoc)
	for _, k := range st.good.Keyspaces {
		r := &k.Report
		for _, s := range inspect.AllStates() {
			emit(mRecords, recordCount(live, r, k.Name, s), k.Name, s.String())
			emit(mMemory, float64(r.MemoryBytes.ByState[s.String()]), k.Name, s.String())
		}
		emit(mStale, staleCount(live, r, k.Name), k.Name)
		emit(mNoTTL, float64(r.Flags["no_ttl"]), k.Name)
		emit(mProcessingNoTTL, float64(r.Flags["processing_no_ttl"]), k.Name)
		for _, f := range inspect.AllFlags() {
			emit(mFlag, float64(r.Flags[f.Name]), k.Name, f.Name)
		}
		emit(mMemoryUnknown, float64(r.Total-r.MemoryBytes.KnownRecords), k.Name)
		emit(mOldest, float64(r.ProcessingAge.Max)/1000, k.Name)
		emit(mAgeUnknown, float64(r.ProcessingAge.Unknown), k.Name)
		for _, b := range r.TTLHistogram {
			emit(mTTLBucket, float64(b.Count), k.Name, b.Le)
		}
		a := r.ProcessingAge
		for _, q := range []struct {
			q  string
			ms int64
		}{{"0.5", a.P50}, {"0.9", a.P90}, {"0.99", a.P99}, {"1", a.Max}} {
			emit(mAgeQuantile, float64(q.ms)/1000, k.Name, q.q)
		}
		if cfg.GroupLabel != "" {
			for _, g := range groupCounts(r, cfg.GroupLabel, cfg.GroupCap) {
				emit(mGroup, float64(g.n), k.Name, cfg.GroupLabel, g.value)
			}
		}
	}
}

// emitScanState is the scans' settings and how they go.
func emitScanState(emit func(*metricDef, float64, ...string), cfg Config, st *exporterState) {
	emit(mInterval, cfg.Interval.Seconds())
	if cfg.Follow {
		emit(mFullInterval, cfg.FullInterval.Seconds())
	}
	emit(mTimeout, cfg.ScanTimeout.Seconds())
	emit(mInProgress, b2f(st.inProgress))
	progress := 0.0
	if st.inProgress {
		progress = st.progress
	}
	emit(mProgress, progress)
	emit(mScans, float64(st.scans))
	emit(mErrors, float64(st.errors))
	emit(mKeysTotal, float64(st.keysTotal))
	last := 0.0
	if !st.lastSuccess.IsZero() {
		last = float64(st.lastSuccess.UnixMilli()) / 1000
	}
	emit(mLastSuccess, last)
}

type groupCount struct {
	value string
	n     int64
}

// groupCounts is the top cap values of one capture plus an OtherValue
// bucket for the rest of the keyspace (including keys that did not fit the
// template). Values are sanitized; values that sanitize alike are merged so
// no two series collide. Nil when the keyspace has no such capture.
func groupCounts(r *inspect.Report, capture string, cap int) []groupCount {
	g, ok := r.Groups[capture]
	if !ok {
		return nil
	}
	var out []groupCount
	idx := map[string]int{}
	var sum int64
	add := func(v string, n int64) {
		if i, ok := idx[v]; ok {
			out[i].n += n
			return
		}
		idx[v] = len(out)
		out = append(out, groupCount{v, n})
	}
	for i, t := range g.Top {
		if i >= cap {
			break
		}
		add(inspect.Sanitize(string(t.Value)), t.Count)
		sum += t.Count
	}
	add(OtherValue, max(r.Total-sum, 0))
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// recordCount is the live count of records in state s when following, the
// last complete scan's otherwise.
func recordCount(live *liveCounts, r *inspect.Report, ks string, s inspect.State) float64 {
	if live == nil {
		return float64(r.ByState[s.String()])
	}
	if c := live.byState[ks]; int(s) < len(c) {
		return float64(c[s])
	}
	return 0
}

// staleCount is the live stale count when following, the last complete
// scan's otherwise.
func staleCount(live *liveCounts, r *inspect.Report, ks string) float64 {
	if live == nil {
		return float64(r.Stale)
	}
	return float64(live.stale[ks])
}
