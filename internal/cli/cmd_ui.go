package cli

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/internal/units"
	"github.com/idemctl/idemctl/ui"
)

// uiCmd holds ui's flags.
type uiCmd struct {
	readFlags
	refresh       time.Duration
	write, reveal bool
	auditLog      string
}

// flags registers ui's flags.
func (o *uiCmd) flags(fs *pflag.FlagSet) {
	fs.Var(durationValue(&o.refresh), "refresh", "rescan on its own at this interval (default: only on r)")
	fs.BoolVar(&o.reveal, "reveal", false, "show response payloads in the detail screen without pressing v")
	addGroup(fs, groupWrite, func(fs *pflag.FlagSet) {
		fs.BoolVar(&o.write, "write", false, "enable guarded writes for this session (or writes: true in the profile)")
		fs.StringVar(&o.auditLog, "audit-log", "", "audit log file (default: the profile's, or $XDG_STATE_HOME/idemctl/audit.log)")
	})
	o.readFlags.register(fs)
}

func (o *uiCmd) run(ctx context.Context, a *app, fs *pflag.FlagSet, _ []string) error {
	if !a.isTTY || !a.inTTY {
		return usageErr("the terminal UI needs a terminal; for scripts use 'idemctl scan' or 'idemctl stats'")
	}
	opts, closeFn, err := o.options(ctx, a, fs, &o.readFlags, o.write)
	if err != nil {
		return err
	}
	defer closeFn()
	opts.Refresh, opts.Reveal, opts.NoColor = o.refresh, o.reveal, a.getenv("NO_COLOR") != ""
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
		po, closeFn, err := o.options(ctx, &quiet, pfs, &r, false)
		po.Notice = units.OneLine(warnings.String())
		return po, closeFn, err
	}
}

// options opens the session r names and builds what the UI reads: the
// client, keyspaces and scan settings, the doctor's options, and the
// executor when the profile (or write) allows writes. closeFn releases them.
func (o *uiCmd) options(ctx context.Context, a *app, fs *pflag.FlagSet, r *readFlags, write bool) (opts ui.Options, closeFn func(), err error) {
	s, err := a.openRead(ctx, fs, r)
	if err != nil {
		return opts, nil, err
	}
	opts = ui.Options{
		Client: s.client, Keyspaces: s.keyspaces, Scan: s.scan,
		Profile: s.profileName, Address: s.displayAddress(), User: s.ep.User,
	}
	opts.Hooks = s.verifyHooks()
	dopt := s.cfg.DoctorOptions() // the config's doctor: section, as 'idemctl doctor' reads it
	opts.Doctor = &dopt
	closeFn = s.Close
	// The TUI reads the policy from its executor: none, read-only.
	if setup := s.writeSetup(a.getenv, write, o.auditLog); setup.Policy.Writes {
		ex, err := actions.NewExecutor(setup)
		if err != nil {
			s.Close()
			return opts, nil, codeErr(ExitRefused, "%v: writes need an audit log", err)
		}
		opts.Executor = ex
		closeFn = func() { ex.Close(); s.Close() }
	}
	return opts, closeFn, nil
}
