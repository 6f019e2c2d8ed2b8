// Package promtest reads a Prometheus endpoint the way a scraper does, for
// the tests of the exporter and of the command that serves it.
//
// A test kit (ARCHITECTURE.md): imported by tests (and the bench harness)
// only; it may import any product package.
package promtest

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape fetches url (…/metrics), parses it with expfmt and returns the
// idemctl_* series as "name{label=value,…}" (labels sorted) -> value.
func Scrape(t testing.TB, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		if !strings.HasPrefix(name, "idemctl_") {
			continue
		}
		for _, m := range f.Metric {
			out[seriesKey(name, m)] = value(m)
		}
	}
	return out
}

// Expect fails t for each series of want that m does not serve with the
// value wanted.
func Expect(t testing.TB, m, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		if got, ok := m[k]; !ok || got != v {
			t.Errorf("%s = %v (served %v), want %v", k, got, ok, v)
		}
	}
}

func seriesKey(name string, m *dto.Metric) string {
	var ls []string
	for _, l := range m.Label {
		ls = append(ls, l.GetName()+"="+l.GetValue())
	}
	slices.Sort(ls)
	return name + "{" + strings.Join(ls, ",") + "}"
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	}
	return m.GetUntyped().GetValue()
}
