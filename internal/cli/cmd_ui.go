package cli

import (
	"context"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"

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
	s, err := a.openRead(ctx, fs, &o.readFlags)
	if err != nil {
		return err
	}
	defer s.Close()
	opts := ui.Options{
		Client: s.client, Keyspaces: s.keyspaces, Scan: s.scan,
		Profile: s.profileName, Address: s.displayAddress(), User: s.ep.User, Refresh: o.refresh, Reveal: o.reveal,
		NoColor: a.getenv("NO_COLOR") != "",
	}
	dopt := s.cfg.DoctorOptions() // the config's doctor: section, as 'idemctl doctor' reads it
	opts.Doctor = &dopt
	// The TUI reads the policy from its executor: none, read-only.
	if setup := s.writeSetup(a.getenv, o.write, o.auditLog); setup.Policy.Writes {
		ex, err := actions.NewExecutor(setup)
		if err != nil {
			return codeErr(ExitRefused, "%v: writes need an audit log", err)
		}
		defer ex.Close()
		opts.Executor = ex
	}
	return ui.Run(ctx, opts)
}
