package reaper

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/idemctl/idemctl/actions/write"
)

// Metrics counts what the reaper's cycles do, for the exporter's registry
// (idemctl exporter --reap-policy). Every series a policy can produce is
// created at zero up front, so increase() and absent() work from the
// first scrape.
type Metrics struct {
	cycles     prometheus.Counter
	cycleErrs  prometheus.Counter
	candidates *prometheus.GaugeVec
	qualified  *prometheus.GaugeVec
	actions    *prometheus.CounterVec
	unrepl     *prometheus.CounterVec
	skips      *prometheus.CounterVec
	trips      *prometheus.CounterVec
	open       *prometheus.GaugeVec
	lease      prometheus.Gauge
	apply      prometheus.Gauge
	last       prometheus.Gauge
}

const ns = "idemctl_reap_"

// metric names, for the exporter's documentation and the alert test
var metricNames = []string{
	ns + "cycles_total", ns + "cycle_errors_total", ns + "candidates", ns + "qualified", ns + "actions_total", ns + "writes_not_replicated_total",
	ns + "skips_total", ns + "breaker_trips_total", ns + "breaker_open", ns + "lease_held", ns + "apply",
	ns + "last_cycle_timestamp_seconds",
}

// MetricNames lists every idemctl_reap_* metric.
func MetricNames() []string { return append([]string(nil), metricNames...) }

// LabelNames lists the labels the reaper's metrics carry.
func LabelNames() []string { return []string{"keyspace", "action", "outcome", "reason"} }

// NewMetrics makes the reaper's metrics for p, every series at zero.
func NewMetrics(p *Policy) *Metrics {
	m := &Metrics{
		cycles:     prometheus.NewCounter(prometheus.CounterOpts{Name: ns + "cycles_total", Help: "Reaper cycles run."}),
		cycleErrs:  prometheus.NewCounter(prometheus.CounterOpts{Name: ns + "cycle_errors_total", Help: "Reaper cycles that failed, whole or for a rule (Redis down, lease or budget unreadable, audit log failing)."}),
		candidates: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: ns + "candidates", Help: "Records the rule selected in the last cycle, before liveness skips."}, []string{"keyspace", "action"}),
		qualified:  prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: ns + "qualified", Help: "Records that qualified in the last cycle (what the breaker counts)."}, []string{"keyspace", "action"}),
		actions:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: ns + "actions_total", Help: "Reaper writes by outcome (applied, conflict, error, …; would_apply in a dry run)."}, []string{"keyspace", "action", "outcome"}),
		unrepl:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: ns + "writes_not_replicated_total", Help: "Applied writes the replicas did not acknowledge within --replica-timeout: a failover could take them back (idemctl audit check-applied finds any it did)."}, []string{"keyspace", "action"}),
		skips:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: ns + "skips_total", Help: "Records the reaper left alone, by reason (liveness not proven, verdict, limits)."}, []string{"keyspace", "action", "reason"}),
		trips:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: ns + "breaker_trips_total", Help: "Cycles where more records qualified than the breaker threshold: none was acted on."}, []string{"keyspace", "action"}),
		open:       prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: ns + "breaker_open", Help: "1 when the last cycle tripped the rule's breaker."}, []string{"keyspace", "action"}),
		lease:      prometheus.NewGauge(prometheus.GaugeOpts{Name: ns + "lease_held", Help: "1 when this copy held the leader lease in its last cycle."}),
		apply:      prometheus.NewGauge(prometheus.GaugeOpts{Name: ns + "apply", Help: "1 when the reaper writes (--apply), 0 in a dry run."}),
		last:       prometheus.NewGauge(prometheus.GaugeOpts{Name: ns + "last_cycle_timestamp_seconds", Help: "Unix time the last cycle started."}),
	}
	outcomes := []string{WouldApply, WouldVerify}
	for _, o := range write.Outcomes {
		outcomes = append(outcomes, string(o))
	}
	for _, r := range p.Rules {
		ks, act := r.KeyspaceName, string(r.Action)
		m.candidates.WithLabelValues(ks, act)
		m.qualified.WithLabelValues(ks, act)
		m.trips.WithLabelValues(ks, act)
		m.open.WithLabelValues(ks, act)
		m.unrepl.WithLabelValues(ks, act)
		for _, o := range outcomes {
			m.actions.WithLabelValues(ks, act, o)
		}
		for _, s := range SkipReasons() {
			m.skips.WithLabelValues(ks, act, s)
		}
	}
	return m
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.cycles, m.cycleErrs, m.candidates, m.qualified, m.actions, m.unrepl, m.skips, m.trips, m.open, m.lease, m.apply, m.last}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.collectors() {
		c.Collect(ch)
	}
}

// observe adds a cycle's report.
func (m *Metrics) observe(rep *CycleReport) {
	if m == nil {
		return
	}
	m.cycles.Inc()
	m.last.Set(float64(rep.Started.UnixMilli()) / 1000)
	m.lease.Set(b2f(rep.Lease.Held))
	m.apply.Set(b2f(rep.Apply))
	if rep.Err != "" {
		m.cycleErrs.Inc()
	}
	for _, rr := range rep.Rules {
		if rr.Err != "" {
			m.cycleErrs.Inc()
		}
		ks, act := rr.Keyspace, string(rr.Action)
		m.candidates.WithLabelValues(ks, act).Set(float64(rr.Candidates))
		m.qualified.WithLabelValues(ks, act).Set(float64(rr.Qualified))
		m.open.WithLabelValues(ks, act).Set(b2f(rr.Breaker))
		if rr.Breaker {
			m.trips.WithLabelValues(ks, act).Inc()
		}
		for o, n := range rr.Outcomes {
			m.actions.WithLabelValues(ks, act, o).Add(float64(n))
		}
		m.unrepl.WithLabelValues(ks, act).Add(float64(rr.NotReplicated))
		for s, n := range rr.Skips {
			m.skips.WithLabelValues(ks, act, s).Add(float64(n))
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
