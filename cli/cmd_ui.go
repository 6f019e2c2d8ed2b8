package cli

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/cli/docgen"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/lookup"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui"
)

// uiCmd holds ui's flags.
type uiCmd struct {
	readFlags
	refresh       time.Duration
	follow        bool
	write, reveal bool
	auditLog      string
	maxRecords    int
	durabilityFlags
}

// flags registers ui's flags.
func (o *uiCmd) flags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.follow, "follow", true, "after the first scan, keep the view live from what the server says changed (docs/follow.md); false: no following, --refresh passes only")
	fs.Var(durationValue(&o.refresh), "refresh", "rescan on its own at this interval, where the view cannot follow or with --follow=false (default: only on r)")
	fs.BoolVar(&o.reveal, "reveal", false, "show response payloads in the detail screen without pressing v")
	fs.IntVar(&o.maxRecords, "max-records", ui.DefaultMaxRecords, "records the table holds (about 1.5 GB at the default); past it every processing, stale and flagged record is still kept, the rest only counted")
	registerGroup(fs, docgen.GroupWrite, func(fs *pflag.FlagSet) {
		fs.BoolVar(&o.write, "write", false, "enable guarded writes for this session (or writes: true in the profile)")
		fs.StringVar(&o.auditLog, "audit-log", "", "audit log file (default: the profile's, or $XDG_STATE_HOME/idemctl/audit.log)")
		o.durabilityFlags.register(fs)
	})
	o.readFlags.registerSnapshot(fs)
}

func (o *uiCmd) run(ctx context.Context, a *app, _ []string) error {
	if o.snap.path == "-" {
		return usageErr("--rdb - reads standard input, which the terminal UI needs for its keys: save the stream to a file (redis-cli --rdb FILE) and give its path")
	}
	if o.snap.path != "" && o.write {
		return usageErr("--write: a snapshot has no server to write to; find the records here, then write on the live server (Y copies them pinned)")
	}
	if !a.isTTY || !a.inTTY {
		return usageErr("the terminal UI needs a terminal; for scripts use 'idemctl scan' or 'idemctl stats'")
	}
	opts, closeFn, err := o.options(ctx, a, &o.readFlags, o.write)
	if err != nil {
		return err
	}
	defer closeFn()
	if o.maxRecords < 1 {
		return usageErr("--max-records must be at least 1")
	}
	opts.Refresh, opts.Reveal, opts.NoColor, opts.MaxRecords = o.refresh, o.reveal, a.getenv("NO_COLOR") != "", o.maxRecords
	opts.Follow = o.follow && o.snap.path == "" // a file does not change
	opts.OpenProfile = o.openProfile(a)
	return ui.Run(ctx, opts)
}

// openProfile is the UI's :profile NAME: another profile of the config,
// opened as if started with --profile NAME alone.
func (o *uiCmd) openProfile(a *app) func(ctx context.Context, name string) (ui.Options, func(), error) {
	return func(ctx context.Context, name string) (ui.Options, func(), error) {
		// No flag or IDEMCTL_… variable of this session carries over,
		// --write included, and nothing is written to the terminal the UI
		// owns: warnings come back as the Options' Notice.
		var r readFlags
		pfs := pflag.NewFlagSet("profile", pflag.ContinueOnError)
		r.register(pfs)
		r.cf.configPath, r.cf.profile = o.cf.configPath, name
		var warnings strings.Builder
		quiet := *a
		quiet.stderr, quiet.configNoted = &warnings, true
		po, closeFn, err := o.options(ctx, &quiet, &r, false)
		po.Notice = units.OneLine(strings.TrimSpace(warnings.String() + " " + po.Notice))
		return po, closeFn, err
	}
}

// options opens the session r names and builds what the UI reads: the
// client, keyspaces and scan settings, the doctor's options, and the
// executor when the profile (or write) allows writes. closeFn releases them.
func (o *uiCmd) options(ctx context.Context, a *app, r *readFlags, write bool) (opts ui.Options, closeFn func(), err error) {
	s, err := a.openSession(ctx, r.spec(keyspacesRequired))
	if err != nil {
		return opts, nil, err
	}
	opts = ui.Options{
		Client: s.client, Keyspaces: s.keyspaces, Scan: s.scan,
		Profile: s.profileName, Address: s.displayAddress(), User: s.ep.User,
		FindSettings: func(keyspace string, in *lookup.Inputs) error {
			return (&findCmd{function: in.Function}).settings(a, in, s.cfg, keyspace)
		},
	}
	if s.snap == nil {
		opts.Hooks = s.verifyHooks()
		opts.Notice = hookNotice(s)
	}
	dopt := doctorOptions(s.cfg) // the config's doctor: section, as 'idemctl doctor' reads it
	opts.Doctor = &dopt
	closeFn = s.Close
	if s.snap != nil {
		opts.Address = "SNAPSHOT " + inspect.Sanitize(s.snap.Info().Name)
		if t := s.snap.Info().Taken; !t.IsZero() {
			opts.Address += " · taken " + t.UTC().Format("2006-01-02 15:04:05Z")
		}
		if s.snap.Info().AtFrom == "--at" {
			opts.Address += " · judged at " + s.snap.Info().At.UTC().Format("2006-01-02 15:04:05Z")
		}
		return opts, s.Close, nil // no writes: the doctor judges the file alone
	}
	if s.cfg != nil {
		opts.StreamSpaces, _ = s.cfg.StreamSpaces(s.profile) // built when the config loaded: no error left
	}
	// The TUI reads the policy from its executor: none, read-only.
	if err := o.durabilityFlags.check(); err != nil {
		s.Close()
		return opts, nil, err
	}
	if setup := s.writeSetup(a.getenv, write, o.auditLog); setup.Policy.Writes {
		setup.Durability = o.durability()
		ex, err := actions.NewExecutor(setup)
		if err != nil {
			s.Close()
			return opts, nil, codeErr(ExitRefused, "%w: writes need an audit log", err)
		}
		opts.Executor = ex
		closeFn = func() { ex.Close(); s.Close() }
	}
	return opts, closeFn, nil
}

// hookNotice is warnHooks for the TUI, which owns the terminal: the hooks
// that cannot run, said once on screen when the session opens.
func hookNotice(s *session) string {
	var b strings.Builder
	warnHooks(&app{stderr: &b}, s, slices.Sorted(maps.Keys(s.verifyHooks()))...)
	return units.OneLine(strings.TrimSpace(strings.ReplaceAll(b.String(), "idemctl: warning: ", "")))
}
