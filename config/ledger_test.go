package config

import (
	"strings"
	"testing"
	"time"

	"github.com/idemctl/idemctl/inspect/ledger"
)

func TestLedgerKeyspaces(t *testing.T) {
	c, err := Parse([]byte(`
profiles:
  p: {keyspaces: [orders, daily]}
keyspaces:
  - {name: orders, preset: atlasmart}
  - name: zs
    kind: ledger
    preset: zset-window
    score_unit: s
  - name: daily
    kind: ledger
    preset: set-per-period
    key_template: "seen:{consumer}:{period}"
    match: "seen:*"
    period: 2006-01-02T15
    window: 3h
`))
	if err != nil {
		t.Fatal(err)
	}
	all, err := c.Ledgers(nil)
	if err != nil || len(all) != 2 {
		t.Fatalf("ledgers: %v %d", err, len(all))
	}
	zs := all[0]
	if zs.Name != "zs" || zs.Shape != ledger.ZSetWindow || zs.Match != "dedupe:*" || zs.Window != 24*time.Hour || zs.ScoreUnit != "s" {
		t.Errorf("zset ledger with preset defaults: %+v", zs)
	}
	some, err := c.Ledgers(c.Profiles["p"])
	if err != nil || len(some) != 1 {
		t.Fatalf("profile's ledgers: %v %d", err, len(some))
	}
	d := some[0]
	if d.Name != "daily" || d.Template.String() != "seen:{consumer}:{period}" || d.Period != "2006-01-02T15" || d.Window != 3*time.Hour {
		t.Errorf("period ledger: %+v", d)
	}
	kss, err := c.KeyspacesFor(nil)
	if err != nil || len(kss) != 1 || kss[0].Name != "orders" {
		t.Errorf("record keyspaces leave ledgers out: %v %d", err, len(kss))
	}
}

func TestLedgerRefusesOtherKindsSettings(t *testing.T) {
	for doc, want := range map[string]string{
		"keyspaces:\n  - {name: l, kind: ledger}\n":                                                    "line 2: keyspace l: a ledger needs a preset: set-per-period or zset-window",
		"keyspaces:\n  - {name: l, kind: ledger, preset: atlasmart}\n":                                 `line 2: keyspace l: unknown ledger preset "atlasmart"`,
		"keyspaces:\n  - {name: l, kind: ledger, preset: zset-window, retention: 1h, groups: [g]}\n":   "line 2: keyspace l: retention, groups: not a ledger setting",
		"keyspaces:\n  - {name: l, kind: ledger, preset: zset-window, score_unit: us}\n":               `line 2: keyspace l: score_unit "us": want ms or s`,
		"keyspaces:\n  - {name: l, kind: ledger, preset: set-per-period, key_template: \"p:{day}\"}\n": `must capture {period}`,
		"keyspaces:\n  - {name: l, kind: ledger, preset: set-per-period, window: -1h}\n":               "negative duration",
	} {
		_, err := Parse([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", doc, err, want)
		}
	}
}

func TestExampleConfigHasALedger(t *testing.T) {
	c, _ := exampleConfig(t)
	ls, err := c.Ledgers(nil)
	if err != nil || len(ls) != 1 || ls[0].Name != "billing-dedupe" || ls[0].Match != "dedupe:billing:*" || ls[0].ScoreUnit != "ms" {
		t.Fatalf("example ledger: %v %+v", err, ls)
	}
}
