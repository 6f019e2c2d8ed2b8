package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/config"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/redisconn"
)

// keyspaceFlags select and tune keyspaces without a config file.
type keyspaceFlags struct {
	match             string
	preset            string
	schema            string
	keyspaces         []string
	keyTemplate       string
	processingTimeout time.Duration
	reserveTTL        time.Duration
	retention         time.Duration
	largeResponse     int64
	maxValue          int64
}

func (k *keyspaceFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&k.match, "match", "", "SCAN MATCH pattern (default: the preset's)")
	fs.StringVar(&k.preset, "preset", "", "record format preset (see 'idemctl presets')")
	fs.StringVar(&k.schema, "schema", "", "record schema defined in the config file")
	fs.StringSliceVar(&k.keyspaces, "keyspace", nil, "keyspace(s) from the config file (default: the profile's)")
	fs.StringVar(&k.keyTemplate, "key-template", "", "key template, e.g. 'app:{principal}:{endpoint...}:{idem_key}'")
	fs.Var(durationValue(&k.processingTimeout), "processing-timeout", "processing records older than this are stale")
	fs.Var(durationValue(&k.reserveTTL), "reserve-ttl", "TTL the reserve step sets (age = reserve TTL - remaining TTL)")
	fs.Var(durationValue(&k.retention), "retention", "TTL the complete step sets (retry horizon)")
	fs.Var(sizeValue(&k.largeResponse), "large-response", "flag replay responses above this size (default 16KiB)")
	fs.Var(sizeValue(&k.maxValue), "max-value", "read cap for any single value (default 64KiB)")
}

func (k *keyspaceFlags) adHoc() bool {
	return k.match != "" || k.preset != "" || k.schema != ""
}

// scanFlags tune how hard a scan works the server.
type scanFlags struct {
	count      int
	noMemory   bool
	maxKeys    int64
	keysPerSec int
	pause      time.Duration
	maxLatency time.Duration
	inFlight   int
	maxNodes   int
	respSizes  bool
	quiet      bool
	readPath   string
}

func (s *scanFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&s.count, "count", inspect.DefaultScanCount, "SCAN COUNT and keys per pipeline")
	fs.BoolVar(&s.noMemory, "no-memory", false, "skip MEMORY USAGE per key")
	fs.Int64Var(&s.maxKeys, "max-keys", 0, "stop after this many keys (0: all)")
	fs.IntVar(&s.keysPerSec, "keys-per-sec", 0, "throttle: at most this many keys per second (0: unthrottled)")
	fs.Var(durationValue(&s.pause), "pause", "throttle: sleep this long between SCAN calls")
	fs.Var(durationValue(&s.maxLatency), "max-latency", "latency budget: keep what another client waits behind the scan under this, above idle (e.g. 1ms); batches sized from a probe connection")
	fs.IntVar(&s.inFlight, "in-flight", 0, "pipelines in flight (0: 4, or 1 when throttled by --keys-per-sec or --pause)")
	fs.BoolVar(&s.respSizes, "response-sizes", false, "measure every record's response size (one more command per key; by default only records big enough to hold a large response)")
	fs.IntVar(&s.maxNodes, "max-nodes", 3, "cluster nodes scanned at a time")
	fs.Var(choiceValue(&s.readPath, inspect.ReadPaths), "read-path", "how records are read: script (one read-only script call per batch), client (plain commands), auto (the default: the one that costs the server least, today the client path)")
	fs.BoolVar(&s.quiet, "quiet", false, "no progress line on stderr (there is none unless stderr is a terminal)")
}

// session is everything a command needs to talk to one Redis.
type session struct {
	cfg         *config.Config
	profileName string
	profile     *config.Profile
	ep          redisconn.Endpoint
	client      redis.UniversalClient
	keyspaces   []*inspect.Keyspace
	scan        inspect.Options
	opts        redisconn.Options
	mode        string // standalone, cluster, sentinel, or snapshot (--rdb)
	osUser      string // for the audit log
	origin      string // host and idemctl, for a new audit chain's genesis
	snap        *inspect.SnapshotSource
}

func (s *session) Close() {
	if s.client != nil {
		s.client.Close()
	}
	if s.snap != nil {
		s.snap.Close()
	}
}

