package cli

import (
	"context"
	"time"

	"github.com/idemctl/idemctl/actions"

	"github.com/idemctl/idemctl/ui"
)

func runUI(ctx context.Context, a *app, args []string) error {
	fs := a.newFlagSet("ui", "[flags]",
		"The terminal UI (also what plain 'idemctl' or 'idemctl --profile NAME' opens):\n"+
			"live scan, records table with filters and sorting, record detail, stats.\n"+
			"Press ? inside for every key.")
	var cf connFlags
	var kf keyspaceFlags
	var sf scanFlags
	cf.register(fs)
	kf.register(fs)
	sf.register(fs)
	var refresh time.Duration
	fs.Var(durationValue{&refresh}, "refresh", "rescan on its own at this interval (default: only on r)")
	write := fs.Bool("write", false, "enable guarded writes for this session (or writes: true in the profile)")
	reveal := fs.Bool("reveal", false, "show response payloads in the detail screen without pressing v")
	auditLog := fs.String("audit-log", "", "audit log file (default: the profile's, or $XDG_STATE_HOME/idemctl/audit.log)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q (see 'idemctl ui --help')", fs.Arg(0))
	}
	if !a.isTTY || !a.inTTY {
		return usageErr("the terminal UI needs a terminal; for scripts use 'idemctl scan' or 'idemctl stats'")
	}
	s, err := a.openSession(ctx, fs, &cf, &kf, &sf, true)
	if err != nil {
		return err
	}
	defer s.Close()
	opts := ui.Options{
		Client: s.client, Keyspaces: s.keyspaces, Scan: s.scan,
		Profile: s.profileName, Address: s.displayAddress(), User: s.ep.user, Refresh: refresh, Reveal: *reveal,
	}
	// The TUI reads the policy from its executor: none, read-only.
	if setup := s.writeSetup(*write, *auditLog); setup.Policy.Writes {
		ex, err := actions.NewExecutor(setup)
		if err != nil {
			return codeErr(exitRefused, "%v: writes need an audit log", err)
		}
		defer ex.Close()
		opts.Executor = ex
	}
	return ui.Run(ctx, opts)
}
