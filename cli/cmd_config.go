package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/cli/docgen"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/verify"
)

func newConfigCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "config COMMAND",
		Short: "which config file is in effect (config path) and what it resolves to (config view)",
		Long: "Which config file idemctl reads, and what the profile, keyspaces and scan settings\n" +
			"resolve to once the environment and flags are applied. Secrets are never shown.",
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return pflag.ErrHelp },
	}
	c.AddCommand(leaf(a, "config-path", &configPathCmd{}), leaf(a, "config-view", &configViewCmd{}))
	return c
}

// configPathView is config path -o json.
type configPathView struct {
	Path   string `json:"path"`   // "" when no default can be named
	From   string `json:"from"`   // --config, IDEMCTL_CONFIG or default
	Exists bool   `json:"exists"` // an absent default file is fine; an absent named one is an error elsewhere
}

// configPathCmd names the config file in effect.
type configPathCmd struct{ configPath, output string }

func (o *configPathCmd) flags(fs *pflag.FlagSet) {
	outputFlag(fs, &o.output, "text", "text or json", "text", "json")
	registerGroup(fs, docgen.GroupConnection, func(fs *pflag.FlagSet) {
		fs.StringVar(&o.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/idemctl/config.yaml)")
	})
}

func (o *configPathCmd) run(_ context.Context, a *app, _ []string) error {
	f := a.configFile(o.configPath)
	v := configPathView{Path: f.path, From: f.from}
	if f.path != "" {
		_, err := os.Stat(f.path)
		v.Exists = err == nil
	}
	if o.output == "json" {
		return writeJSON(a, v)
	}
	if o.output != "text" {
		return usageErr("--output %q: want text or json", o.output)
	}
	if v.Path == "" {
		fmt.Fprintln(a.stdout, "(none: neither --config, $IDEMCTL_CONFIG, $XDG_CONFIG_HOME nor $HOME is set)")
		return nil
	}
	exists := "yes"
	if !v.Exists {
		exists = "no"
	}
	fmt.Fprintf(a.stdout, "%s\n  from:   %s\n  exists: %s\n", v.Path, configFromText(v.From), exists)
	return nil
}

func configFromText(from string) string {
	switch from {
	case "--config":
		return "the --config flag"
	case "default":
		return "the default location ($XDG_CONFIG_HOME, else ~/.config)"
	}
	return "$" + from
}

// configView is the effective configuration: the file, the environment and
// the flags merged, as a command run with the same flags would use it.
// It holds no secret: a password is shown only as where it comes from.
type configView struct {
	File       string         `json:"file" yaml:"file"`
	From       string         `json:"from" yaml:"from"`
	Profile    string         `json:"profile" yaml:"profile"`
	Profiles   []string       `json:"profiles" yaml:"profiles"`
	Connection connectionView `json:"connection" yaml:"connection"`
	Writes     writesView     `json:"writes" yaml:"writes"`
	Scan       scanView       `json:"scan" yaml:"scan"`
	Keyspaces  []keyspaceView `json:"keyspaces" yaml:"keyspaces"`
	Streams    []streamView   `json:"streams,omitempty" yaml:"streams,omitempty"` // config_messages.go
	Ledgers    []ledgerView   `json:"ledgers,omitempty" yaml:"ledgers,omitempty"`
	Schemas    []string       `json:"schemas,omitempty" yaml:"schemas,omitempty"`
}

type connectionView struct {
	URL              string   `json:"url" yaml:"url"`
	Mode             string   `json:"mode" yaml:"mode"`
	Addrs            []string `json:"addrs,omitempty" yaml:"addrs,omitempty"`
	SentinelMaster   string   `json:"sentinel_master,omitempty" yaml:"sentinel_master,omitempty"`
	User             string   `json:"user,omitempty" yaml:"user,omitempty"`
	Password         string   `json:"password" yaml:"password"` // where it comes from, never the value
	TLSCA            string   `json:"tls_ca,omitempty" yaml:"tls_ca,omitempty"`
	TLSInsecure      bool     `json:"tls_insecure" yaml:"tls_insecure"`
	DialTimeout      string   `json:"dial_timeout" yaml:"dial_timeout"`
	ReadTimeout      string   `json:"read_timeout" yaml:"read_timeout"`
	ReadFromReplicas bool     `json:"read_from_replicas" yaml:"read_from_replicas"`
}

