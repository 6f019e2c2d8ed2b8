package report

import (
	"fmt"
	"io"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/detect"
)

// Timing lists detect's timing proposals beside the preset's defaults.
func Timing(w io.Writer, ps []detect.Proposal) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintln(w, "\ntiming from the sample (preset default → proposed):")
	for _, p := range ps {
		v := p.Value
		if v == "" {
			v = "—"
		}
		fmt.Fprintf(w, "  %-19s %s → %s: %s\n", p.Setting, p.Default, v, inspect.Sanitize(p.Evidence))
	}
}
