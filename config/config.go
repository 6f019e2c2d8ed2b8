// Package config reads idemctl's YAML configuration: named profiles
// (connection, writes policy, scan throttle) and keyspaces (pattern, schema,
// key template, timing policy). Errors name the line.
//
// Floor 4 of ARCHITECTURE.md: it may import floors 0–3 (foundations, engine,
// writes and rules, hooks), never the command layer.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/safefile"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/internal/xdg"
	"github.com/idemctl/idemctl/internal/yamldoc"
)

// Config is the whole file.
type Config struct {
	DefaultProfile string                     `yaml:"default_profile"`
	Profiles       map[string]*Profile        `yaml:"profiles"`
	Keyspaces      []KeyspaceConfig           `yaml:"keyspaces"`
	Schemas        map[string]*inspect.Schema `yaml:"schemas"`
	Doctor         DoctorConfig               `yaml:"doctor"` // doctor.go

	Path  string `yaml:"-"`
	lines lineIndex
}

// Profile is one Redis deployment and how idemctl may treat it.
type Profile struct {
	Mode                string         `yaml:"mode"`  // standalone (default), cluster or sentinel
	Addrs               []string       `yaml:"addrs"` // more cluster seeds, or the sentinels
	MasterName          string         `yaml:"master_name"`
	SentinelPasswordEnv string         `yaml:"sentinel_password_env"`
	ReadFromReplicas    bool           `yaml:"read_from_replicas"`
	URL                 string         `yaml:"url"`
	User                string         `yaml:"user"`
	PasswordEnv         string         `yaml:"password_env"`
	PasswordFile        string         `yaml:"password_file"`
	TLSCA               string         `yaml:"tls_ca"`
	TLSInsecure         bool           `yaml:"tls_insecure"`
	DialTimeout         units.Duration `yaml:"dial_timeout"`
	ReadTimeout         units.Duration `yaml:"read_timeout"`
	Writes              bool           `yaml:"writes"`
	Protected           bool           `yaml:"protected"`
	AuditLog            string         `yaml:"audit_log"`
	AuditStream         string         `yaml:"audit_stream"` // also XADD each audit entry here
	Keyspaces           []string       `yaml:"keyspaces"`    // names; empty means all
	Scan                ScanConfig     `yaml:"scan"`
	// Where `idemctl exporter` serves metrics (loopback unless --listen-any),
	// and the time between its scans.
	Listen           string         `yaml:"listen"`
	ExporterInterval units.Duration `yaml:"exporter_interval"`

	// The audit log keeps values up to AuditMaxValue bytes (0: 1 KiB) and,
	// only with AuditPayloads, response bodies; the rest by length and digest.
	AuditMaxValue units.ByteSize `yaml:"audit_max_value"`
	AuditPayloads bool           `yaml:"audit_payloads"`
}

// ScanConfig throttles scans against this profile.
type ScanConfig struct {
	Count      int            `yaml:"count"`
	KeysPerSec int            `yaml:"keys_per_sec"`
	Pause      units.Duration `yaml:"pause"`
	// MaxLatency is a latency budget instead of a fixed throttle: what
	// another client may wait behind a scan, above the idle level.
	MaxLatency units.Duration `yaml:"max_latency"`
	MaxKeys    int64          `yaml:"max_keys"`
	NoMemory   bool           `yaml:"no_memory"`
	MaxNodes   int            `yaml:"max_nodes"`
	// ResponseSizes measures every record's response size (one more
	// command per key) instead of only records that could hold a large one.
	ResponseSizes bool `yaml:"response_sizes"`
	// ReadPath: auto, client or script (see --read-path).
	ReadPath string `yaml:"read_path"`
}

// KeyspaceConfig is one keyspace as written in the file.
type KeyspaceConfig struct {
	Name              string         `yaml:"name"`
	Match             string         `yaml:"match"`
	Preset            string         `yaml:"preset"`
	Schema            string         `yaml:"schema"`
	KeyTemplate       string         `yaml:"key_template"`
	ProcessingTimeout units.Duration `yaml:"processing_timeout"`
	ReserveTTL        units.Duration `yaml:"reserve_ttl"`
	Retention         units.Duration `yaml:"retention"`
	LargeResponse     units.ByteSize `yaml:"large_response"`
	MaxValue          units.ByteSize `yaml:"max_value"`
	Verify            *VerifyConfig  `yaml:"verify"` // verify.go

	// Kind: records (the default: idempotency records, read by scan,
	// stats and the TUI), stream (consumer groups' pending entries,
	// stream.go) or ledger (dedupe ledgers of processed event IDs,
	// ledger.go). ProcessingTimeout is a stream group's stale threshold.
	Kind string `yaml:"kind"`
	// kind: stream
	Groups           []string `yaml:"groups"`            // only these groups (default: all)
	MaxDeliveries    int      `yaml:"max_deliveries"`    // delivered more often: poison
	DeadLetter       string   `yaml:"dead_letter"`       // dead-letter stream, {stream} allowed
	RecoveryConsumer string   `yaml:"recovery_consumer"` // who retried entries are claimed to
	// kind: ledger
	Window    units.Duration `yaml:"window"`     // how long an entry is meant to be kept
	ScoreUnit string         `yaml:"score_unit"` // zset ledgers: what a score counts (s, ms)
	Period    string         `yaml:"period"`     // set-per-period ledgers: the {period} capture's layout
}