type writesView struct {
	Enabled     bool   `json:"enabled" yaml:"enabled"`
	Protected   bool   `json:"protected" yaml:"protected"`
	AuditLog    string `json:"audit_log" yaml:"audit_log"`
	AuditStream string `json:"audit_stream,omitempty" yaml:"audit_stream,omitempty"`
}

type scanView struct {
	Count         int    `json:"count" yaml:"count"`
	MaxKeys       int64  `json:"max_keys" yaml:"max_keys"`
	KeysPerSec    int    `json:"keys_per_sec" yaml:"keys_per_sec"`
	Pause         string `json:"pause" yaml:"pause"`
	MaxLatency    string `json:"max_latency" yaml:"max_latency"`
	InFlight      int    `json:"in_flight" yaml:"in_flight"`
	MaxNodes      int    `json:"max_nodes" yaml:"max_nodes"`
	NoMemory      bool   `json:"no_memory" yaml:"no_memory"`
	ResponseSizes bool   `json:"response_sizes" yaml:"response_sizes"`
	ReadPath      string `json:"read_path" yaml:"read_path"`
}

type keyspaceView struct {
	Name              string `json:"name" yaml:"name"`
	Match             string `json:"match" yaml:"match"`
	Schema            string `json:"schema" yaml:"schema"`
	KeyTemplate       string `json:"key_template,omitempty" yaml:"key_template,omitempty"`
	ProcessingTimeout string `json:"processing_timeout" yaml:"processing_timeout"`
	ReserveTTL        string `json:"reserve_ttl" yaml:"reserve_ttl"`
	Retention         string `json:"retention" yaml:"retention"`
	LargeResponse     string `json:"large_response" yaml:"large_response"`
	MaxValue          string `json:"max_value" yaml:"max_value"`

	// the keyspace's verify hook, if it has one
	Verify *verifyView `json:"verify,omitempty" yaml:"verify,omitempty"`
}

// verifyView is a keyspace's verify hook; its environment by name only
// (a value may be a password).
type verifyView struct {
	Command     []string `json:"command" yaml:"command"`
	Timeout     string   `json:"timeout" yaml:"timeout"`
	Concurrency int      `json:"concurrency" yaml:"concurrency"`
	Env         []string `json:"env,omitempty" yaml:"env,omitempty"`
}

// configViewCmd are config view's flags: the same connection,
// keyspace and scan flags as scan, so it shows what scan would use.
type configViewCmd struct {
	readFlags
	output string
}

func (o *configViewCmd) flags(fs *pflag.FlagSet) {
	outputFlag(fs, &o.output, "yaml", "yaml or json", "yaml", "json")
	o.readFlags.register(fs)
}