// configFile is the config file in effect and why: "--config",
// "IDEMCTL_CONFIG" or "default" (which may be absent).
type configFile struct {
	path string // "" when no default can be named (neither XDG_CONFIG_HOME nor HOME)
	from string
}

func (a *app) configFile(flagPath string) configFile {
	switch {
	case flagPath != "" && a.fromEnv["config"] != "":
		return configFile{flagPath, a.fromEnv["config"]}
	case flagPath != "":
		return configFile{flagPath, "--config"}
	case a.getenv("IDEMCTL_CONFIG") != "":
		return configFile{a.getenv("IDEMCTL_CONFIG"), "IDEMCTL_CONFIG"}
	}
	return configFile{config.DefaultPath(a.getenv), "default"}
}

// loadConfig reads --config, $IDEMCTL_CONFIG or the default path (which may
// be absent: then the config is empty and its Path "").
func (a *app) loadConfig(path string) (*config.Config, error) {
	f := a.configFile(path)
	if f.path == "" {
		return &config.Config{}, nil
	}
	cfg, err := config.Load(f.path)
	if errors.Is(err, config.ErrNotFound) && f.from == "default" {
		return &config.Config{}, nil
	}
	if err != nil {
		return nil, usageErr("config %v", err)
	}
	return cfg, nil
}

// loadProfile is loadConfig and the profile it names (or its default); an
// unknown profile is a usage error.
func (a *app) loadProfile(configPath, profile string) (*config.Config, string, *config.Profile, error) {
	cfg, err := a.loadConfig(configPath)
	if err != nil {
		return nil, "", nil, err
	}
	name, prof, err := cfg.Profile(profile)
	if err != nil {
		return nil, "", nil, usageErr("%v", err)
	}
	return cfg, name, prof, nil
}

// connect dials the resolved endpoint.
func (s *session) connect(ctx context.Context, a *app) error {
	c, err := redisconn.Dial(ctx, s.opts, a.stderr)
	if err != nil {
		return err
	}
	s.client = c
	return nil
}

// openRead opens the session of a command that reads records.
func (a *app) openRead(ctx context.Context, fs *pflag.FlagSet, r *readFlags) (*session, error) {
	if err := checkSnapshotFlags(fs, r); err != nil {
		return nil, err
	}
	if r.snap.path != "" {
		return a.openSnapshot(fs, r)
	}
	return a.openSession(ctx, fs, &r.cf, &r.kf, &r.sf, true)
}

// openScan is openRead for a command that walks the keyspace: its scan
// reports to the progress line of label (nil when quiet or not on a
// terminal), which the caller clears before it prints.
func (a *app) openScan(ctx context.Context, fs *pflag.FlagSet, r *readFlags, label string) (*session, *progressLine, error) {
	s, err := a.openRead(ctx, fs, r)
	if err != nil {
		return nil, nil, err
	}
	progress := a.newProgress(label, r.sf.quiet)
	s.scan.Progress = progress.update
	return s, progress, nil
}

// openSampledScan is openScan for a command that may read a sample
// (--sample, --sample-time: refused on a snapshot), with the snapshot's
// note printed.
func (a *app) openSampledScan(ctx context.Context, fs *pflag.FlagSet, r *readFlags, smp sampleFlags, label string) (*session, *progressLine, error) {
	s, progress, err := a.openScan(ctx, fs, r, label)
	if err != nil {
		return nil, nil, err
	}
	if err := smp.applyLive(&s.scan, s); err != nil {
		s.Close()
		return nil, nil, err
	}
	a.noteSnapshot(s)
	return s, progress, nil
}

// openReadMessagesOK is openRead for a command that judges stream and
// ledger keyspaces too (doctor): a live profile with only those is fine.
func (a *app) openReadMessagesOK(ctx context.Context, fs *pflag.FlagSet, r *readFlags) (*session, error) {
	s, err := a.openRead(ctx, fs, r)
	var only *onlyMessagesErr
	if errors.As(err, &only) {
		return a.openSession(ctx, fs, &r.cf, &r.kf, &r.sf, false)
	}
	return s, err
}

// openSession resolves and connects.
func (a *app) openSession(ctx context.Context, fs *pflag.FlagSet, cf *connFlags, kf *keyspaceFlags, sf *scanFlags, needKeyspaces bool) (*session, error) {
	s, err := a.resolveSession(fs, cf, kf, sf, needKeyspaces)
	if err != nil {
		return nil, err
	}
	if err := s.connect(ctx, a); err != nil {
		return nil, err
	}
	return s, nil
}

