package cli_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/internal/appsim"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/pgtest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// The README's triage, run as written: records from idemctl seed with its
// defaults, the orders table examples/orders.sql creates (pgtest creates
// it from that file), orders for three of the stale requests, the
// example hook reading libpq's PG* variables from verify.env. triage
// --verify's whole report — the verdicts, the plan, the dry-run line —
// is on stdout, so `triage --verify | less` shows the plan too.
func TestTriageVerifyAsTheReadmeRunsIt(t *testing.T) {
	url := redistest.Shared(t).URL(0)
	r := clitest.Run(t, nil, "seed", "--url", url)
	r.MustCode(t, cli.ExitOK)
	var seeded appsim.Result
	if err := json.Unmarshal([]byte(r.Stdout), &seeded); err != nil {
		t.Fatalf("seed output: %v\n%s", err, r.Stdout)
	}
	stale := int(seeded.Kinds[appsim.KindStale])
	pg := pgtest.Own(t)
	var env []string
	for _, e := range pg.Env() {
		k, v, _ := strings.Cut(e, "=")
		env = append(env, fmt.Sprintf("%s: %q", k, v))
	}
	cfg := clitest.WriteConfig(t, fmt.Sprintf(`profiles:
  local: {url: %q}
default_profile: local
keyspaces:
  - name: orders
    preset: atlasmart
    processing_timeout: 2m           # the README's 30s, widened: no fresh record turns stale while a slow run lasts
    reserve_ttl: %dms
    verify:
      command: [%q, "{principal}", "{idem_key}"]
      env: {%s}
`, url, seeded.ReserveTTLMs, clitest.VerifyOrders(t), strings.Join(env, ", ")))

	// An order for three of the stale requests, as the docs' \copy does.
	r = clitest.Run(t, nil, "scan", "--config", cfg, "--stale", "-o", "ndjson")
	r.MustCode(t, cli.ExitOK)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != stale || stale < 3 {
		t.Fatalf("scan --stale found %d records, seed wrote %d stale", len(lines), stale)
	}
	for _, l := range lines[:3] {
		var rec struct{ Groups map[string]string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if _, err := pg.DB().Exec(`INSERT INTO orders (principal, idem_key, amount, status, response) VALUES ($1, $2, 1, 201, '{}')`,
			rec.Groups["principal"], rec.Groups["idem_key"]); err != nil {
			t.Fatal(err)
		}
	}

	r = clitest.Run(t, nil, "triage", "--config", cfg, "--verify")
	r.MustCode(t, cli.ExitOK)
	for _, want := range []string{
		fmt.Sprintf("verdicts: %d records: done 3, not_done %d", stale, stale-3), // the verdicts
		"state            PROCESSING → FAILED",                                   // the plan (its first writes)
		fmt.Sprintf("dry run: %d of %d would be written; nothing was written", stale, stale),
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("triage --verify's stdout lacks %q:\n%s", want, r.Stdout)
		}
		if strings.Contains(r.Stderr, want) {
			t.Errorf("triage --verify prints %q on stderr", want)
		}
	}
	if strings.Count(r.Stdout, "done      reconcile") != 3 || strings.Count(r.Stdout, "not_done  fail") != stale-3 {
		t.Errorf("verdict lines:\n%s", r.Stdout)
	}
	if strings.Contains(r.Stderr, "warning") {
		t.Errorf("a warning: %s", r.Stderr)
	}
}
