// Package config reads idemctl's YAML configuration: named profiles
// (connection, writes policy, scan throttle) and keyspaces (pattern, schema,
// key template, timing policy). Errors name the line.
//
// Floor 2 of ARCHITECTURE.md: it imports the read engine (schemas,
// keyspaces, the hook rules of verify/hookspec) and the foundations, never
// the doctor, the hooks' runner or anything above: the command layer
// hands it the doctor's rule names and turns its settings into what each
// service takes (cli/config_bridge.go).
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

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
	// What the keyspace's library was configured with, for idemctl find
	// (Powertools: its key prefix, eventKeyJmesPath, hashFunction and
	// payloadValidationJmesPath).
	FunctionName              string `yaml:"function_name"`
	EventKeyJMESPath          string `yaml:"event_key_jmespath"`
	PayloadValidationJMESPath string `yaml:"payload_validation_jmespath"`
	HashFunction              string `yaml:"hash_function"`
	Runtime                   string `yaml:"runtime"` // typescript or python
	// fastapi-idempotency: the variable holding the app's secret=, for its
	// HMAC-SHA256 fingerprints.
	HMACSecretEnv string `yaml:"hmac_secret_env"`

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
	for _, name := range sortedKeys(c.Schemas) {
		s := c.Schemas[name]
		line := c.lines.at("schemas", name)
		if s == nil {
			return fmt.Errorf("line %d: schema %s is empty", line, name)
		}
		s.Name = name
		if err := s.Compile(); err != nil {
			msg := strings.TrimPrefix(err.Error(), "schema "+name+": ")
			return fmt.Errorf("line %d: %v", c.lines.blame(line, "schemas/"+name, msg), err)
		}
	}
	names := map[string]bool{}
	for i := range c.Keyspaces {
		if err := c.checkKeyspace(i, names); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(c.Profiles) {
		if err := c.checkProfile(name, names); err != nil {
			return err
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

// checkKeyspace checks the i-th keyspace; names collects the names seen.
// Each error names the line of the setting at fault (blame), the
// keyspace's first line only when no one setting is.
func (c *Config) checkKeyspace(i int, names map[string]bool) error {
	k := &c.Keyspaces[i]
	base := "keyspaces/" + strconv.Itoa(i)
	line := c.lines[base]
	if k.Name == "" {
		return fmt.Errorf("line %d: keyspace needs a name", line)
	}
	if names[k.Name] {
		return fmt.Errorf("line %d: keyspace %q defined twice", c.lines.path(line, base, "name"), k.Name)
	}
	names[k.Name] = true
	// fault is the error err of this keyspace, at the setting it names.
	fault := func(err error) error {
		msg := strings.TrimPrefix(err.Error(), "keyspace "+k.Name+": ")
		return fmt.Errorf("line %d: keyspace %s: %s", c.lines.blame(line, base, strings.TrimPrefix(msg, "kind stream: ")), k.Name, msg)
	}
	switch k.Kind {
	case "", KindRecords:
	case KindStream:
		if err := k.checkStream(); err != nil {
			return fault(err)
		}
		return nil
	case KindLedger:
		if err := k.checkLedger(); err != nil {
			return fault(err)
		}
		return nil
	default:
		return fmt.Errorf("line %d: keyspace %s: kind %q: want %s, %s or %s", c.lines.path(line, base, "kind"), k.Name, k.Kind, KindRecords, KindStream, KindLedger)
	}
	ks, err := c.Keyspace(k.Name)
	if err != nil {
		return fault(err)
	}
	if err := k.Verify.check(ks); err != nil {
		return fault(fmt.Errorf("verify: %v", err))
	}
	return nil
}

// checkProfile checks the named profile against the keyspaces in names.
func (c *Config) checkProfile(name string, names map[string]bool) error {
	p := c.Profiles[name]
	if p == nil {
		c.Profiles[name] = &Profile{}
		return nil
	}
	line := c.lines.at("profiles", name)
	at := func(parts ...string) int { return c.lines.path(line, append([]string{"profiles", name}, parts...)...) }
	for j, ks := range p.Keyspaces {
		if !names[ks] {
			return fmt.Errorf("line %d: profile %s: unknown keyspace %q", at("keyspaces", strconv.Itoa(j)), name, ks)
		}
	}
	if p.PasswordEnv != "" && p.PasswordFile != "" {
		return fmt.Errorf("line %d: profile %s: set password_env or password_file, not both", max(at("password_env"), at("password_file")), name)
	}
	for _, s := range []struct {
		key      string
		val, max int64
	}{
		{"count", int64(p.Scan.Count), inspect.MaxScanCount},
		{"keys_per_sec", int64(p.Scan.KeysPerSec), inspect.MaxKeysPerSec},
		{"max_keys", p.Scan.MaxKeys, math.MaxInt64},
		{"max_nodes", int64(p.Scan.MaxNodes), inspect.MaxScanNodes},
	} {
		if s.val < 0 {
			return fmt.Errorf("line %d: profile %s: scan settings must not be negative (scan.%s is %d)", at("scan", s.key), name, s.key, s.val)
		}
		if s.val > s.max {
			return fmt.Errorf("line %d: profile %s: scan settings out of range (count at most %d, keys_per_sec at most %d, max_nodes 0 to %d)",
				at("scan", s.key), name, inspect.MaxScanCount, inspect.MaxKeysPerSec, inspect.MaxScanNodes)
		}
	}
	if p.Scan.ReadPath != "" && !slices.Contains(inspect.ReadPaths, p.Scan.ReadPath) {
		return fmt.Errorf("line %d: profile %s: scan.read_path %q: want %s", at("scan", "read_path"), name, p.Scan.ReadPath, strings.Join(inspect.ReadPaths, ", "))
	}
	return nil
}

// sortedKeys lists a map's names in order, so the first error of a file
// is the same on every run.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
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
