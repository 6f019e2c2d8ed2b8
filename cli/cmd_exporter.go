package cli

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/exporter"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/buildinfo"
	"github.com/idemctl/idemctl/internal/redisconn"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/reaper"
)

const defaultListen = "127.0.0.1:9481"

// exporterCmd holds exporter's flags.
type exporterCmd struct {
	readFlags
	listen                string
	listenAny             bool
	webConfig             string
	interval, scanTimeout time.Duration
	groupLabel            string
	groupCap              int
	rf                    reapFlags
	reapEvery             time.Duration
	reapEveryGiven        bool // (resolveFlags) --reap-every alone starts the reaper too
	follow                bool
	fullInterval          time.Duration
}

// resolveFlags records which of its flags were given.
func (o *exporterCmd) resolveFlags(fs *pflag.FlagSet) {
	o.readFlags.resolveFlags(fs)
	o.reapEveryGiven = fs.Changed("reap-every")
}

// flags registers exporter's flags.
func (o *exporterCmd) flags(fs *pflag.FlagSet) {
	fs.StringVar(&o.listen, "listen", "", "address to serve on (default: the profile's listen, else "+defaultListen+")")
	fs.BoolVar(&o.listenAny, "listen-any", false, "allow a non-loopback --listen (metrics name keyspaces and counts)")
	fs.StringVar(&o.webConfig, "web.config.file", "", "TLS and basic auth for /metrics: a Prometheus web config file (the format node_exporter and redis_exporter read)")
	fs.Var(durationValue(&o.interval), "interval", "time between scan starts (default: the profile's exporter_interval, else 60s)")
	fs.Var(durationValue(&o.scanTimeout), "scan-timeout", "cut a scan running longer than this and count it as failed (default 5m)")
	fs.BoolVar(&o.follow, "follow", true, "keep the record and stale counts live between scans by following the keyspace where the server allows it (docs/follow.md); --follow=false: the scans alone")
	fs.Var(durationValue(&o.fullInterval), "full-interval", "while following is live: time between full scans, which give memory, ages, TTLs, flags and the doctor (default 1h); the ledgers and streams are still read every --interval")
	fs.StringVar(&o.groupLabel, "group-label", "", "also expose the top values of this key-template capture (e.g. principal)")
	fs.IntVar(&o.groupCap, "group-cap", 20, fmt.Sprintf("values kept for --group-label, the rest summed as %s (at most %d)", exporter.OtherValue, exporter.MaxGroupCap))
	o.rf.register(fs, "reap-")
	fs.Var(durationValue(&o.reapEvery), "reap-every", "with --reap-policy: time between reaper cycles (default 1m)")
	o.readFlags.register(fs)
}

