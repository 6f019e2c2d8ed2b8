package cli

import (
	"encoding/json"
	"fmt"

	"github.com/idemctl/idemctl/inspect"
)

// presetInfo is one preset in presets -o json.
type presetInfo struct {
	Name                string `json:"name"`
	Description         string `json:"description"`
	Match               string `json:"match"`
	KeyTemplate         string `json:"key_template"`
	ProcessingTimeoutMs int64  `json:"processing_timeout_ms"`
	ReserveTTLms        int64  `json:"reserve_ttl_ms"`
}

func runPresets(a *app, output string) error {
	if output != "text" && output != "json" {
		return usageErr("--output %q: want text or json", output)
	}
	var list []presetInfo
	for _, n := range inspect.PresetNames() {
		s, _ := inspect.Preset(n)
		list = append(list, presetInfo{Name: n, Description: s.Description, Match: s.Defaults.Match, KeyTemplate: s.Defaults.KeyTemplate,
			ProcessingTimeoutMs: s.Defaults.ProcessingTimeout.D().Milliseconds(), ReserveTTLms: s.Defaults.ReserveTTL.D().Milliseconds()})
	}
	if output == "json" {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	for _, p := range list {
		s, _ := inspect.Preset(p.Name)
		fmt.Fprintf(a.stdout, "%-20s %s\n", p.Name, p.Description)
		fmt.Fprintf(a.stdout, "%-20s match %q  template %q  timeout %v  reserve TTL %v\n", "",
			p.Match, p.KeyTemplate, s.Defaults.ProcessingTimeout.D(), s.Defaults.ReserveTTL.D())
	}
	return nil
}
