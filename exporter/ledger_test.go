package exporter

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemctl/idemctl/inspect/ledger"
	"github.com/idemctl/idemctl/internal/testkit/promtest"
)

func TestLedgerGaugesAndGrowth(t *testing.T) {
	zs, _ := ledger.New(ledger.Spec{Name: "billing", Preset: ledger.ZSetWindow})
	sets, _ := ledger.New(ledger.Spec{Name: "ship", Preset: ledger.SetPerPeriod})
	c, e := ownExporter(t, func(cfg *Config) { cfg.Ledgers = []*ledger.Ledger{zs, sets} })
	ctx := t.Context()
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	add := func(from, to int, age time.Duration) {
		for i := from; i < to; i++ {
			c.ZAdd(ctx, "dedupe:billing", redis.Z{Score: float64(now.Add(-age).UnixMilli()), Member: fmt.Sprint("evt-", i)})
		}
	}
	add(0, 5, 11*24*time.Hour)
	add(5, 10, time.Minute)
	c.SAdd(ctx, "processed:ship:"+now.UTC().AddDate(0, 0, -3).Format("2006-01-02"), "a", "b")
	m := scanned(t, e)
	promtest.Expect(t, m, map[string]float64{
		"idemctl_ledger_keys{keyspace=billing}":                                       1,
		"idemctl_ledger_members{keyspace=billing}":                                    10,
		"idemctl_ledger_members_growth{keyspace=billing}":                             0,
		"idemctl_ledger_past_window_entries{keyspace=billing}":                        5,
		"idemctl_ledger_window_seconds{keyspace=billing}":                             86400,
		"idemctl_ledger_no_ttl_keys{keyspace=ship}":                                   1,
		"idemctl_ledger_past_window_entries{keyspace=ship}":                           2,
		"idemctl_doctor_finding{keyspace=billing,rule=ledger-trim,severity=critical}": 1,
		"idemctl_doctor_finding{keyspace=ship,rule=ledger-no-ttl,severity=critical}":  1,
	})
	if age := m["idemctl_ledger_oldest_entry_age_seconds{keyspace=billing}"]; age < 11*86400 || age > 11*86400+30 {
		t.Errorf("oldest age %v s", age)
	}
	if m["idemctl_ledger_memory_bytes{keyspace=billing}"] <= 0 {
		t.Errorf("memory %v", m["idemctl_ledger_memory_bytes{keyspace=billing}"])
	}
	add(10, 13, 0)
	m = scanned(t, e)
	if m["idemctl_ledger_members_growth{keyspace=billing}"] != 3 || m["idemctl_ledger_members{keyspace=billing}"] != 13 {
		t.Errorf("growth %v members %v, want 3 and 13", m["idemctl_ledger_members_growth{keyspace=billing}"], m["idemctl_ledger_members{keyspace=billing}"])
	}
}