// DefaultPath is $XDG_CONFIG_HOME/idemctl/config.yaml (or ~/.config/…),
// "" when neither is set; getenv is the caller's view of the environment.
func DefaultPath(getenv func(string) string) string {
	return xdg.Path(getenv, "XDG_CONFIG_HOME", ".config", "config.yaml")
}

// ErrNotFound is returned by Load for a missing file.
var ErrNotFound = errors.New("config file not found")

// Load reads and checks a config file.
func Load(path string) (*Config, error) {
	data, err := safefile.Read(path, safefile.MaxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	c.Path = path
	return c, nil
}

// Parse decodes and checks a config document.
func Parse(data []byte) (*Config, error) {
	c := &Config{}
	root, err := yamldoc.Decode(data, c)
	if err != nil {
		return nil, err
	}
	c.lines = indexLines(root) // an empty file is an empty config
	if err := c.check(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) check() error {
	for name, s := range c.Schemas {
		if s == nil {
			return fmt.Errorf("line %d: schema %s is empty", c.lines.at("schemas", name), name)
		}
		s.Name = name
		if err := s.Compile(); err != nil {
			return fmt.Errorf("line %d: %v", c.lines.at("schemas", name), err)
		}
	}
	names := map[string]bool{}
	for i := range c.Keyspaces {
		k := &c.Keyspaces[i]
		line := c.lines.at("keyspaces", fmt.Sprint(i))
		if k.Name == "" {
			return fmt.Errorf("line %d: keyspace needs a name", line)
		}
		if names[k.Name] {
			return fmt.Errorf("line %d: keyspace %q defined twice", line, k.Name)
		}
		names[k.Name] = true
		switch k.Kind {
		case "", KindRecords:
		case KindStream:
			if err := k.checkStream(); err != nil {
				return fmt.Errorf("line %d: keyspace %s: %v", line, k.Name, err)
			}
			continue
		case KindLedger:
			if err := k.checkLedger(); err != nil {
				return fmt.Errorf("line %d: keyspace %s: %v", line, k.Name, err)
			}
			continue
		default:
			return fmt.Errorf("line %d: keyspace %s: kind %q: want %s, %s or %s", line, k.Name, k.Kind, KindRecords, KindStream, KindLedger)
		}
		ks, err := c.Keyspace(k.Name)
		if err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
		if err := k.Verify.check(ks); err != nil {
			return fmt.Errorf("line %d: keyspace %s: verify: %v", c.lines.atOr(line, "keyspaces", fmt.Sprint(i), "verify"), k.Name, err)
		}
	}
	for name, p := range c.Profiles {
		if p == nil {
			c.Profiles[name] = &Profile{}
			continue
		}
		line := c.lines.at("profiles", name)
		for _, ks := range p.Keyspaces {
			if !names[ks] {
				return fmt.Errorf("line %d: profile %s: unknown keyspace %q", line, name, ks)
			}
		}
		if p.PasswordEnv != "" && p.PasswordFile != "" {
			return fmt.Errorf("line %d: profile %s: set password_env or password_file, not both", line, name)
		}
		if p.Scan.Count < 0 || p.Scan.KeysPerSec < 0 || p.Scan.MaxKeys < 0 {
			return fmt.Errorf("line %d: profile %s: scan settings must not be negative", line, name)
		}
		if p.Scan.ReadPath != "" && !slices.Contains(inspect.ReadPaths, p.Scan.ReadPath) {
			return fmt.Errorf("line %d: profile %s: scan.read_path %q: want %s", line, name, p.Scan.ReadPath, strings.Join(inspect.ReadPaths, ", "))
		}
		if p.Scan.Count > inspect.MaxScanCount || p.Scan.KeysPerSec > inspect.MaxKeysPerSec || p.Scan.MaxNodes > inspect.MaxScanNodes || p.Scan.MaxNodes < 0 {
			return fmt.Errorf("line %d: profile %s: scan settings out of range (count at most %d, keys_per_sec at most %d, max_nodes 0 to %d)",
				line, name, inspect.MaxScanCount, inspect.MaxKeysPerSec, inspect.MaxScanNodes)
		}
	}
	if err := c.checkDoctor(); err != nil {
		return err
	}
	if c.DefaultProfile != "" && c.Profiles[c.DefaultProfile] == nil {
		return fmt.Errorf("line %d: default_profile %q is not a profile (have: %s)", c.lines.at("default_profile", ""), c.DefaultProfile, strings.Join(c.ProfileNames(), ", "))
	}
	return nil
}

// SchemaByName resolves a config schema or, failing that, a preset.
func (c *Config) SchemaByName(name string) (*inspect.Schema, error) {
	if c != nil {
		if s, ok := c.Schemas[name]; ok {
			cp := *s
			return &cp, nil
		}
	}
	return inspect.Preset(name)
}

// Keyspace builds the named keyspace.
func (c *Config) Keyspace(name string) (*inspect.Keyspace, error) {
	for _, k := range c.Keyspaces {
		if k.Name != name {
			continue
		}
		if k.Kind != "" && k.Kind != KindRecords {
			return nil, fmt.Errorf("keyspace %s holds %s entries, not records: read it with idemctl %ss", name, k.Kind, k.Kind)
		}
		var schema *inspect.Schema
		var err error
		switch {
		case k.Preset != "" && k.Schema != "":
			return nil, fmt.Errorf("keyspace %s: set preset or schema, not both", name)
		case k.Preset != "":
			schema, err = inspect.Preset(k.Preset)
		case k.Schema != "":
			s, ok := c.Schemas[k.Schema]
			if !ok {
				return nil, fmt.Errorf("keyspace %s: unknown schema %q", name, k.Schema)
			}
			cp := *s
			schema = &cp
		default:
			return nil, fmt.Errorf("keyspace %s: needs a preset or a schema", name)
		}
		if err != nil {
			return nil, fmt.Errorf("keyspace %s: %v", name, err)
		}
		return inspect.NewKeyspace(inspect.KeyspaceSpec{
			Name: k.Name, Match: k.Match, Schema: schema, KeyTemplate: k.KeyTemplate,
			ProcessingTimeout: k.ProcessingTimeout.D(), ReserveTTL: k.ReserveTTL.D(),
			Retention: k.Retention.D(), LargeResponse: int64(k.LargeResponse), MaxValue: int64(k.MaxValue),
		})
	}
	return nil, fmt.Errorf("unknown keyspace %q", name)
}

// Kinds of keyspace.
const (
	KindRecords = "records"
	KindStream  = "stream"
	KindLedger  = "ledger"
)

// kindOf is the named keyspace's kind (records when unset or unknown).
func (c *Config) kindOf(name string) string {
	for _, k := range c.Keyspaces {
		if k.Name == name && k.Kind != "" {
			return k.Kind
		}
	}
	return KindRecords
}

// namesOfKind lists the keyspaces of one kind a profile reads (all of
// that kind when the profile names none).
func (c *Config) namesOfKind(p *Profile, kind string) []string {
	var out []string
	for _, k := range c.Keyspaces {
		if c.kindOf(k.Name) == kind && (p == nil || len(p.Keyspaces) == 0 || slices.Contains(p.Keyspaces, k.Name)) {
			out = append(out, k.Name)
		}
	}
	return out
}

// MessageKeyspaces lists the stream and ledger keyspaces a profile reads:
// what a command that needs records says to read instead.
func (c *Config) MessageKeyspaces(p *Profile) []string {
	return append(c.namesOfKind(p, KindStream), c.namesOfKind(p, KindLedger)...)
}

// ProfileNames lists the profiles, sorted.
func (c *Config) ProfileNames() []string {
	var out []string
	for n := range c.Profiles {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Profile returns the named profile; "" means the default profile (or none).
func (c *Config) Profile(name string) (string, *Profile, error) {
	if name == "" {
		name = c.DefaultProfile
	}
	if name == "" {
		return "", &Profile{}, nil
	}
	p, ok := c.Profiles[name]
	if !ok {
		have := strings.Join(c.ProfileNames(), ", ")
		if have == "" {
			have = "none"
		}
		return "", nil, fmt.Errorf("unknown profile %q (have: %s)", name, have)
	}
	return name, p, nil
}

// KeyspacesFor builds the keyspaces a profile scans.
func (c *Config) KeyspacesFor(p *Profile) ([]*inspect.Keyspace, error) {
	var names []string
	if p != nil && len(p.Keyspaces) > 0 {
		names = p.Keyspaces
	} else {
		for _, k := range c.Keyspaces {
			names = append(names, k.Name)
		}
	}
	out := make([]*inspect.Keyspace, 0, len(names))
	for _, n := range names {
		if c.kindOf(n) != KindRecords {
			continue // streams and ledgers have their own commands
		}
		ks, err := c.Keyspace(n)
		if err != nil {
			return nil, err
		}
		out = append(out, ks)
	}
	return out, nil
}

// lineIndex maps "section/name" to the line where that entry starts, and
// "section/" to the line of the section's key (see yamldoc.Index).
type lineIndex yamldoc.Lines

func indexLines(root *yaml.Node) lineIndex { return lineIndex(yamldoc.Index(root)) }

func (l lineIndex) at(section, name string) int { return l[section+"/"+name] }

// atOr is the line of a key inside an entry (section/name/key), or def.
func (l lineIndex) atOr(def int, section, name, key string) int {
	if n, ok := l[section+"/"+name+"/"+key]; ok {
		return n
	}
	return def
}
