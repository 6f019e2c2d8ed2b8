package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"

	"github.com/idemctl/idemctl/ui"
)

// uiCmdOptions are ui's flags.
type uiCmdOptions struct {
	cf            connFlags
	kf            keyspaceFlags
	sf            scanFlags
	refresh       time.Duration
	write, reveal bool
	auditLog      string
}

func newUICmd(a *app) *cobra.Command {
	var o uiCmdOptions
	c := newCommand("ui [flags]", "the terminal UI (the default when idemctl runs on a terminal)",
		"The terminal UI (also what plain 'idemctl' or 'idemctl --profile NAME' opens):\n"+
			"live scan, records table with filters and sorting, record detail, stats.\n"+
			"Press ? inside for every key.",
		func(ctx context.Context, fs *pflag.FlagSet, _ []string) error { return runUI(ctx, a, fs, &o) })
	fs := c.Flags()
	fs.Var(durationValue{&o.refresh}, "refresh", "rescan on its own at this interval (default: only on r)")
	fs.BoolVar(&o.reveal, "reveal", false, "show response payloads in the detail screen without pressing v")
	addGroup(fs, groupWrite, func(fs *pflag.FlagSet) {
		fs.BoolVar(&o.write, "write", false, "enable guarded writes for this session (or writes: true in the profile)")
		fs.StringVar(&o.auditLog, "audit-log", "", "audit log file (default: the profile's, or $XDG_STATE_HOME/idemctl/audit.log)")
	})
	addReadFlags(fs, &o.cf, &o.kf, &o.sf)
	return c
}

func runUI(ctx context.Context, a *app, fs *pflag.FlagSet, o *uiCmdOptions) error {
	if !a.isTTY || !a.inTTY {
		return usageErr("the terminal UI needs a terminal; for scripts use 'idemctl scan' or 'idemctl stats'")
	}
	s, err := a.openSession(ctx, fs, &o.cf, &o.kf, &o.sf, true)
	if err != nil {
		return err
	}
	defer s.Close()
	opts := ui.Options{
		Client: s.client, Keyspaces: s.keyspaces, Scan: s.scan,
		Profile: s.profileName, Address: s.displayAddress(), User: s.ep.User, Refresh: o.refresh, Reveal: o.reveal,
		NoColor: a.getenv("NO_COLOR") != "",
	}
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
