package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/idemctl/idemctl/doctor"
	"github.com/idemctl/idemctl/internal/units"
)

// DoctorConfig tunes `idemctl doctor` and the exporter's doctor metrics, and
// silences findings deliberately: each silence names its rule, optionally a
// keyspace, and a reason (required, shown beside the silenced finding).
type DoctorConfig struct {
	RetryHorizon units.Duration   `yaml:"retry_horizon"`
	RequireFsync string           `yaml:"require_fsync"`
	Silence      []doctor.Silence `yaml:"silence"`
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
		case !slices.Contains(doctor.RuleIDs(), s.Rule):
			return fmt.Errorf("line %d: doctor.silence[%d]: unknown rule %q (rules: %s)", at("rule"), i, s.Rule, strings.Join(doctor.RuleIDs(), ", "))
		case strings.TrimSpace(s.Reason) == "":
			return fmt.Errorf("line %d: doctor.silence[%d] (%s): a reason is required: say why this finding is accepted", at("reason"), i, s.Rule)
		case s.Keyspace != "" && len(names) > 0 && !names[s.Keyspace]:
			return fmt.Errorf("line %d: doctor.silence[%d] (%s): unknown keyspace %q", at("keyspace"), i, s.Rule, s.Keyspace)
		}
	}
	return nil
}

// DoctorOptions are the doctor settings of the file, for the command and
// the exporter; flags given on the command line win (the caller applies
// them).
func (c *Config) DoctorOptions() doctor.Options {
	if c == nil {
		return doctor.Options{}
	}
	return doctor.Options{RetryHorizon: c.Doctor.RetryHorizon.D(), RequireFsync: c.Doctor.RequireFsync, Silence: c.Doctor.Silence}
}