func pick(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// warnReadable warns when a config file holding a secret is readable by
// group or others.
func warnReadable(a *app, path string) {
	st, err := os.Stat(path)
	if err == nil && st.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(a.stderr, "idemctl: warning: %s holds a password and is readable by others (mode %04o); chmod 600 it\n", path, st.Mode().Perm())
	}
}

func scanOptions(fs *pflag.FlagSet, sf *scanFlags, prof *config.Profile) inspect.Options {
	ps := prof.Scan
	o := inspect.Options{
		Count: sf.count, NoMemory: sf.noMemory, MaxKeys: sf.maxKeys,
		KeysPerSec: sf.keysPerSec, Pause: sf.pause, MaxLatency: sf.maxLatency, InFlight: sf.inFlight, MaxNodes: sf.maxNodes,
		ResponseSizes: sf.respSizes, ReadPath: sf.readPath,
	}
	if !fs.Changed("max-nodes") && ps.MaxNodes > 0 {
		o.MaxNodes = ps.MaxNodes
	}
	if !fs.Changed("count") && ps.Count > 0 {
		o.Count = ps.Count
	}
	if !fs.Changed("no-memory") && ps.NoMemory {
		o.NoMemory = true
	}
	if !fs.Changed("max-keys") && ps.MaxKeys > 0 {
		o.MaxKeys = ps.MaxKeys
	}
	if !fs.Changed("keys-per-sec") && ps.KeysPerSec > 0 {
		o.KeysPerSec = ps.KeysPerSec
	}
	if !fs.Changed("pause") && ps.Pause > 0 {
		o.Pause = ps.Pause.D()
	}
	if !fs.Changed("max-latency") && ps.MaxLatency > 0 {
		o.MaxLatency = ps.MaxLatency.D()
	}
	if !fs.Changed("response-sizes") && ps.ResponseSizes {
		o.ResponseSizes = true
	}
	if !fs.Changed("read-path") && ps.ReadPath != "" {
		o.ReadPath = ps.ReadPath
	}
	return o.WithDefaults() // the pool is sized from InFlight
}

