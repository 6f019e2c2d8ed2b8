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
	"github.com/idemctl/idemctl/inspect/keytemplate"
	"github.com/idemctl/idemctl/inspect/snapshot"
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

	// given (resolveFlags): the per-keyspace flags given, which override
	// every keyspace's own setting; the others leave it.
	given struct{ keyTemplate, processingTimeout, reserveTTL, retention, largeResponse, maxValue bool }
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

// resolveFlags records which per-keyspace flags were given.
func (k *keyspaceFlags) resolveFlags(fs *pflag.FlagSet) {
	g := &k.given
	g.keyTemplate, g.processingTimeout, g.reserveTTL = fs.Changed("key-template"), fs.Changed("processing-timeout"), fs.Changed("reserve-ttl")
	g.retention, g.largeResponse, g.maxValue = fs.Changed("retention"), fs.Changed("large-response"), fs.Changed("max-value")
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

	// given (resolveFlags): the scan flags given, which win over the
	// profile's scan: section; a default yields to it.
	given struct{ count, noMemory, maxKeys, keysPerSec, pause, maxLatency, respSizes, readPath, maxNodes bool }
}

// resolveFlags records which scan flags were given.
func (s *scanFlags) resolveFlags(fs *pflag.FlagSet) {
	g := &s.given
	g.count, g.noMemory, g.maxKeys = fs.Changed("count"), fs.Changed("no-memory"), fs.Changed("max-keys")
	g.keysPerSec, g.pause, g.maxLatency = fs.Changed("keys-per-sec"), fs.Changed("pause"), fs.Changed("max-latency")
	g.respSizes, g.readPath, g.maxNodes = fs.Changed("response-sizes"), fs.Changed("read-path"), fs.Changed("max-nodes")
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
	snap        *snapshot.Source
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
	if err == nil {
		if rerr := checkConfigRules(cfg); rerr != nil {
			err = fmt.Errorf("%s: %v", f.path, rerr)
		}
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

// keyspaceNeed is what a command's session does without a records
// keyspace, decided before anything is resolved.
type keyspaceNeed int

const (
	noKeyspaces         keyspaceNeed = iota // the command reads no records: none are resolved
	keyspacesRequired                       // none is a usage error
	keyspacesOrMessages                     // a profile whose keyspaces are all streams or ledgers will do (doctor, exporter)
	keyspacesOptional                       // none at all will do: the audit log names them (undo, check-applied, config view)
)

// sessionSpec is what a command opens its session with: the flag groups it
// has (nil: not this one), what it needs of keyspaces, and whether it reads
// at once. A reading command dials now; a writing one (or one with more to
// refuse first: seed, streams, the exporter) is resolved only, and dials
// once it has checked what it must — connectToWrite refuses a read-only
// profile before it does.
type sessionSpec struct {
	conn     *connFlags
	keyspace *keyspaceFlags
	scan     *scanFlags
	snap     *snapFlags   // --rdb, --at, --db: a snapshot file in place of a server
	sample   *sampleFlags // --sample, --sample-time: a live server only
	need     keyspaceNeed
	dial     bool
}

// spec is the session of a command that reads records with r: a live
// server dialled at once, or the snapshot --rdb names.
func (r *readFlags) spec(need keyspaceNeed) sessionSpec {
	return sessionSpec{conn: &r.cf, keyspace: &r.kf, scan: &r.sf, snap: &r.snap, need: need, dial: true}
}

// openSession is the one way a command opens its session: it resolves
// config, profile and flags (flags win), builds the keyspaces sp needs, and
// opens the snapshot or, when sp.dial, connects. The caller closes it.
func (a *app) openSession(ctx context.Context, sp sessionSpec) (*session, error) {
	var s *session
	var err error
	switch {
	case sp.snap != nil && sp.snap.path != "":
		s, err = a.openSnapshot(sp)
	case sp.snap != nil:
		if err = sp.snap.checkUnused(); err == nil {
			s, err = a.resolveSession(sp)
		}
	default:
		s, err = a.resolveSession(sp)
	}
	if err == nil && sp.dial && s.snap == nil {
		err = s.connect(ctx, a)
	}
	if err == nil && sp.sample != nil {
		if err = sp.sample.applyLive(&s.scan, s); err != nil {
			s.Close()
		}
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// progress is the progress line of a command that walks the keyspace, fed
// by the session's scans (nil when quiet or stderr is no terminal); the
// caller clears it before it prints.
func (s *session) progress(a *app, label string, quiet bool) *progressLine {
	p := a.newProgress(label, quiet)
	s.scan.Progress = p.update
	return p
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

// scanOptions are the scan settings: each flag given, else the profile's,
// else the flag's default.
func scanOptions(sf *scanFlags, prof *config.Profile) inspect.Options {
	ps, given := prof.Scan, &sf.given
	o := inspect.Options{
		Count: sf.count, NoMemory: sf.noMemory, MaxKeys: sf.maxKeys,
		KeysPerSec: sf.keysPerSec, Pause: sf.pause, MaxLatency: sf.maxLatency, InFlight: sf.inFlight, MaxNodes: sf.maxNodes,
		ResponseSizes: sf.respSizes, ReadPath: sf.readPath,
	}
	if !given.maxNodes && ps.MaxNodes > 0 {
		o.MaxNodes = ps.MaxNodes
	}
	if !given.count && ps.Count > 0 {
		o.Count = ps.Count
	}
	if !given.noMemory && ps.NoMemory {
		o.NoMemory = true
	}
	if !given.maxKeys && ps.MaxKeys > 0 {
		o.MaxKeys = ps.MaxKeys
	}
	if !given.keysPerSec && ps.KeysPerSec > 0 {
		o.KeysPerSec = ps.KeysPerSec
	}
	if !given.pause && ps.Pause > 0 {
		o.Pause = ps.Pause.D()
	}
	if !given.maxLatency && ps.MaxLatency > 0 {
		o.MaxLatency = ps.MaxLatency.D()
	}
	if !given.respSizes && ps.ResponseSizes {
		o.ResponseSizes = true
	}
	if !given.readPath && ps.ReadPath != "" {
		o.ReadPath = ps.ReadPath
	}
	return o.WithDefaults() // the pool is sized from InFlight
}

// resolveKeyspaces builds the keyspaces to scan: an ad-hoc one from flags,
// named ones from the config, or the profile's; per-keyspace flags
// override. Where the profile has none, need says whether that will do.
func resolveKeyspaces(cfg *config.Config, prof *config.Profile, kf *keyspaceFlags, need keyspaceNeed) ([]*inspect.Keyspace, error) {
	var out []*inspect.Keyspace
	var err error
	switch {
	case kf.adHoc():
		out, err = adHocKeyspace(cfg, kf)
	case len(kf.keyspaces) > 0:
		for _, n := range kf.keyspaces {
			ks, err := cfg.Keyspace(n)
			if err != nil {
				return nil, usageErr("--keyspace: %v", err)
			}
			out = append(out, ks)
		}
	default:
		if out, err = cfg.KeyspacesFor(prof); err != nil {
			err = usageErr("%v", err)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, noRecordsKeyspace(cfg, prof, need)
	}
	for _, ks := range out {
		if err := applyKeyspaceFlags(ks, kf); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// adHocKeyspace is the keyspace --match with --preset or --schema gives.
func adHocKeyspace(cfg *config.Config, kf *keyspaceFlags) ([]*inspect.Keyspace, error) {
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
	return []*inspect.Keyspace{ks}, nil
}

// noRecordsKeyspace is what a profile with no records keyspace means to a
// command that needs need: nil where that will do, else a usage error that
// says why — the profile has only stream or ledger keyspaces (the exporter
// and doctor serve those; record commands refuse), or none at all (the
// commands that read the audit log go on: it names them).
func noRecordsKeyspace(cfg *config.Config, prof *config.Profile, need keyspaceNeed) error {
	if msgs := cfg.MessageKeyspaces(prof); len(msgs) > 0 {
		if need == keyspacesOrMessages || need == keyspacesOptional {
			return nil
		}
		return usageErr("no records keyspace (the profile's %s: stream or ledger keyspaces): read them with idemctl streams or idemctl ledgers, or pass --preset NAME for records",
			strings.Join(msgs, ", "))
	}
	if need == keyspacesOptional {
		return nil
	}
	return usageErr("no keyspace to inspect: pass --preset NAME (and --match PATTERN), or configure keyspaces (presets: %s)", strings.Join(inspect.PresetNames(), ", "))
}

// applyKeyspaceFlags overrides ks with the per-keyspace flags given.
func applyKeyspaceFlags(ks *inspect.Keyspace, kf *keyspaceFlags) error {
	given := &kf.given
	if given.keyTemplate {
		t, err := keytemplate.Parse(kf.keyTemplate)
		if err != nil {
			return usageErr("%v", err)
		}
		ks.Template = t
	}
	if given.processingTimeout {
		ks.ProcessingTimeout = kf.processingTimeout
	}
	if given.reserveTTL {
		ks.ReserveTTL = kf.reserveTTL
	}
	if given.retention {
		ks.Retention = kf.retention
	}
	if given.largeResponse {
		ks.LargeResponse = kf.largeResponse
	}
	if given.maxValue {
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