func (o *configViewCmd) run(ctx context.Context, a *app, _ []string) error {
	if o.output != "yaml" && o.output != "json" {
		return usageErr("--output %q: want yaml or json", o.output)
	}
	// Resolve as a command would, but read no secret: only say where it
	// would come from.
	cf := o.cf
	cf.passwordEnv, cf.passwordFile, cf.passwordPrompt, cf.sentinelPwEn = "", "", false, ""
	cf.noSecrets = true  // nor the profile's: $REDIS_PASSWORD unset is no reason not to show the config
	a.configNoted = true // the view names the file itself
	// The keyspaces named, or the profile's if it has any.
	s, err := a.openSession(ctx, sessionSpec{conn: &cf, keyspace: &o.kf, scan: &o.sf, need: keyspacesOptional})
	if err != nil {
		return err
	}
	f := a.configFile(o.cf.configPath)
	v := configView{File: s.cfg.Path, From: f.from, Profile: s.profileName, Profiles: s.cfg.ProfileNames()}
	if v.File == "" {
		v.From = "none"
	}
	for n := range s.cfg.Schemas {
		v.Schemas = append(v.Schemas, n)
	}
	sort.Strings(v.Schemas)
	v.Connection = connectionView{
		URL: s.ep.String(), Mode: s.mode, Addrs: s.opts.Seeds, SentinelMaster: s.opts.Master, User: s.ep.User,
		Password: passwordSource(&o.cf, s), TLSCA: s.opts.TLSCA, TLSInsecure: s.opts.TLSInsecure,
		DialTimeout: s.opts.DialTimeout.String(), ReadTimeout: s.opts.ReadTimeout.String(), ReadFromReplicas: s.scan.Replicas,
	}
	audit := pick(s.profile.AuditLog, audit.DefaultPath(a.getenv))
	v.Writes = writesView{Enabled: s.profile.Writes, Protected: s.profile.Protected, AuditLog: audit, AuditStream: s.profile.AuditStream}
	sc := s.scan
	v.Scan = scanView{Count: sc.Count, MaxKeys: sc.MaxKeys, KeysPerSec: sc.KeysPerSec, Pause: durText(sc.Pause),
		MaxLatency: durText(sc.MaxLatency),
		InFlight:   sc.InFlight, MaxNodes: sc.MaxNodes, NoMemory: sc.NoMemory, ResponseSizes: sc.ResponseSizes,
		ReadPath: sc.ReadPath}
	v.Keyspaces = []keyspaceView{}
	for _, ks := range s.keyspaces {
		kv := keyspaceViewOf(ks)
		if h := verifyHook(s.cfg, ks.Name); h != nil {
			kv.Verify = verifyViewOf(h)
		}
		v.Keyspaces = append(v.Keyspaces, kv)
	}
	if !o.kf.adHoc() && len(o.kf.keyspaces) == 0 {
		v.Streams, v.Ledgers = messageViews(s)
	}
	hooked := make([]string, 0, len(v.Keyspaces)+len(v.Streams))
	for _, k := range v.Keyspaces {
		hooked = append(hooked, k.Name)
	}
	for _, sp := range v.Streams {
		hooked = append(hooked, sp.Name)
	}
	warnHooks(a, s, hooked...)
	if o.output == "json" {
		return writeJSON(a, v)
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = a.stdout.Write(out)
	return err
}

// passwordSource says where the password would come from, never what it is.
func passwordSource(cf *connFlags, s *session) string {
	switch {
	case cf.passwordPrompt:
		return "asked on the terminal (--password-prompt)"
	case cf.passwordEnv != "":
		return "$" + cf.passwordEnv
	case cf.passwordFile != "":
		return "file " + cf.passwordFile
	case s.profile.PasswordEnv != "":
		return "$" + s.profile.PasswordEnv + " (profile)"
	case s.profile.PasswordFile != "":
		return "file " + s.profile.PasswordFile + " (profile)"
	case s.ep.Password != "":
		return "in the URL (not shown)"
	}
	return "none"
}

func keyspaceViewOf(ks *inspect.Keyspace) keyspaceView {
	v := keyspaceView{Name: ks.Name, Match: ks.Match, ProcessingTimeout: durText(ks.ProcessingTimeout),
		ReserveTTL: durText(ks.ReserveTTL), Retention: durText(ks.Retention),
		LargeResponse: units.FormatBytes(ks.LargeResponse), MaxValue: units.FormatBytes(ks.MaxValue)}
	if ks.Schema != nil {
		v.Schema = ks.Schema.Name
	}
	if ks.Template != nil {
		v.KeyTemplate = ks.Template.String()
	}
	return v
}

func verifyViewOf(h *verify.Hook) *verifyView {
	v := &verifyView{Command: h.Command, Timeout: durText(verify.DefaultTimeout), Concurrency: verify.DefaultConcurrency}
	if h.Timeout > 0 {
		v.Timeout = durText(h.Timeout)
	}
	if h.Concurrency > 0 {
		v.Concurrency = h.Concurrency
	}
	for _, e := range h.Env {
		name, _, _ := strings.Cut(e, "=")
		v.Env = append(v.Env, name)
	}
	return v
}

func durText(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.String()
}

func writeJSON(a *app, v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// warnHooks says on stderr, a line each, which of the named keyspaces'
// verify hooks cannot run (the executable does not exist, is not
// executable, is not on PATH), where the file names it — so a relative
// command: that resolved against the config file's folder is seen at once,
// not as every record's "unknown" verdict later. config view calls it, and
// every command that runs hooks, before it does.
func warnHooks(a *app, s *session, keyspaces ...string) {
	if s.cfg == nil {
		return
	}
	for _, name := range keyspaces {
		if p := s.cfg.HookProblem(name); p != "" {
			fmt.Fprintf(a.stderr, "idemctl: warning: %s\n", inspect.Line(p))
		}
	}
}
