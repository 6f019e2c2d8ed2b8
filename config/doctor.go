package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/idemctl/idemctl/internal/units"
)

// DoctorConfig tunes `idemctl doctor` and the exporter's doctor metrics, and
// silences findings deliberately: each silence names its rule, optionally a
// keyspace, and a reason (required, shown beside the silenced finding).
type DoctorConfig struct {
	RetryHorizon units.Duration `yaml:"retry_horizon"`
	RequireFsync string         `yaml:"require_fsync"`
	Silence      []Silence      `yaml:"silence"`
}

// Silence accepts one doctor rule's findings, optionally in one keyspace,
// for a reason shown beside each.
type Silence struct {
	Rule     string `yaml:"rule" json:"rule"`
	Keyspace string `yaml:"keyspace" json:"keyspace,omitempty"`
	Reason   string `yaml:"reason" json:"reason"`
}

func (c *Config) checkDoctor() error {
	d := &c.Doctor
	line := c.lines.at("doctor", "silence")
	if d.RequireFsync != "" && !slices.Contains([]string{"always", "everysec", "no"}, d.RequireFsync) {
		return fmt.Errorf("line %d: doctor.require_fsync %q: want always, everysec or no", c.lines.at("doctor", "require_fsync"), d.RequireFsync)
	}
	names := map[string]bool{}
	for _, k := range c.Keyspaces {
		names[k.Name] = true
	}
	for i, s := range d.Silence {
		entry := c.lines.path(line, "doctor", "silence", strconv.Itoa(i))
		at := func(key string) int { return c.lines.path(entry, "doctor", "silence", strconv.Itoa(i), key) }
		switch {
		case strings.TrimSpace(s.Reason) == "":
			return fmt.Errorf("line %d: doctor.silence[%d] (%s): a reason is required: say why this finding is accepted", at("reason"), i, s.Rule)
		case s.Keyspace != "" && len(names) > 0 && !names[s.Keyspace]:
			return fmt.Errorf("line %d: doctor.silence[%d] (%s): unknown keyspace %q", at("keyspace"), i, s.Rule, s.Keyspace)
		}
	}
	return nil
}

// CheckSilences names the silence whose rule is not one of rules (the
// doctor's, which the config does not know: the caller passes them in),
// by its line.
func (c *Config) CheckSilences(rules []string) error {
	if c == nil {
		return nil
	}
	line := c.lines.at("doctor", "silence")
	for i, s := range c.Doctor.Silence {
		if !slices.Contains(rules, s.Rule) {
			entry := c.lines.path(line, "doctor", "silence", strconv.Itoa(i))
			at := c.lines.path(entry, "doctor", "silence", strconv.Itoa(i), "rule")
			return fmt.Errorf("line %d: doctor.silence[%d]: unknown rule %q (rules: %s)", at, i, s.Rule, strings.Join(rules, ", "))
		}
	}
	return nil
}
