package cli_test

import (
	"testing"

	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/promtest"
)

// The exporter says what check says: records seeded with a 6 h reserve TTL,
// scanned under a 1 m one, are exported as of unknown age by cause, and the
// keyspace as one whose verdicts cannot be backed.
func TestExporterExportsAgeUnknown(t *testing.T) {
	m := scrapeSixHourSeed(t, 2000)
	want := map[string]float64{
		"idemctl_age_unknown_records{cause=ttl_above_reserve,keyspace=atlasmart}": 360,
		"idemctl_age_unknown_records{cause=no_ttl,keyspace=atlasmart}":            40,
		"idemctl_age_unknown_records{cause=ttl_unreadable,keyspace=atlasmart}":    0,
		"idemctl_cannot_judge{keyspace=atlasmart,kind=age_unknown}":               1,
		"idemctl_cannot_judge{keyspace=atlasmart,kind=undecoded}":                 0,
		"idemctl_cannot_judge{keyspace=atlasmart,kind=no_match}":                  0,
		"idemctl_stale_records{keyspace=atlasmart}":                               0, // what the stuck alert sees
	}
	promtest.Expect(t, m, want)
}

// doctor rides on each exporter scan: its findings become series an alert
// can match (redistest's servers run without persistence: critical).
func TestExporterExportsDoctorFindings(t *testing.T) {
	m := scrapeSixHourSeed(t, 500)
	promtest.Expect(t, m, map[string]float64{
		"idemctl_doctor_finding{keyspace=,rule=persistence,severity=critical}":                1,
		"idemctl_doctor_finding{keyspace=atlasmart,rule=reserve-ttl,severity=critical}":       1,
		"idemctl_doctor_finding{keyspace=atlasmart,rule=processing-no-ttl,severity=critical}": 1,
		"idemctl_doctor_skipped_checks{}":                                                     0,
	})
	if m["idemctl_doctor_findings{severity=critical}"] < 3 {
		t.Errorf("critical findings %v", m["idemctl_doctor_findings{severity=critical}"])
	}
	if _, ok := m["idemctl_doctor_finding{keyspace=,rule=eviction,severity=critical}"]; ok {
		t.Error("a rule that found nothing has a series")
	}
}

// scrapeSixHourSeed seeds n records reserved with EX 6h and scrapes an
// exporter that believes the preset's 1m reserve TTL.
func scrapeSixHourSeed(t *testing.T, n int) map[string]float64 {
	t.Helper()
	url := clitest.SeededURL(t, n, "--reserve-ttl", "6h", "--processing-timeout", "10m")
	_, addr := startExporter(t, url, "--reserve-ttl", "1m", "--interval", "1m")
	return promtest.Scrape(t, "http://"+addr+"/metrics")
}
