package doctor

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect/ledger"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// ledgerReports reads ledgers off the server for Options.Ledgers.
func ledgerReports(t *testing.T, c redis.UniversalClient, specs ...ledger.Spec) []ledger.Report {
	t.Helper()
	var ls []*ledger.Ledger
	for _, sp := range specs {
		l, err := ledger.New(sp)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	reps, err := ledger.ReadAll(t.Context(), c, ls, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return reps
}

func TestLedgerTrimNotRunning(t *testing.T) {
	_, c := redistest.OwnClient(t)
	ctx := t.Context()
	now, _ := c.Time(ctx).Result()
	for i := range 30 { // 10 fresh, 20 eleven days old
		age := time.Duration(i) * time.Minute
		if i >= 10 {
			age = 11*24*time.Hour + time.Duration(i)*time.Second
		}
		c.ZAdd(ctx, "dedupe:stale", redis.Z{Score: float64(now.Add(-age).UnixMilli()), Member: fmt.Sprint("e", i)})
		c.ZAdd(ctx, "dedupe:fresh", redis.Z{Score: float64(now.Add(-time.Duration(i) * time.Minute).UnixMilli()), Member: fmt.Sprint("e", i)})
	}
	opt := Options{Ledgers: ledgerReports(t, c,
		ledger.Spec{Name: "dd", Preset: ledger.ZSetWindow},
		ledger.Spec{Name: "ok", Preset: ledger.ZSetWindow, Match: "dedupe:fresh"},
		ledger.Spec{Name: "none", Preset: ledger.ZSetWindow, Match: "nothing:*"})}
	rep := run(t, c, opt)
	f := finding(t, rep, "ledger-trim", "dd")
	if f.Severity != Critical || f.Figures["keys"] != 1 || f.Figures["past_window"] != 20 || f.Figures["window_ms"] != 86400000 ||
		len(f.Samples) != 1 || f.Samples[0] != "dedupe:stale" {
		t.Fatalf("finding %+v", f)
	}
	if age := f.Figures["oldest_age_ms"]; age < (11*24*time.Hour+29*time.Second).Milliseconds() || age > (11*24*time.Hour+40*time.Second).Milliseconds() {
		t.Errorf("oldest age %d", age)
	}
	if !strings.Contains(f.Evidence[0], "dedupe:stale: oldest entry 11d") || !strings.Contains(f.Fix, "ZREMRANGEBYSCORE dedupe:stale -inf (") {
		t.Errorf("evidence %q fix %q", f.Evidence, f.Fix)
	}
	quiet(t, rep, "ledger-trim", "ok", StatusOK)
	quiet(t, rep, "ledger-trim", "none", StatusNoData)
	quiet(t, rep, "ledger-window", "ok", StatusOK)
	noCheck(t, rep, "ledger-no-ttl", "ok") // a zset ledger: not checked
}

func TestLedgerWindowShorterThanHorizon(t *testing.T) {
	_, c := redistest.OwnClient(t)
	c.ZAdd(t.Context(), "dedupe:a", redis.Z{Score: float64(time.Now().UnixMilli()), Member: "e"})
	opt := Options{RetryHorizon: 72 * time.Hour, Ledgers: ledgerReports(t, c, ledger.Spec{Name: "short", Preset: ledger.ZSetWindow, Window: 6 * time.Hour})}
	f := finding(t, run(t, c, opt), "ledger-window", "short")
	if f.Severity != Warning || f.Figures["window_ms"] != (6*time.Hour).Milliseconds() || f.Figures["retry_horizon_ms"] != (72*time.Hour).Milliseconds() {
		t.Fatalf("finding %+v", f)
	}
}

func TestLedgerPeriodSetWithoutTTL(t *testing.T) {
	_, c := redistest.OwnClient(t)
	ctx := t.Context()
	now, _ := c.Time(ctx).Result()
	old := now.UTC().AddDate(0, 0, -5).Format("2006-01-02")
	c.SAdd(ctx, "processed:billing:"+old, "a", "b", "c")
	c.SAdd(ctx, "processed:billing:"+now.UTC().Format("2006-01-02"), "d")
	c.Expire(ctx, "processed:billing:"+now.UTC().Format("2006-01-02"), 48*time.Hour)
	c.SAdd(ctx, "processed:ship:"+now.UTC().Format("2006-01-02"), "d")
	c.Expire(ctx, "processed:ship:"+now.UTC().Format("2006-01-02"), 48*time.Hour)
	opt := Options{Ledgers: ledgerReports(t, c,
		ledger.Spec{Name: "billing", Preset: ledger.SetPerPeriod, Match: "processed:billing:*"},
		ledger.Spec{Name: "ship", Preset: ledger.SetPerPeriod, Match: "processed:ship:*"})}
	rep := run(t, c, opt)
	f := finding(t, rep, "ledger-no-ttl", "billing")
	if f.Severity != Critical || f.Figures["keys"] != 1 || len(f.Samples) != 1 || f.Samples[0] != "processed:billing:"+old {
		t.Fatalf("finding %+v", f)
	}
	if !strings.Contains(f.Evidence[0], "1 of 2 period sets have no TTL") || !strings.Contains(f.Evidence[1], "period "+old) {
		t.Errorf("evidence %q", f.Evidence)
	}
	quiet(t, rep, "ledger-no-ttl", "ship", StatusOK)
	noCheck(t, rep, "ledger-trim", "billing") // period sets are not trimmed
}

// noCheck asserts the rule did not look at keyspace ks at all.
func noCheck(t *testing.T, rep Report, rule, ks string) {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Rule == rule && c.Keyspace == ks {
			t.Fatalf("%s should not check %q: %+v", rule, ks, c)
		}
	}
}

// With no ledger configured the ledger rules leave no check.
func TestLedgerRulesNeedLedgers(t *testing.T) {
	_, c := redistest.SharedClient(t)
	rep := run(t, c, Options{})
	for _, ch := range rep.Checks {
		if strings.HasPrefix(ch.Rule, "ledger-") {
			t.Fatalf("check %+v without a ledger", ch)
		}
	}
}
