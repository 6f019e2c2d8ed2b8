package config

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/idemctl/idemctl/inspect/glob"
	"github.com/idemctl/idemctl/inspect/streams"
)

// maxStreamDeliveries bounds max_deliveries: a count past it is a typo.
const maxStreamDeliveries = 1_000_000

var placeholder = regexp.MustCompile(`\{[^}]*\}`)

// checkStream checks a kind: stream keyspace's settings: a match, ranges,
// and none of the settings that only records or ledgers have.
func (k *KeyspaceConfig) checkStream() error {
	for _, s := range []struct {
		name string
		set  bool
	}{
		{"preset", k.Preset != ""}, {"schema", k.Schema != ""}, {"key_template", k.KeyTemplate != ""},
		{"reserve_ttl", k.ReserveTTL != 0}, {"retention", k.Retention != 0},
		{"large_response", k.LargeResponse != 0}, {"max_value", k.MaxValue != 0},
		{"window", k.Window != 0}, {"score_unit", k.ScoreUnit != ""}, {"period", k.Period != ""},
	} {
		if s.set {
			return fmt.Errorf("kind stream: %s is not a stream setting (a stream keyspace takes match, groups, processing_timeout, max_deliveries, dead_letter, recovery_consumer, verify)", s.name)
		}
	}
	if k.Match == "" {
		return fmt.Errorf("kind stream: needs match, the SCAN MATCH pattern of the stream keys")
	}
	if k.ProcessingTimeout < 0 {
		return fmt.Errorf("kind stream: processing_timeout must not be negative")
	}
	if k.MaxDeliveries < 0 || k.MaxDeliveries > maxStreamDeliveries {
		return fmt.Errorf("kind stream: max_deliveries %d: want 1 to %d (0: the default, %d)", k.MaxDeliveries, maxStreamDeliveries, streams.DefaultMaxDeliveries)
	}
	seen := map[string]bool{}
	for _, g := range k.Groups {
		if g == "" || seen[g] {
			return fmt.Errorf("kind stream: groups: %q is empty or listed twice", g)
		}
		seen[g] = true
	}
	for _, p := range placeholder.FindAllString(k.DeadLetter, -1) {
		if p != "{stream}" {
			return fmt.Errorf("kind stream: dead_letter %q: unknown placeholder %s (only {stream}, the stream's key)", k.DeadLetter, p)
		}
	}
	if k.DeadLetter != "" && !strings.Contains(k.DeadLetter, "{stream}") && glob.Match(k.Match, k.DeadLetter) {
		return fmt.Errorf("kind stream: dead_letter %q matches %q: dead letters would be read as the keyspace's own stream", k.DeadLetter, k.Match)
	}
	if strings.TrimSpace(k.RecoveryConsumer) != k.RecoveryConsumer {
		return fmt.Errorf("kind stream: recovery_consumer %q has surrounding spaces", k.RecoveryConsumer)
	}
	if k.Verify != nil {
		if err := k.Verify.checkEnv(); err != nil {
			return fmt.Errorf("verify: %v", err)
		}
		if err := k.Verify.hook("").CheckEntry(); err != nil {
			return fmt.Errorf("verify: %v", err)
		}
	}
	return nil
}

// StreamSpaces builds the stream keyspaces a profile reads (all of them
// when it names none), with their defaults filled.
func (c *Config) StreamSpaces(p *Profile) ([]*streams.Space, error) {
	var out []*streams.Space
	for _, name := range c.namesOfKind(p, KindStream) {
		for _, k := range c.Keyspaces {
			if k.Name != name {
				continue
			}
			sp := streams.Space{
				Name: k.Name, Match: k.Match, Groups: append([]string(nil), k.Groups...),
				ProcessingTimeout: k.ProcessingTimeout.D(), MaxDeliveries: int64(k.MaxDeliveries),
				DeadLetter: k.DeadLetter, RecoveryConsumer: k.RecoveryConsumer,
			}.WithDefaults()
			out = append(out, &sp)
		}
	}
	return out, nil
}