// resolveKeyspaces builds the keyspaces to scan: an ad-hoc one from flags,
// named ones from the config, or the profile's; per-keyspace flags override.
func resolveKeyspaces(fs *pflag.FlagSet, cfg *config.Config, prof *config.Profile, kf *keyspaceFlags) ([]*inspect.Keyspace, error) {
	var out []*inspect.Keyspace
	switch {
	case kf.adHoc():
		if kf.preset != "" && kf.schema != "" {
			return nil, usageErr("use --preset or --schema, not both")
		}
		if kf.preset == "" && kf.schema == "" {
			return nil, usageErr("--match needs --preset NAME or --schema NAME to decode records (presets: %s)", strings.Join(inspect.PresetNames(), ", "))
		}
		var schema *inspect.Schema
		var err error
		if kf.preset != "" {
			schema, err = inspect.Preset(kf.preset)
		} else {
			schema, err = cfg.SchemaByName(kf.schema)
		}
		if err != nil {
			return nil, usageErr("%v", err)
		}
		ks, err := inspect.NewKeyspace(inspect.KeyspaceSpec{Name: schema.Name, Match: kf.match, Schema: schema, KeyTemplate: kf.keyTemplate})
		if err != nil {
			return nil, usageErr("%v", err)
		}
		out = []*inspect.Keyspace{ks}
	case len(kf.keyspaces) > 0:
		for _, n := range kf.keyspaces {
			ks, err := cfg.Keyspace(n)
			if err != nil {
				return nil, usageErr("--keyspace: %v", err)
			}
			out = append(out, ks)
		}
	default:
		kss, err := cfg.KeyspacesFor(prof)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		out = kss
	}
	if len(out) == 0 && !kf.adHoc() && len(kf.keyspaces) == 0 && len(cfg.MessageKeyspaces(prof)) > 0 {
		return nil, &onlyMessagesErr{usageErr("no records keyspace (the profile's %s: stream or ledger keyspaces): read them with idemctl streams or idemctl ledgers, or pass --preset NAME for records",
			strings.Join(cfg.MessageKeyspaces(prof), ", "))}
	}
	if len(out) == 0 {
		return nil, &noKeyspaceErr{usageErr("no keyspace to inspect: pass --preset NAME (and --match PATTERN), or configure keyspaces (presets: %s)", strings.Join(inspect.PresetNames(), ", "))}
	}
	for _, ks := range out {
		if err := applyKeyspaceFlags(fs, ks, kf); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// onlyMessagesErr says the profile has stream or ledger keyspaces but no
// records keyspace: record commands refuse, the exporter and check-applied
// go on without records.
type onlyMessagesErr struct{ error }

func (e *onlyMessagesErr) Unwrap() error { return e.error }

// noKeyspaceErr says no keyspace was configured or given at all: the
// commands that read the audit log (undo, check-applied) go on, as a
// pending-entry write needs none.
type noKeyspaceErr struct{ error }

func (e *noKeyspaceErr) Unwrap() error { return e.error }

// resolveSessionKeyspacesOptional is resolveSession for the commands that
// replay the audit log: the keyspaces the config or flags give, or none
// (a record write then finds no keyspace and is refused, naming it).
func (a *app) resolveSessionKeyspacesOptional(fs *pflag.FlagSet, cf *connFlags, kf *keyspaceFlags) (*session, error) {
	s, err := a.resolveSession(fs, cf, kf, nil, true)
	var only *onlyMessagesErr
	var none *noKeyspaceErr
	if errors.As(err, &only) || errors.As(err, &none) {
		return a.resolveSession(fs, cf, kf, nil, false)
	}
	return s, err
}

// resolveSessionMessagesOK is resolveSession for commands that serve
// streams and ledgers too: a profile with only those has no records
// keyspace, and that is fine.
func (a *app) resolveSessionMessagesOK(fs *pflag.FlagSet, cf *connFlags, kf *keyspaceFlags, sf *scanFlags) (*session, error) {
	s, err := a.resolveSession(fs, cf, kf, sf, true)
	var only *onlyMessagesErr
	if errors.As(err, &only) {
		return a.resolveSession(fs, cf, kf, sf, false)
	}
	return s, err
}

func applyKeyspaceFlags(fs *pflag.FlagSet, ks *inspect.Keyspace, kf *keyspaceFlags) error {
	if fs.Changed("key-template") {
		t, err := inspect.ParseTemplate(kf.keyTemplate)
		if err != nil {
			return usageErr("%v", err)
		}
		ks.Template = t
	}
	if fs.Changed("processing-timeout") {
		ks.ProcessingTimeout = kf.processingTimeout
	}
	if fs.Changed("reserve-ttl") {
		ks.ReserveTTL = kf.reserveTTL
	}
	if fs.Changed("retention") {
		ks.Retention = kf.retention
	}
	if fs.Changed("large-response") {
		ks.LargeResponse = kf.largeResponse
	}
	if fs.Changed("max-value") {
		if kf.maxValue < 256 {
			return usageErr("--max-value must be at least 256 bytes")
		}
		ks.MaxValue = kf.maxValue
	}
	return nil
}

// where names what the session reads, for messages.
func (s *session) where() string {
	if s.snap != nil {
		return "snapshot " + inspect.Sanitize(s.snap.Info().Name)
	}
	return s.ep.String()
}

// displayAddress is the redacted address with the mode, for headers.
func (s *session) displayAddress() string {
	switch s.mode {
	case "cluster":
		return s.ep.String() + " (cluster)"
	case "sentinel":
		return s.ep.String() + " (sentinel " + s.opts.Master + ")"
	case "snapshot":
		return s.snap.Info().String()
	}
	return s.ep.String()
}

// promptPassword reads a password from the terminal without echo.
func (a *app) promptPassword(ep redisconn.Endpoint) (string, error) {
	if !a.inTTY {
		return "", usageErr("--password-prompt needs a terminal; use --password-env or --password-file")
	}
	pw, err := a.readPassword(fmt.Sprintf("Password for %s: ", ep))
	if err != nil {
		return "", usageErr("--password-prompt: %v", err)
	}
	return pw, nil
}

func profileNote(name string) string {
	if name == "" {
		return ""
	}
	return " (profile " + name + ")"
}
