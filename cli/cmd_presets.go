package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/idemctl/idemctl/cli/report"
	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/inspect/ledger"
)

// presetInfo is one preset in presets -o json.
type presetInfo struct {
	Name                string `json:"name"`
	Description         string `json:"description"`
	Match               string `json:"match"`
	KeyTemplate         string `json:"key_template"`
	ProcessingTimeoutMs int64  `json:"processing_timeout_ms"`
	ReserveTTLms        int64  `json:"reserve_ttl_ms"`
	// Ledger presets (kind: ledger) are shapes of dedupe ledger, not
	// record formats: a window, and a score unit or a period layout.
	Kind      string `json:"kind"` // records or ledger
	WindowMs  int64  `json:"window_ms,omitempty"`
	ScoreUnit string `json:"score_unit,omitempty"`
	Period    string `json:"period,omitempty"`
}

func runPresets(a *app, output string) error {
	if output != "text" && output != "json" {
		return usageErr("--output %q: want text or json", output)
	}
	var list []presetInfo
	for _, n := range inspect.PresetNames() {
		s, _ := inspect.Preset(n)
		list = append(list, presetInfo{Name: n, Description: s.Description, Match: s.Defaults.Match, KeyTemplate: s.Defaults.KeyTemplate,
			ProcessingTimeoutMs: s.Defaults.ProcessingTimeout.D().Milliseconds(), ReserveTTLms: s.Defaults.ReserveTTL.D().Milliseconds(), Kind: "records"})
	}
	for _, l := range ledger.Presets() {
		list = append(list, presetInfo{Name: l.Name, Description: l.Description, Match: l.Match, KeyTemplate: l.KeyTemplate,
			Kind: "ledger", WindowMs: l.Window.Milliseconds(), ScoreUnit: l.ScoreUnit, Period: l.Period})
	}
	if output == "json" {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	tw := report.NewTable(a.stdout)
	for _, p := range list {
		if p.Kind == "ledger" {
			fmt.Fprintf(tw, "%-20s\t%s\n", p.Name, p.Description)
			fmt.Fprintf(tw, "%-20s\tkind: ledger  match %q  window %v%s\n", "", p.Match, time.Duration(p.WindowMs)*time.Millisecond, ledgerPresetText(p))
			continue
		}
		s, _ := inspect.Preset(p.Name)
		fmt.Fprintf(tw, "%-20s\t%s\n", p.Name, p.Description)
		fmt.Fprintf(tw, "%-20s\tmatch %q  template %q  timeout %v  reserve TTL %v\n", "",
			p.Match, p.KeyTemplate, s.Defaults.ProcessingTimeout.D(), s.Defaults.ReserveTTL.D())
	}
	return tw.Flush()
}

func ledgerPresetText(p presetInfo) string {
	if p.ScoreUnit != "" {
		return "  score unit " + p.ScoreUnit
	}
	return fmt.Sprintf("  template %q  period %s", p.KeyTemplate, p.Period)
}
