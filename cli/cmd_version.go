package cli

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/idemctl/idemctl/internal/buildinfo"
)

// versionInfo is version -o json: the build's identity and the libraries
// that talk to Redis and draw the terminal.
type versionInfo struct {
	buildinfo.Info
	Deps map[string]string `json:"deps"` // go-redis and charm.land modules
}

func runVersion(a *app, output string) error {
	if output != "text" && output != "json" {
		return usageErr("--output %q: want text or json", output)
	}
	v := versionInfo{Info: buildinfo.Read(), Deps: map[string]string{}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if strings.Contains(d.Path, "go-redis") || strings.Contains(d.Path, "charm.land") {
				v.Deps[d.Path] = d.Version
			}
		}
	}
	if output == "json" {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	fmt.Fprintln(a.stdout, v.Line())
	deps := make([]string, 0, len(v.Deps))
	for p, ver := range v.Deps {
		deps = append(deps, p+" "+ver)
	}
	sort.Strings(deps)
	for _, d := range deps {
		fmt.Fprintln(a.stdout, "  "+d)
	}
	return nil
}
