package cli

import (
	"context"
	"fmt"

	"github.com/idemctl/idemctl/inspect"
)

func runPresets(ctx context.Context, a *app, args []string) error {
	fs := a.newFlagSet("presets", "", "List the built-in record formats (schemas shipped with idemctl).")
	if err := parse(fs, args); err != nil {
		return err
	}
	for _, n := range inspect.PresetNames() {
		s, _ := inspect.Preset(n)
		fmt.Fprintf(a.stdout, "%-20s %s\n", n, s.Description)
		fmt.Fprintf(a.stdout, "%-20s match %q  template %q  timeout %v  reserve TTL %v\n", "",
			s.Defaults.Match, s.Defaults.KeyTemplate, s.Defaults.ProcessingTimeout.D(), s.Defaults.ReserveTTL.D())
	}
	return nil
}
