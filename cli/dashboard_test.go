package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/exporter"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/promtest"
)

// The Grafana dashboard's every query (panels and variables) uses only
// metrics a live exporter serves, and only labels it sets.
func TestDashboardUsesExportedMetrics(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(clitest.RepoRoot, "dashboards/idemctl.json"))
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	}
	var dash struct {
		Title      string `json:"title"`
		UID        string `json:"uid"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID      int      `json:"id"`
			Type    string   `json:"type"`
			Title   string   `json:"title"`
			Targets []target `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("dashboards/idemctl.json: %v", err)
	}

	url := clitest.SeededURL(t, 300, exporterTiming...)
	_, addr := startExporter(t, url, "--group-label", "endpoint")
	served := map[string]bool{}
	for k := range promtest.Scrape(t, "http://"+addr+"/metrics") {
		served[k[:strings.IndexByte(k, '{')]] = true
	}
	labels := append(exporter.LabelNames(), "instance", "job")
	metricRe := regexp.MustCompile(`\bidemctl_[a-zA-Z0-9_]+`)
	byRe := regexp.MustCompile(`\b(?:by|without|on|ignoring)\s*\(([^)]*)\)`)
	matcherRe := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*"`)
	checkExpr := func(where, expr string) {
		used := metricRe.FindAllString(expr, -1)
		if len(used) == 0 {
			t.Errorf("%s: no idemctl metric in %q", where, expr)
		}
		for _, m := range used {
			if !served[m] || !slices.Contains(exporter.MetricNames(), m) {
				t.Errorf("%s: %s is not served by the exporter", where, m)
			}
		}
		var ls []string
		for _, g := range byRe.FindAllStringSubmatch(expr, -1) {
			ls = append(ls, strings.Split(g[1], ",")...)
		}
		for _, g := range matcherRe.FindAllStringSubmatch(expr, -1) {
			ls = append(ls, g[1])
		}
		for _, l := range ls {
			if l = strings.TrimSpace(l); l != "" && !slices.Contains(labels, l) {
				t.Errorf("%s: label %q is not one the exporter sets", where, l)
			}
		}
	}
	ids := map[int]bool{}
	queries := 0
	for _, p := range dash.Panels {
		if p.Title == "" || ids[p.ID] {
			t.Errorf("panel %d: missing title or repeated id", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			queries++
			checkExpr("panel "+p.Title, tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if q, ok := v.Query.(map[string]any); ok {
			checkExpr("variable "+v.Name, q["query"].(string))
		}
	}
	for _, want := range []string{"idemctl_stale_records", "idemctl_processing_age_quantile_seconds", "idemctl_ttl_bucket_records",
		"idemctl_memory_bytes", "idemctl_scan_success", "idemctl_doctor_finding", "idemctl_group_records"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the dashboard lacks %s", want)
		}
	}
	if dash.UID == "" || queries < 15 {
		t.Errorf("uid %q, %d queries", dash.UID, queries)
	}
}
