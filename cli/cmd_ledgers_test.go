package cli_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/cli"
	"github.com/idemctl/idemctl/inspect/ledger"
	"github.com/idemctl/idemctl/internal/testkit/clitest"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// seedLedgers writes an untrimmed zset (10 fresh entries, 5 eleven days
// old), a trimmed one, and a day set that never got its EXPIRE.
func seedLedgers(t *testing.T, c *redis.Client) (oldDay string) {
	t.Helper()
	ctx := t.Context()
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 15 {
		age := time.Duration(i) * time.Minute
		if i >= 10 {
			age = 11 * 24 * time.Hour
		}
		c.ZAdd(ctx, "dedupe:billing", redis.Z{Score: float64(now.Add(-age).UnixMilli()), Member: fmt.Sprint("evt-", i)})
		c.ZAdd(ctx, "dedupe:ship\x1b[2J", redis.Z{Score: float64(now.Add(-time.Duration(i) * time.Minute).UnixMilli()), Member: fmt.Sprint("evt-", i)})
	}
	oldDay = now.UTC().AddDate(0, 0, -4).Format("2006-01-02")
	c.SAdd(ctx, "processed:billing:"+oldDay, "a", "b")
	return oldDay
}

func TestLedgersAdHocTableAndJSON(t *testing.T) {
	srv, c := redistest.OwnClient(t)
	seedLedgers(t, c)
	r := clitest.Run(t, nil, "ledgers", "--url", srv.URL(0), "--preset", "zset-window")
	r.MustCode(t, cli.ExitOK)
	for _, want := range []string{
		`ledger ad-hoc (zset-window, match "dedupe:*", window 24h)`,
		"keys 2  members 30",
		"past window 5",
		"entries older than the window: >1× 5  >2× 5  >10× 5",
		`dedupe:ship\x1b[2J`, // sanitized: no escape reaches the terminal
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "\x1b") || strings.Index(r.Stdout, "dedupe:billing") > strings.Index(r.Stdout, "dedupe:ship") {
		t.Errorf("raw escape, or the oldest key not first:\n%s", r.Stdout)
	}

	r = clitest.Run(t, nil, "ledgers", "--url", srv.URL(0), "--preset", "zset-window", "-o", "json")
	r.MustCode(t, cli.ExitOK)
	var reps []ledger.Report
	if err := json.Unmarshal([]byte(r.Stdout), &reps); err != nil {
		t.Fatalf("%v: %s", err, r.Stdout)
	}
	if len(reps) != 1 || reps[0].Keys != 2 || reps[0].Members != 30 || reps[0].PastWindow != 5 || reps[0].Details[0].Key != "dedupe:billing" || !reps[0].Complete {
		t.Fatalf("json %+v", reps)
	}
}

func TestLedgersFromConfigAndDoctor(t *testing.T) {
	srv, c := redistest.OwnClient(t)
	oldDay := seedLedgers(t, c)
	cfg := clitest.WriteConfig(t, `keyspaces:
  - {name: orders, preset: atlasmart}
  - {name: billing, kind: ledger, preset: zset-window, match: "dedupe:billing"}
  - {name: daily, kind: ledger, preset: set-per-period}
`)
	r := clitest.Run(t, nil, "ledgers", "--url", srv.URL(0), "--config", cfg, "--keyspace", "daily")
	r.MustCode(t, cli.ExitOK)
	if !strings.Contains(r.Stdout, "ledger daily (set-per-period") || !strings.Contains(r.Stdout, "1 period sets without a TTL; 1 period sets older than the window") ||
		!strings.Contains(r.Stdout, "processed:billing:"+oldDay) || strings.Contains(r.Stdout, "ledger billing") {
		t.Errorf("%s", r.Stdout)
	}
	r = clitest.Run(t, nil, "doctor", "--url", srv.URL(0), "--config", cfg, "--keyspace", "orders", "-o", "json")
	var rep struct {
		Findings []struct{ Rule, Keyspace, Severity string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, r.Stdout)
	}
	got := map[string]string{}
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Rule, "ledger-") {
			got[f.Rule+"/"+f.Keyspace] = f.Severity
		}
	}
	if len(got) != 2 || got["ledger-trim/billing"] != "critical" || got["ledger-no-ttl/daily"] != "critical" {
		t.Errorf("ledger findings %v", got)
	}
}

func TestLedgersUsageErrors(t *testing.T) {
	srv := redistest.Shared(t)
	for _, args := range [][]string{
		{"--match", "x:*"},   // ad hoc needs --preset
		{"--preset", "zset"}, // unknown shape
		{"--preset", "set-per-period", "--period", "day"}, // not a layout
		{"--preset", "zset-window", "-o", "xml"},
		{}, // no config, no --preset
	} {
		r := clitest.Run(t, nil, append([]string{"ledgers", "--url", srv.URL(0)}, args...)...)
		r.MustCode(t, cli.ExitUsage)
		r.OneLineErr(t)
	}
}

func TestLedgersMaxKeysIsIncomplete(t *testing.T) {
	srv, c := redistest.OwnClient(t)
	seedLedgers(t, c)
	r := clitest.Run(t, nil, "ledgers", "--url", srv.URL(0), "--preset", "zset-window", "--max-keys", "1")
	r.MustCode(t, cli.ExitIncomplete)
	if !strings.Contains(r.Stdout, "keys 1 ") {
		t.Errorf("%s", r.Stdout)
	}
}

func TestDetectProposesALedger(t *testing.T) {
	srv, c := redistest.OwnClient(t)
	seedLedgers(t, c)
	r := clitest.Run(t, nil, "detect", "--url", srv.URL(0), "--match", "dedupe:*")
	r.MustCode(t, cli.ExitOK)
	for _, want := range []string{"✓ zset-window", "2 of 2 sampled zsets are scored by epoch times in ms", "kind: ledger", "preset: zset-window"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("detect lacks %q:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "no preset decodes") {
		t.Errorf("a ledger is not a failed detection:\n%s", r.Stdout)
	}
}
