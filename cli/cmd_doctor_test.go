package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/recordtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// The scenario through the command: records reserved with a 6 h
// TTL under the preset's 1 m reserve TTL. doctor proposes reserve_ttl 6h,
// names persistence off (redistest runs without it), and exits 11.
func TestDoctorProposesReserveTTL(t *testing.T) {
	url := clitest.SeededURL(t, 2000, "--reserve-ttl", "6h", "--processing-timeout", "10m", "--retention", "1h")

	r := clitest.Run(t, nil, "doctor", "--url", url, "--preset", "atlasmart", "-o", "json")
	r.MustCode(t, cli.ExitDoctorCritical)
	var rep struct {
		Findings []struct {
			Rule, Severity, Keyspace, Title, Fix string
			Evidence                             []string
			Figures                              map[string]int64
			Samples                              []string
		}
		Checks []struct{ Rule, Status, Reason string }
		Counts map[string]int
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range rep.Findings {
		got[f.Rule] = f.Severity
		if f.Rule == "reserve-ttl" && (f.Figures["proposed_reserve_ttl_ms"] != 6*3_600_000 || !strings.Contains(f.Fix, "reserve_ttl: 6h") || len(f.Samples) == 0) {
			t.Errorf("reserve-ttl: %+v", f)
		}
		if f.Fix == "" || len(f.Evidence) == 0 {
			t.Errorf("%s: a finding needs evidence and a fix: %+v", f.Rule, f)
		}
	}
	for rule, sev := range map[string]string{"reserve-ttl": "critical", "processing-no-ttl": "critical", "persistence": "critical",
		"retention": "warning", "large-response": "warning", "missing-fingerprint": "", "eviction": ""} {
		if got[rule] != sev {
			t.Errorf("%s: %q, want %s (findings %v)", rule, got[rule], sev, got)
		}
	}
	if rep.Counts["critical"] != 3 {
		t.Errorf("counts %v", rep.Counts)
	}

	// The table: findings worst first, each with evidence and fix, a summary.
	r = clitest.Run(t, nil, "doctor", "--url", url, "--preset", "atlasmart", "-o", "table")
	r.MustCode(t, cli.ExitDoctorCritical)
	if !strings.HasPrefix(r.Stdout, "CRITICAL ") || !strings.Contains(r.Stdout, "  fix:      reserve_ttl: 6h under keyspaces.atlasmart") ||
		!strings.Contains(r.Stdout, "3 critical, ") || r.Stderr != "" {
		t.Errorf("table:\n%s\nstderr %q", r.Stdout, r.Stderr)
	}

	// detect proposes the same reserve TTL from its sample, beside the preset's.
	r = clitest.Run(t, nil, "detect", "--url", url, "--match", "atlasmart:*", "--sample", "1000")
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stdout, "  reserve_ttl         1m → 6h: ") || !strings.Contains(r.Stdout, "    reserve_ttl: 6h # preset default 1m") {
		t.Errorf("detect:\n%s", r.Stdout)
	}

	// With the application's reserve TTL, the reserve TTL rule is quiet.
	r = clitest.Run(t, nil, "doctor", "--url", url, "--preset", "atlasmart", "--reserve-ttl", "6h", "--processing-timeout", "10m", "-o", "json")
	rep.Checks = nil
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Checks {
		if c.Rule == "reserve-ttl" && c.Status != "ok" {
			t.Errorf("reserve-ttl with --reserve-ttl 6h: %+v", c)
		}
	}
}

// Exit by the worst severity: a warning is 10; nothing above info, 0.
func TestDoctorExitByWorstSeverity(t *testing.T) {
	srv := redistest.Own(t, "--appendonly", "yes")
	url := srv.URL(0)
	recordtest.Reserve(t, srv, cliKey, "body") // one record in flight, reserve TTL 60s: judged, healthy
	r := clitest.Run(t, nil, "doctor", "--url", url, "--preset", "atlasmart", "-o", "table")
	r.MustCode(t, cli.ExitOK)
	if !strings.HasPrefix(r.Stdout, "0 critical, 0 warning, 0 info;") {
		t.Errorf("%s", r.Stdout)
	}
	r = clitest.Run(t, nil, "doctor", "--url", url, "--preset", "atlasmart", "--require-fsync", "always")
	r.MustCode(t, cli.ExitDoctorWarning)

	for _, bad := range [][]string{{"--require-fsync", "sometimes"}, {"--retry-horizon", "0s"}, {"-o", "xml"}} {
		r := clitest.Run(t, nil, append([]string{"doctor", "--url", url, "--preset", "atlasmart"}, bad...)...)
		r.MustCode(t, cli.ExitUsage)
		r.OneLineErr(t)
	}
}

// A finding accepted in the config is listed with its reason and no longer
// sets the exit code.
func TestDoctorSilencedFinding(t *testing.T) {
	srv := redistest.Own(t) // no persistence: critical
	recordtest.Reserve(t, srv, cliKey, "body")
	base := []string{"doctor", "--url", srv.URL(0), "--preset", "atlasmart"}
	clitest.Run(t, nil, base...).MustCode(t, cli.ExitDoctorCritical)

	cfg := clitest.WriteConfig(t, "doctor:\n  silence:\n    - rule: persistence\n      reason: \"dev box: records may be lost\"\n")
	r := clitest.Run(t, nil, append(base, "--config", cfg, "-o", "table")...)
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stdout, "SILENCED persistence (critical): persistence is off") || !strings.Contains(r.Stdout, "— dev box: records may be lost") ||
		!strings.Contains(r.Stdout, "0 critical, 0 warning, 0 info;") || !strings.Contains(r.Stdout, "1 silenced") {
		t.Errorf("%s", r.Stdout)
	}
	r = clitest.Run(t, nil, append(base, "--config", cfg, "-o", "json")...)
	if !strings.Contains(r.Stdout, `"silenced": "dev box: records may be lost"`) || !strings.Contains(r.Stdout, `"status": "silenced"`) {
		t.Errorf("%s", r.Stdout)
	}
}
