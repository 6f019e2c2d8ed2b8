package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
)

// versionInfo is version -o json.
type versionInfo struct {
	Version string            `json:"version"`
	Go      string            `json:"go"`
	OS      string            `json:"os"`
	Arch    string            `json:"arch"`
	Deps    map[string]string `json:"deps"` // go-redis and charm.land modules
}

func runVersion(a *app, output string) error {
	if output != "text" && output != "json" {
		return usageErr("--output %q: want text or json", output)
	}
	v := versionInfo{Version: version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, Deps: map[string]string{}}
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
	fmt.Fprintf(a.stdout, "idemctl %s (%s %s/%s)\n", v.Version, v.Go, v.OS, v.Arch)
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
