package cli

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/actions"
	"github.com/idemctl/idemctl/actions/audit"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/sandbox"
	"github.com/idemctl/idemctl/ui"
	"github.com/idemctl/idemctl/verify"
)

// demoCmd are demo's flags.
type demoCmd struct {
	count, rate int
	crash       float64
	auditLog    string
	refresh     time.Duration
}

func (o *demoCmd) flags(fs *pflag.FlagSet) {
	fs.IntVar(&o.count, "count", 3000, "records to seed")
	fs.IntVar(&o.rate, "rate", 20, "simulated requests per second")
	fs.Float64Var(&o.crash, "crash-rate", 0.05, "share of simulated requests whose worker crashes")
	fs.StringVar(&o.auditLog, "audit-log", filepath.Join(os.TempDir(), "idemctl-demo-audit.log"), "the demo's own audit log")
	o.refresh = 3 * time.Second
	fs.Var(durationValue(&o.refresh), "refresh", "rescan interval")
}

func (o *demoCmd) run(ctx context.Context, a *app, _ []string) error {
	if o.count < 1 || o.rate < 0 || o.crash < 0 || o.crash > 1 {
		return usageErr("--count must be positive, --rate ≥ 0, --crash-rate between 0 and 1")
	}
	if !a.isTTY || !a.inTTY {
		return usageErr("the demo opens the terminal UI and needs a terminal")
	}
	d, err := sandbox.Start(ctx, sandbox.Config{Count: o.count, Rate: o.rate, CrashRate: o.crash})
	if err != nil {
		return err
	}
	defer d.Stop()
	// The demo's audit log is a file of its own: sandbox writes never mix
	// with real ones.
	addr := "redis://" + d.Addr() + "/0"
	ex, err := actions.NewExecutor(actions.Setup{Client: d.Client, Policy: &actions.Policy{Writes: true, Profile: "demo"},
		Identity: audit.Identity{OSUser: a.user(), Profile: "demo", Address: addr}, AuditPath: o.auditLog, Origin: a.origin()})
	if err != nil {
		return err
	}
	defer ex.Close()
	return ui.Run(ctx, ui.Options{
		Client: d.Client, Keyspaces: []*inspect.Keyspace{d.Keyspace}, Profile: "demo",
		Address: addr, User: "default", Demo: true, Refresh: o.refresh, Follow: true, Executor: ex,
		Hooks:   map[string]*verify.Hook{d.Keyspace.Name: d.Orders.Hook()},
		NoColor: a.getenv("NO_COLOR") != "",
	})
}
