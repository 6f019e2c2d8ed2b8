package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/idemctl/idemctl/inspect/ledger"
)

// A kind: ledger keyspace is a dedupe ledger of processed event IDs:
//
//	preset: zset-window     one sorted set per consumer, scores = processing
//	                        time (score_unit: ms, the default, or s), trimmed
//	                        to window (default 24h); match defaults to dedupe:*
//	preset: set-per-period  one set per consumer per period; key_template
//	                        must capture {period} (default
//	                        processed:{consumer}:{period}), period is that
//	                        capture's Go time layout read in UTC (default
//	                        2006-01-02, hourly 2006-01-02T15), window is a
//	                        set's intended life (default 48h)

// checkLedger checks a kind: ledger keyspace's settings: a ledger preset,
// none of the records' or streams' settings, and what the preset needs.
func (k *KeyspaceConfig) checkLedger() error {
	if k.Preset == "" {
		return fmt.Errorf("a ledger needs a preset: %s", strings.Join(ledger.PresetNames(), " or "))
	}
	if bad := k.notLedgerSettings(); len(bad) > 0 {
		return fmt.Errorf("%s: not a ledger setting (ledgers take preset, match, key_template, window, score_unit, period)", strings.Join(bad, ", "))
	}
	_, err := ledger.New(k.ledgerSpec())
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "ledger "+k.Name+": ")) // check() names the keyspace
	}
	return nil
}

// notLedgerSettings names the records-only and stream-only settings set.
func (k *KeyspaceConfig) notLedgerSettings() []string {
	var out []string
	for _, s := range []struct {
		name string
		set  bool
	}{
		{"schema", k.Schema != ""}, {"processing_timeout", k.ProcessingTimeout != 0}, {"reserve_ttl", k.ReserveTTL != 0},
		{"retention", k.Retention != 0}, {"large_response", k.LargeResponse != 0}, {"max_value", k.MaxValue != 0},
		{"verify", k.Verify != nil}, {"groups", len(k.Groups) > 0}, {"max_deliveries", k.MaxDeliveries != 0},
		{"dead_letter", k.DeadLetter != ""}, {"recovery_consumer", k.RecoveryConsumer != ""},
	} {
		if s.set {
			out = append(out, s.name)
		}
	}
	return out
}

func (k *KeyspaceConfig) ledgerSpec() ledger.Spec {
	return ledger.Spec{Name: k.Name, Preset: k.Preset, Match: k.Match, Window: k.Window.D(),
		ScoreUnit: k.ScoreUnit, KeyTemplate: k.KeyTemplate, Period: k.Period}
}

// Ledgers builds the ledger keyspaces a profile reads (all of them when
// the profile names none).
func (c *Config) Ledgers(p *Profile) ([]*ledger.Ledger, error) {
	var out []*ledger.Ledger
	for _, name := range c.namesOfKind(p, KindLedger) {
		for i := range c.Keyspaces {
			if k := &c.Keyspaces[i]; k.Name == name {
				l, err := ledger.New(k.ledgerSpec())
				if err != nil {
					return nil, err
				}
				out = append(out, l)
			}
		}
	}
	return out, nil
}