func (o *exporterCmd) run(ctx context.Context, a *app, _ []string) error {
	spec := o.spec(keyspacesOrMessages)
	spec.dial = false // below: an unreachable server is only a failed scan
	s, err := a.openSession(ctx, spec)
	if err != nil {
		return err
	}
	defer s.Close()
	addr, every, limit, err := o.timing(s)
	if err != nil {
		return err
	}
	// One connection attempt now so a bad TLS file is a usage error at
	// start; an unreachable server is only a failed scan, retried later.
	if err := s.connect(ctx, a); err != nil {
		if exitCode(err) == ExitUsage {
			return err
		}
		fmt.Fprintf(a.stderr, "idemctl exporter: %s (retrying every scan)\n", inspect.Line(err.Error()))
	}
	reap, closeExec, err := o.startReaper(ctx, a, s)
	if err != nil {
		return err
	}
	defer closeExec()
	var connMu sync.Mutex // the scan loop and the live view both connect
	e, err := exporter.New(exporter.Config{
		Connect: func(ctx context.Context) (redis.UniversalClient, error) {
			connMu.Lock()
			defer connMu.Unlock()
			if s.client == nil {
				if err := s.connect(ctx, a); err != nil {
					return nil, err
				}
			}
			return s.client, nil
		},
		Keyspaces: s.keyspaces, Scan: s.scan, Interval: every, ScanTimeout: limit,
		WebConfigFile: o.webConfig, GroupLabel: o.groupLabel, GroupCap: o.groupCap, Version: version, Revision: buildinfo.Read().Revision, Log: a.stderr,
		Doctor: doctorOptions(s.cfg), Extra: reapCollectors(reap), Ledgers: configLedgers(s), // cmd_ledgers.go
		Streams: configStreams(s), Follow: o.follow, FullInterval: o.fullInterval,
	})
	if err != nil {
		return usageErr("%v", err)
	}
	if err := exporter.CheckWebConfig(o.webConfig); err != nil {
		return usageErr("--web.config.file %s: %s", o.webConfig, units.OneLine(err.Error()))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	fmt.Fprintf(a.stderr, "idemctl exporter: serving %s://%s/metrics for %s, scanning every %s\n", o.scheme(), ln.Addr(), s.ep, every)
	if reap != nil {
		mode := "dry run"
		if reap.Apply {
			mode = "apply"
		}
		fmt.Fprintf(a.stderr, "idemctl exporter: reaper %s (%s) every %s\n", reap.Policy.Actor(), mode, o.reapEvery)
		defer o.loopReaper(ctx, a, reap)() // the lease released before the log closes
	}
	if err := e.Serve(ctx, ln); err != nil {
		return err
	}
	fmt.Fprintln(a.stderr, "idemctl exporter: stopped")
	return nil
}

// startReaper is the reaper the exporter runs beside its scans, when a
// --reap-… flag asks for one (nil otherwise); closeExec ends its executor.
// It needs Redis now: its lease and audit log are set up at start.
func (o *exporterCmd) startReaper(ctx context.Context, a *app, s *session) (r *reaper.Reaper, closeExec func(), err error) {
	if o.rf.policy == "" && !o.reapEveryGiven && !o.rf.apply {
		return nil, func() {}, nil
	}
	if o.reapEvery = firstDur(o.reapEvery, time.Minute); o.reapEvery < time.Second {
		return nil, nil, usageErr("--reap-every must be at least 1s")
	}
	return a.newReaper(ctx, s, &o.kf, &o.rf, "reap-")
}

// timing is the exporter's listen address, scan interval and scan limit,
// checked before anything binds: nothing is exposed by mistake.
func (o *exporterCmd) timing(s *session) (addr string, every, limit time.Duration, err error) {
	addr = pick(o.listen, pick(s.profile.Listen, defaultListen))
	every = firstDur(o.interval, firstDur(s.profile.ExporterInterval.D(), time.Minute))
	limit = firstDur(o.scanTimeout, 5*time.Minute)
	switch {
	case every < time.Second:
		return "", 0, 0, usageErr("--interval must be at least 1s")
	case o.fullInterval != 0 && o.fullInterval < every:
		return "", 0, 0, usageErr("--full-interval %s is shorter than --interval %s: full scans run at most once an interval", o.fullInterval, every)
	case s.scan.MaxKeys > 0:
		return "", 0, 0, usageErr("--max-keys (or the profile's max_keys) would make every scan incomplete; pass --max-keys 0")
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", 0, 0, usageErr("--listen %q: %v", addr, err)
	}
	if !o.listenAny && !redisconn.IsLoopback(addr) {
		return "", 0, 0, codeErr(ExitRefused, "refusing to listen on %s: not a loopback address (the metrics name keyspaces and counts; pass --listen-any if you mean it)", addr)
	}
	return addr, every, limit, nil
}

// loopReaper runs the reaper's cycles beside the exporter until stop,
// which waits for the cycle under way.
func (o *exporterCmd) loopReaper(ctx context.Context, a *app, reap *reaper.Reaper) (stop func()) {
	done := make(chan struct{})
	rctx, cancel := context.WithCancel(ctx)
	go func() {
		defer close(done)
		reap.Loop(rctx, o.reapEvery, nil, func(rep reaper.CycleReport) { logCycle(a.stderr, rep) })
	}()
	return func() { cancel(); <-done }
}

func reapCollectors(r *reaper.Reaper) []prometheus.Collector {
	if r == nil {
		return nil
	}
	return []prometheus.Collector{r.Metrics}
}

// scheme is how /metrics is served: https where the web config has a
// tls_server_config, else http (basic auth alone is over plain HTTP).
func (o *exporterCmd) scheme() string {
	if exporter.WebConfigTLS(o.webConfig) {
		return "https"
	}
	return "http"
}
