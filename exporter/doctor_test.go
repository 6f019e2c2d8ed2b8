package exporter

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idemctl/idemctl/doctor"
)

// A finding silenced in the config is not exported: it would page for what
// the operator accepted, with a reason, on purpose.
func TestDoctorSilencedNotExported(t *testing.T) {
	rep := &doctor.Report{Counts: map[string]int{"critical": 1}, Findings: []doctor.Finding{
		{Rule: "persistence", Severity: doctor.Critical, Silenced: "dev box"},
		{Rule: "reserve-ttl", Keyspace: "orders", Severity: doctor.Warning},
		{Rule: "reserve-ttl", Keyspace: "orders", Severity: doctor.Critical},
	}}
	got := map[string]float64{}
	emitDoctor(func(m *metricDef, v float64, labels ...string) {
		key := m.name
		for _, l := range labels {
			key += "|" + l
		}
		got[key] = v
		_ = prometheus.MustNewConstMetric(m.desc, m.kind, v, labels...) // labels match the definition
	}, rep)
	want := map[string]float64{
		"idemctl_doctor_finding|reserve-ttl|orders|critical": 1, // the worst of the rule's findings
		"idemctl_doctor_findings|critical":                   1,
		"idemctl_doctor_findings|warning":                    0,
		"idemctl_doctor_findings|info":                       0,
		"idemctl_doctor_skipped_checks":                      0,
	}
	if len(got) != len(want) {
		t.Errorf("got %v", got)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (%v), want %v; all %v", k, g, ok, v, got)
		}
	}
}
